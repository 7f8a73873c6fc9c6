"""The array view's change path without widget code: a LayoutState read from a request,
checked against the array and the devices, and the user's array laid out as it says.

:class:`ArrayPath` holds the user's original array (never deleted, donated or changed) and
what the view needs to know about it: its own mesh and layout, the devices a layout may use,
the memory kinds. :class:`~shardwidget.views.array.ArrayView` runs it through
``ShardView._change`` and publishes the result; ``ArrayPath(x).compute(st)`` is the same
re-layout without a widget. The tree view shows its selected leaf's statistics through
:func:`leaf_summary` too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import numpy as np

from .. import _jax, wire
from ..export.code import array_code
from ..model import free_memory
from ..model import mesh as mesh_mod
from ..model import spec as spec_mod
from ..model import state as state_mod
from ..model import tiles as tiles_mod
from ..model.help import indivisible_hint, pad_for
from ..model.layout import Layout, layout_of, layout_of_sharding
from ..model.pmap_axis import relabel
from ..model.state import LayoutState
from ..model.summary import Summary, plan_for, summarize
from ._source import movable, own_mesh

_UNSET: Any = object()
MAX_SPEC_SCAN = 200_000  # spec combinations every_spec looks at, at most
MULTIPROCESS = (
    "re-laying out is off with several processes: device_put would have to run on every "
    "process at once"
)


def layout_wire(lay: Layout, key: int, source: str, note: str, code: bool) -> wire.LayoutWire:
    """The geometry payload of one array laid out as lay (the array view's ``_layout``, and
    the tree view's selected leaf); with code, the snippet that lays it out so."""
    return wire.layout(
        lay,
        key=key,
        source=source,
        note=note,
        local_process=int(jax.process_index()),
        code=lay.derived("code", array_code) if code else "",
    )


def leaf_summary(arr: jax.Array, lay: Layout, view_dims: tuple[int, ...], n: int) -> Summary:
    """Per-block statistics of arr laid out as lay, drawn over view_dims, within the payload
    budgets of n devices (the array view's, and the tree view's selected leaf)."""
    plan = plan_for(lay, view_dims, wire.thumb_pixel_budget(n), wire.values_budget(n))
    return summarize(arr, lay, plan)


class ArrayPath:
    """Read, check and compute a layout of one array (see the module's doc).

    Attributes:
        source: the user's array; devices: the kernel's; own_devices: the array's (its own
        mesh's order); mesh: the array's own mesh (None for a custom layout); original: its
        own layout as a LayoutState (None for a custom layout); first: the layout a view of it
        starts from; relabel: pmap's unnamed axis renamed for the controls.
    """

    def __init__(self, source: jax.Array) -> None:
        self.source = source
        self.devices = list(jax.devices())
        self.memory_kinds = [m.kind for m in jax.local_devices()[0].addressable_memories()]
        self.ndim = source.ndim
        # The array's own layout in the controls' terms, and its own mesh (kept for layouts on
        # it, see mesh_for): a NamedSharding's, a GSPMD tile assignment's (.gspmd), a mesh of
        # one device; pmap's internal axis named in words. None for a custom layout.
        self.mesh, self.relabel = own_mesh(source)
        self.own_devices = (
            list(self.mesh.devices.flat)
            if self.mesh is not None
            else _jax.device_assignment(source.sharding)
        )
        shape = self.shape
        self.original: LayoutState | None = (
            state_mod.own_state(source.sharding, shape, self.mesh, self.relabel)
            if self.mesh is not None
            else None
        )
        self.first = self.original or state_mod.own_state(source.sharding, shape, None)
        self.mesh_key = self.original.mesh_key if self.original is not None else None
        self.max_axes = max(
            mesh_mod.MAX_AXES, len(self.original.mesh_shape) if self.original else 0
        )
        self.reshard_disabled = MULTIPROCESS if jax.process_count() > 1 else ""
        self._tiles: tiles_mod.Tiles | None = _UNSET

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.source.shape)

    # ---------------------------------------------------------------- read and check
    def from_wire(self, d: dict[str, Any]) -> LayoutState:
        return LayoutState.from_wire(d, self.ndim)

    def adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """A mesh shape that fits only the other device set picks that set, unless the change
        names one: ShardView(numpy_array).mesh_shape = [2, 4] lays out on all 8 devices,
        view.mesh_shape = [2] on an array of 2 of the 8 stays on its 2."""
        try:
            n = math.prod(int(s) for s in d["mesh_shape"])
        except (TypeError, ValueError):
            return  # from_wire says what is wrong with it
        own, every = len(self.own_devices), len(self.devices)
        if "devices" in changes and "mesh_shape" not in changes:
            # Another device set alone: a mesh that no longer fits becomes one axis over the
            # new set, replicated unless a spec is given (the controls keep a shape that fits).
            want = own if changes["devices"] == "array" else every
            if n != want and changes["devices"] in state_mod.DEVICE_SETS:
                d["mesh_shape"] = [want]
                d["axis_names"] = changes.get("axis_names", ["x"])
                d["axis_types"] = changes.get("axis_types", list(d["axis_types"])[:1] or ["auto"])
                if "spec" not in changes:
                    d["spec"] = [None] * self.ndim
            return
        if "devices" in changes or "mesh_shape" not in changes:
            return
        if n == own != every:
            d["devices"] = "array"
        elif n == every != own:
            d["devices"] = "all"

    def check(self, st: LayoutState) -> None:
        if self.reshard_disabled:
            raise ValueError(self.reshard_disabled)
        try:
            self.validate(st, self.source.shape)
        except ValueError as e:
            raise ValueError(self.with_pad_hint(str(e), st)) from None
        self.check_source()

    def validate(self, st: LayoutState, shape: Sequence[int]) -> None:
        """state.validate against the devices st lays out on (the array's own, or all)."""
        own = st.devices == "array"
        state_mod.validate(
            st,
            shape,
            len(self.own_devices) if own else len(self.devices),
            self.memory_kinds,
            self.max_axes,
            "the array" if own and len(self.own_devices) != len(self.devices) else "the kernel",
        )

    def with_pad_hint(self, msg: str, st: LayoutState) -> str:
        """msg, ending with the padding that makes st fit, when padding is all st lacks (the
        padded shape passes the same validation). The message is capped when shown: the hint
        keeps its place, the first part gives way."""
        shape = self.shape
        axes = dict(zip(st.axis_names, st.mesh_shape, strict=False))
        try:
            padded = [n + a for n, (_, a) in zip(shape, pad_for(shape, st.spec, axes), strict=True)]
            self.validate(st, padded)
        except (ValueError, KeyError):
            return msg  # padding would not make it fit: the message says what is wrong
        hint = indivisible_hint(shape, st.spec, axes)
        room = wire.MAX_MESSAGE - len(hint) - 2
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + ". " + hint

    def check_source(self) -> None:
        """ValueError when the user's array was deleted (or donated) since the view was made:
        every layout is made from it, its own included."""
        if self.source.is_deleted():
            raise ValueError(
                f"the original array (shape {tuple(self.source.shape)}, {self.source.dtype}) "
                "was deleted or donated after this view was made, so it cannot be shown, laid "
                "out or made again; the view keeps the layout it shows"
            )

    def label(self, st: LayoutState) -> str:
        """The mesh, the spec and a memory kind other than "device", in a few words."""
        mesh = " × ".join(f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=False))
        kind = "" if st.memory_kind == "device" else f" · {st.memory_kind}"
        return f"mesh {mesh} · {spec_mod.to_text(st.spec)}{kind}"

    # ---------------------------------------------------------------- compute
    def compute(self, st: LayoutState) -> jax.Array:
        """The original array laid out as st (the original itself for its own layout)."""
        if st == self.original:
            return self.source
        return self.relayout(
            state_mod.build_sharding(st, self.mesh_for(st)),
            f"re-laying out to {spec_mod.to_text(st.spec)}",
        )

    def mesh_for(self, st: LayoutState) -> Any:
        """The mesh of a layout, whatever came before (deterministic device assignment): the
        original array's own mesh (its device order) for its mesh shape, names and types, when
        that mesh is on st's devices; else ``jax.make_mesh`` over st's devices (the array's
        own, in their own order, or ``jax.devices()``), as ``mesh.build_mesh`` makes it."""
        own = st.devices == "array"
        same_devices = own or (self.mesh is not None and self.mesh.size == len(self.devices))
        if st.mesh_key == self.mesh_key and self.mesh is not None and same_devices:
            return self.mesh
        devices = self.own_devices if own else self.devices
        return mesh_mod.build_mesh(st.mesh_shape, st.axis_names, st.axis_types, devices)

    def relayout(self, sharding: jax.sharding.Sharding, what: str) -> jax.Array:
        """The source laid out with sharding, after the memory guard (ValueError in words, with
        nothing done, when the copy would not fit in free device memory)."""
        shape = self.shape
        if sharding != self.source.sharding:
            per_device = layout_of_sharding(sharding, shape, self.source.dtype).bytes_per_device
            free_memory.check_fits({d: per_device for d in sharding.addressable_devices}, what)
        src = movable(self.source)
        try:
            out: jax.Array = _jax.device_put(src, sharding)
        except AssertionError:  # JAX's reshard of a custom layout to another device order
            out = jax.device_put(np.asarray(src), sharding)
        out.block_until_ready()
        return out

    def iter_specs(self, base: LayoutState) -> Iterator[LayoutState]:
        """Every valid spec on base's mesh (each axis at most once, in any order within a
        dimension), with base's mesh, names, types and memory kind; at most MAX_SPEC_SCAN
        combinations looked at."""
        names = list(base.axis_names)
        sizes = dict(zip(names, base.mesh_shape, strict=True))
        choices: list[tuple[str, ...]] = [()]
        for r in range(1, len(names) + 1):
            choices += [c for c in itertools.permutations(names, r) if all(sizes[a] > 1 for a in c)]
        # per dimension, only the choices whose shard count divides it (far fewer combinations)
        per_dim = [
            [c for c in choices if n % math.prod(sizes[a] for a in c) == 0]
            for n in self.source.shape
        ]
        for scanned, combo in enumerate(itertools.product(*per_dim)):
            if scanned >= MAX_SPEC_SCAN:  # a bound on the work, whatever the rank
                return
            used = [a for c in combo for a in c]
            if len(used) != len(set(used)):
                continue
            try:
                spec_mod.validate(tuple(combo), self.source.shape, sizes)
            except ValueError:
                continue
            yield LayoutState(
                base.mesh_shape,
                base.axis_names,
                base.axis_types,
                tuple(combo),
                base.memory_kind,
                base.devices,
            )

    def variant(
        self, st: LayoutState, arr: jax.Array, key: int, note: str, view_dims: tuple[int, ...]
    ) -> wire.Variant:
        """The geometry and statistics of arr (the array laid out as st, computed) under
        layout key ``key``: what a saved page stores to answer its controls."""
        lay = relabel(layout_of(arr))
        source = "original" if arr is self.source else "resharded"
        return wire.variant(
            st,
            layout_wire(lay, key, source, note, code=True),
            wire.stats(self.summarize(lay, view_dims, lambda: arr), key=key),
        )

    # ---------------------------------------------------------------- statistics
    def summarize(
        self, lay: Layout, view_dims: tuple[int, ...], array: Callable[[], jax.Array]
    ) -> Summary:
        """Statistics of the array laid out as lay: from the source's tiles when they serve
        lay, else of ``array()`` (the array shown, re-created only then)."""
        n = len(self.devices)
        pixels, values = wire.thumb_pixel_budget(n), wire.values_budget(n)
        t = self.tiles_for(lay)
        if t is not None:
            plan = plan_for(lay, view_dims, pixels, values)
            return tiles_mod.summarize(t, lay, plan.thumb_dims, pixels, plan.values)
        return leaf_summary(array(), lay, view_dims, n)

    def tiles_for(self, lay: Layout, compute: bool = True) -> tiles_mod.Tiles | None:
        """The source's tile partials when they serve this layout (computed once: the source's
        data never changes; with compute=False only if that already happened)."""
        if lay.partial:  # each device's partial, not the array's values: no tiles serve it
            return None
        if self._tiles is _UNSET and compute:
            n = len(self.devices)
            # An unreduced source holds partials: its tiles would not be the array's values.
            src_partial = bool(spec_mod.unreduced_of(getattr(self.source.sharding, "spec", None)))
            self._tiles = (
                None
                if src_partial
                else tiles_mod.tile_summary(self.source, n, wire.values_budget(n))
            )
        t = self._tiles
        return t if isinstance(t, tiles_mod.Tiles) and t.aligned(lay) else None
