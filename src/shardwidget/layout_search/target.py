"""What a search compiles for: the target's compiler, a mesh of each candidate's shape on it,
a helper process to compile in, and which link each mesh axis crosses.

Three kinds: "cpu" (a ``jax.sharding.AbstractMesh``: XLA's CPU compiler for N simulated
devices), "tpu" (a :func:`shardwidget.tpu_mesh`: libtpu for that topology) and "gpu" (a
:func:`shardwidget.gpu_mesh`: XLA's GPU compiler, jaxlib's CUDA plugin, for its hosts of GPUs;
NVLink within a host or an NVLink domain, the network across hosts).
"""

from __future__ import annotations

import math
from typing import Any

from jax.sharding import AbstractMesh, AxisType

from ..cost import hardware as hw_mod
from ..plan import gpu, machine, tpu
from ..plan import helper as helper_mod

HELPER_NICE = 5
"""How far below the kernel a search's helpers run (``os.nice``; each helper lowers itself at
its start, so XLA's threads inherit it). A search starts as many helpers as the machine has
cores, each compiling flat out; at the kernel's own priority the kernel waited its turn for a
core, and a full garbage collection of 30-40 ms stretched to ~100 ms. Measured on 2 cores, the
06 step on 256 chips, 60 s budget: the slowest ``1 + 1`` of a cold search was 88, 99 and 46 ms
at the same priority, 27, 18 and 38 ms at 5 below (the search's ratio 1.07-1.12 both ways). 5
is enough for the kernel to take a whole core (its weight is 3 times a helper's); more would
only starve the helpers further on a machine busy with other work."""

DEFAULT_CPU_PRESET = "tpu-v5e"
"""The preset a CPU target's estimates use when the search is given none."""


class Target:
    """A CPU target: XLA's CPU compiler for N simulated devices (an AbstractMesh)."""

    kind = "cpu"
    slow_link = "DCN"
    """What the estimate's parts call the link of :meth:`dcn_axes`' collectives."""

    def __init__(self, mesh: AbstractMesh) -> None:
        self.mesh = mesh
        self.n = int(math.prod(mesh.axis_sizes))

    @property
    def key(self) -> tuple[Any, ...]:
        """What the cache tells targets apart by (the compiler and the device count)."""
        return ("cpu", self.n)

    @property
    def compiler(self) -> str:
        """The compiler, in words."""
        return f"XLA's CPU compiler for {self.n} simulated devices"

    def preset(self, hardware: str | hw_mod.Hardware | None) -> hw_mod.Hardware:
        """The hardware preset the estimates use: ``hardware`` where given, else the
        target's own (a TPU's family), else :data:`DEFAULT_CPU_PRESET`."""
        if hardware is not None:
            return hw_mod.hardware(hardware)
        return hw_mod.hardware(hw_mod.preset_for(self.mesh, DEFAULT_CPU_PRESET))

    def hbm_bytes(self, hw: hw_mod.Hardware) -> tuple[float, str]:
        """(bytes a device may use, where the figure comes from): on a tpu_mesh or gpu_mesh
        the memory a program gets there (one rule with plans and function views:
        plan/machine.py), else the preset's HBM."""
        m = machine.machine_of(self.mesh)
        if m is None or m.memory_bytes is None:
            return hw.hbm_bytes, f"the {hw.label or hw.name} preset's HBM"
        return m.memory_bytes, m.memory_source

    def mesh_for(self, shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
        """A mesh of this shape on the target (ValueError in words where it cannot be)."""
        return AbstractMesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))

    def dcn_axes(self, mesh: AbstractMesh) -> tuple[str, ...]:
        """The mesh axes whose collectives cross slices or hosts (none on a CPU target)."""
        m = machine.machine_of(mesh)
        return () if m is None else m.dcn_axes

    def new_helper(self) -> helper_mod.Helper:
        """A helper process of its own for one of the search's parallel workers."""
        helper_mod.check_cpu_size(self.n)
        return helper_mod.Helper(self.n, HELPER_NICE)

    def request(
        self, helper: helper_mod.Helper, text: str, mesh: AbstractMesh, timeout: float
    ) -> dict[str, Any]:
        """The helper's reply for a lowered module (PlanError in words when it cannot)."""
        return dict(helper.compile(text, timeout))


