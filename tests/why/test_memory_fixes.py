"""view.memory_fixes(): each fix's peak checked against a plain ``jax.jit(...).lower().compile()``
of the fixed layout (the peak read from that compile's own dump), and in a case built so the
answer is known: a replicated input live at the peak, split 8 ways, lowers the peak."""

from __future__ import annotations

import shutil
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, _jax
from shardwidget.hlo import peak as hlo_peak
from shardwidget.model import spec as spec_mod
from shardwidget.why import memory_fixes


def step(x, w):
    return jnp.tanh(x @ w).sum(axis=1)


def direct_peak(mesh, specs, *args):
    """The peak of plain jax.jit with these in_shardings, read from its own dump."""
    folder = tempfile.mkdtemp()
    try:
        shs = tuple(NamedSharding(mesh, spec_mod.to_partition_spec(s)) for s in specs)
        lowered = jax.jit(step, in_shardings=shs).lower(*args)
        compiled = lowered.compile(compiler_options={"xla_dump_to": folder, **_jax.PEAK_DUMP})
        peak = hlo_peak.peak_of(hlo_peak.dump_texts(folder), ["x", "w"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if isinstance(peak, str):
        m = compiled.memory_analysis()
        return (
            m.argument_size_in_bytes
            + m.output_size_in_bytes
            - m.alias_size_in_bytes
            + (m.temp_size_in_bytes)
        )
    return peak.bytes


@pytest.fixture
def view():
    x = np.ones((64, 256), np.float32)
    w = np.ones((256, 16), np.float32)
    return ShardView(step, x, w, mesh_shape=[8], axis_names=["d"], in_specs=[P(), P()])


def test_fixes_agree_with_plain_jit_and_lower_the_peak(view):
    """Where the compiler writes no peak report (jax < 0.10), every input is tried and each
    fix is judged by its totals: the same check against plain jax.jit's totals."""
    fixes = [f for f in view.memory_fixes() if f.what.startswith("split")]
    assert fixes, "x and w are replicated and live at the peak: a split is offered"
    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32)
    w = jax.ShapeDtypeStruct((256, 16), jnp.float32)
    for fix in fixes:
        assert not fix.error, fix.error
        assert fix.peak == direct_peak(mesh, fix.state.in_specs, x, w), fix.what
        assert fix.before == memory_fixes.peak_bytes(view.trace)
    best = fixes[0]
    # x (64 KiB replicated) split 8 ways over d: the peak holds an eighth of it
    assert best.what.startswith("split x further over d")
    assert best.lowers and best.peak <= best.before - 64 * 256 * 4 * 7 // 8


def test_apply_and_undo(view):
    if view.trace.peak is None:
        pytest.skip(f"no peak report on this jax: {view.trace.peak_unknown}")
    before = view.trace.peak.bytes
    fix = view.memory_fixes()[0]
    view.apply_memory_fix(0)
    assert view.trace.peak.bytes == fix.peak < before
    view.undo()
    assert view.trace.peak.bytes == before


def test_a_fix_out_of_range_is_refused_in_words(view):
    # "no layout" where this jax writes no peak report (nothing is offered then)
    with pytest.raises(ValueError, match=r"memory fix 99|no layout the view can change"):
        view.apply_memory_fix(99)


@pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=hlo_peak.NO_LIVE_RANGE)
def test_largest_fit_on_the_view_agrees_with_plain_jit():
    """view.largest_fit sizes the view's own layout: the size it names fits and the next does
    not, each compiled directly (tests/plan/test_largest_fit.py's step and layout)."""
    from tests.plan.test_largest_fit import SPECS, direct_peak
    from tests.plan.test_largest_fit import step as grad_step

    w = jax.ShapeDtypeStruct((512, 512), jnp.float32)
    x = jax.ShapeDtypeStruct((256, 512), jnp.float32)
    v = ShardView(grad_step, w, x, mesh_shape=[2, 4], axis_names=["data", "model"], in_specs=SPECS)
    hbm = 3 * 2**20
    fit = v.largest_fit("x", 0, hbm=hbm)
    assert fit.step == 2 and fit.fits > 256 and fit.over is not None
    assert fit.peak == direct_peak(fit.fits) <= hbm < direct_peak(fit.over)
    with pytest.raises(ValueError, match="input 'y'"):
        v.largest_fit("y", 0, hbm=hbm)
