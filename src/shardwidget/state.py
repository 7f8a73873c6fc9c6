"""The layout a person asks for (mesh shape, axis names and types, spec, memory kind) as data.

Validation here is complete: a state that passes :func:`validate` builds a NamedSharding that
``jax.device_put`` accepts for the array. Imports no widget code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import mesh as mesh_mod
from . import spec as spec_mod


@dataclass(frozen=True)
class LayoutState:
    """The layout a person asks for in an array view, as data (what the controls send).

    Attributes:
        mesh_shape: size of each mesh axis; their product is the device count.
        axis_names: one name per mesh axis.
        axis_types: "auto" or "explicit" per mesh axis.
        spec: the normalized PartitionSpec, one tuple of axis names per dimension.
        memory_kind: "device", "pinned_host", …
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...]
    spec: spec_mod.NormSpec
    memory_kind: str

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
        return LayoutState(shape, names, types, spec_mod.normalize(raw_spec, ndim), kind)

    def to_wire(self) -> dict[str, Any]:
        """The trait values (and front-end request state) of this layout."""
        return {
            "mesh_shape": list(self.mesh_shape),
            "axis_names": list(self.axis_names),
            "axis_types": list(self.axis_types),
            "spec": spec_mod.to_wire(self.spec),
            "memory_kind": self.memory_kind,
        }

    @property
    def mesh_key(self) -> tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...]]:
        """(mesh_shape, axis_names, axis_types): equal keys build the same mesh."""
        return (self.mesh_shape, self.axis_names, self.axis_types)


def default_state(ndim: int, n_devices: int, memory_kind: str) -> LayoutState:
    """One axis "x" over every device, the array replicated."""
    return LayoutState((n_devices,), ("x",), ("auto",), ((),) * ndim, memory_kind)


def state_of_sharding(sharding: Any, ndim: int) -> LayoutState | None:
    """The state that reproduces a NamedSharding, or None for other shardings."""
    from jax.sharding import NamedSharding

    if not isinstance(sharding, NamedSharding):
        return None
    m = sharding.mesh
    return LayoutState(
        tuple(int(s) for s in m.devices.shape),
        tuple(str(a) for a in m.axis_names),
        tuple(mesh_mod.mesh_axis_types(m)),  # type: ignore[arg-type]
        spec_mod.normalize(sharding.spec.partitions, ndim),  # unreduced: the partitions
        str(sharding.memory_kind or "device"),
    )


def validate(
    state: LayoutState, shape: Sequence[int], n_devices: int, memory_kinds: Sequence[str]
) -> None:
    """Raise ValueError, naming what is wrong and what would work, or return None."""
    mesh_mod.validate_mesh(state.mesh_shape, state.axis_names, state.axis_types, n_devices)
    axes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
    spec_mod.validate(state.spec, shape, axes)
    if state.memory_kind not in memory_kinds:
        raise ValueError(
            f"memory kind {state.memory_kind!r} is not offered by these devices; choose one of: "
            + ", ".join(memory_kinds)
        )


def build_sharding(state: LayoutState, mesh: Any) -> Any:
    """The NamedSharding of state on mesh."""
    from jax.sharding import NamedSharding

    return NamedSharding(
        mesh, spec_mod.to_partition_spec(state.spec), memory_kind=state.memory_kind
    )