class TpuTarget(Target):
    """A TPU topology: libtpu compiles each candidate for the topology's chips."""

    kind = "tpu"

    def __init__(self, mesh: AbstractMesh) -> None:
        super().__init__(mesh)
        mi = tpu.info(mesh)
        assert mi is not None
        self.info = mi

    @property
    def key(self) -> tuple[Any, ...]:
        mi = self.info
        return ("tpu", mi.topology, mi.num_slices, mi.chip_config_name, self.n)

    @property
    def compiler(self) -> str:
        return f"the TPU compiler (libtpu {self.info.libtpu}) for {self.info.title}"

    def mesh_for(self, shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
        mi = self.info
        return tpu.tpu_mesh(
            mi.topology,
            shape,
            names,
            num_slices=mi.num_slices,
            allow_split_physical_axes=mi.allow_split_physical_axes,
            chip_config_name=mi.chip_config_name,
        )

    def new_helper(self) -> helper_mod.Helper:
        return tpu.new_helper(HELPER_NICE)

    def request(
        self, helper: helper_mod.Helper, text: str, mesh: AbstractMesh, timeout: float
    ) -> dict[str, Any]:
        mi = tpu.info(mesh)
        assert mi is not None
        return tpu.request(helper, text, mi, timeout)


class GpuTarget(Target):
    """A :func:`shardwidget.gpu_mesh`: XLA's GPU compiler (jaxlib's CUDA plugin) compiles each
    candidate for the same GPUs, hosts and NVLink domain."""

    kind = "gpu"
    slow_link = "network"

    def __init__(self, mesh: AbstractMesh) -> None:
        super().__init__(mesh)
        mi = gpu.info(mesh)
        assert mi is not None
        self.info = mi

    @property
    def key(self) -> tuple[Any, ...]:
        mi = self.info
        return ("gpu", mi.gpu.name, mi.topology, mi.nvlink_domain, mi.memory_fraction, self.n)

    @property
    def compiler(self) -> str:
        return f"XLA's GPU compiler (jaxlib {self.info.jaxlib}, CUDA plugin) for {self.info.title}"

    def preset(self, hardware: str | hw_mod.Hardware | None) -> hw_mod.Hardware:
        """``hardware`` where given, else the GPU's own preset (ValueError in words where no
        preset has its speeds)."""
        if hardware is not None:
            return hw_mod.hardware(hardware)
        if not self.info.gpu.hardware:
            raise ValueError(
                f"no hardware preset has the {self.info.gpu.title}'s speeds: pass hardware="
            )
        return hw_mod.hardware(self.info.gpu.hardware)

    def mesh_for(self, shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
        mi = self.info
        return gpu.gpu_mesh(
            mi.gpu.name,
            shape,
            names,
            hosts=mi.hosts,
            gpus_per_host=mi.gpus_per_host,
            slices=mi.slices,
            nvlink_domain=mi.nvlink_domain,
            memory_fraction=mi.memory_fraction,
        )

    def new_helper(self) -> helper_mod.Helper:
        return gpu.new_helper(HELPER_NICE)

    def request(
        self, helper: helper_mod.Helper, text: str, mesh: AbstractMesh, timeout: float
    ) -> dict[str, Any]:
        mi = gpu.info(mesh)
        assert mi is not None
        return gpu.request(helper, text, mi, timeout)


def target_of(mesh: object, compiles: bool = True) -> Target:
    """The target a ``mesh=`` stands for: a :func:`shardwidget.tpu_mesh` (the TPU compiler),
    a :func:`shardwidget.gpu_mesh` (the GPU compiler) or an AbstractMesh (the CPU compiler);
    TypeError in words for anything else. ``compiles=False`` (a tree's search that compiles
    nothing): an AbstractMesh of any size, past the CPU compiler's limit."""
    if not isinstance(mesh, AbstractMesh):  # tpu_mesh and gpu_mesh make AbstractMeshes too
        raise TypeError(
            "search(..., mesh=) takes a shardwidget.tpu_mesh(...) (the TPU compiler), a "
            "shardwidget.gpu_mesh(...) (the GPU compiler) or a "
            f"jax.sharding.AbstractMesh (the CPU compiler); got {type(mesh).__name__}"
        )
    if tpu.is_tpu(mesh):
        return TpuTarget(mesh)
    if gpu.is_gpu(mesh):
        return GpuTarget(mesh)
    if compiles:
        helper_mod.check_cpu_size(int(math.prod(mesh.axis_sizes)))
    return Target(mesh)
