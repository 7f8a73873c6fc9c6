"""A layout the TPU compiler refuses for not fitting in HBM shows, beside the error, the memory
panel of that refused compile (``_trace.over``): its peak read from libtpu's own report
(written before it refused), the HBM the compiler says it has, and the input leaf that is over,
checked against a direct plan of the same step and the weights' bytes per device by
construction. Needs libtpu (skipped with the reason elsewhere)."""

from __future__ import annotations

import pytest

from shardwidget import ShardView
from shardwidget.plan import background, plan, tpu
from tests.plan import tpu_direct

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

BIG = 262144  # w is 128 GiB of bf16: 16 GiB per chip over 8, past a v5e's 15.75 GiB


def test_a_layout_that_does_not_fit_shows_what_is_over():
    v5e = tpu.tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    args = tpu_direct.mlp_args(BIG)
    v = ShardView(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    assert background.wait(600)
    assert v.trace is not None  # the TPU's answer taken (no kernel loop here)
    assert "does not fit" in v.error
    direct = plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    _need, have = tpu.hbm_figures(direct.hbm)
    assert not direct.fits and direct.peak is not None and have is not None
    over = v._trace["over"]
    assert over["bytes"] == direct.peak.bytes > have == over["hbm"]
    assert over["hbm_name"] == "the TPU compiler's" and "over" in over["title"]
    rows = [r for g in over["groups"] for r in g["rows"]]
    w = next(r for r in rows if r["path"] == "w")
    assert w["bytes"] == BIG * BIG * 2 // 8  # the weights per chip, by construction
