"""One machine, one rule: a function view planned on a ``gpu_mesh`` or ``tpu_mesh`` prices the
collectives that cross hosts or slices at the network, and judges "fits" against the memory a
program gets there, exactly as ``plan().estimate()`` of the same layout does (before, the view
priced a cross-host all-reduce at NVLink and judged fit against the preset's 80 GB).

The figures are checked against the preset's own network bandwidth and the target config's own
memory size, read here from the shipped files; the GPU tests need the GPU compiler's venv and the
TPU test libtpu's (skipped with the reason elsewhere)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import shardwidget as sw
from shardwidget.plan import background, compilers, gpu, machine, plan, tpu

needs_gpu = pytest.mark.skipif(
    bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or ""
)


def _usable(name: str) -> int:
    """75 % of the target config's device_memory_size, read from the shipped file itself."""
    text = (gpu.SPECS / gpu.preset(name).spec).read_text()
    size = re.search(r"device_memory_size:\s*(\d+)", text)
    assert size is not None
    return int(int(size.group(1)) * 0.75)


def _sum0(a):
    return a.sum(axis=0)


X = np.zeros((2048, 1024), np.float32)


def _view_estimate(**hosts):
    """The data all-reduce of sum over dim 0, split ("data", "model"), as a function view on
    2 × 8 H100s laid out on ``hosts``: (the view's estimate, the plan's of the same layout)."""
    mesh = gpu.gpu_mesh("h100", (2, 8), ("data", "model"), **hosts)
    pl = plan(_sum0, X, mesh=mesh, in_specs=[("data", "model")])  # the GPU result, cached
    v = sw.ShardView(_sum0, X, mesh=mesh, in_specs=[("data", "model")])
    assert background.wait(300)
    assert "compiled by XLA's GPU compiler" in v.planned
    return v, v.trace.estimate(v.hardware), pl.estimate()


def _data(est):
    (c,) = [c for c in est.collectives if c.collective.axes == ("data",)]
    return c


@needs_gpu
def test_a_function_view_prices_a_cross_host_all_reduce_at_the_network():
    v, net, by_plan = _view_estimate(hosts=2)
    _, nvl, _ = _view_estimate(hosts=1, gpus_per_host=16)
    h100 = sw.hardware("h100")
    a, b = _data(net), _data(nvl)
    assert a.kind == "all-reduce" and a.collective.bytes == b.collective.bytes > 0
    # the same bytes, across the hosts' network (50 GB/s per GPU) against NVLink (450 GB/s)
    assert a.bandwidth_s / b.bandwidth_s == pytest.approx(
        h100.ici_bandwidth / h100.network_bandwidth, rel=1e-12
    )
    assert a.latency_s == pytest.approx(2 * h100.dcn_latency)  # 2 (n - 1) steps, n = 2
    assert a.formula.endswith("GB/s network") and b.formula.endswith("GB/s NVLink")
    # the view's figure is the plan's: one machine, one rule
    assert (a.seconds, net.total_s, net.fits_text) == (
        _data(by_plan).seconds,
        by_plan.total_s,
        by_plan.fits_text,
    )
    # and what the page gets is that estimate
    words = [p.get("formula", "") for p in v._estimate["parts"]]
    assert any(w.endswith("GB/s network") for w in words), words


@needs_gpu
def test_a_function_view_judges_fit_against_jaxs_share_of_the_gpu():
    v, est, by_plan = _view_estimate(hosts=2)
    assert est.hardware.hbm_bytes == _usable("h100") == by_plan.hardware.hbm_bytes
    assert "75% of 79.11 GiB: JAX's share" in est.fits_text
    assert v._hbm() == (float(_usable("h100")), "h100, what a program gets")
    # another chip's preset is that chip's own memory, not the H100's share; the hosts the
    # mesh's axes cross stay what they are
    other = v.trace.estimate("b200")
    assert other.hardware.hbm_bytes == sw.hardware("b200").hbm_bytes
    assert _data(other).formula.endswith("GB/s network")


def test_a_mesh_of_no_tpu_or_gpu_stands_for_no_machine():
    from jax.sharding import AbstractMesh, AxisType

    assert machine.machine_of(AbstractMesh((2, 4), ("a", "b"), (AxisType.Auto,) * 2)) is None
    assert machine.machine_of(object()) is None


@pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")
def test_the_axis_that_joins_tpu_slices_crosses_dcn():
    """The slow axes of a 2-slice v5e mesh are those whose steps change the slice, read from
    each position's slice index (as the topology has it), and the TPU's usable HBM."""
    mesh = tpu.tpu_mesh("v5e:2x2", (2, 4), ("slices", "chips"), num_slices=2)
    mi = tpu.info(mesh)
    assert mi is not None
    where = np.asarray(mi.slice_index).reshape(mi.mesh_shape)
    changes = {
        name: bool((np.diff(where, axis=i) != 0).any()) for i, name in enumerate(mi.axis_names)
    }
    m = machine.machine_of(mesh)
    assert m is not None and m.preset == "tpu-v5e"
    assert set(m.dcn_axes) == {n for n, c in changes.items() if c} == {"slices"}
    assert m.memory_bytes == mi.hbm_bytes
