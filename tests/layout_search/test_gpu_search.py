"""The search on a GPU target: every candidate compiled by XLA's GPU compiler (jaxlib's CUDA
plugin) for 2 hosts × 4 H100, its figures equal to ``plan``'s direct compile on the same
``gpu_mesh``, its collectives' links (NVLink within a host, the network across hosts) as the
mesh lays its axes, ranked by its stated model on the H100's preset. Needs the GPU compiler's
venv with this kernel's jax (SHARDWIDGET_GPU_PYTHON); skipped in words without (older JAX
stacks have none)."""

from __future__ import annotations

import importlib.metadata
import subprocess

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType

import shardwidget as sw
from shardwidget.cost import estimate as est_mod
from shardwidget.layout_search import run
from shardwidget.layout_search.target import GpuTarget, target_of
from shardwidget.plan import compilers, gpu, plan


def _why_not() -> str:
    """Why the GPU compiler cannot run here ("" where it can)."""
    missing = compilers.unavailable("gpu")
    if missing:
        return missing
    code = "import importlib.metadata as m; print(m.version('jax'))"
    py = compilers.python_for("gpu")
    theirs = subprocess.run([py, "-c", code], capture_output=True, text=True).stdout.strip()
    ours = importlib.metadata.version("jax")
    return "" if theirs == ours else f"the GPU venv has jax {theirs}, this Python jax {ours}"


WHY_NOT = _why_not()
pytestmark = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT)

PARAMS = {
    "w1": jax.ShapeDtypeStruct((128, 256), jnp.bfloat16),
    "w2": jax.ShapeDtypeStruct((256, 128), jnp.bfloat16),
}
X = jax.ShapeDtypeStruct((16, 128), jnp.bfloat16)


def loss(p: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    return jnp.tanh(jax.nn.relu(x @ p["w1"]) @ p["w2"]).astype(jnp.float32).sum()


def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> object:
    types = (AxisType.Auto,) * len(shape)
    return sw.gpu_mesh("h100", shape, names, hosts=2, gpus_per_host=4, axis_types=types)


def test_gpu_candidates_equal_direct_gpu_compiles() -> None:
    run.clear_cache()
    target = _mesh((8,), ("x",))
    assert isinstance(target_of(target), GpuTarget)  # a gpu_mesh is an AbstractMesh too
    found = sw.search(loss, PARAMS, X, mesh=target, workers=2)
    assert found.progress.state == "done" and not found.failed, found.failed
    assert found.hardware.name == "h100"  # the GPU's own preset
    assert found.results, found.dropped
    keys = [c.rank_key() for c in found.results]
    assert keys == sorted(keys)
    priced = set().union(*(c.parts for c in found.results))
    assert {"NVLink", "network"} <= priced  # both links occur: the split below is exercised
    usable = 80 * 10**9 * 0.75  # h100_sxm.txtpb's device_memory_size is 80 GB (decimal)
    for cand in found.results:
        assert cand.plan.compiler == "gpu" and "GPU compiler" in cand.compiler, cand.name
        mesh = _mesh(cand.mesh_shape, cand.axis_names)
        direct = plan(loss, PARAMS, X, mesh=mesh, in_specs=list(cand.in_specs))
        assert cand.plan.memory == direct.memory, cand.name
        assert cand.plan.flops == direct.flops, cand.name
        kinds = sorted((c.kind, tuple(c.axes), c.bytes) for c in cand.collectives)
        assert kinds == sorted((c.kind, tuple(c.axes), c.bytes) for c in direct.collectives)
        est = direct.estimate("h100")
        assert cand.step_time == pytest.approx(est.total_s, rel=1e-12), cand.name
        # one figure with Plan.fits: what the GPU runtime holds at once (the totals)
        assert cand.peak == direct.memory["peak"] == direct.fit_bytes, cand.name
        assert cand.fits == direct.fits == (direct.memory["peak"] <= usable), cand.name
        _check_links(cand, mesh)


def _check_links(cand: object, mesh: object) -> None:
    """Each collective's seconds under the link its axes cross, as the mesh's hosts lay them:
    an axis whose steps change host is the network's (one NVLink domain is one host's 4)."""
    mi = gpu.info(mesh)
    assert mi is not None
    crossing = {a for a, moved in mi.physical_axes().items() if "host" in moved}
    want: dict[str, float] = {}
    for t in cand.estimate.collectives:  # type: ignore[attr-defined]
        link = "network" if set(t.collective.axes) & crossing else "NVLink"
        want[link] = want.get(link, 0.0) + t.seconds
        # its bytes at that link's rate: the network's 50 GB/s per H100 (DGX H100's 400 Gb/s
        # NIC per GPU) is 1/9 of NVLink's 450, so a host-crossing layout ranks by what it costs
        nvlink_s, _ = est_mod.bandwidth_seconds(t.collective, sw.hardware("h100"))
        ratio = 9.0 if link == "network" else 1.0
        assert t.bandwidth_s == pytest.approx(ratio * nvlink_s, rel=1e-12), cand.name  # type: ignore[attr-defined]
    parts = cand.parts  # type: ignore[attr-defined]
    got = {k: v for k, v in parts.items() if k not in ("compute", "memory")}
    assert got == pytest.approx(want, rel=1e-12), cand.name  # type: ignore[attr-defined]


def test_gpu_links_nvlink_within_a_host_network_across_nvlink_domain_for_gb200() -> None:
    """Which axes the search prices as the network: across H100 hosts (a host's NVSwitch joins
    only its own 4 or 8 GPUs), never inside one GB200 NVL72 rack (18 hosts × 4, one NVLink
    domain), again across two such racks."""
    h100 = _mesh((2, 4), ("data", "tensor"))
    assert target_of(h100).dcn_axes(h100) == ("data",)
    flat = _mesh((8,), ("data",))  # one axis over both hosts: its collectives cross them
    assert target_of(flat).dcn_axes(flat) == ("data",)
    one_rack = sw.gpu_mesh("gb200", (18, 4), ("data", "tensor"), hosts=18, gpus_per_host=4)
    assert target_of(one_rack).dcn_axes(one_rack) == ()
    two = sw.gpu_mesh("gb200", (2, 72), ("data", "fsdp"), hosts=36, gpus_per_host=4)
    assert target_of(two).dcn_axes(two) == ("data",)  # fsdp: the 18 hosts of one rack
    assert target_of(one_rack).preset(None).name == "gb200"
