"""ArrayView: ShardView(arr). Traits of the array view and its compute; no geometry or
statistics math.

A change runs :meth:`ShardView._change <shardwidget.views.base.ShardView._change>`: validate the
LayoutState, ``jax.device_put`` from the user's original array (never deleted, donated or
changed), publish geometry first and statistics second.
"""

from __future__ import annotations

import itertools
import pathlib
import re
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import traitlets
from jax.sharding import PartitionSpec
from traitlets.utils.bunch import Bunch

from .. import wire
from ..cost.reshard import Transfer
from ..export.code import array_code
from ..export.page import save_array_view
from ..model.layout import Layout, layout_of, layout_of_sharding
from ..model.pmap_axis import LABEL, relabel
from ..model.state import LayoutState
from ..model.summary import Summary
from ..render import scene, snapshot, text
from ..render.picture import array_svg
from ._source import (
    coerce,
    default_view_dims,
    source_of,
)
from .array_cost import TransferMixin
from .array_path import ArrayPath, layout_wire
from .base import ShardView, refuse_unknown
from .boundary import InvalidValue, kernel_loop

if TYPE_CHECKING:
    from ..export.page import ExportReport

LAYOUT_TRAITS = ("mesh_shape", "axis_names", "axis_types", "spec", "memory_kind", "devices")
INIT_KWARGS = (*LAYOUT_TRAITS, "view_dims", "stats")


