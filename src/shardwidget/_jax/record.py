"""A JAX sharding read once, where it enters, into one frozen record of plain data.

:func:`record_of` is the one crossing per sharding and shape: it reads a NamedSharding (on a
Mesh or an AbstractMesh, a topology's included; Auto or Explicit axes; unreduced and reduced
sets; any memory kind), a GSPMDSharding's tile assignment, a PmapSharding (jax 0.7's pmap
outputs) and a SingleDeviceSharding into a :class:`ShardingRecord`, and the model reads only
that record (``shardwidget.model.layout``). Nothing in a record is a JAX object.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from . import (
    device_assignment,
    hlo_sharding,
    pmap_sharding_named,
    spec_entries,
    typeof_axes,
    unnamed_pmap_axis,
)

Index = tuple[tuple[int, int], ...]
"""A block of an array: (start, stop) per dimension."""


@dataclass(frozen=True)
class DeviceInfo:
    """One device as the views show it.

    Attributes:
        id: the device id; platform: "cpu", "gpu", "tpu"; kind: the device kind ("TPU v4");
        process_index: the process that owns it; coords: its position in the physical
        topology (TPU), else None; core_on_chip: its core on a multi-core chip, else None.
    """

    id: int
    platform: str
    kind: str
    process_index: int
    coords: tuple[int, ...] | None = None
    core_on_chip: int | None = None


@dataclass(frozen=True)
class MeshRecord:
    """A mesh as plain data.

    Attributes:
        axis_names: the axis names, in mesh order.
        axis_sizes: devices along each axis.
        axis_types: "auto" or "explicit" per axis (Manual axes read as "auto").
        device_ids: device ids in mesh order, row-major (an AbstractMesh: positions 0…N-1).
        planned: whether the mesh is an AbstractMesh (a plan: positions, no devices).
        pmap_axis: the axis pmap named for the user (JAX's internal name, which differs
            between versions: :func:`~shardwidget._jax.unnamed_pmap_axis`), else None.
        axis_links: what a step along each axis travels over, in words, where the mesh
            stands for a machine that says so (``shardwidget.gpu_mesh``: "NVLink (within a
            host)", "network (InfiniBand / Ethernet, across hosts)"); () where unknown.
        domain_hosts: hosts joined by one NVLink domain where it spans several (a GB200
            NVL72 of 18 hosts: 18); 0 otherwise.
    """

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[str, ...]
    device_ids: tuple[int, ...]
    planned: bool = False
    pmap_axis: str | None = None
    axis_links: tuple[str, ...] = ()
    domain_hosts: int = 0


@dataclass(frozen=True)
class TileRecord:
    """A GSPMD sharding's XLA tile assignment.

    Attributes:
        dims: tiles per array dimension, then one last dimension of replicas where the
            sharding has replicated subgroups (for a fully replicated sharding: ones, then
            the device count).
        order: for each tile (row-major over ``dims``), its device's position in the
            sharding's device assignment (:attr:`ShardingRecord.devices`).
        replicas_only: whether every subgroup is a replica group (False for manual or
            unreduced subgroups, which no mesh and spec say).
    """

    dims: tuple[int, ...]
    order: tuple[int, ...]
    replicas_only: bool


@dataclass(frozen=True)
class ShardingRecord:
    """One JAX sharding of an array of a given shape, as plain data.

    Attributes:
        sharding_type: the sharding's class name ("NamedSharding", "GSPMDSharding", …).
        memory_kind: where the shards live ("device", "pinned_host", …).
        shape: the array's shape the record was read for.
        mesh: a NamedSharding's mesh; for a PmapSharding, the one-axis mesh it stands for
            (named ``PMAP_INTERNAL_AXIS``); None otherwise.
        spec: the spec's partition entries, one tuple of axis names per entry (() for a
            replicated one), as many as the spec writes; None without a mesh.
        unreduced: the spec's unreduced axes, in mesh order (then sorted); () for none.
        reduced: the spec's reduced axes, the same way.
        typeof_sets: the unreduced and reduced axes in the order ``jax.typeof`` writes them
            where that is not mesh order (before jax 0.10); ((), ()) otherwise.
        tile: a GSPMD sharding's tile assignment; None for the others.
        devices: every device of the sharding in XLA's order (the device assignment; a plan:
            its positions, with TPU coordinates where the mesh stands for a topology), each
            with its process.
        indices: (device id, block) for every device, from ``devices_indices_map`` of the
            partitions, where the mesh and spec alone do not give the blocks with numpy (a
            sharding without a mesh, an uneven cut, an axis the mesh lacks); None where they
            do (the model lays them out).
    """

    sharding_type: str
    memory_kind: str
    shape: tuple[int, ...]
    mesh: MeshRecord | None
    spec: tuple[tuple[str, ...], ...] | None
    unreduced: tuple[str, ...]
    reduced: tuple[str, ...]
    typeof_sets: tuple[tuple[str, ...], tuple[str, ...]]
    tile: TileRecord | None
    devices: tuple[DeviceInfo, ...]
    indices: tuple[tuple[int, Index], ...] | None

    @property
    def processes(self) -> tuple[int, ...]:
        """The process of each device, in :attr:`devices` order."""
        return tuple(d.process_index for d in self.devices)


@lru_cache(maxsize=1 << 16)
def device_info(d: jax.Device) -> DeviceInfo:
    """DeviceInfo of a jax device (cached: a process's devices never change, and every new
    layout of thousands of devices asks for all of them)."""
    coords = getattr(d, "coords", None)
    core = getattr(d, "core_on_chip", None)
    return DeviceInfo(
        id=int(d.id),
        platform=str(d.platform),
        kind=str(getattr(d, "device_kind", d.platform)),
        process_index=int(getattr(d, "process_index", 0)),
        coords=tuple(int(c) for c in coords) if coords is not None else None,
        core_on_chip=int(core) if core is not None else None,
    )


@lru_cache(maxsize=8)
def positions(n: int) -> tuple[DeviceInfo, ...]:
    """The devices of a plan (an AbstractMesh of n positions): position i as device id i."""
    return tuple(DeviceInfo(i, "planned", "position", process_index=0) for i in range(n))


@lru_cache(maxsize=8)
def planned_devices(mesh: Mesh | AbstractMesh) -> tuple[DeviceInfo, ...]:
    """The devices of a plan: its positions (:func:`positions`), with each position's chip
    coordinates and core where the mesh stands for a TPU topology (``shardwidget.tpu_mesh``:
    its abstract device carries them; the slice, on several slices, as a fourth coordinate),
    or each GPU's place where it stands for GPUs (``shardwidget.gpu_mesh``: (GPU on its host,
    host) and the slice on several; the process is the host's, as the CUDA plugin numbers
    them)."""
    device = getattr(mesh, "abstract_device", None)
    where = getattr(device, "positions", ())
    n = int(mesh.size)
    if len(where) != n:
        return positions(n)
    slices = len({s for _, _, s in where}) > 1
    kind = str(getattr(device, "device_kind", "TPU"))
    if getattr(device, "platform", "") == "cuda":
        hosts = 1 + max(int(c[1]) for c, _, _ in where)
        return tuple(
            DeviceInfo(i, "gpu", kind, s * hosts + c[1], (c[0], c[1], s) if slices else c[:2])
            for i, (c, _, s) in enumerate(where)
        )
    return tuple(
        DeviceInfo(i, "tpu", kind, 0, (*c, s) if slices else tuple(c), core)
        for i, (c, core, s) in enumerate(where)
    )


def is_planned(mesh: object) -> bool:
    """Whether mesh is a ``jax.sharding.AbstractMesh`` (positions, no devices)."""
    return isinstance(mesh, jax.sharding.AbstractMesh)


@lru_cache(maxsize=64)
def mesh_record(mesh: Mesh | AbstractMesh) -> MeshRecord:
    """A jax Mesh or AbstractMesh as a MeshRecord (cached: meshes are few)."""
    planned = is_planned(mesh)
    unnamed = unnamed_pmap_axis(mesh.axis_names)
    sizes = mesh.axis_sizes if planned else mesh.devices.shape
    return MeshRecord(
        axis_names=tuple(str(a) for a in mesh.axis_names),
        axis_sizes=tuple(int(n) for n in sizes),
        axis_types=tuple("explicit" if t.name == "Explicit" else "auto" for t in mesh.axis_types),
        device_ids=tuple(range(int(mesh.size)))
        if planned
        else tuple(int(d.id) for d in mesh.devices.flat),
        planned=planned,
        pmap_axis=None if unnamed is None else str(unnamed),
        **_machine(mesh) if planned else {},
    )


def _machine(mesh: Mesh | AbstractMesh) -> dict[str, Any]:
    """A planned mesh's ``axis_links`` and ``domain_hosts`` from its abstract device (where
    it stands for GPUs that say so: one link per axis)."""
    device = getattr(mesh, "abstract_device", None)
    links = tuple(str(x) for x in getattr(device, "links", ()))
    if len(links) != len(mesh.axis_names):
        return {}
    return {"axis_links": links, "domain_hosts": int(getattr(device, "domain_hosts", 0))}


def _entries(pspec: jax.sharding.PartitionSpec) -> tuple[tuple[str, ...], ...]:
    """A PartitionSpec's partition entries as tuples of axis names (() for None)."""
    return tuple(
        () if e is None else (str(e),) if isinstance(e, str) else tuple(str(a) for a in e)
        for e in spec_entries(pspec)
    )


