"""Shard geometry of an array, read from the adapter's record of its sharding
(:class:`~shardwidget._jax.record.ShardingRecord`, made once where the sharding enters). No
widget code.

The blocks come from ``sharding.devices_indices_map(shape)`` as the record carries it, which
covers every device of the sharding, addressable or not, so multi-process arrays are described
whole; a NamedSharding's from its mesh and spec with numpy (the same blocks, checked in
tests/model/test_layout.py and tests/test_sharding_record.py). A NamedSharding on an
AbstractMesh (a plan) takes that path only: its devices are the mesh's positions 0…N-1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar, cast

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh
from numpy.typing import DTypeLike

from .. import _jax
from .._jax.record import DeviceInfo, MeshRecord, ShardingRecord, mesh_record, record_of
from . import gspmd
from . import spec as spec_mod

__all__ = ["Block", "DeviceInfo", "Layout", "MeshInfo", "layout_of", "layout_of_sharding"]

Index = tuple[tuple[int, int], ...]
T = TypeVar("T")


@dataclass(frozen=True)
class Block:
    """One distinct piece of the array and every device that holds a copy of it."""

    index: Index  # (start, stop) per dimension
    devices: tuple[int, ...]  # device ids, ordered by replica id

    @property
    def shape(self) -> tuple[int, ...]:
        """The block's shape (stop - start per dimension)."""
        return tuple(stop - start for start, stop in self.index)

    @property
    def replica_ids(self) -> dict[int, int]:
        """Device id -> its replica number among the holders of this block."""
        return {d: r for r, d in enumerate(self.devices)}

    @property
    def slices(self) -> tuple[slice, ...]:
        """The block as a numpy index: ``host[block.slices]``."""
        return tuple(slice(a, b) for a, b in self.index)


@dataclass(frozen=True)
class MeshInfo:
    """A mesh as plain data: axis names, sizes and types, device ids in mesh order."""

    axis_names: tuple[str, ...]
    """The mesh axis names, in mesh order."""
    axis_sizes: tuple[int, ...]
    """Devices along each axis."""
    axis_types: tuple[str, ...]
    """"auto" or "explicit" (or "manual") per axis."""
    device_ids: tuple[int, ...]  # mesh order, row-major
    pmap_axis: str | None = None
    """The axis pmap named for the user (JAX's internal name), else None."""
    axis_links: tuple[str, ...] = ()
    """What a step along each axis travels over, in words, where the mesh says (a
    ``gpu_mesh``: "NVLink (within a host)", "network (InfiniBand / Ethernet, across hosts)");
    () where unknown."""
    domain_hosts: int = 0
    """Hosts joined by one NVLink domain where it spans several (GB200 NVL72: 18), else 0."""

    @property
    def axes(self) -> dict[str, int]:
        """Axis name -> size."""
        return dict(zip(self.axis_names, self.axis_sizes, strict=True))


