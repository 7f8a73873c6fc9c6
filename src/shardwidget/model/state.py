"""The layout a person asks for (mesh shape, axis names and types, spec, memory kind) as data.

Validation here is complete: a state that passes :func:`validate` builds a NamedSharding that
``jax.device_put`` accepts for the array. Imports no widget code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh, NamedSharding

from .. import _jax
from .._jax import spec_entries
from . import mesh as mesh_mod
from . import spec as spec_mod
from .gspmd import named_equivalent


@dataclass(frozen=True)
class LayoutState:
    """The layout a person asks for in an array view, as data (what the controls send).

    Attributes:
        mesh_shape: size of each mesh axis; their product is the device count.
        axis_names: one name per mesh axis.
        axis_types: "auto" or "explicit" per mesh axis.
        spec: the normalized PartitionSpec, one tuple of axis names per dimension.
        memory_kind: "device", "pinned_host", …
        devices: the devices the mesh is made of: "array", the array's own (in its own order:
            a sub-mesh stays on its devices), or "all", every device of the kernel
            (``jax.make_mesh`` order).
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...]
    spec: spec_mod.NormSpec
    memory_kind: str
    devices: str = "all"

    @staticmethod
    def from_wire(d: dict[str, Any], ndim: int) -> LayoutState:
        """From trait values / a front-end request; raises ValueError on malformed input."""
        try:
            shape = tuple(d["mesh_shape"])
            names = tuple(d["axis_names"])
            types = tuple(d["axis_types"])
            kind = d["memory_kind"]
            raw_spec = d["spec"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"incomplete layout request: {e}") from None
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise ValueError(f"mesh sizes must be integers; got {list(shape)}")
        if not isinstance(kind, str):
            raise ValueError(f"memory kind must be a string; got {kind!r}")
        devices = d.get("devices", "all")  # absent in pages saved before the choice existed
        if devices not in DEVICE_SETS:
            raise ValueError(
                f"devices must be one of {', '.join(map(repr, DEVICE_SETS))}; got {devices!r}"
            )
        return LayoutState(shape, names, types, spec_mod.normalize(raw_spec, ndim), kind, devices)

    def to_wire(self) -> dict[str, Any]:
        """The trait values (and front-end request state) of this layout."""
        return {
            "mesh_shape": list(self.mesh_shape),
            "axis_names": list(self.axis_names),
            "axis_types": list(self.axis_types),
            "spec": spec_mod.to_wire(self.spec),
            "memory_kind": self.memory_kind,
            "devices": self.devices,
        }

    @property
    def mesh_key(self) -> tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...]]:
        """(mesh_shape, axis_names, axis_types): equal keys (on the same devices) build the
        same mesh."""
        return (self.mesh_shape, self.axis_names, self.axis_types)


DEVICE_SETS = ("array", "all")
"""What a layout's mesh may be made of: the array's own devices, or all of them."""


def default_state(ndim: int, n_devices: int, memory_kind: str) -> LayoutState:
    """One axis "x" over every device, the array replicated."""
    return LayoutState((n_devices,), ("x",), ("auto",), ((),) * ndim, memory_kind)


def state_of_sharding(sharding: jax.sharding.Sharding, ndim: int) -> LayoutState | None:
    """The state that reproduces a NamedSharding, or None for other shardings."""
    if not isinstance(sharding, NamedSharding):
        return None
    m = sharding.mesh
    return LayoutState(
        tuple(int(s) for s in m.devices.shape),
        tuple(str(a) for a in m.axis_names),
        tuple(mesh_mod.mesh_axis_types(m)),
        spec_mod.normalize(spec_entries(sharding.spec), ndim),  # unreduced: the partitions
        str(sharding.memory_kind or "device"),
    )


def own_state(
    sharding: jax.sharding.Sharding,
    shape: tuple[int, ...],
    mesh: Any | None,
    relabel: dict[str, str] | None = None,
) -> LayoutState:
    """The layout of an array's own sharding as the controls describe it, on its own devices
    (``devices="array"``): its mesh and spec (``mesh``: the NamedSharding's mesh, or the mesh
    of a GSPMD tile assignment, see :mod:`.gspmd`); a single-device array is a mesh of one
    device. ``relabel`` renames mesh axes (pmap's internal axis). Without a mesh (a custom
    layout) the array's devices as one axis, replicated: a target, not the array's layout."""
    kind = str(sharding.memory_kind or "device")
    names = relabel or {}
    ndim = len(shape)
    if mesh is None:
        n = len(_jax.device_assignment(sharding))
        return LayoutState((n,), ("x",), ("auto",), ((),) * ndim, kind, "array")
    spec = (
        spec_mod.normalize(spec_entries(sharding.spec), ndim)
        if isinstance(sharding, NamedSharding)
        else spec_mod.normalize(_equivalent_spec(sharding, shape), ndim)
    )
    return LayoutState(
        tuple(int(s) for s in mesh.devices.shape),
        tuple(names.get(str(a), str(a)) for a in mesh.axis_names),
        tuple(mesh_mod.mesh_axis_types(mesh)),
        tuple(tuple(names.get(a, a) for a in entry) for entry in spec),
        kind,
        "array",
    )


def _equivalent_spec(sharding: jax.sharding.Sharding, shape: tuple[int, ...]) -> Any:
    named = named_equivalent(sharding, shape)
    return spec_entries(named.spec) if named is not None else None


def validate(
    state: LayoutState,
    shape: Sequence[int],
    n_devices: int,
    memory_kinds: Sequence[str],
    max_axes: int = mesh_mod.MAX_AXES,
    where: str = "the kernel",
) -> None:
    """Raise ValueError, naming what is wrong and what would work, or return None.
    ``n_devices``: how many devices the state's device set has; ``max_axes``: the most mesh
    axes allowed (more than the controls offer for an array whose own mesh has more)."""
    mesh_mod.validate_mesh(
        state.mesh_shape, state.axis_names, state.axis_types, n_devices, max_axes, where
    )
    axes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
    spec_mod.validate(state.spec, shape, axes)
    if state.memory_kind not in memory_kinds:
        raise ValueError(
            f"memory kind {state.memory_kind!r} is not offered by these devices; choose one of: "
            + ", ".join(memory_kinds)
        )


def build_sharding(state: LayoutState, mesh: Mesh | AbstractMesh) -> Any:
    """The NamedSharding of state on mesh."""
    return NamedSharding(
        mesh, spec_mod.to_partition_spec(state.spec), memory_kind=state.memory_kind
    )