def _in_mesh_order(axes: Any, order: tuple[str, ...]) -> tuple[str, ...]:
    names = {str(a) for a in axes or ()}
    return tuple(a for a in order if a in names) + tuple(sorted(names - set(order)))


def _numpy_lays_out(
    mesh: MeshRecord, spec: tuple[tuple[str, ...], ...], shape: tuple[int, ...]
) -> bool:
    """Whether the mesh and spec give the blocks with numpy (the model's reading): every axis
    in the mesh, every dimension cut evenly, no more entries than dimensions."""
    if len(spec) > len(shape):
        return False
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    for entry, n in zip(spec, shape, strict=False):
        if any(a not in sizes for a in entry):
            return False
        if n % int(np.prod([sizes[a] for a in entry], dtype=np.int64)):
            return False
    return True


def indices_of(sharding: Any, shape: tuple[int, ...]) -> tuple[tuple[int, Index], ...]:
    """(device id, block) for every device of the sharding, from ``devices_indices_map``."""
    out = []
    for d, idx in sharding.devices_indices_map(shape).items():
        block = []
        for s, n in zip(idx, shape, strict=True):
            if isinstance(s, int):  # a PmapSharding's unstacked dimension
                block.append((s, s + 1))
                continue
            start, stop, step = s.indices(n)
            if step != 1:  # never produced by JAX shardings today
                raise ValueError(f"strided shard index {s} is not supported")
            block.append((start, stop))
        out.append((int(d.id), tuple(block)))
    return tuple(out)


