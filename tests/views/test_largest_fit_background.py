"""view.largest_fit in the background: the bisection runs in a thread of its own, hands each
step to the kernel's thread (nothing is set on a trait from the fit's thread), the memory
panel's payload (``_trace.fit``) says how far it got and its answer, and the answer agrees with
plain ``jax.jit`` compiles of the sizes around it (tests/plan/test_largest_fit.py's step)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from shardwidget import ShardView
from shardwidget.hlo import peak as hlo_peak
from shardwidget.plan.largest_fit import MAX_COMPILES
from shardwidget.views.fit_run import FitRun
from tests.plan.test_largest_fit import SPECS, direct_peak
from tests.plan.test_largest_fit import step as grad_step

pytestmark = pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=hlo_peak.NO_LIVE_RANGE)

HBM = 3 * 2**20


@pytest.fixture
def view():
    w = jax.ShapeDtypeStruct((512, 512), jnp.float32)
    x = jax.ShapeDtypeStruct((256, 512), jnp.float32)
    return ShardView(
        grad_step, w, x, mesh_shape=[2, 4], axis_names=["data", "model"], in_specs=SPECS
    )


def test_in_the_background_with_progress_and_the_answer_checked(view):
    run = view.largest_fit("x", 0, hbm=HBM, wait=False)
    assert isinstance(run, FitRun)
    fit = run.wait(timeout=600)
    assert "fit" not in view._trace  # the fit's thread handed its steps over, set nothing
    assert view.trace is not None  # a read takes what was handed over (no kernel loop here)
    panel = view._trace["fit"]
    assert panel["done"] and not panel["error"] and panel["compiles"] == fit.compiles
    assert fit.compiles == len(run.tried) <= MAX_COMPILES
    assert [n for n, _ in run.tried] == [n for n, _, _ in fit.tried]
    assert f"{fit.fits} (peak" in panel["text"] and f"{fit.over} does not" in panel["text"]
    assert fit.peak == direct_peak(fit.fits) <= HBM < direct_peak(fit.over)
    assert fit.fits < fit.over <= fit.fits + 2 ** (MAX_COMPILES - 1) * fit.step


def test_the_panel_drops_a_fit_of_a_layout_no_longer_shown(view):
    run = view.largest_fit("x", 0, hbm=HBM, wait=False, max_compiles=2)
    view.in_specs = [SPECS[0], jax.sharding.PartitionSpec(("data", "model"), None)]
    run.wait(timeout=600)
    view.trace  # noqa: B018  (takes what was handed over)
    assert "fit" not in view._trace  # its answer is for the layout before, not this one


def picky(w, x):
    if x.shape[0] > 300:
        raise ValueError("picky takes at most 300 rows")
    return grad_step(w, x)


def test_a_failure_in_the_thread_is_said_in_words():
    w = jax.ShapeDtypeStruct((512, 512), jnp.float32)
    x = jax.ShapeDtypeStruct((256, 512), jnp.float32)
    v = ShardView(picky, w, x, mesh_shape=[2, 4], axis_names=["data", "model"], in_specs=SPECS)
    run = v.largest_fit("x", 0, hbm=HBM, wait=False)
    with pytest.raises(ValueError, match=r"largest_fit of x dim 0: .*picky takes at most 300"):
        run.wait(timeout=600)
    v.trace  # noqa: B018
    assert v._trace["fit"]["error"] and "failed" in v._trace["fit"]["text"]


def test_a_dimension_the_input_lacks_is_refused_at_once(view):
    with pytest.raises(ValueError, match="dim 2: x is 2-d"):
        view.largest_fit("x", 2, hbm=HBM)
