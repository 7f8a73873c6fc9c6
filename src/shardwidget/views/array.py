"""ArrayView: ShardView(arr). Traits of the array view and its compute; no geometry or
statistics math.

A change runs :meth:`ShardView._change <shardwidget.views.base.ShardView._change>`: validate the
LayoutState, ``jax.device_put`` from the user's original array (never deleted, donated or
changed), publish geometry first and statistics second.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import pathlib
import re
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import numpy as np
import traitlets
from jax.sharding import PartitionSpec

from .. import _jax, wire
from ..cost.reshard import Transfer
from ..export.code import array_code
from ..export.page import save_array_view
from ..model import memory
from ..model import mesh as mesh_mod
from ..model import spec as spec_mod
from ..model import state as state_mod
from ..model import tiles as tiles_mod
from ..model.help import indivisible_hint, pad_for
from ..model.layout import Layout, layout_of, layout_of_sharding
from ..model.state import LayoutState
from ..model.summary import Summary, plan_for, summarize
from ..render import scene, snapshot, text
from ..render.picture import array_svg
from ..trace.pmap import LABEL, relabel
from . import rerun
from ._source import (
    PartialSource,
    _coerce,
    _default_view_dims,
    _in_kernel,
    _movable,
    _own_mesh,
    _process_index,
    _source_of,
)
from .base import InvalidValue, ShardView, refuse_unknown
from .cost import CostMixin

if TYPE_CHECKING:
    from ..export.page import ExportReport

_UNSET = object()
LAYOUT_TRAITS = ("mesh_shape", "axis_names", "axis_types", "spec", "memory_kind", "devices")
INIT_KWARGS = (*LAYOUT_TRAITS, "view_dims", "stats")
MAX_SPEC_SCAN = 200_000  # spec combinations every_spec looks at, at most


class ArrayView(CostMixin, ShardView):
    """Live view of how a jax.Array is laid out across devices, with controls to re-lay it out.

    Made by ``ShardView(arr)`` (or ``ArrayView(arr)``): a jax.Array of any sharding, or a numpy
    array / scalar, which is placed on the default device. Keyword arguments set the initial
    layout (the layout traits below and ``view_dims``); ``stats=False`` turns off per-shard
    statistics. Other keyword arguments are refused with a close-match hint.
    """

    _KIND_RANK = 100  # the last kind asked: anything that is not another kind is an array

    @classmethod
    def _accepts(cls, obj: Any) -> bool:
        """Any object a function view or another kind does not take (a jax.Array, numpy data)."""
        return True

    STATE_TRAITS: ClassVar[tuple[str, ...]] = LAYOUT_TRAITS
    REQUEST_TYPE: ClassVar[str] = "request"
    SYNCED: ClassVar[tuple[str, ...]] = (
        *LAYOUT_TRAITS,
        "view_dims",
        "error",
        "busy",
        "_options",
        "_layout",
        "_stats",
        "hardware",
        "_hardware_presets",
        "_transfer",
    )
    FRONT_END_TRAITS: ClassVar[tuple[str, ...]] = ("view_dims", "hardware")
    PLAIN_TRAITS: ClassVar[tuple[str, ...]] = ("_layout", "_transfer")  # JSON types only
    TOP_BUFFER_TRAITS: ClassVar[tuple[str, ...]] = ("_stats",)  # wire.Stats: values, thumbs

    mesh_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int], default: the array's own mesh (else one axis of every device): the mesh
    shape; its product is the kernel's device count. Both directions."""
    axis_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str], default: the array's own (else ["x"]): one name per mesh axis. Both
    directions."""
    axis_types = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str], default: the array's own (else ["auto"]): "auto" or "explicit" per mesh axis.
    Both directions."""
    spec = traitlets.List(traitlets.Any()).tag(sync=True)
    """list[None | str | list[str]], default: the array's own (else replicated): the
    PartitionSpec, one entry per dimension. Both directions."""
    memory_kind = traitlets.Unicode("device").tag(sync=True)
    """str, default: the array's own ("device", "pinned_host", …): memory kind of the shown
    array. Both directions."""
    devices = traitlets.Unicode("array").tag(sync=True)
    """str, default "array": the devices a layout's mesh is made of: "array", the array's own
    devices (a sub-mesh stays on them; its own mesh order), or "all", every device of the
    kernel (``jax.make_mesh`` order). Both directions."""
    view_dims = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int], default: the sharded dimensions first: the array dimensions drawn as rows and
    columns (one for a 1-d array, none for a scalar). Both directions."""
    _options: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.Options: what the controls may offer. Python → JS."""
    _layout: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.LayoutWire: the geometry shown. Python → JS."""
    _stats: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.Stats: per-block statistics of the layout with the same key. Python → JS."""
    _transfer: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.TransferWire: what moving the original layout to the shown one moves, with its
    estimate on ``hardware`` (same key as ``_layout``). Python → JS."""

    def __init__(self, arr: Any, /, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError(
                f"ShardView(arr) takes one array; got {len(args)} more positional argument(s). "
                "To view a function, pass it first: ShardView(f, *args)"
            )
        refuse_unknown("ShardView", kwargs, INIT_KWARGS)

        source, note = _coerce(arr)
        self._source = source
        self._note = note
        self._with_stats = bool(kwargs.pop("stats", True))
        self._devices = list(jax.devices())
        self._memory_kinds = [m.kind for m in jax.local_devices()[0].addressable_memories()]
        self._ndim = source.ndim
        # The array's own layout in the controls' terms, and its own mesh (kept for layouts on
        # it, see _mesh_for): a NamedSharding's, a GSPMD tile assignment's (.gspmd), a mesh of
        # one device; pmap's internal axis named in words. None for a custom layout.
        self._mesh, relabel = _own_mesh(source)
        if relabel and not note:
            self._note = (
                f"a jax.pmap output: one slice per device along the mapped dimension; pmap's "
                f"unnamed mesh axis is shown as {LABEL!r}"
            )
        self._own_devices = (
            list(self._mesh.devices.flat)
            if self._mesh is not None
            else _jax.device_assignment(source.sharding)
        )
        shape = tuple(int(d) for d in source.shape)
        self._original: LayoutState | None = (
            state_mod.own_state(source.sharding, shape, self._mesh, relabel)
            if self._mesh is not None
            else None
        )
        self._mesh_key = self._original.mesh_key if self._original is not None else None
        self._max_axes = max(
            mesh_mod.MAX_AXES, len(self._original.mesh_shape) if self._original else 0
        )
        # What is shown, without holding a copy: the source (the user's own array), or the
        # sharding of a re-laid-out copy, which is released once its statistics are out and
        # re-made on demand (view.array); a weak reference finds it while someone holds it.
        self._sharding: Any = source.sharding
        self._is_source = True
        self._array_ref: Any = None
        self._held: Any = None  # the copy, only while its payload and statistics are made
        self._tiles: Any = _UNSET
        self._transfer_of: tuple[int, Transfer] | None = None  # (layout key, its Transfer)
        self._shown_summary: tuple[tuple[int, tuple[int, ...]], Summary] | None = None
        super().__init__()
        disabled = ""
        if jax.process_count() > 1:
            disabled = (
                "re-laying out is off with several processes: device_put would have to run "
                "on every process at once"
            )
        self._options = wire.options(
            n_devices=len(self._devices),
            platform=self._devices[0].platform,
            shape=list(source.shape),
            dtype=layout_of(source).dtype,
            memory_kinds=self._memory_kinds,
            original=self._original,
            reshard_disabled=disabled,
            own_devices=[int(d.id) for d in self._own_devices],
            max_axes=self._max_axes,
        )
        self._first = self._original or state_mod.own_state(source.sharding, shape, None)
        self._set_traits(self._first.to_wire())
        self.view_dims = _default_view_dims(source.ndim, layout_of(source).spec)
        self._quiet = False
        overrides = {k: kwargs[k] for k in LAYOUT_TRAITS if k in kwargs}
        if "view_dims" in kwargs:
            self.view_dims = kwargs["view_dims"]
        if overrides:
            self.set_layout(**overrides)
        else:
            self._publish(self._first, source)
        rerun.register(self)

    # ---------------------------------------------------------------- public API
    @property
    def array(self) -> Any:
        """The jax.Array now shown: the original, or the original laid out as shown. The view
        keeps no copy of its own: a re-laid-out copy is made again (``jax.device_put``) when
        asked for and no one holds the last one; the caller holds what it gets. ValueError when
        that is needed and the original array was deleted or donated."""
        if self._is_source:
            return self._source
        a = self._held if self._held is not None else None
        if a is None and self._array_ref is not None:
            a = self._array_ref()
        if a is None or a.is_deleted():
            self._check_source()  # a deleted original: say so (the layout shown stays)
            a = self._relayout(self._sharding, "re-creating the array shown")
            self._array_ref = weakref.ref(a)
        return a

    @property
    def layout(self) -> Layout:
        """Geometry of :attr:`array` as plain data: ``.blocks`` with ``.index``, ``.shape``,
        ``.devices``; ``.mesh``, ``.spec``, ``.devices``, byte counts."""
        return relabel(
            layout_of_sharding(
                self._sharding, tuple(int(d) for d in self._source.shape), self._source.dtype
            )
        )

    @property
    def summary(self) -> Summary:
        """Per-block statistics of :attr:`array` (computed now)."""
        return self._summarize(None, self.layout)

    @property
    def transfer(self) -> Transfer:
        """What moving the original array's layout to the shown one moves: ``.received`` /
        ``.sent`` (device id -> bytes; the sender rule is in :mod:`shardwidget.cost.transfer`),
        ``.total``, ``.pairs``, ``.collectives`` (what XLA compiles for the reshard; the compile
        is cached per pair of layouts) and ``.estimate(hw)``. Holds no device memory."""
        axes = spec_mod.unreduced_of(getattr(self._source.sharding, "spec", None))
        if axes:  # the byte count follows blocks; partials are summed, which it does not model
            raise PartialSource(
                f"the original array holds partial sums over {', '.join(map(repr, axes))} "
                "(unreduced): any other layout first sums them (an all-reduce over those "
                "axes), which the transfer estimate does not model"
            )
        if self._transfer_of is None or self._transfer_of[0] != self._key:
            src = self._source
            self._transfer_of = (
                self._key,
                Transfer(src.sharding, self._sharding, tuple(src.shape), src.dtype),
            )
        return self._transfer_of[1]

    @property
    def code(self) -> str:
        """Python that lays an array bound to ``x`` out as shown: the mesh (axis names, types
        and device order), then ``x = jax.device_put(x, NamedSharding(mesh, P(...),
        memory_kind=...))``. What the widget's "copy" button copies."""
        return array_code(self.layout)

    def to_svg(self, width: int = 760) -> str:
        """The view as a standalone SVG (no browser needed), drawn like the live view: header,
        the grid over ``view_dims`` with its rulers (index ranges, which axes shard which
        dimension), holders' colours with stripes for copies, heatmaps, device ids, the mesh,
        and the legend with the heatmap's colour bar. Holds no device memory afterwards."""
        return self._svg(width, compute=True)

    def _svg(self, width: int = 760, *, compute: bool) -> str:
        """to_svg's drawing, from the statistics the view last published (the same numbers as
        the widget's); with compute=False never computed here (the display bundle's picture
        is drawn off the update path and does no device work)."""
        summ = None
        if self._with_stats:
            shown = self._shown_summary
            if shown is not None and shown[0] == (self._key, tuple(self.view_dims)):
                summ = shown[1]
            elif compute:
                summ = self.summary
        return array_svg(
            self.layout, summ, tuple(self.view_dims), width=width, n_devices=len(self._devices)
        )

    def _picture_name(self) -> str:
        lay = self.layout
        spec = re.sub(r"[^A-Za-z0-9_]+", "_", lay.spec_text).strip("_")
        return f"shardwidget_{lay.dtype}_{'x'.join(map(str, lay.shape))}_{spec}".rstrip("_")

    @property
    def layout_state(self) -> LayoutState:
        """The layout in the controls now (mesh, axis names and types, spec, memory kind)."""
        st: LayoutState = self._candidate({})
        return st

    def reset(self) -> None:
        """Show the original array again, with its own layout in the controls (ValueError when
        it was deleted)."""
        self._check_source()
        self._publish(self._original or self._first, self._source)

    def propose(self, changes: dict[str, Any]) -> LayoutState:
        """The layout of the current one with ``changes`` (layout trait names), validated but
        not applied. ValueError naming what is wrong (an unknown key included)."""
        bad = [k for k in changes if k not in LAYOUT_TRAITS]
        if bad:
            raise ValueError(f"unknown key {bad[0]!r}; use {', '.join(LAYOUT_TRAITS)}")
        st: LayoutState = self._candidate(changes)
        self._validate(st, self._source.shape)
        return st

    def every_spec(self, limit: int | None = None) -> list[LayoutState]:
        """Every valid spec for the current mesh (each axis used at most once, in any order
        within a dimension), with the current mesh, names, types and memory kind; the first
        ``limit`` of them when given (their number grows exponentially with the rank)."""
        return list(itertools.islice(self._iter_specs(), limit))

    def _iter_specs(self) -> Iterator[LayoutState]:
        base = self._candidate({})
        names = list(base.axis_names)
        sizes = dict(zip(names, base.mesh_shape, strict=True))
        choices: list[tuple[str, ...]] = [()]
        for r in range(1, len(names) + 1):
            choices += [c for c in itertools.permutations(names, r) if all(sizes[a] > 1 for a in c)]
        # per dimension, only the choices whose shard count divides it (far fewer combinations)
        per_dim = [
            [c for c in choices if n % math.prod(sizes[a] for a in c) == 0]
            for n in self._source.shape
        ]
        for scanned, combo in enumerate(itertools.product(*per_dim)):
            if scanned >= MAX_SPEC_SCAN:  # a bound on the work, whatever the rank
                return
            used = [a for c in combo for a in c]
            if len(used) != len(set(used)):
                continue
            try:
                spec_mod.validate(tuple(combo), self._source.shape, sizes)
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

    def variant(self, st: LayoutState, key: int) -> wire.Variant:
        """The geometry and statistics of the array laid out as st, under layout key ``key``,
        without changing the view (what a saved page stores to answer its controls)."""
        self._check(st)
        arr = self._compute(st)
        lay = relabel(layout_of(arr))
        return wire.variant(
            st,
            wire.layout(
                lay,
                key=key,
                source=_source_of(arr, self._source),
                note=self._note,
                local_process=_process_index(),
                code=lay.derived("code", array_code),
            ),
            wire.stats(self._summarize(arr, lay), key=key),
        )

    def save_html(
        self,
        path: str | pathlib.Path,
        variants: str | list[dict[str, Any]] | None = None,
        budget: int = 4 << 20,
    ) -> ExportReport:
        """Write one self-contained HTML file (no network, no kernel) showing this view with the
        notebook's renderer.

        ``variants="specs"`` also stores every valid spec for the current mesh; a list of dicts
        (e.g. ``[{"spec": ["x", None]}, {"mesh_shape": [4, 2]}]``) stores those layouts. The
        page's controls answer from what it stores, within ``budget`` bytes of variant data,
        and show other choices as unavailable. Returns a report of the size and what was kept.
        """
        return save_array_view(self, path, variants=variants, budget=budget)

    def _static_html(self) -> str:
        caption = scene.title(self.layout)
        return snapshot.picture_html(self._svg(compute=False), self.error, caption=caption)

    def __repr__(self) -> str:
        return text.render(
            self.layout,
            source=self._layout.get("source", "original"),
            note=self._note,
            view_dims=tuple(self.view_dims),
        )

    # ---------------------------------------------------------------- the change path
    def __setattr__(self, name: str, value: Any) -> None:
        """``view.spec = P("x", None)`` as ``view.spec = ["x", None]`` (a PartitionSpec is
        what JAX users write); every other assignment as for any view."""
        if name == "spec" and isinstance(value, PartitionSpec):
            value = list(value)
        super().__setattr__(name, value)

    def _from_wire(self, d: dict[str, Any]) -> LayoutState:
        return LayoutState.from_wire(d, self._ndim)

    def _adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        # A mesh shape that fits only the other device set picks that set, unless the change
        # names one: ShardView(numpy_array).mesh_shape = [2, 4] lays out on all 8 devices,
        # view.mesh_shape = [2] on an array of 2 of the 8 stays on its 2.
        try:
            n = math.prod(int(s) for s in d["mesh_shape"])
        except (TypeError, ValueError):
            return  # from_wire says what is wrong with it
        own, every = len(self._own_devices), len(self._devices)
        if "devices" in changes and "mesh_shape" not in changes:
            # Another device set alone: a mesh that no longer fits becomes one axis over the
            # new set, replicated unless a spec is given (the controls keep a shape that fits).
            want = own if changes["devices"] == "array" else every
            if n != want and changes["devices"] in state_mod.DEVICE_SETS:
                d["mesh_shape"] = [want]
                d["axis_names"] = changes.get("axis_names", ["x"])
                d["axis_types"] = changes.get("axis_types", list(d["axis_types"])[:1] or ["auto"])
                if "spec" not in changes:
                    d["spec"] = [None] * self._ndim
            return
        if "devices" in changes or "mesh_shape" not in changes:
            return
        if n == own != every:
            d["devices"] = "array"
        elif n == every != own:
            d["devices"] = "all"

    def _check(self, st: LayoutState) -> None:
        if self._options.get("reshard_disabled"):
            raise ValueError(self._options["reshard_disabled"])
        try:
            self._validate(st, self._source.shape)
        except ValueError as e:
            raise ValueError(self._with_pad_hint(str(e), st)) from None
        self._check_source()

    def _validate(self, st: LayoutState, shape: Any) -> None:
        """state.validate against the devices st lays out on (the array's own, or all)."""
        own = st.devices == "array"
        state_mod.validate(
            st,
            shape,
            len(self._own_devices) if own else len(self._devices),
            self._memory_kinds,
            self._max_axes,
            "the array" if own and len(self._own_devices) != len(self._devices) else "the kernel",
        )

    def _with_pad_hint(self, msg: str, st: LayoutState) -> str:
        """msg, ending with the padding that makes st fit, when padding is all st lacks (the
        padded shape passes the same validation). The message is capped when shown: the hint
        keeps its place, the first part gives way."""
        shape = tuple(int(d) for d in self._source.shape)
        axes = dict(zip(st.axis_names, st.mesh_shape, strict=False))
        try:
            padded = [n + a for n, (_, a) in zip(shape, pad_for(shape, st.spec, axes), strict=True)]
            self._validate(st, padded)
        except (ValueError, KeyError):
            return msg  # padding would not make it fit: the message says what is wrong
        hint = indivisible_hint(shape, st.spec, axes)
        room = wire.MAX_MESSAGE - len(hint) - 2
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + ". " + hint

    def _check_source(self) -> None:
        """ValueError when the user's array was deleted (or donated) since the view was made:
        every layout is made from it, its own included."""
        if self._source.is_deleted():
            raise ValueError(
                f"the original array (shape {tuple(self._source.shape)}, {self._source.dtype}) "
                "was deleted or donated after this view was made, so it cannot be shown, laid "
                "out or made again; the view keeps the layout it shows"
            )

    def _compute(self, st: LayoutState) -> Any:
        """The original array laid out as st (the original itself for its own layout)."""
        if st == self._original:
            return self._source
        return self._relayout(
            state_mod.build_sharding(st, self._mesh_for(st)),
            f"re-laying out to {spec_mod.to_text(st.spec)}",
        )

    def _mesh_for(self, st: LayoutState) -> Any:
        """The mesh of a layout, whatever came before (deterministic device assignment): the
        original array's own mesh (its device order) for its mesh shape, names and types, when
        that mesh is on st's devices; else ``jax.make_mesh`` over st's devices (the array's
        own, in their own order, or ``jax.devices()``), as ``mesh.build_mesh`` makes it."""
        own = st.devices == "array"
        same_devices = own or (self._mesh is not None and self._mesh.size == len(self._devices))
        if st.mesh_key == self._mesh_key and self._mesh is not None and same_devices:
            return self._mesh
        devices = self._own_devices if own else self._devices
        return mesh_mod.build_mesh(st.mesh_shape, st.axis_names, st.axis_types, devices)

    def _relayout(self, sharding: Any, what: str) -> Any:
        """The source laid out with sharding, after the memory guard (ValueError in words, with
        nothing done, when the copy would not fit in free device memory)."""

        shape = tuple(int(d) for d in self._source.shape)
        if sharding != self._source.sharding:
            per_device = layout_of_sharding(sharding, shape, self._source.dtype).bytes_per_device
            memory.check_fits({d: per_device for d in sharding.addressable_devices}, what)
        src = _movable(self._source)
        try:
            out = _jax.device_put(src, sharding)
        except AssertionError:  # JAX's reshard of a custom layout to another device order
            out = jax.device_put(np.asarray(src), sharding)
        out.block_until_ready()
        return out

    def _is_shown(self, st: LayoutState) -> bool:
        """The state shown already: changing to it does no device work."""
        return bool(st == self._shown)

    def _publish(self, st: LayoutState, arr: Any) -> None:
        """Show arr: geometry now, statistics right after; both in one update when the
        statistics come from the source's tiles (a few ms on the host, no device work)."""
        self._is_source = arr is self._source
        self._sharding = arr.sharding
        self._array_ref = None if self._is_source else weakref.ref(arr)
        self._shown = st
        self._key += 1
        lay = relabel(layout_of(arr))
        self._held = arr  # released below: the view keeps no copy between updates
        try:
            self._publish_layout(st, arr, lay)
        finally:
            self._held = None
        self._remember(st)

    def _publish_layout(self, st: LayoutState, arr: Any, lay: Layout) -> None:
        # Never delay the geometry for device work: only tiles already computed make it quick,
        # and with statistics off there is nothing to wait for (one update, not two).
        quick = not self._with_stats or self._tiles_for(lay, compute=False) is not None
        layout = wire.layout(
            lay,
            key=self._key,
            source=_source_of(arr, self._source),
            note=self._note,
            local_process=_process_index(),
            code=lay.derived("code", array_code),
        )
        stats = self._stats_now() if quick else wire.pending_stats(self._key)
        self._set_traits({**st.to_wire(), "error": "", "_layout": layout, "_stats": stats})
        if not quick:
            self._send_stats()
        self._publish_transfer()  # after the geometry and statistics, as they are

    @traitlets.validate(*LAYOUT_TRAITS)
    def _validate_layout(self, proposal: Any) -> Any:
        return self._validate_state(proposal)

    @traitlets.observe(*LAYOUT_TRAITS)
    def _on_layout_trait(self, change: Any) -> None:
        self._on_state_trait(change)

    # ---------------------------------------------------------------- statistics
    def _summarize(self, arr: Any | None, lay: Layout) -> Summary:
        """Statistics of arr (None: the array shown, re-created only when the source's tiles do
        not serve lay)."""
        n = len(self._devices)
        pixels, values = wire.thumb_pixel_budget(n), wire.values_budget(n)
        plan = plan_for(lay, tuple(self.view_dims), pixels, values)
        t = self._tiles_for(lay)
        if t is not None:
            return tiles_mod.summarize(t, lay, plan.thumb_dims, pixels, plan.values)
        return summarize(self.array if arr is None else arr, lay, plan)

    def _tiles_for(self, lay: Layout, compute: bool = True) -> tiles_mod.Tiles | None:
        """The source's tile partials when they serve this layout (computed once per view: the
        source's data never changes; with compute=False only if that already happened)."""
        if lay.partial:  # each device's partial, not the array's values: no tiles serve it
            return None
        if self._tiles is _UNSET and compute:
            n = len(self._devices)
            # An unreduced source holds partials: its tiles would not be the array's values.
            src_partial = bool(spec_mod.unreduced_of(getattr(self._source.sharding, "spec", None)))
            self._tiles = (
                None
                if src_partial
                else tiles_mod.tile_summary(self._source, n, wire.values_budget(n))
            )
        t = self._tiles
        return t if isinstance(t, tiles_mod.Tiles) and t.aligned(lay) else None

    def _stats_now(self) -> wire.Stats:
        if not self._with_stats:
            return wire.stats(
                Summary.unavailable(len(self.layout.blocks), "statistics are off (stats=False)"),
                key=self._key,
            )
        try:
            summ = self._summarize(self._held, self.layout)
        except Exception as e:  # statistics are an extra: never lose the view over them
            summ = Summary.unavailable(len(self.layout.blocks), f"statistics failed: {e}")
        # kept (host memory, bounded thumbnails) for the static pictures: the same numbers
        self._shown_summary = ((self._key, tuple(self.view_dims)), summ)
        return wire.stats(summ, key=self._key)

    def _send_stats(self) -> None:
        self._stats = self._stats_now()

    # ---------------------------------------------------------------- cost (issue 12)
    def _publish_transfer(self, compile_now: bool = False) -> None:
        """``_transfer`` for the layout shown: nothing for the original itself; a failure is
        shown in words (the cost is an extra: never lose the view over it).

        The bytes are computed now (a few ms). The reshard's compile (collectives, estimate)
        can take longer than the update itself on a first visit; in a kernel it is left to the
        event loop, after the update is answered, and ``_transfer`` is "pending" until then."""
        if self._is_source:
            self._transfer = wire.no_transfer(self._key)
            return
        try:
            t = self.transfer
            ids = [d.id for d in t.new.devices]
            if not compile_now and t.compiled_now is None and _later(self):
                self._transfer = wire.transfer(t, key=self._key, device_ids=ids, est=None)
                return
            est = t.estimate(self.hardware)
            self._transfer = wire.transfer(t, key=self._key, device_ids=ids, est=est)
        except PartialSource as e:  # said in words by the transfer itself
            self._transfer = wire.no_transfer(self._key, "unavailable", str(e))
        except Exception as e:
            msg = f"transfer not computed: {e}"
            self._transfer = wire.no_transfer(self._key, "unavailable", msg)

    def _compile_transfer(self) -> None:
        """The deferred half of _publish_transfer, for the layout still shown."""
        if self._transfer.get("status") == "pending" and self._transfer.get("key") == self._key:
            self._publish_transfer(compile_now=True)

    def _cost_changed(self) -> None:
        self._publish_transfer()

    @traitlets.validate("view_dims")
    def _validate_view_dims(self, proposal: Any) -> Any:
        dims = list(proposal["value"])
        want = min(self._ndim, 2)
        if (
            len(dims) != want
            or len(set(dims)) != len(dims)
            or any(not 0 <= d < self._ndim for d in dims)
        ):
            raise InvalidValue(
                f"view_dims must list {want} distinct dimension(s) of the {self._ndim}-d array "
                f"(0 to {self._ndim - 1}); got {dims}"
            )
        return dims

    @traitlets.observe("view_dims")
    def _on_view_dims(self, _change: Any) -> None:
        if not self._quiet:
            self._send_stats()  # thumbnails are drawn over the view dims


def _later(view: ArrayView) -> bool:
    """Compile the view's transfer soon on the kernel's event loop; False outside a kernel (the
    caller then does the work now). The loop holds only a weak reference: a view dropped
    meanwhile is freed, not kept for a callback."""
    if not _in_kernel():
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    ref = weakref.ref(view)

    def compile_transfer() -> None:
        v = ref()
        if v is not None:
            v._compile_transfer()

    loop.call_soon(compile_transfer)
    return True