@dataclass(frozen=True)
class Layout:
    """The geometry of an array's sharding as plain data (``ShardView(x).layout``).

    Attributes:
        shape, dtype, itemsize: of the global array.
        itemsize_bits: bits per element: 4 for int4 / uint4 (XLA packs two to a byte, so
            ``bytes_per_device`` and ``logical_bytes`` count ceil(elements * 4 / 8)); 0 in a
            Layout made by hand means ``itemsize * 8``.
        sharding_type: the sharding's class name ("NamedSharding", "SingleDeviceSharding", …).
        memory_kind: where the shards live ("device", "pinned_host", …).
        mesh: the mesh of a NamedSharding, or of a GSPMD layout's tile assignment (in its device
            order) where one describes it (:mod:`.gspmd`), else None (one device, or a
            custom layout).
        spec: the normalized PartitionSpec (a tuple of axis tuples), None without a mesh.
        blocks: the distinct pieces of the array, each with the devices that hold it.
        devices: every device of the sharding, in the sharding's order.
        device_block: device id -> the number of the block it holds.
        unreduced: the mesh axes of an unreduced spec (``P('y', unreduced={'x'})``, made by
            Explicit-mode reductions): each device holds a partial value, and a block's value
            is the sum of its holders' partials over these axes. () for every other array.
        reduced: the mesh axes of a spec's reduced set (``P('x', reduced={'y'})``): copies JAX
            marks as already reduced; the blocks are the partitions'. () for every other array.
        typeof_sets: the unreduced and the reduced axes in the order ``jax.typeof`` writes
            them, where that is not mesh order (JAX before 0.10 writes a set in its own
            order); ((), ()) otherwise.
    """

    shape: tuple[int, ...]
    dtype: str
    itemsize: int
    sharding_type: str
    memory_kind: str
    mesh: MeshInfo | None
    spec: spec_mod.NormSpec | None  # None when the sharding has no mesh
    blocks: tuple[Block, ...]
    devices: tuple[DeviceInfo, ...]  # the sharding's device order
    device_block: dict[int, int] = field(repr=False)  # device id -> block number
    unreduced: tuple[str, ...] = ()  # mesh order; the holders of a block hold partial sums
    reduced: tuple[str, ...] = ()  # mesh order; a spec's reduced set (replicas, marked reduced)
    itemsize_bits: int = 0  # bits per element (4 for int4, packed); 0: itemsize * 8
    # the unreduced and reduced axes in the order jax.typeof writes them (_jax.typeof_axes);
    # () where that is mesh order
    typeof_sets: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def derived(self, name: str, make: Callable[[Layout], T]) -> T:
        """``make(self)``, made once per layout and kept with it: what other layers derive from
        the geometry alone (numpy arrays of the blocks, payload lists), so that showing a
        layout again (cached by :func:`layout_of_sharding`) does not rebuild them. A layout
        never changes; callers must not change what they get either."""
        memo: dict[str, Any] = self.__dict__.setdefault("_derived", {})  # not a field
        if name not in memo:
            memo[name] = make(self)
        return cast(T, memo[name])  # (made by ``make`` under this name)

    @property
    def partial(self) -> bool:
        """Whether each device holds a partial value still to be summed over ``unreduced``."""
        return bool(self.unreduced)

    @property
    def partial_note(self) -> str:
        """The unreduced layout in words ("" for every other layout)."""
        if not self.unreduced:
            return ""
        axes = ", ".join(repr(a) for a in self.unreduced)
        return (
            f"unreduced over {axes}: each device holds a partial value; the array is the sum "
            f"of the partials over {axes} (statistics are of each partial)"
        )

    @property
    def n_devices(self) -> int:
        """How many devices the sharding spans."""
        return len(self.devices)

    @property
    def shard_shape(self) -> tuple[int, ...]:
        """The shape of one block (every block has the same shape)."""
        return self.blocks[0].shape if self.blocks else ()

    def _packed_bytes(self, n: int) -> int:
        """Bytes of n elements as XLA stores them: sub-byte dtypes (int4, uint4, float4)
        packed, ceil(n * bits / 8), as the compiled argument sizes count them."""
        bits = self.itemsize_bits or self.itemsize * 8
        return -(-n * bits // 8)

    @property
    def bytes_per_device(self) -> int:
        """Bytes of one block: what each device holds (sub-byte dtypes packed)."""
        return self._packed_bytes(int(np.prod(self.shard_shape, dtype=np.int64)))

    @property
    def logical_bytes(self) -> int:
        """Bytes of the whole array, counted once (sub-byte dtypes packed)."""
        return self._packed_bytes(int(np.prod(self.shape, dtype=np.int64)))

    @property
    def size(self) -> int:
        """Elements of the whole array (0 for an empty one, e.g. shape (0, 8))."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def empty(self) -> bool:
        """Whether the array has no elements: its layout is still drawn, its blocks hold none."""
        return self.size == 0

    @property
    def replication(self) -> int:
        """How many devices hold each element (for an unreduced layout: each partial, as the
        holders of a block along the unreduced axes hold different partials)."""
        partials = 1
        if self.mesh is not None:
            partials = int(np.prod([self.mesh.axes[a] for a in self.unreduced], dtype=np.int64))
        return self.n_devices // max(1, len(self.blocks) * partials)

    @property
    def processes(self) -> tuple[int, ...]:
        """The processes that own the devices, sorted."""
        return tuple(sorted({d.process_index for d in self.devices}))

    @property
    def typeof(self) -> str:
        """jax.typeof-style: float32[4@x,8@y]; every sharded dimension gets its axes."""
        dims = []
        for i, n in enumerate(self.shape):
            axes = self.spec[i] if self.spec is not None else ()
            if not axes:
                dims.append(str(n))
            elif len(axes) == 1:
                dims.append(f"{n}@{axes[0]}")
            else:
                dims.append(f"{n}@({','.join(axes)})")
        marks = [
            f"{k}:{axes[0] if len(axes) == 1 else '(' + ','.join(written or axes) + ')'}"
            for k, axes, written in (
                ("U", self.unreduced, self.typeof_sets[0]),
                ("R", self.reduced, self.typeof_sets[1]),
            )
            if axes
        ]
        tail = "{" + ", ".join(marks) + "}" if marks else ""  # as jax.typeof writes them
        return f"{self.dtype}[{','.join(dims)}]{tail}"

    @property
    def custom(self) -> bool:
        """Several devices and no mesh and spec that describe the layout ("custom layout")."""
        return self.mesh is None and self.n_devices > 1

    @property
    def spec_text(self) -> str:
        """The spec as written in Python, "P('x', None)", "P('y', unreduced={'x'})"; "" without
        a mesh."""
        if self.spec is None:
            return ""
        return spec_mod.to_text(self.spec, self.unreduced, self.reduced)


def dtype_name(dtype: DTypeLike) -> str:
    """A dtype's name as the views and pictures write it ("float32", "bfloat16", "int4"; a PRNG
    key dtype as JAX prints it, "key<fry>"; float0 by name)."""
    if is_extended(dtype):
        return str(dtype)
    if np.dtype(dtype) == jax.dtypes.float0:  # numpy prints it as a structured void dtype
        return "float0"
    return str(np.dtype(dtype))


def is_extended(dtype: Any) -> bool:
    """Whether a dtype is one of JAX's extended dtypes (a PRNG key's): no plain numpy dtype."""
    return bool(jax.numpy.issubdtype(dtype, jax.dtypes.extended))


def itemsize_of(dtype: DTypeLike) -> int:
    """Bytes per element; PRNG keys count their key data (e.g. 8 bytes for threefry)."""
    if is_extended(dtype):
        key_shape = _jax.prng_key_shape(dtype)
        if key_shape is not None:
            return int(np.prod(key_shape)) * int(np.dtype(jax.numpy.uint32).itemsize)
        return int(getattr(dtype, "itemsize", 0) or 0)
    return int(np.dtype(dtype).itemsize)


def itemsize_bits_of(dtype: DTypeLike) -> int:
    """Bits per element: 4 for int4 / uint4 / float4_e2m1fn (packed two to a byte), else
    itemsize_of(dtype) * 8 (PRNG keys: their key data)."""
    if not is_extended(dtype):
        bits = _jax.itemsize_bits(dtype)
        if bits is not None:
            return bits
    return itemsize_of(dtype) * 8


def mesh_info(mesh: Mesh | AbstractMesh) -> MeshInfo:
    """A jax Mesh as MeshInfo (an AbstractMesh: its positions 0…N-1 as device ids)."""
    return info_of(mesh_record(mesh))


def info_of(mesh: MeshRecord) -> MeshInfo:
    """The MeshInfo of the adapter's record of a mesh."""
    return MeshInfo(
        mesh.axis_names,
        mesh.axis_sizes,
        mesh.axis_types,
        mesh.device_ids,
        mesh.pmap_axis,
        mesh.axis_links,
        mesh.domain_hosts,
    )


