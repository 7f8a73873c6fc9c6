"""The memory peak of CPU plans (the planning helper's XLA:CPU compile, read from its own
reports): a plan of 8 positions reads the same peak as the same view compiled on this kernel's
8 devices; a plan of 256 positions agrees with the compiler's memory figures of that compile and
holds each input leaf's bytes per device at its peak."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.hlo import peak as hlo_peak
from shardwidget.plan import plan
from tests.plan.test_plan_function_view import IN_SPECS, PARAMS, X, step

AUTO2 = (AxisType.Auto,) * 2


def per_device(shape, spec, sizes) -> int:
    """Bytes of one f32 shard of shape under spec on a mesh of axis sizes."""
    dims = [
        d // (sizes[s] if s else 1) for d, s in zip(shape, list(spec) + [None] * 9, strict=False)
    ]
    return math.prod(dims) * 4


def test_a_plan_of_8_positions_reads_the_real_compiles_peak():
    kw = {"in_specs": IN_SPECS}
    mesh = AbstractMesh((4, 2), ("data", "model"), axis_types=AUTO2)
    planned = ShardView(step, PARAMS, X, mesh=mesh, **kw)
    real = ShardView(step, PARAMS, X, mesh_shape=[4, 2], axis_names=["data", "model"], **kw)
    a, b = planned.trace.peak, real.trace.peak
    if jax.__version_info__ < (0, 10):  # XLA:CPU writes no live-range report before 0.10
        assert a is None and planned.trace.peak_unknown == hlo_peak.NO_LIVE_RANGE
        pytest.skip(hlo_peak.NO_LIVE_RANGE)
    assert a is not None and b is not None, (planned.trace.peak_unknown, real.trace.peak_unknown)
    assert (a.bytes, a.at.op_name) == (b.bytes, b.at.op_name)
    assert [(x.kind, x.bytes, x.path) for x in a.buffers] == [
        (x.kind, x.bytes, x.path) for x in b.buffers
    ]
    assert {x.path for x in a.buffers if x.kind == "argument"} == {
        "params['w1']",
        "params['w2']",
        "x",
    }


def test_a_plan_of_256_positions_agrees_with_the_compiler():
    sizes = {"data": 32, "model": 8}
    mesh = AbstractMesh((32, 8), ("data", "model"), axis_types=AUTO2)
    w = jax.ShapeDtypeStruct((4096, 4096), jnp.float32)
    x = jax.ShapeDtypeStruct((2048, 4096), jnp.float32)
    specs = [P("data", "model"), P("data", None)]

    def train(w, x):
        g = jax.grad(lambda w: jnp.tanh(x @ w).sum())(w)
        return w - 0.1 * g

    pl = plan(train, w, x, mesh=mesh, in_specs=specs)
    peak = pl.peak
    if jax.__version_info__ < (0, 10):
        assert peak is None and pl.peak_unknown == hlo_peak.NO_LIVE_RANGE
        pytest.skip(hlo_peak.NO_LIVE_RANGE)
    assert peak is not None, pl.peak_unknown
    m = pl.memory
    assert sum(b.bytes for b in peak.buffers) == peak.bytes == max(peak.timeline)
    assert peak.bytes <= m["arguments"] + m["outputs"] - m["aliased"] + m["temporaries"]
    args = sorted(b.bytes for b in peak.buffers if b.kind == "argument")
    want = sorted(per_device(a.shape, s, sizes) for a, s in zip((w, x), specs, strict=True))
    assert args == want
    assert sum(args) == m["arguments"]  # every parameter is live at the peak
