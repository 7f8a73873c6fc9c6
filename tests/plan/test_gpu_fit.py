"""One rule for a GPU plan's fit: ``Plan.fits``, its estimate, the search's candidate of the
same layout and the largest fit judge one figure against one limit. The figure is what XLA's
GPU runtime holds at once: it allocates every output and the program's temp buffer when the
program starts (xla/service/gpu/gpu_executable.cc, GenerateBufferAllocations: "Allocate each
allocation that might escape, or is the temp buffer"), so arguments + outputs + temporaries -
aliased (the direct compile's memory_analysis), even where the compiler's live-range peak is
lower. The limit is JAX's 75 % share of the target config's memory.

The program is built so that the two figures disagree about fit: a 40 GiB product, dead once
summed, then a 20 GiB output (the peak 40.6 GiB, held at once 60.6 GiB, the limit 59.3 GiB).
Needs the GPU compiler's venv (skipped with the reason elsewhere).
"""

from __future__ import annotations

import pytest

import shardwidget as sw
from shardwidget.layout_search import candidate as cand_mod
from shardwidget.layout_search.candidates import Proposal
from shardwidget.layout_search.target import target_of
from shardwidget.plan import compilers, gpu, plan
from shardwidget.plan.compile import GPU_HELD
from tests.plan import gpu_direct
from tests.plan.test_gpu import _direct, _usable

pytestmark = pytest.mark.skipif(
    bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or ""
)


def test_a_plan_its_estimate_and_its_search_candidate_agree_on_fit():
    mesh = gpu.gpu_mesh("h100", (1, 8), ("data", "model"))
    f, args, specs = gpu_direct.PROGRAMS["held_at_once"]
    pl = plan(f, *args, mesh=mesh, in_specs=specs)
    arg, out, temp, alias = _direct("h100", "1x1x8", (1, 8), ("data", "model"), "held_at_once")[
        "memory"
    ]
    held, usable = arg + out + temp - alias, _usable("h100")
    assert pl.peak is not None and pl.peak.bytes < usable < held  # the figures disagree
    assert pl.fit_bytes == held and pl.fit_source == GPU_HELD
    assert not pl.fits
    assert pl.hbm.startswith(
        f"does not fit: needs {held / 2**30:.2f} GiB of {usable / 2**30:.2f} GiB on every GPU "
        "(arguments + outputs + temporaries, held at once;"
    )
    est = pl.estimate()
    assert est.fits is False and est.peak_bytes == held
    hw = sw.hardware("h100")
    proposal = Proposal("as planned", (1, 8), ("data", "model"), tuple(specs))
    cand = cand_mod.make(proposal, specs, pl, hw, target_of(mesh))
    assert cand.fits is False and cand.peak == held and cand.peak_is_totals
    assert cand.estimate is not None and cand.estimate.fits is False
    assert cand.sources["fits"].startswith("held at once on the GPU")
    assert "(held at once on a GPU)" in cand.summary