Geometry = tuple[tuple[Block, ...], dict[int, int]]  # blocks, device id -> block number


def named_geometry(
    mesh: MeshInfo, spec: tuple[tuple[str, ...], ...], shape: tuple[int, ...]
) -> Geometry | None:
    """The geometry of a NamedSharding from its mesh and spec, with numpy: what
    _generic_geometry reads from devices_indices_map, without a Python step per device (4096
    devices: ~45 -> ~10 ms, on the path of every new layout). Dimension d is cut into the
    product of its axes' sizes, the first axis major; a device's block follows from its mesh
    coordinates; a block's holders come in mesh order, as JAX lists them. None (use the
    generic path) for anything else: an axis the mesh lacks, an uneven cut, a spec longer
    than the shape. A size-0 dimension is not cut at all: JAX gives every device the same
    empty index there, so the devices that differ only along its axes hold one block.
    tests/model/test_layout.py checks both paths agree."""
    if len(spec) > len(shape):
        return None
    names = list(mesh.axis_names)
    sizes = mesh.axis_sizes
    coords = np.indices(sizes).reshape(len(sizes), -1)
    cuts: list[int] = []
    block_of_dim: list[np.ndarray] = []
    for d, n in enumerate(shape):
        axes = spec[d] if d < len(spec) else ()
        k = np.zeros(coords.shape[1], np.int64)
        cut = 1
        for a in axes:
            if a not in names:
                return None
            if n == 0:  # every cut of a size-0 dimension is the same (0, 0): one block
                continue
            i = names.index(a)
            k = k * sizes[i] + coords[i]
            cut *= sizes[i]
        if n % cut:
            return None
        cuts.append(cut)
        block_of_dim.append(k)
    flat = (
        np.ravel_multi_index(tuple(block_of_dim), tuple(cuts))
        if shape
        else np.zeros(coords.shape[1], np.int64)
    )
    ids = np.array(mesh.device_ids, np.int64)
    order = np.argsort(flat, kind="stable")  # by block (row-major), holders in mesh order
    used, first = np.unique(flat[order], return_index=True)
    held = ids[order].tolist()
    bounds = [*first.tolist(), len(held)]
    size = [n // c for n, c in zip(shape, cuts, strict=True)]
    at = np.unravel_index(used, tuple(cuts)) if shape else ()
    per_dim = [
        list(zip((a * z).tolist(), ((a + 1) * z).tolist(), strict=True))
        for a, z in zip(at, size, strict=True)
    ]
    indices = list(zip(*per_dim, strict=True)) if shape else [()] * len(used)
    blocks = tuple(
        Block(index=ix, devices=tuple(held[bounds[j] : bounds[j + 1]]))
        for j, ix in enumerate(indices)
    )
    numbers = np.repeat(np.arange(len(blocks)), np.diff(bounds)).tolist()
    return blocks, dict(zip(held, numbers, strict=True))


def generic_geometry(indices: tuple[tuple[int, Index], ...]) -> Geometry:
    """The geometry of any sharding, from its record's (device id, block) pairs (JAX's
    ``devices_indices_map``, in its order)."""
    groups: dict[Index, list[int]] = {}
    for dev, idx in indices:
        groups.setdefault(idx, []).append(dev)
    # Row-major order of block starts: the order a person reads the array in. Blocks that
    # start together end together (equal shard shapes), so the index tuples themselves sort
    # the same way, without a key function (4096 blocks: a fifth of the time).
    ordered = sorted(groups.items(), key=lambda kv: kv[0])
    blocks = tuple(Block(index=k, devices=tuple(v)) for k, v in ordered)
    device_block = {d: b for b, blk in enumerate(blocks) for d in blk.devices}
    return blocks, device_block


@lru_cache(maxsize=64)
def layout_of_sharding(
    sharding: jax.sharding.Sharding, shape: tuple[int, ...], dtype: DTypeLike
) -> Layout:
    """Layout of an array with this sharding, shape and dtype (cached): the sharding crosses
    the JAX boundary once, as the adapter's :class:`~shardwidget._jax.record.ShardingRecord`."""
    return layout_of_record(record_of(sharding, shape), dtype)


def layout_of_record(rec: ShardingRecord, dtype: DTypeLike) -> Layout:
    """The Layout of an array whose sharding the adapter read into ``rec``."""
    shape = rec.shape
    mesh, spec = _mesh_and_spec(rec)
    if rec.indices is not None:
        blocks, device_block = generic_geometry(rec.indices)
    else:  # a mesh and spec numpy lays out (the adapter checked), or a plan's
        assert (
            rec.mesh is not None and rec.spec is not None
        )  # (the adapter reads no indices only then)
        found = named_geometry(info_of(rec.mesh), rec.spec, shape)
        if found is None:  # a plan's spec that does not fit: no devices_indices_map to ask
            raise ValueError(
                f"{spec_mod.to_text(rec.spec)} cannot lay out shape {shape} on "
                f"AbstractMesh {rec.mesh.axis_sizes} {rec.mesh.axis_names}"
            )
        blocks, device_block = found
    named = rec.sharding_type == "NamedSharding"
    return Layout(
        shape=shape,
        dtype=dtype_name(dtype),
        itemsize=itemsize_of(dtype),
        itemsize_bits=itemsize_bits_of(dtype),
        sharding_type=rec.sharding_type,
        memory_kind=rec.memory_kind,
        mesh=mesh,
        spec=spec,
        blocks=blocks,
        devices=rec.devices,
        device_block=device_block,
        unreduced=rec.unreduced if named else (),
        reduced=rec.reduced if named else (),
        typeof_sets=rec.typeof_sets if named else ((), ()),
    )


def _mesh_and_spec(rec: ShardingRecord) -> tuple[MeshInfo | None, spec_mod.NormSpec | None]:
    """The mesh and normalized spec that describe the record's layout: a NamedSharding's own;
    for a GSPMD or pmap sharding, the ones its tile assignment (or pmap's mesh) gives where
    they put the same blocks on the same devices (:mod:`.gspmd`); else (None, None)."""
    if rec.sharding_type == "NamedSharding" and rec.mesh is not None and rec.spec is not None:
        return info_of(rec.mesh), spec_mod.normalize(rec.spec, len(rec.shape))
    found = gspmd.equivalent(rec)
    if found is None:
        return None, None
    mesh, entries = found
    return info_of(mesh), spec_mod.normalize(entries, len(rec.shape))


def layout_of(arr: jax.Array) -> Layout:
    """The Layout of a jax.Array (from its sharding, shape and dtype)."""
    return layout_of_sharding(arr.sharding, tuple(int(s) for s in arr.shape), arr.dtype)
