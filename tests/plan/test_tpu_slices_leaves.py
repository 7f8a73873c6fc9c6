"""The leaves a collective across TPU slices touches, by dataflow through libtpu's program: the
Megascale ``send`` carries the collective's operand, its paired ``recv`` the result. Checked
against libtpu run directly (tests/plan/tpu_slices_direct.py) on a case whose answer is known by
construction: two sums over dimension 0, x's over an axis that crosses the slices (a Megascale
all-reduce), y's over one within a slice (an ICI all-reduce); x reaches only the first output,
y only the second. Needs libtpu (SHARDWIDGET_TPU_PYTHON; skipped with the reason elsewhere).
"""

from __future__ import annotations

import pytest

import shardwidget as sw
from shardwidget.hlo import flow
from shardwidget.plan import tpu
from tests.plan import tpu_slices_direct
from tests.plan.test_tpu_causes import tpu_trace
from tests.plan.test_tpu_slices import X, _direct

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")


def test_a_collective_across_slices_touches_the_leaves_its_send_and_recv_carry() -> None:
    mesh = tpu.tpu_mesh("v5e:2x2", (2, 2, 2), ("a", "dcn", "b"), num_slices=2)
    view = sw.ShardView(tpu_slices_direct.two_sums, X, X, mesh=mesh, in_specs=[("a",), ("b",)])
    res = tpu_trace(view)
    want = _direct("v5e:2x2", 2, (2, 2, 2), (2, 1, 1), "a,dcn,b", "a", "b")
    # libtpu wrote one Megascale all-reduce and one ICI reduction; so does the plan
    assert [k for k, _t, _s in want["megascale_recvs"]] == ["ALL_REDUCE"] and want["ici"] == 1
    (dcn,) = [c for c in res.collectives if "}x{" in c.groups_text]
    (ici,) = [c for c in res.collectives if c is not dcn]
    assert (dcn.kind, dcn.axes, ici.kind, ici.axes) == ("all-reduce", ("a",), "all-reduce", ("b",))
    # by construction: x's sum crosses the slices, y's stays in one
    assert dcn.leaves == ("x", "out[0]") and dcn.leaves_note == ""
    assert ici.leaves == ("y", "out[1]")
    # the same read of libtpu's own program, run directly
    found = flow.touches(want["hlo"], [dcn.name, ici.name], None, 2)
    assert (found[dcn.name].all_inputs, found[dcn.name].all_outputs) == ((0,), (0,))
    assert (found[ici.name].all_inputs, found[ici.name].all_outputs) == ((1,), (1,))
