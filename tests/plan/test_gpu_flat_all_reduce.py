"""XLA's GPU compiler all-reduces a data-parallel step's loss and gradients as ONE flat
all-reduce of a 1-d concatenate of their bitcasts, with no op_name. A plan on a gpu_mesh reports
each part as an element (its shape and bytes), the parameter whose gradient it is, the leaves it
touches and its own cause (op and line), checked against the GPU compiler run directly
(tests/plan/gpu_direct.py's ``dp_step``) on a step whose answer is known by construction: params
replicated, the batch split over "data"; b1 and w1 are used on the loss's first line, w2 and the
loss's mean on its second; each parameter has its own size. Needs the GPU compiler's venv
(SHARDWIDGET_GPU_PYTHON); skipped with the reason elsewhere.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget import _jax
from shardwidget.plan import background, compilers, gpu
from tests.plan import gpu_direct
from tests.plan.test_gpu import _direct, _toolkit_hidden  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(
    bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or ""
)

PARAMS = ("b1", "w1", "w2")
LINE = {  # the loss's line each parameter is used on (the loss's mean: its second)
    "b1": gpu_direct.dp_loss.__code__.co_firstlineno + 1,
    "w1": gpu_direct.dp_loss.__code__.co_firstlineno + 1,
    "w2": gpu_direct.dp_loss.__code__.co_firstlineno + 2,
    "": gpu_direct.dp_loss.__code__.co_firstlineno + 2,
}


def _gpu_trace(view: sw.FunctionView):
    assert background.wait(300)
    end = time.monotonic() + 60
    while "XLA's GPU compiler" not in view.planned:
        assert time.monotonic() < end, "the view never switched to the GPU compiler's plan"
        time.sleep(0.05)
    return view.trace


def _flat_all_reduces(text: str) -> list[int]:
    """The element counts of the 1-d f32 all-reduces XLA wrote."""
    return [int(n) for n in re.findall(r"= f32\[(\d+)\]\{0\} all-reduce(?:-start)?\(", text)]


def _step_view(param_spec: P):
    sds = {k: jax.ShapeDtypeStruct(s, jnp.float32) for k, s in gpu_direct.DP_SHAPES.items()}
    params = {k: sds[k] for k in PARAMS}
    batch = {"x": sds["x"], "y": sds["y"]}
    mesh = gpu.gpu_mesh("h100", (8,), ("data",))
    return sw.ShardView(
        gpu_direct.dp_step, params, batch, mesh=mesh, in_specs=[param_spec, P("data")]
    )


def _kinds(text: str) -> Counter:
    return Counter(
        re.findall(r"= \S.*? (all-reduce|all-gather|reduce-scatter|all-to-all)(?:-start)?\(", text)
    )


def test_a_flat_gradient_all_reduce_carries_each_part_with_its_gradient_and_cause() -> None:
    res = _gpu_trace(_step_view(P()))
    want = _direct("h100", "1x1x8", (8,), ("data",), "dp_step")["hlo"]
    # the compiler run directly wrote one flat all-reduce: the loss and every gradient
    whole = 1 + sum(math.prod(gpu_direct.DP_SHAPES[k]) for k in PARAMS)
    assert _flat_all_reduces(want) == [whole] and "concatenate(" in want
    assert Counter(c.kind for c in res.collectives) == Counter({"all-reduce": 1})
    (c,) = res.collectives
    assert _flat_all_reduces(res.hlo_text) == [whole]
    # its parts: the loss's scalar and each gradient, sizes summing to the all-reduce's
    sizes = sorted(math.prod(e.dims) for e in c.elements)
    assert sizes == sorted([1] + [math.prod(gpu_direct.DP_SHAPES[k]) for k in PARAMS])
    assert sum(e.nbytes for e in c.elements) == whole * 4
    assert c.bytes == round(2 * 7 * whole * 4 / 8)  # the ring bytes of the whole
    # each part is the gradient of the parameter of its size (each has its own), and reaches
    # only that parameter's update; the scalar is the loss
    of_size = {math.prod(gpu_direct.DP_SHAPES[k]): k for k in PARAMS}
    for e, g, outs in zip(c.elements, c.element_gradients, c.element_out_leaves, strict=True):
        k = of_size.get(math.prod(e.dims), "")
        assert g == (f"p['{k}']" if k else "")
        assert outs == ((f"out[1]['{k}']",) if k else ("out[0]",))
    assert sorted(c.gradients) == sorted(f"p['{k}']" for k in PARAMS)
    assert {"batch['x']", "batch['y']"} <= set(c.leaves or ())
    missing = _jax.shardy_missing()
    if missing:
        pytest.skip(missing)
    # each part's own cause, at the line its parameter is used on
    text = c.cause.text
    assert c.cause.known and text.startswith("all-reduce of 4 arrays XLA combined into one: ")
    for e, g in zip(c.elements, c.element_gradients, strict=True):
        head = f"{e.dtype}{list(e.dims)}" + (f" (gradient of {g})" if g else "") + ": "
        assert head in text, (head, text)
        part = text.split(head, 1)[1].split("; f32[", 1)[0]
        assert "cause unknown" not in part, part
        key = g[len("p['") : -2] if g else ""
        assert f"on line {LINE[key]}:" in part, (g, part)


def test_an_fsdp_steps_reduce_scatter_carries_each_gradients_shard() -> None:
    """FSDP: XLA's GPU compiler reduce-scatters the gradients in one combined async
    reduce-scatter with no op_name; its start's shape lists the operands, then the results. Each
    result is one parameter's shard (dim 0 split 8 ways), the bytes are (n - 1) x the results'
    (before: the operands were counted as results, 3.5x the bytes), each element is its
    parameter's gradient and has its own cause."""
    res = _gpu_trace(_step_view(P("data")))
    want = _direct("h100", "1x1x8", (8,), ("data",), "fsdp_step")["hlo"]
    assert Counter(c.kind for c in res.collectives) == _kinds(want) == _kinds(res.hlo_text)
    (rs,) = [c for c in res.collectives if c.kind == "reduce-scatter"]
    done = re.search(r"= \(([^)]*)\) reduce-scatter-done\(", want)
    assert done is not None  # the results, as the compiler run directly wrote them
    shard = {k: (s[0] // 8, *s[1:]) for k, s in gpu_direct.DP_SHAPES.items() if k in PARAMS}
    got = [e.dims for e in rs.elements]
    assert sorted(got) == sorted(shard.values())
    assert [
        tuple(int(d) for d in m.split(",") if d) for m in re.findall(r"\[([\d,]*)\]", done.group(1))
    ] == got
    assert rs.bytes == 7 * sum(e.nbytes for e in rs.elements)
    for e, g in zip(rs.elements, rs.element_gradients, strict=True):
        (k,) = [k for k, s in shard.items() if s == e.dims]
        assert g == f"p['{k}']"
    if _jax.shardy_missing():
        pytest.skip(_jax.shardy_missing())
    text = rs.cause.text
    assert rs.cause.known and text.startswith("reduce-scatter of 3 arrays XLA combined into one")
    for e, g in zip(rs.elements, rs.element_gradients, strict=True):
        part = text.split(f"{e.dtype}{list(e.dims)} (gradient of {g}): ", 1)[1].split("; f32[")[0]
        assert "cause unknown" not in part and f"on line {LINE[g[3:-2]]}:" in part, (g, part)
