"""What joins a gpu_mesh's GPUs follows the GPU: NVLink for the SXM parts (XLA's target configs
count their NVLink links), PCIe for the H100 PCIe card (no NVSwitch; NVLink bridges join pairs
only), as the cost presets (vendor data, with their sources) say."""

from __future__ import annotations

import re

import pytest

from shardwidget.cost import hardware as hw_mod
from shardwidget.plan import compilers, gpu


def _config_link(text: str) -> str:
    """The link a target config shows: NVLink links counted (``device_interconnect_info``), an
    SXM part (XLA's A100 configs predate the count), or a PCIe card by its name."""
    links = re.search(r"device_interconnect_info\s*{\s*active_links:\s*(\d+)", text)
    name = re.search(r'device_description_str:\s*"([^"]*)"', text)
    assert name is not None
    if (links is not None and int(links.group(1)) > 0) or "SXM" in name.group(1):
        return "NVLink"
    assert "PCIe" in name.group(1), name.group(1)
    return "PCIe"


@pytest.mark.parametrize("name", sorted(gpu.PRESETS))
def test_every_presets_link_is_its_target_configs_and_its_cost_presets(name):
    p = gpu.PRESETS[name]
    assert p.link == _config_link(gpu.target_config(p))
    assert p.link == hw_mod.PRESETS[p.hardware].link


def _info(name: str, hosts: int) -> gpu.GpuMeshInfo:
    """A one-axis-per-level mesh (hosts × 8 GPUs), as the helper places it (hosts outermost)."""
    n = hosts * 8
    return gpu.GpuMeshInfo(
        gpu=gpu.PRESETS[name],
        slices=1,
        hosts=hosts,
        gpus_per_host=8,
        device_kind=name,
        jaxlib="?",
        plugin="?",
        mesh_shape=(hosts, 8),
        axis_names=("data", "model"),
        device_ids=tuple(range(n)),
        host=tuple(i // 8 for i in range(n)),
        gpu_in_host=tuple(i % 8 for i in range(n)),
        slice_index=(0,) * n,
        device_memory=None,
        memory_fraction=gpu.MEMORY_FRACTION,
        nvlink_domain=gpu.PRESETS[name].nvlink_domain or 8,  # as gpu_mesh resolves 0
    )


def test_h100_pcie_gpus_in_a_host_talk_over_pcie_not_nvlink():
    assert _info("h100-pcie", 2).describe()[1:] == [
        "data: network (InfiniBand / Ethernet, across hosts)",
        "model: PCIe (within a host; H100 PCIe cards have no NVSwitch)",
    ]
    assert _info("h100-sxm", 2).describe()[2] == "model: NVLink (within a host)"
    with pytest.raises(ValueError, match="H100 PCIe GPUs talk over PCIe: they have no NVLink"):
        gpu.gpu_mesh("h100-pcie", (16,), ("data",), hosts=2, nvlink_domain=16)


@pytest.mark.skipif(bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or "")
def test_an_h100_pcie_gpu_mesh_says_pcie():
    mi = gpu.info(gpu.gpu_mesh("h100-pcie", (2, 4), ("data", "model")))
    assert mi.describe()[1:] == [
        "data: PCIe (within a host; H100 PCIe cards have no NVSwitch)",
        "model: PCIe (within a host; H100 PCIe cards have no NVSwitch)",
    ]
