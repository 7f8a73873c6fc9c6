"""Collectives across TPU slices (``tpu_mesh(..., num_slices=...)``), against libtpu run
directly (tests/plan/tpu_slices_direct.py). libtpu compiles one slice's program and writes a
collective over DCN as a Megascale send/recv pair (``_xla_megascale_transfer_type``): the plan
reads it as the collective it is, with its kind, bytes and the mesh axis that crosses the
slices. A slice's replica groups count its own chips: they are read as that slice's mesh
positions (before, on a mesh whose slices were not its outermost axis, an ICI all-reduce over
one axis was named after another).

Every case is a sum over dimension 0 of a (1024, 4096) float32 array split over one mesh axis,
so the answer is known: one reduction over that axis, nothing else. Needs libtpu
(SHARDWIDGET_TPU_PYTHON; skipped with the reason elsewhere); one TPU compile at a time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from shardwidget.plan import plan, tpu

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

DIRECT = os.path.join(os.path.dirname(__file__), "tpu_slices_direct.py")
X = jax.ShapeDtypeStruct((1024, 4096), jnp.float32)
KIND = {"ALL_REDUCE": "all-reduce", "ALL_GATHER": "all-gather"}


def _direct(
    topology: str,
    slices: int,
    shape: tuple[int, ...],
    dcn: tuple[int, ...],
    axes: str,
    axis: str,
    other: str = "",
) -> dict:
    """libtpu run directly (tpu_slices_direct.py); ``other``: its two_sums, y over that axis."""
    env = dict(
        os.environ, JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1", ALLOW_MULTIPLE_LIBTPU_LOAD="1"
    )
    where = [topology, str(slices), "x".join(map(str, shape)), "x".join(map(str, dcn)), axes, axis]
    where += [other] if other else []
    out = subprocess.run(
        [tpu.tpu_python(), DIRECT, *where],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout)


def _nbytes(hlo_shape: str) -> int:
    dims = re.findall(r"\d+", hlo_shape.split("[", 1)[1])
    return int(np.prod([int(d) for d in dims])) * 4  # f32


CASES = [
    # (topology, slices, mesh shape, slices along each axis (tpu_mesh: the first axis the
    # slice count divides), axes, the axis summed over, whether it crosses slices)
    ("v5e:2x2", 2, (2, 2, 2), (2, 1, 1), ("a", "dcn", "b"), "a", True),
    ("v5e:2x2", 2, (2, 2, 2), (2, 1, 1), ("a", "dcn", "b"), "dcn", False),
    ("v5e:2x2", 4, (2, 8), (1, 4), ("p", "q"), "p", False),
    ("v5e:2x2", 4, (2, 8), (1, 4), ("p", "q"), "q", True),
]


@pytest.mark.parametrize(("topology", "slices", "shape", "dcn", "axes", "axis", "crosses"), CASES)
def test_a_sum_over_an_axis_is_a_reduction_over_that_axis_in_ici_or_dcn(
    topology, slices, shape, dcn, axes, axis, crosses
):
    mesh = tpu.tpu_mesh(topology, shape, axes, num_slices=slices)
    mi = tpu.info(mesh)
    pl = plan(lambda x: x.sum(axis=0), X, mesh=mesh, in_specs=[(axis,)])
    want = _direct(topology, slices, shape, dcn, ",".join(axes), axis)
    assert list(mi.slice_index) == want["slice_index"]  # the same placement
    grid = np.array(mi.slice_index).reshape(shape)
    k = axes.index(axis)
    assert bool((np.diff(grid, axis=k) != 0).any()) == crosses  # the case is what it says
    # every collective reduces over the summed axis and nothing else
    assert pl.collectives and all(c.axes == (axis,) for c in pl.collectives)
    dcn = [c for c in pl.collectives if c.groups_text.startswith("{") and "}x{" in c.groups_text]
    # one collective per Megascale transfer libtpu wrote, of its kind and size
    assert [(c.kind, c.groups_text, list(c.shape)) for c in dcn] == [
        (KIND[t], target, [int(d) for d in re.findall(r"\d+", s.split("[", 1)[1])])
        for t, target, s in want["megascale_recvs"]
    ]
    assert bool(dcn) == crosses
    for c, (_t, _target, s) in zip(dcn, want["megascale_recvs"], strict=True):
        n = c.group_size
        assert c.bytes == round(2 * (n - 1) * _nbytes(s) / n)  # an all-reduce's ring bytes
        # one device per slice in each group, the same place in each slice
        for g in c.groups:
            assert sorted(mi.slice_index[p] for p in g) == list(range(n))
            coords = [np.unravel_index(p, shape) for p in g]
            assert len({tuple(v for j, v in enumerate(cd) if j != k) for cd in coords}) == 1
    ici = [c for c in pl.collectives if c not in dcn]
    assert len(ici) == want["ici"]
    for c in ici:  # within one slice each
        assert all(len({mi.slice_index[p] for p in g}) == 1 for g in c.groups)


def test_the_cross_slice_all_reduce_names_its_op_and_is_priced_at_dcn():
    mesh = tpu.tpu_mesh("v5e:2x2", (2, 2, 2), ("a", "dcn", "b"), num_slices=2)
    pl = plan(lambda x: x.sum(axis=0), X, mesh=mesh, in_specs=[("a",)])
    (c,) = pl.collectives
    assert (c.kind, c.axes, c.group_size, c.n_groups) == ("all-reduce", ("a",), 2, 4)
    # the send carries no metadata; the value it sends names the sum and its line
    assert c.op_name.endswith("reduce_sum") and c.source.startswith("test_tpu_slices.py:")
    est = pl.estimate()
    (t,) = est.collectives
    assert t.collective is c and "DCN" in t.formula
