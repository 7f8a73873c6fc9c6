"""A plan is the plan of the layout asked for (issue 35): two layouts of one step planned back to
back, in both orders, each checked against a fresh compile. The two layouts give the first leaf
in flatten order the same spec (the TPU cache key once kept only the first argument's sharding).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.plan import compile as compile_mod
from shardwidget.plan import compilers, module_key, plan, tpu

f32 = jnp.float32
D, F = 256, 1024


def step(params, x):
    """A gradient step of a two-layer MLP (the first leaf, b, has the same spec in both)."""

    def loss(p):
        h = jax.nn.relu(x @ p["w1"] + p["b"])
        return jnp.mean((h @ p["w2"]) ** 2)

    g = jax.grad(loss)(params)
    return jax.tree.map(lambda a, b: a - 1e-3 * b, params, g)


PARAMS = {
    "b": jax.ShapeDtypeStruct((F,), f32),
    "w1": jax.ShapeDtypeStruct((D, F), f32),
    "w2": jax.ShapeDtypeStruct((F, D), f32),
}
X = jax.ShapeDtypeStruct((64, D), f32)
FSDP_TP = [{"b": P("model"), "w1": P("data", "model"), "w2": P("model", "data")}, P("data")]
TP = [{"b": P("model"), "w1": P(None, "model"), "w2": P("model", None)}, P("data")]
ORDERS = [(FSDP_TP, TP), (TP, FSDP_TP)]


def _figures(pl: compile_mod.Plan) -> tuple:
    kinds = sorted((c.kind, c.bytes) for c in pl.collectives)
    return pl.memory["arguments"], pl.memory["outputs"], kinds


def _real(specs: list) -> tuple:
    """Plain jax.jit(step).lower(...).compile() on this kernel's 8 CPU devices (2 x 4)."""
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

    def shard(sds, s):
        return jax.ShapeDtypeStruct(sds.shape, sds.dtype, sharding=NamedSharding(mesh, s))

    args = jax.tree.map(shard, [PARAMS, X], specs, is_leaf=lambda v: isinstance(v, P))
    exe = jax.jit(step).lower(*args).compile()
    m = exe.memory_analysis()
    return m.argument_size_in_bytes, m.output_size_in_bytes


def test_the_compile_key_keeps_every_argument_s_sharding_and_drops_only_locations():
    """The TPU and GPU results' key (``compilers.module_digest``; the GPU's once cut each line
    at its first ``loc(``, which made these two layouts one key)."""
    mesh = AbstractMesh((2, 4), ("data", "model"), (AxisType.Auto,) * 2)
    a = compile_mod.lower(step, [PARAMS, X], mesh, FSDP_TP, None)
    b = compile_mod.lower(step, [PARAMS, X], mesh, TP, None)
    first = next(ln for ln in a.splitlines() if "@main(" in ln)
    assert first.count(" loc(") >= 4  # the signature holds a location per argument
    assert compilers.module_digest(a) != compilers.module_digest(b)
    # the same program traced from another call stack: the same key
    again = (lambda: compile_mod.lower(step, [PARAMS, X], mesh, FSDP_TP, None))()
    assert compilers.module_digest(again) == compilers.module_digest(a)
    assert "loc(" not in module_key.without_locations(a)
    # a string holding parentheses or "loc(" is text, not a location
    line = 'x = f(%a) {n = "jit(g)/ loc(x"} loc(callsite("a(b)"(#loc1) at #loc2))'
    assert module_key.strip_locs(line) == 'x = f(%a) {n = "jit(g)/ loc(x"}'


@pytest.mark.parametrize("order", ORDERS, ids=["fsdp-then-tp", "tp-then-fsdp"])
def test_cpu_plans_of_two_layouts_back_to_back_are_each_their_own(order):
    mesh = AbstractMesh((2, 4), ("data", "model"), (AxisType.Auto,) * 2)
    got = [plan(step, PARAMS, X, mesh=mesh, in_specs=specs) for specs in order]
    for pl, specs in zip(got, order, strict=True):
        assert (pl.memory["arguments"], pl.memory["outputs"]) == _real(specs)
    assert _figures(got[0]) != _figures(got[1])


@pytest.mark.parametrize("order", ORDERS, ids=["fsdp-then-tp", "tp-then-fsdp"])
def test_a_planned_function_view_shows_each_layout_s_own_compile(order):
    mesh = AbstractMesh((2, 4), ("data", "model"), (AxisType.Auto,) * 2)
    view = ShardView(step, PARAMS, X, mesh=mesh, in_specs=order[0])
    seen = [view.trace]
    view.in_specs = order[1]
    seen.append(view.trace)
    for tr, specs in zip(seen, order, strict=True):
        fresh = plan(step, PARAMS, X, mesh=mesh, in_specs=specs)
        assert tr.memory["argument"] == fresh.memory["arguments"] == _real(specs)[0]
        assert sorted(c.kind for c in tr.collectives) == sorted(c.kind for c in fresh.collectives)


@pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")
@pytest.mark.parametrize("order", ORDERS, ids=["fsdp-then-tp", "tp-then-fsdp"])
def test_tpu_plans_of_two_layouts_back_to_back_are_each_their_own(order):
    mesh = tpu.tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    got = [_figures(plan(step, PARAMS, X, mesh=mesh, in_specs=specs)) for specs in order]
    for figures, specs in zip(got, order, strict=True):
        tpu._RESULTS.clear()  # a fresh compile by the TPU compiler
        assert figures == _figures(plan(step, PARAMS, X, mesh=mesh, in_specs=specs))
    assert got[0] != got[1]
    fsdp, tp_only = got if order[0] is FSDP_TP else got[::-1]
    assert fsdp[0] < tp_only[0]  # FSDP+TP holds fewer argument bytes per chip than TP alone
