"""The :class:`~shardwidget.cost.machine.Machine` a ``tpu_mesh`` or ``gpu_mesh`` stands for:
the one place that says which of its axes cross slow links and what memory a program gets,
for plans, function views planned on it and the layout search alike."""

from __future__ import annotations

from ..cost import hardware as hw_mod
from ..cost.machine import Machine
from . import gpu, tpu


def of_gpu(mi: gpu.GpuMeshInfo) -> Machine:
    """GPUs: the axes that leave a host's (or a rack's) NVLink domain; JAX's share of each
    GPU's memory (what ``Plan.fits`` judges)."""
    have = mi.usable_memory
    return Machine(
        dcn_axes=mi.network_axes(),
        memory_bytes=None if have is None else float(have),
        memory_source=gpu.share_words(mi) if have is not None else "",
        preset=mi.gpu.hardware or "",
    )


def of_tpu(mi: tpu.TpuMeshInfo) -> Machine:
    """TPUs: the axes that join slices (DCN); the TPU compiler's usable HBM of the family."""
    have = mi.hbm_bytes
    slow = tuple(a for a, phys in mi.physical_axes().items() if "slice" in phys)
    return Machine(
        dcn_axes=slow,
        memory_bytes=None if have is None else float(have),
        memory_source=f"the TPU compiler's usable HBM for {mi.family}" if have else "",
        preset=hw_mod.kind_preset(mi.device_kind),
    )


def machine_of(mesh: object) -> Machine | None:
    """What ``mesh`` stands for; None for a mesh of no TPU or GPU (a CPU plan, the kernel's)."""
    g = gpu.info(mesh)
    if g is not None:
        return of_gpu(g)
    t = tpu.info(mesh)
    return None if t is None else of_tpu(t)


def machine_of_info(info: object) -> Machine | None:
    """The same from a plan's ``topology`` (its GpuMeshInfo or TpuMeshInfo; None on CPU)."""
    if isinstance(info, gpu.GpuMeshInfo):
        return of_gpu(info)
    if isinstance(info, tpu.TpuMeshInfo):
        return of_tpu(info)
    return None
