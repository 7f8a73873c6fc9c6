"""The picture of a gpu_mesh plan shows the hosts and what crosses them: the static picture
(saved pages, nbconvert) draws a row per host with that host's GPUs, each NVLink domain that
spans hosts headed; the payload the live view draws from says what each mesh axis travels over.
Which GPU is on which host, and so which axes cross hosts, comes from XLA's CUDA plugin run
directly (``topologies.make_mesh`` on the topology: each mesh position's ``process_index``).

They need the GPU compiler's venv (as tests/plan/test_gpu.py); skipped with the reason elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget.model.layout import layout_of_sharding
from shardwidget.plan import background, compilers, gpu
from shardwidget.wire import array as wire_array

pytestmark = pytest.mark.skipif(
    bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or ""
)

DIRECT = os.path.join(os.path.dirname(__file__), "gpu_direct.py")
NETWORK = "network (InfiniBand / Ethernet, across hosts)"

MACHINES = [
    # (gpu, gpu_mesh keywords, topology, mesh shape, axes, each axis's link when it crosses hosts)
    ("h100", {"hosts": 2}, "1x2x8", (2, 8), ("data", "model"), NETWORK),
    (
        "gb200",
        {"hosts": 18, "gpus_per_host": 4},
        "1x18x4",
        (72,),
        ("data",),
        "NVLink (one NVLink domain of 72 GPUs, across hosts)",
    ),
]


def _direct_hosts(name: str, topology: str, shape: tuple[int, ...], axes: tuple[str, ...]):
    """Each mesh position's host (process_index) as the CUDA plugin places the mesh."""
    spec = gpu.SPECS / gpu.preset(name).spec
    where = ["x".join(map(str, shape)), ",".join(axes)]
    out = subprocess.run(
        [compilers.python_for("gpu"), DIRECT, str(spec), topology, *where, "-"],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=300,
        check=True,
    )
    return [p for _, p in json.loads(out.stdout)["devices"]]


def _crosses_hosts(hosts: list[int], shape: tuple[int, ...]) -> list[bool]:
    """Per mesh axis, whether a step along it lands on another host."""
    grid = np.array(hosts).reshape(shape)
    return [bool((np.diff(grid, axis=a) != 0).any()) for a in range(len(shape))]


def _host_rows(svg: str, end: str = ">Communication<") -> dict[int, list[int]]:
    """The static picture's machine: host -> the GPUs drawn on its row (the cells after a
    "host N" label up to the next label, in drawing order)."""
    part = svg[svg.index("Physical: ") :]
    part = part[: part.index(end)] if end else part
    rows: dict[int, list[int]] = {}
    host = -1
    for label, device in re.findall(r">host (\d+)<|<rect [^>]*data-device=\"(\d+)\"", part):
        if label:
            host = int(label)
            rows[host] = []
        else:
            rows[host].append(int(device))
    return rows


@pytest.mark.parametrize(("name", "kw", "topology", "shape", "axes", "across"), MACHINES)
def test_the_picture_groups_gpus_by_host_and_marks_the_axes_that_cross_hosts(
    name, kw, topology, shape, axes, across
):
    hosts = _direct_hosts(name, topology, shape, axes)
    crosses = _crosses_hosts(hosts, shape)
    mesh = gpu.gpu_mesh(name, shape, axes, **kw)
    n = int(np.prod(shape))
    v = shardwidget.ShardView(
        lambda x: x * 2, np.zeros((n, 8), np.float32), mesh=mesh, in_specs=[P(axes)]
    )
    assert background.wait(300)
    svg = v.to_svg()
    want = {h: [i for i in range(n) if hosts[i] == h] for h in sorted(set(hosts))}
    assert _host_rows(svg) == want
    assert f"Physical: {n} GPUs on {len(want)} hosts" in svg
    links = [across if c else "NVLink (within a host)" for c in crosses]
    for a, size, link in zip(axes, shape, links, strict=True):
        marked = "⇄ " if link == NETWORK else ""
        assert f">{marked}{a}={size}: {link}<" in svg
    # the view's banner says them too
    assert (
        v.planned.startswith("planned on ")
        and ", ".join(f"{a}: {link}" for a, link in zip(axes, links, strict=True)) in v.planned
    )
    # the live view's payload: the same words per axis, and the domain's hosts
    lay = layout_of_sharding(NamedSharding(mesh, P(axes)), (n, 8), np.dtype(np.float32))
    wire = wire_array.layout(lay, key=0, source="", note="", local_process=0)
    assert wire["mesh"] is not None and wire["mesh"]["axis_links"] == links
    assert wire["mesh"]["domain_hosts"] == (18 if name == "gb200" else 0)


def test_gb200_domains_are_headed_by_their_hosts_and_the_slices_cross_the_network():
    """2 slices × 18 hosts × 4 GB200: two NVLink domains of 18 hosts each; "dp" (across the
    slices) crosses the network, "fsdp" stays in a domain."""
    hosts = _direct_hosts("gb200", "2x18x4", (2, 72), ("dp", "fsdp"))
    assert _crosses_hosts(hosts, (2, 72)) == [True, True]
    mesh = gpu.gpu_mesh("gb200", (2, 72), ("dp", "fsdp"), gpus_per_host=4, hosts=18, slices=2)
    v = shardwidget.ShardView(
        lambda x: x + 1, np.zeros((144, 8), np.float32), mesh=mesh, in_specs=[P(("dp", "fsdp"))]
    )
    assert background.wait(300)
    svg = v.to_svg()
    assert ">NVLink domain 0: hosts 0–17<" in svg and ">NVLink domain 1: hosts 18–35<" in svg
    assert f">⇄ dp=2: {NETWORK}<" in svg
    assert ">fsdp=72: NVLink (one NVLink domain of 72 GPUs, across hosts)<" in svg
    assert _host_rows(svg) == {h: [i for i in range(144) if hosts[i] == h] for h in range(36)}


def test_a_tree_views_picture_draws_its_gpus_by_host():
    """The tree view's static picture (its selected leaf's) draws the same host rows."""
    hosts = _direct_hosts("h100", "1x2x8", (2, 8), ("data", "model"))
    mesh = gpu.gpu_mesh("h100", (2, 8), ("data", "model"), hosts=2)
    tv = shardwidget.ShardView(
        {"w": np.zeros((64, 64), np.float32)}, mesh=mesh, rules=[(r"w", P("data", "model"))]
    )
    svg = tv.to_svg()
    assert _host_rows(svg, end="") == {h: [i for i in range(16) if hosts[i] == h] for h in (0, 1)}
    assert f">⇄ data=2: {NETWORK}<" in svg and ">model=8: NVLink (within a host)<" in svg
