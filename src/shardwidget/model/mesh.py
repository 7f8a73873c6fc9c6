"""Mesh shapes: factorizations of a device count, validation, and Mesh construction.

Pure functions except :func:`build_mesh`, which asks JAX for a mesh over real devices.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jax
from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec

from .. import _jax

MAX_AXES = 4
HARD_MAX_AXES = 16  # the most axes any mesh may have here, its own included
DEFAULT_AXIS_NAMES = ("x", "y", "z", "w")
AXIS_TYPES = ("auto", "explicit")


@lru_cache(maxsize=256)
def factorizations(n: int, k: int) -> tuple[tuple[int, ...], ...]:
    """Every ordered k-tuple of positive integers whose product is n, in lexicographic order."""
    if n < 1 or k < 1:
        return ()
    if k == 1:
        return ((n,),)
    out: list[tuple[int, ...]] = []
    for d in range(1, n + 1):
        if n % d == 0:
            out.extend((d, *rest) for rest in factorizations(n // d, k - 1))
    return tuple(out)


def first_factorizations(n: int, k: int, limit: int) -> list[tuple[int, ...]]:
    """The first ``limit`` of :func:`factorizations` (n, k), found without listing the others
    (a 200-axis shape has more factorizations than memory holds)."""
    out: list[tuple[int, ...]] = []

    def walk(prefix: tuple[int, ...], rest: int, slots: int) -> None:
        if slots == 1:
            out.append((*prefix, rest))
            return
        for d in range(1, rest + 1):
            if rest % d == 0:
                walk((*prefix, d), rest // d, slots - 1)
                if len(out) >= limit:
                    return

    if n >= 1 and k >= 1 and limit > 0:
        walk((), n, k)
    return out[:limit]


def all_factorizations(n: int, max_axes: int = MAX_AXES) -> dict[str, list[list[int]]]:
    """{"1": [[n]], "2": [[1, n], ...], ...}: what the mesh-shape control offers."""
    return {str(k): [list(f) for f in factorizations(n, k)] for k in range(1, max_axes + 1)}


def default_axis_names(k: int) -> list[str]:
    """The names the controls give k new mesh axes."""
    if k <= len(DEFAULT_AXIS_NAMES):
        return list(DEFAULT_AXIS_NAMES[:k])
    return [f"a{i}" for i in range(k)]


def _fmt_shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def validate_mesh(
    shape: Sequence[int],
    names: Sequence[str],
    types: Sequence[str],
    n_devices: int,
    max_axes: int = MAX_AXES,
    where: str = "the kernel",
) -> None:
    """Raise ValueError with a precise message when the mesh cannot be built on n_devices
    (with at most max_axes axes: more for an array whose own mesh has more); ``where`` names
    the device set in the message ("the kernel", "the array")."""
    shape = list(shape)
    max_axes = min(max_axes, HARD_MAX_AXES)
    if not 1 <= len(shape) <= max_axes:
        raise ValueError(f"a mesh has 1 to {max_axes} axes; got {len(shape)} ({_fmt_shape(shape)})")
    if any(not isinstance(s, int) or isinstance(s, bool) or s < 1 for s in shape):
        raise ValueError(f"mesh sizes must be positive integers; got {_fmt_shape(shape)}")
    size = 1
    for s in shape:
        size *= s
    if size != n_devices:
        valid = ", ".join(_fmt_shape(f) for f in first_factorizations(n_devices, len(shape), 12))
        raise ValueError(
            f"mesh shape {_fmt_shape(shape)} has {size} devices, but {where} has {n_devices} "
            f"devices; shapes with {len(shape)} axes that fit: {valid}"
        )
    if len(names) != len(shape):
        raise ValueError(
            f"the mesh has {len(shape)} axes but {len(names)} axis names were given "
            f"({', '.join(map(repr, names))})"
        )
    for name in names:
        # Any non-empty string JAX takes ("data-parallel", "x y"); "" would read as no axis.
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"axis name {name!r} is not valid: use a non-empty string such as 'x' or 'data'"
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"axis name {name!r} is used twice; each mesh axis needs its own name")
        seen.add(name)
    if len(types) != len(shape):
        raise ValueError(f"the mesh has {len(shape)} axes but {len(types)} axis types were given")
    for t in types:
        if t not in AXIS_TYPES:
            raise ValueError(f"axis type {t!r} is not one of {', '.join(map(repr, AXIS_TYPES))}")


def build_mesh(
    shape: Sequence[int],
    names: Sequence[str],
    types: Sequence[str],
    devices: Sequence[jax.Device] | None = None,
) -> jax.sharding.Mesh:
    """A Mesh over the given devices (default: all of them), validated first."""

    devs = list(devices) if devices is not None else jax.devices()
    validate_mesh(shape, names, types, len(devs), max(MAX_AXES, len(shape)))
    axis_types = tuple(AxisType.Explicit if t == "explicit" else AxisType.Auto for t in types)
    return jax.make_mesh(tuple(shape), tuple(names), axis_types=axis_types, devices=devs)


def is_planned(mesh: object) -> bool:
    """Whether mesh is a ``jax.sharding.AbstractMesh``: axis names and sizes, no devices (a
    plan for a pod the kernel does not have). Its devices are positions 0…N-1, row-major."""
    return isinstance(mesh, jax.sharding.AbstractMesh)


@lru_cache(maxsize=64)
def mesh_sizes(mesh: Mesh | AbstractMesh) -> tuple[int, ...]:
    """The axis sizes of a Mesh or an AbstractMesh."""
    if is_planned(mesh):
        return tuple(int(n) for n in mesh.axis_sizes)
    return tuple(int(n) for n in mesh.devices.shape)


@lru_cache(maxsize=64)
def mesh_ids(mesh: Mesh | AbstractMesh) -> tuple[int, ...]:
    """Device ids in mesh order (row-major): a Mesh's devices' ids, an AbstractMesh's
    positions 0…N-1 (cached: asked once per leaf, meshes are few)."""
    if is_planned(mesh):
        return tuple(range(int(mesh.size)))
    return tuple(int(d.id) for d in mesh.devices.flat)


def planned_text(mesh: Mesh | AbstractMesh) -> str:
    """How a view names a plan: "planned on AbstractMesh (32, 8) · no devices"; a TPU plan
    (``shardwidget.tpu_mesh``) by its topology: "planned on TPU v5 lite v5e:16x16 (16, 16)"."""
    device = getattr(mesh, "abstract_device", None)
    topology = str(getattr(device, "topology", "")).split("/", 1)[0]
    if topology and getattr(device, "platform", "") == "cuda":  # a gpu_mesh: "h100/1x2x8/…"
        where = str(getattr(device, "topology", "")).split("/")[1]
        kind = getattr(device, "device_kind", "GPU")
        said = tuple(getattr(device, "links", ()))  # what each axis crosses: NVLink, network
        pairs = zip(mesh.axis_names, said, strict=True) if len(said) == len(mesh.axis_names) else ()
        tail = "".join(f"{' · ' if i == 0 else ', '}{a}: {x}" for i, (a, x) in enumerate(pairs))
        return f"planned on {kind} {where} {_fmt_shape(mesh_sizes(mesh))} · no devices{tail}"
    if topology:
        kind = getattr(device, "device_kind", "TPU")
        sizes = mesh_sizes(mesh)
        axes = physical_axes(sizes, tuple(mesh.axis_names), getattr(device, "positions", ()))
        along = ", ".join(f"{a} along {' × '.join(p) or '—'}" for a, p in axes.items())
        return f"planned on {kind} {topology} {_fmt_shape(sizes)} · no devices · {along}"
    return f"planned on AbstractMesh {_fmt_shape(mesh_sizes(mesh))} · no devices"


PHYSICAL = ("x", "y", "z", "core", "slice")


def physical_axes(
    sizes: Sequence[int], names: Sequence[str], where: Sequence[Any]
) -> dict[str, tuple[str, ...]]:
    """For each logical axis, the physical axes (``PHYSICAL``; "slice": across slices, DCN)
    its steps move along, from each position's ((x, y, z), core, slice) in row-major order
    (a TPU plan's mesh carries them); {} without positions."""
    n = 1
    for s in sizes:
        n *= int(s)
    if len(where) != n:
        return {}

    def at(p: int) -> tuple[int, ...]:
        c, core, sl = where[p]
        return (*tuple(c)[:3], int(core), int(sl))

    out: dict[str, tuple[str, ...]] = {}
    stride = n
    for name, size in zip(names, sizes, strict=True):
        stride //= int(size)
        moved: set[int] = set()
        for step in range(1, int(size)):
            a, b = at(0), at(step * stride)
            moved |= {k for k in range(len(a)) if a[k] != b[k]}
        out[str(name)] = tuple(PHYSICAL[k] for k in sorted(moved))
    return out


def build_abstract_mesh(
    shape: Sequence[int], names: Sequence[str], types: Sequence[str], n: int
) -> Any:
    """An AbstractMesh of n positions (a planned view's mesh), validated first."""

    validate_mesh(shape, names, types, n, max(MAX_AXES, len(shape)), where="the plan")
    axis_types = tuple(AxisType.Explicit if t == "explicit" else AxisType.Auto for t in types)
    return _jax.abstract_mesh(tuple(shape), tuple(names), axis_types)


def mesh_axis_types(mesh: Mesh | AbstractMesh) -> list[str]:
    """'auto' / 'explicit' per axis; Manual axes (inside shard_map) are reported as 'auto'."""
    out = []
    for t in mesh.axis_types:
        out.append("explicit" if t.name == "Explicit" else "auto")
    return out


def xla_unsafe(name: str) -> bool:
    """Whether XLA cannot read an axis name back from the compiled module: it aborts the
    process (a failed ``absl::CUnescape`` check) on non-ASCII names, so ``jax.jit`` of any
    program over such a mesh kills the kernel (JAX 0.10)."""
    return not name.isascii() or "\\" in name or '"' in name


def xla_safe_sharding(sharding: jax.sharding.Sharding) -> Any:
    """sharding with its mesh's axes renamed (``_sw0``, ``_sw1``, …) when XLA cannot read one
    of their names (:func:`xla_unsafe`): the same devices in the same order, the same blocks.
    Any other sharding is returned as it is."""

    mesh = getattr(sharding, "mesh", None)
    if not isinstance(sharding, NamedSharding) or not isinstance(mesh, jax.sharding.Mesh):
        return sharding
    if not any(xla_unsafe(str(a)) for a in mesh.axis_names):
        return sharding
    ren = {a: f"_sw{i}" for i, a in enumerate(mesh.axis_names)}

    def entry(e: object) -> Any:
        if e is None or e is PartitionSpec.UNCONSTRAINED:
            return e
        return tuple(ren[a] for a in e) if isinstance(e, tuple) else ren[e]

    spec = sharding.spec
    new_spec = PartitionSpec(
        *(entry(e) for e in spec),
        unreduced={ren[a] for a in spec.unreduced},
        reduced={ren[a] for a in spec.reduced},
    )
    new_mesh = jax.sharding.Mesh(mesh.devices, tuple(ren.values()), axis_types=mesh.axis_types)
    return NamedSharding(new_mesh, new_spec, memory_kind=sharding.memory_kind)


def xla_safe_array(arr: jax.Array) -> Any:
    """arr itself, or (a mesh axis name XLA cannot read, see :func:`xla_safe_sharding`) the
    same device buffers as an array over the renamed mesh: no copy, arr untouched."""
    sh = xla_safe_sharding(arr.sharding)
    if sh is arr.sharding:
        return arr
    try:
        return jax.make_array_from_single_device_arrays(
            arr.shape, sh, [s.data for s in arr.addressable_shards]
        )
    except Exception:  # (unreduced arrays have no shards to alias)
        return arr
