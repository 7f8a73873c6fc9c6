"""``plan()``'s own collectives carry their leaves, by the same dataflow a function view's plan
reads (hlo/flow): each element's input and output leaves and the parameter whose gradient it
is; a flat all-reduce of a concatenate (XLA's GPU compiler's data-parallel gradients) its parts.
Before, a bare plan's collectives had no leaves (None) and the GPU's flat all-reduce was one
f32[N] element. Checked against the compiler run directly, on steps built so the answer is known:
params replicated, the batch split, each parameter its own gradient."""

from __future__ import annotations

import math
import re

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

from shardwidget.hlo import collectives as hlo
from shardwidget.plan import compilers, gpu, plan
from tests.hlo.test_flow import deep_step
from tests.plan import gpu_direct
from tests.plan.test_gpu import _direct, _toolkit_hidden  # noqa: F401 (a fixture)

N_WEIGHTS = 7  # past XLA's fifth operand: its "/*index=5*/" marks are crossed too


def test_a_cpu_plans_combined_gradient_all_reduce_names_every_gradient():
    params = {f"w{i}": jax.ShapeDtypeStruct((64, 64), jnp.float32) for i in range(N_WEIGHTS)}
    x = jax.ShapeDtypeStruct((64, 64), jnp.float32)
    am = AbstractMesh((8,), ("x",), axis_types=(AxisType.Auto,))
    pl = plan(deep_step, params, x, mesh=am, in_specs=[{k: P() for k in params}, P("x")])
    # plain jax.jit on the kernel's 8 CPU devices writes the same combined all-reduce
    m = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    sh = jax.sharding.NamedSharding
    direct = (
        jax.jit(deep_step, in_shardings=({k: sh(m, P()) for k in params}, sh(m, P("x"))))
        .lower(params, x)
        .compile()
        .as_text()
    )
    want = hlo.collectives(direct, list(range(8)), {i: (i,) for i in range(8)}, ("x",), (8,))
    (d,) = [c for c in want if len(c.elements) > 1]
    (c,) = [c for c in pl.collectives if len(c.elements) > 1]
    assert sorted(e.dims for e in c.elements) == sorted(e.dims for e in d.elements)
    assert sorted(c.gradients) == [f"p['w{i}']" for i in range(N_WEIGHTS)]
    outs = sorted(tuple(o for o in el if o.startswith("out[0]")) for el in c.element_leaves)
    assert [o for o in outs if o] == [(f"out[0]['w{i}']",) for i in range(N_WEIGHTS)]
    assert "x" in (c.leaves or ())


@pytest.mark.skipif(bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or "")
def test_a_gpu_plans_flat_all_reduce_carries_each_gradient_as_a_part():
    sds = {k: jax.ShapeDtypeStruct(s, jnp.float32) for k, s in gpu_direct.DP_SHAPES.items()}
    params = {k: sds[k] for k in ("b1", "w1", "w2")}
    batch = {"x": sds["x"], "y": sds["y"]}
    mesh = gpu.gpu_mesh("h100", (8,), ("data",))
    pl = plan(gpu_direct.dp_step, params, batch, mesh=mesh, in_specs=[P(), P("data")])
    want = _direct("h100", "1x1x8", (8,), ("data",), "dp_step")["hlo"]
    flat = [int(n) for n in re.findall(r"= f32\[(\d+)\]\{0\} all-reduce(?:-start)?\(", want)]
    whole = 1 + sum(math.prod(s.shape) for s in params.values())
    assert flat == [whole]  # the compiler run directly: one flat all-reduce of every part
    (c,) = pl.collectives
    assert sum(e.nbytes for e in c.elements) == whole * 4
    assert sorted(math.prod(e.dims) for e in c.elements) == sorted(
        [1] + [math.prod(s.shape) for s in params.values()]
    )
    of_size = {math.prod(s.shape): k for k, s in params.items()}
    for e, g in zip(c.elements, c.element_gradients, strict=True):
        k = of_size.get(math.prod(e.dims), "")
        assert g == (f"p['{k}']" if k else "")
    assert {"batch['x']", "batch['y']"} <= set(c.leaves or ())
