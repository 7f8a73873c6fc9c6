"""A tiny fourth kind of view, made the way README "Adding a kind of view" says, from this file
alone: ``ShardView(MeshOf(n))`` shows which device sits at each position of a mesh of n
devices as ``jax.make_mesh`` lays it out. Its state, its path (no widget code) and its thin
widget class; the base (views/base.py) gives it validation, the request boundary, busy,
error, undo/redo and the lifecycle. No file of the package names it."""

from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any, ClassVar

import jax
import numpy as np
import traitlets

from shardwidget.views.base import ShardView


@dataclasses.dataclass(frozen=True)
class MeshOf:
    """What ``ShardView`` is given: a mesh of n devices to show (first as ``shape``, else
    one axis)."""

    n: int
    shape: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class MeshState:
    """The kind's layout state: the mesh's shape."""

    mesh_shape: tuple[int, ...]

    def to_wire(self) -> dict[str, Any]:
        return {"mesh_shape": list(self.mesh_shape)}


class MeshPath:
    """The kind's change path (a ChangePath[MeshState, jax.sharding.Mesh])."""

    def __init__(self, n: int) -> None:
        self.n = n

    def from_wire(self, d: dict[str, Any]) -> MeshState:
        shape = d.get("mesh_shape")
        if not isinstance(shape, list | tuple) or not all(isinstance(s, int) for s in shape):
            raise ValueError(f"mesh_shape must be a list of ints, got {shape!r}")
        return MeshState(tuple(shape))

    def adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """Nothing to complete: the shape is the whole state."""

    def check(self, st: MeshState) -> None:
        if math.prod(st.mesh_shape) != self.n or any(s < 1 for s in st.mesh_shape):
            raise ValueError(f"a mesh of {self.n} devices; {list(st.mesh_shape)} holds another")

    def compute(self, st: MeshState) -> jax.sharding.Mesh:
        names = tuple(f"a{i}" for i in range(len(st.mesh_shape)))
        explicit = (jax.sharding.AxisType.Explicit,) * len(names)
        return jax.make_mesh(
            st.mesh_shape, names, axis_types=explicit, devices=jax.devices()[: self.n]
        )

    def label(self, st: MeshState) -> str:
        return "×".join(map(str, st.mesh_shape))


class MeshView(ShardView[MeshState, jax.sharding.Mesh]):
    """``ShardView(MeshOf(n))``: the device ids at each mesh position."""

    _KIND_RANK = 10
    STATE_TRAITS: ClassVar[tuple[str, ...]] = ("mesh_shape",)
    REQUEST_TYPE: ClassVar[str] = "mesh_request"
    SYNCED: ClassVar[tuple[str, ...]] = ("_ids",)
    _path: MeshPath

    mesh_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    _ids = traitlets.List().tag(sync=True)

    @classmethod
    def _accepts(cls, obj: Any) -> bool:
        return isinstance(obj, MeshOf)

    def _build(self, obj: Any, /, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError("ShardView(MeshOf(n)) takes nothing else")
        self._path = MeshPath(obj.n)
        self._open()
        self._quiet = False
        self._change(MeshState(obj.shape or (obj.n,)))

    def _is_shown(self, st: MeshState) -> bool:
        return st == self._shown

    def _publish(self, st: MeshState, result: jax.sharding.Mesh) -> None:
        self._shown = st
        ids = np.vectorize(lambda d: d.id)(result.devices).tolist()
        self._set_traits({**st.to_wire(), "error": "", "_ids": ids})
        self._remember(st)

    def to_svg(self, width: int = 760) -> str:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}"><text>{self._ids}</text></svg>'

    def save_html(self, path: str | pathlib.Path) -> Any:
        raise ValueError("a mesh view is not saved")

    def _static_html(self) -> str:
        return self.to_svg()

    def _picture_name(self) -> str:
        return "mesh"