class ArrayView(TransferMixin, ShardView[LayoutState, jax.Array]):
    """Live view of how a jax.Array is laid out across devices, with controls to re-lay it out.

    Made by ``ShardView(arr)`` (or ``ArrayView(arr)``): a jax.Array of any sharding, or a numpy
    array / scalar, which is placed on the default device. Keyword arguments set the initial
    layout (the layout traits below and ``view_dims``); ``stats=False`` turns off per-shard
    statistics. Other keyword arguments are refused with a close-match hint.
    """

    _KIND_RANK = 100  # the last kind asked: anything that is not another kind is an array
    _HOLDS: ClassVar[tuple[str, ...]] = ("_path", "_held")
    _path: ArrayPath

    @classmethod
    def _accepts(cls, obj: object) -> bool:
        """Any object a function view or another kind does not take (a jax.Array, numpy data)."""
        return True

    STATE_TRAITS: ClassVar[tuple[str, ...]] = LAYOUT_TRAITS
    REQUEST_TYPE: ClassVar[str] = "request"
    SYNCED: ClassVar[tuple[str, ...]] = (
        "view_dims",
        "_options",
        "_layout",
        "_stats",
        "hardware",
        "_hardware_presets",
        "_transfer",
        "cost_open",
    )
    FRONT_END_TRAITS: ClassVar[tuple[str, ...]] = ("view_dims", "hardware", "cost_open")
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

    def _build(self, arr: Any, /, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError(
                f"ShardView(arr) takes one array; got {len(args)} more positional argument(s). "
                "To view a function, pass it first: ShardView(f, *args)"
            )
        refuse_unknown("ShardView", kwargs, INIT_KWARGS)

        source, note = coerce(arr)
        self._path = ArrayPath(source)
        self._note = note
        self._with_stats = bool(kwargs.pop("stats", True))
        if self._path.relabel and not note:
            self._note = (
                f"a jax.pmap output: one slice per device along the mapped dimension; pmap's "
                f"unnamed mesh axis is shown as {LABEL!r}"
            )
        # What is shown, without holding a copy: the source (the user's own array), or the
        # sharding of a re-laid-out copy, which is released once its statistics are out and
        # re-made on demand (view.array); a weak reference finds it while someone holds it.
        self._sharding: Any = source.sharding
        self._is_source = True
        self._array_ref: Any = None
        self._held: Any = None  # the copy, only while its payload and statistics are made
        self._transfer_of: tuple[int, Transfer] | None = None  # (layout key, its Transfer)
        self._shown_summary: tuple[tuple[int, tuple[int, ...]], Summary] | None = None
        self._open()
        path = self._path
        self._options = wire.options(
            n_devices=len(path.devices),
            platform=path.devices[0].platform,
            shape=list(source.shape),
            dtype=layout_of(source).dtype,
            memory_kinds=path.memory_kinds,
            original=path.original,
            reshard_disabled=path.reshard_disabled,
            own_devices=[int(d.id) for d in path.own_devices],
            max_axes=path.max_axes,
        )
        self._set_traits(path.first.to_wire())
        self.view_dims = default_view_dims(source.ndim, layout_of(source).spec)
        self._quiet = False
        overrides = {k: kwargs[k] for k in LAYOUT_TRAITS if k in kwargs}
        if "view_dims" in kwargs:
            self.view_dims = kwargs["view_dims"]
        if overrides:
            self.set_layout(**overrides)
        else:  # the user's own array, its own layout: nothing to check or compute
            self._change(path.first, checked=True, known=source)

    # ---------------------------------------------------------------- public API
    @property
    def array(self) -> Any:
        """The jax.Array now shown: the original, or the original laid out as shown. The view
        keeps no copy of its own: a re-laid-out copy is made again (``jax.device_put``) when
        asked for and no one holds the last one; the caller holds what it gets. ValueError when
        that is needed and the original array was deleted or donated."""
        if self._is_source:
            return self._path.source
        a = self._held if self._held is not None else None
        if a is None and self._array_ref is not None:
            a = self._array_ref()
        if a is None or a.is_deleted():
            self._path.check_source()  # a deleted original: say so (the layout shown stays)
            a = self._path.relayout(self._sharding, "re-creating the array shown")
            self._array_ref = weakref.ref(a)
        return a

    @property
    def layout(self) -> Layout:
        """Geometry of :attr:`array` as plain data: ``.blocks`` with ``.index``, ``.shape``,
        ``.devices``; ``.mesh``, ``.spec``, ``.devices``, byte counts."""
        return relabel(
            layout_of_sharding(
                self._sharding,
                tuple(int(d) for d in self._path.source.shape),
                self._path.source.dtype,
            )
        )

    @property
    def summary(self) -> Summary:
        """Per-block statistics of :attr:`array` (computed now; the widget's pending first)."""
        self._take_later()
        return self._summarize(None, self.layout)

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
            self.layout, summ, tuple(self.view_dims), width=width, n_devices=len(self._path.devices)
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
        self._path.check_source()
        st = self._path.original or self._path.first
        self._change(st, checked=True, again=True, known=self._path.source)

    def propose(self, changes: dict[str, Any]) -> LayoutState:
        """The layout of the current one with ``changes`` (layout trait names), validated but
        not applied. ValueError naming what is wrong (an unknown key included)."""
        bad = [k for k in changes if k not in LAYOUT_TRAITS]
        if bad:
            raise ValueError(f"unknown key {bad[0]!r}; use {', '.join(LAYOUT_TRAITS)}")
        st: LayoutState = self._candidate(changes)
        self._path.validate(st, self._path.source.shape)
        return st

    def every_spec(self, limit: int | None = None) -> list[LayoutState]:
        """Every valid spec for the current mesh (each axis used at most once, in any order
        within a dimension), with the current mesh, names, types and memory kind; the first
        ``limit`` of them when given (their number grows exponentially with the rank)."""
        return list(itertools.islice(self._iter_specs(), limit))

    def _iter_specs(self) -> Iterator[LayoutState]:
        return self._path.iter_specs(self._candidate({}))

    def variant(self, st: LayoutState, key: int) -> wire.Variant:
        """The geometry and statistics of the array laid out as st, under layout key ``key``,
        without changing the view (what a saved page stores to answer its controls)."""
        self._check(st)
        return self._path.variant(st, self._compute(st), key, self._note, tuple(self.view_dims))

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
    def __setattr__(self, name: str, value: object) -> None:
        """``view.spec = P("x", None)`` as ``view.spec = ["x", None]`` (a PartitionSpec is
        what JAX users write); every other assignment as for any view."""
        if name == "spec" and isinstance(value, PartitionSpec):
            value = list(value)
        super().__setattr__(name, value)

    def _is_shown(self, st: LayoutState) -> bool:
        """The state shown already: changing to it does no device work."""
        return bool(st == self._shown)

    def _publish(self, st: LayoutState, arr: jax.Array) -> None:
        """Show arr: geometry now, statistics right after; both in one update when the
        statistics come from the source's tiles (a few ms on the host, no device work)."""
        self._is_source = arr is self._path.source
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

    def _publish_layout(self, st: LayoutState, arr: jax.Array, lay: Layout) -> None:
        # Geometry first: statistics follow, in a kernel after the cell (or when read), else at
        # once; one update, not two, with statistics off or from tiles already computed.
        quick = not self._with_stats or (
            kernel_loop() is None and self._path.tiles_for(lay, compute=False) is not None
        )
        source = source_of(arr, self._path.source)
        layout = layout_wire(lay, self._key, source, self._note, code=True)
        stats = self._stats_now() if quick else wire.pending_stats(self._key)
        self._set_traits({**st.to_wire(), "error": "", "_layout": layout, "_stats": stats})
        if not quick:
            key = self._key
            self._soon(lambda: self._stats_of(key, arr))  # holds the copy until then
        self._publish_transfer()  # after the geometry and statistics, as they are

    # ---------------------------------------------------------------- statistics
    def _summarize(self, arr: jax.Array | None, lay: Layout) -> Summary:
        """Statistics of arr (None: the array shown, re-created only when the source's tiles do
        not serve lay)."""
        return self._path.summarize(
            lay, tuple(self.view_dims), lambda: self.array if arr is None else arr
        )

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

    def _stats_of(self, key: int, arr: jax.Array) -> None:
        """arr's statistics under layout key ``key``, unless a newer layout is shown by now."""
        if key == self._key:
            self._held = arr  # let go of below: the view keeps no copy between updates
            try:
                self._stats = self._stats_now()
            finally:
                self._held = None

    @traitlets.validate("view_dims")
    def _validate_view_dims(self, proposal: Bunch) -> Any:
        dims = list(proposal["value"])
        ndim = self._path.ndim
        want = min(ndim, 2)
        if len(dims) != want or len(set(dims)) != len(dims) or any(not 0 <= d < ndim for d in dims):
            raise InvalidValue(
                f"view_dims must list {want} distinct dimension(s) of the {ndim}-d array "
                f"(0 to {ndim - 1}); got {dims}"
            )
        return dims

    @traitlets.observe("view_dims")
    def _on_view_dims(self, _change: Bunch) -> None:
        if not self._quiet:
            self._stats = self._stats_now()  # thumbnails are drawn over the view dims