def _tile(sharding: jax.sharding.Sharding, ndim: int) -> TileRecord | None:
    hs = hlo_sharding(sharding)
    if hs is None:
        return None
    n = len(device_assignment(sharding))
    if hs.is_replicated():
        return TileRecord((1,) * ndim + (n,), tuple(range(n)), True)
    if not hs.is_tiled():
        return None
    dims = tuple(int(d) for d in hs.tile_assignment_dimensions())
    order = tuple(int(i) for i in hs.tile_assignment_devices())
    extra = len(dims) - ndim
    kinds = [str(t) for t in hs.subgroup_types()] if extra > 0 else []
    return TileRecord(dims, order, extra >= 0 and all("REPLICATED" in k for k in kinds))


def _partitions(sharding: NamedSharding) -> NamedSharding:
    """The sharding without its unreduced / reduced sets (JAX's ``devices_indices_map`` refuses
    an unreduced spec; the partitions are what each device's partial value covers)."""
    pspec = sharding.spec
    if not (getattr(pspec, "unreduced", None) or getattr(pspec, "reduced", None)):
        return sharding
    bare = PartitionSpec(*spec_entries(pspec))
    return NamedSharding(sharding.mesh, bare, memory_kind=sharding.memory_kind)


@lru_cache(maxsize=64)
def record_of(sharding: Any, shape: tuple[int, ...]) -> ShardingRecord:
    """The record of a sharding for an array of this shape (cached per sharding and shape)."""
    named = sharding if isinstance(sharding, NamedSharding) else None
    if named is None:
        named = pmap_sharding_named(sharding, len(shape))  # (jax 0.7's pmap outputs)
    mesh = spec = None
    unreduced: tuple[str, ...] = ()
    reduced: tuple[str, ...] = ()
    sets: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    if named is not None:
        mesh = mesh_record(named.mesh)
        spec = _entries(named.spec)
        unreduced = _in_mesh_order(getattr(named.spec, "unreduced", ()), mesh.axis_names)
        reduced = _in_mesh_order(getattr(named.spec, "reduced", ()), mesh.axis_names)
        sets = (
            typeof_axes(getattr(named.spec, "unreduced", ()), unreduced),
            typeof_axes(getattr(named.spec, "reduced", ()), reduced),
        )
    laid_out = isinstance(sharding, NamedSharding) and _numpy_lays_out(mesh, spec, shape)  # type: ignore[arg-type]  # (a NamedSharding has both)
    if mesh is not None and mesh.planned:
        devices = planned_devices(sharding.mesh)
        indices = None  # (no devices_indices_map without devices: the model says why)
    else:
        devices = tuple(device_info(d) for d in device_assignment(sharding))
        geometry = _partitions(sharding) if isinstance(sharding, NamedSharding) else sharding
        indices = None if laid_out else indices_of(geometry, shape)
    return ShardingRecord(
        sharding_type=type(sharding).__name__,
        memory_kind=str(sharding.memory_kind or "device"),
        shape=tuple(shape),
        mesh=mesh,
        spec=spec,
        unreduced=unreduced,
        reduced=reduced,
        typeof_sets=sets,
        tile=_tile(sharding, len(shape)),
        devices=devices,
        indices=indices,
    )
