"""ShardView: the widget. Traits, observers and the request path; no geometry or statistics math.

Two ways in, one way through:
- the front end sends a ``request`` message with a whole LayoutState (it coalesces bursts itself:
  one request in flight, only the newest pending); a bad request sets ``error`` and raises nothing;
- Python sets traits (``view.spec = ...``) or calls :meth:`ShardView.set_layout`; a bad value
  raises ValueError before any trait changes.
Both call :meth:`ShardView._apply`, which validates, runs ``jax.device_put`` from the user's
original array (never deleted, donated or changed) and publishes geometry first, statistics second.
"""

from __future__ import annotations

import difflib
import pathlib
from typing import Any

import anywidget
import numpy as np
import traitlets

from . import export, payload, snapshot, text
from . import state as state_mod
from . import tiles as tiles_mod
from .layout import Layout, layout_of
from .summary import Summary, plan_for, summarize

_STATIC = pathlib.Path(__file__).parent / "static"
_UNSET = object()
_LAYOUT_TRAITS = ("mesh_shape", "axis_names", "axis_types", "spec", "memory_kind")
_INIT_KWARGS = (*_LAYOUT_TRAITS, "view_dims", "stats")


def _coerce(obj: Any) -> tuple[Any, str]:
    """(jax.Array, note) for what ShardView accepts; TypeError/ValueError naming what was given."""
    import jax

    accepted = "a jax.Array, a numpy array or a Python/numpy scalar"
    if isinstance(obj, jax.core.Tracer):
        raise TypeError(
            f"ShardView got a tracer ({type(obj).__name__}, {getattr(obj, 'aval', '?')}): it shows "
            "concrete arrays, so call it outside jit/vmap/grad, on the function's result"
        )
    if isinstance(obj, jax.Array):
        if obj.is_deleted():
            raise ValueError(
                f"ShardView got a deleted jax.Array (shape {tuple(obj.shape)}, "
                f"{obj.dtype}); it was donated or deleted, so there is nothing to show"
            )
        return obj, ""
    if isinstance(obj, np.ndarray | np.generic | bool | int | float | complex):
        if isinstance(obj, np.ndarray) and obj.dtype == object:
            raise TypeError(f"ShardView got a numpy array of dtype object; expected {accepted}")
        arr = jax.device_put(obj)
        kind = "numpy array" if isinstance(obj, np.ndarray) else f"{type(obj).__name__} scalar"
        dev = next(iter(arr.devices()))
        return arr, f"{kind} placed on {dev} (jax.device_put with no sharding)"
    raise TypeError(f"ShardView got {type(obj).__name__}; expected {accepted}")


def _is_function(obj: Any) -> bool:
    import jax

    return callable(obj) and not isinstance(obj, jax.Array | np.ndarray | np.generic | type)


def _default_view_dims(ndim: int, spec: Any) -> list[int]:
    if ndim == 0:
        return []
    if ndim == 1:
        return [0]
    sharded = [d for d in range(ndim) if spec is not None and spec[d]]
    rest = [d for d in range(ndim) if d not in sharded]
    return sorted((sharded + rest)[:2])


class ShardView(anywidget.AnyWidget):
    """Live view of how a jax.Array is laid out across devices, with controls to re-lay it out.

    ``ShardView(arr)`` accepts a jax.Array of any sharding (or a numpy array / scalar, which is
    placed on the default device). Keyword arguments set the initial layout (same names as the
    traits below) and ``stats=False`` turns off per-shard statistics.
    """

    _esm = _STATIC / "widget.js"

    def __new__(cls, obj: Any = None, /, *args: Any, **kwargs: Any) -> Any:
        """ShardView(f, *args, **kwargs) with a callable f makes a FunctionView instead."""
        if cls is ShardView and _is_function(obj):
            from .fnview import FunctionView

            return FunctionView(obj, *args, **kwargs)
        return super().__new__(cls)

    mesh_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int]: the mesh shape; its product is the kernel's device count. Both directions."""
    axis_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str]: one name per mesh axis. Both directions."""
    axis_types = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str]: "auto" or "explicit" per mesh axis. Both directions."""
    spec = traitlets.List(traitlets.Any()).tag(sync=True)
    """list[None | str | list[str]]: the PartitionSpec, one entry per dimension. Both directions."""
    memory_kind = traitlets.Unicode("device").tag(sync=True)
    """str: memory kind of the shown array ("device", "pinned_host", …). Both directions."""
    view_dims = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int]: the array dimensions drawn as rows and columns. Both directions."""
    error = traitlets.Unicode("").tag(sync=True)
    """str: why the last front-end request was refused ("" when it was not). Python → JS."""
    busy = traitlets.Bool(False).tag(sync=True)
    """bool: True while the kernel runs device_put and statistics. Python → JS."""
    _options = traitlets.Dict().tag(sync=True)
    _layout = traitlets.Dict().tag(sync=True)
    _stats = traitlets.Dict().tag(sync=True)

    def __init__(self, arr: Any, /, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError(
                f"ShardView(arr) takes one array; got {len(args)} more positional argument(s). "
                "To view a function, pass it first: ShardView(f, *args)"
            )
        unknown = [k for k in kwargs if k not in _INIT_KWARGS]
        if unknown:
            k = unknown[0]
            close = difflib.get_close_matches(k, _INIT_KWARGS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(
                f"ShardView got an unexpected keyword argument {k!r}{hint} Accepted: "
                + ", ".join(_INIT_KWARGS)
            )
        import jax

        source, note = _coerce(arr)
        self._source = source
        self._note = note
        self._with_stats = bool(kwargs.pop("stats", True))
        self._devices = list(jax.devices())
        self._memory_kinds = [m.kind for m in jax.local_devices()[0].addressable_memories()]
        self._ndim = source.ndim
        self._original = state_mod.state_of_sharding(source.sharding, source.ndim)
        self._mesh: Any = getattr(source.sharding, "mesh", None)
        self._mesh_key = self._original.mesh_key if self._original is not None else None
        self._array: Any = source
        self._key = 0
        self._last_seq = -1
        self._quiet = True  # while True, trait validators/observers stand aside
        self._pending: tuple[state_mod.LayoutState, Any] | None = None
        self._tiles: Any = _UNSET
        super().__init__()
        disabled = ""
        if jax.process_count() > 1:
            disabled = (
                "re-laying out is off with several processes: device_put would have to run "
                "on every process at once"
            )
        self._options = payload.options(
            n_devices=len(self._devices),
            platform=self._devices[0].platform,
            shape=list(source.shape),
            dtype=layout_of(source).dtype,
            memory_kinds=self._memory_kinds,
            original=self._original,
            reshard_disabled=disabled,
        )
        first = self._original or state_mod.default_state(
            source.ndim, len(self._devices), str(source.sharding.memory_kind or "device")
        )
        self._set_state_traits(first)
        self.view_dims = _default_view_dims(source.ndim, layout_of(source).spec)
        self._quiet = False
        self.on_msg(self._on_custom_msg)
        overrides = {k: kwargs[k] for k in _LAYOUT_TRAITS if k in kwargs}
        if "view_dims" in kwargs:
            self.view_dims = kwargs["view_dims"]
        if overrides:
            self.set_layout(**overrides)
        else:
            self._publish(source, "original")

    # ---------------------------------------------------------------- public API
    @property
    def array(self) -> Any:
        """The jax.Array now shown: the original, or the result of the last re-layout."""
        return self._array

    @property
    def layout(self) -> Layout:
        """Geometry of :attr:`array` as plain data: ``.blocks`` with ``.index``, ``.shape``,
        ``.devices``; ``.mesh``, ``.spec``, ``.devices``, byte counts."""
        return layout_of(self._array)

    @property
    def summary(self) -> Summary:
        """Per-block statistics of :attr:`array` (computed now)."""
        return self._summarize(self._array, self.layout)

    def set_layout(self, **changes: Any) -> None:
        """Change several layout traits at once; ValueError (nothing changed) when invalid."""
        bad = [k for k in changes if k not in _LAYOUT_TRAITS]
        if bad:
            raise TypeError(f"set_layout got {bad[0]!r}; it takes: {', '.join(_LAYOUT_TRAITS)}")
        st = self._candidate(changes)
        arr = self._apply(st)
        self._publish(arr, _source_of(arr, self._source), st)

    def reset(self) -> None:
        """Show the original array again, with its own layout in the controls."""
        st = self._original
        if st is not None:
            self._set_state_traits(st)
        self._publish(self._source, "original")

    def save_html(
        self,
        path: str | pathlib.Path,
        variants: str | list[dict[str, Any]] | None = None,
        budget: int = 4 << 20,
    ) -> export.ExportReport:
        """Write one self-contained HTML file (no network, no kernel) showing this view with the
        notebook's renderer.

        ``variants="specs"`` also stores every valid spec for the current mesh; a list of dicts
        (e.g. ``[{"spec": ["x", None]}, {"mesh_shape": [4, 2]}]``) stores those layouts. The
        page's controls answer from what it stores, within ``budget`` bytes of variant data,
        and show other choices as unavailable. Returns a report of the size and what was kept.
        """
        return export.save_html(self, path, variants=variants, budget=budget)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget, plus a static picture (text/html) for viewers without a widget manager."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle
        data["text/html"] = snapshot.render(self.layout, tuple(self.view_dims))
        return data, meta

    def __repr__(self) -> str:
        return text.render(
            self.layout,
            source=self._layout.get("source", "original"),
            note=self._note,
            view_dims=tuple(self.view_dims),
        )

    # ---------------------------------------------------------------- internals
    def _current(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _LAYOUT_TRAITS}

    def _candidate(self, changes: dict[str, Any]) -> state_mod.LayoutState:
        d = self._current()
        d.update(changes)
        # A new number of mesh axes with names/types not given: keep those that still fit and
        # fill in defaults (the same rule the front end's controls follow).
        k = len(d["mesh_shape"]) if isinstance(d["mesh_shape"], list | tuple) else 0
        names = list(d["axis_names"])
        if "axis_names" not in changes and len(names) != k:
            from .mesh import default_axis_names

            extra = [n for n in default_axis_names(k + len(names)) if n not in names]
            d["axis_names"] = (names + extra)[:k]
        if "axis_types" not in changes and len(d["axis_types"]) != k:
            d["axis_types"] = (list(d["axis_types"]) + ["auto"] * k)[:k]
        return state_mod.LayoutState.from_wire(d, self._ndim)

    def _apply(self, st: state_mod.LayoutState) -> Any:
        """Validate st and lay the original array out that way. Raises; changes nothing."""
        import jax

        if self._options.get("reshard_disabled"):
            raise ValueError(self._options["reshard_disabled"])
        state_mod.validate(st, self._source.shape, len(self._devices), self._memory_kinds)
        if st == self._original:
            return self._source
        if st.mesh_key == self._mesh_key and self._mesh is not None:
            mesh = self._mesh
        else:
            from .mesh import build_mesh

            mesh = build_mesh(st.mesh_shape, st.axis_names, st.axis_types, self._devices)
        sharding = state_mod.build_sharding(st, mesh)
        out = jax.device_put(self._source, sharding)
        out.block_until_ready()
        self._mesh, self._mesh_key = mesh, st.mesh_key
        return out

    def _set_state_traits(self, st: state_mod.LayoutState) -> None:
        quiet, self._quiet = self._quiet, True
        try:
            with self.hold_sync():
                for k, v in st.to_wire().items():
                    setattr(self, k, v)
        finally:
            self._quiet = quiet

    def _summarize(self, arr: Any, lay: Layout) -> Summary:
        n = len(self._devices)
        pixels, values = payload.thumb_pixel_budget(n), payload.values_budget(n)
        plan = plan_for(lay, tuple(self.view_dims), pixels, values)
        t = self._tiles_for(lay)
        if t is not None:
            return tiles_mod.summarize(t, lay, plan.thumb_dims, pixels, plan.values)
        return summarize(arr, lay, plan)

    def _tiles_for(self, lay: Layout, compute: bool = True) -> tiles_mod.Tiles | None:
        """The source's tile partials when they serve this layout (computed once per view: the
        source's data never changes; with compute=False only if that already happened)."""
        if self._tiles is _UNSET and compute:
            n = len(self._devices)
            self._tiles = tiles_mod.tile_summary(self._source, n, payload.values_budget(n))
        t = self._tiles
        return t if isinstance(t, tiles_mod.Tiles) and t.aligned(lay) else None

    def _publish(self, arr: Any, source: str, st: state_mod.LayoutState | None = None) -> None:
        """Show arr: geometry now, statistics right after; both in one update when the
        statistics come from the source's tiles (a few ms on the host, no device work)."""
        self._array = arr
        self._key += 1
        lay = layout_of(arr)
        # Never delay the geometry for device work: only tiles already computed make it quick.
        quick = self._with_stats and self._tiles_for(lay, compute=False) is not None
        quiet, self._quiet = self._quiet, True
        try:
            with self.hold_sync():
                if st is not None:
                    for k, v in st.to_wire().items():
                        setattr(self, k, v)
                self.error = ""
                self._layout = payload.layout(
                    lay,
                    key=self._key,
                    source=source,
                    note=self._note,
                    local_process=_process_index(),
                )
                if quick:
                    self._send_stats()
                else:
                    self._stats = payload.pending_stats(self._key)
        finally:
            self._quiet = quiet
        if not quick:
            self._send_stats()

    def _send_stats(self) -> None:
        if not self._with_stats:
            self._stats = payload.stats(
                Summary.unavailable(len(self.layout.blocks), "statistics are off (stats=False)"),
                key=self._key,
            )
            return
        try:
            summ = self._summarize(self._array, self.layout)
        except Exception as e:  # statistics are an extra: never lose the view over them
            summ = Summary.unavailable(len(self.layout.blocks), f"statistics failed: {e}")
        self._stats = payload.stats(summ, key=self._key)

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        req = payload.parse_request(content)
        if req is None:
            return
        seq, raw = req
        if seq <= self._last_seq:  # an answer to a newer request has been sent already
            self.send(payload.result_msg(seq, "superseded by a newer request"))
            return
        self._last_seq = seq
        self.busy = True
        try:
            st = state_mod.LayoutState.from_wire(raw, self._ndim)
            arr = self._apply(st)
            self._publish(arr, _source_of(arr, self._source), st)
            self.send(payload.result_msg(seq, ""))
        except Exception as e:  # the boundary: a bad request is shown, never raised into the kernel
            self.error = str(e) or type(e).__name__
            self.send(payload.result_msg(seq, self.error))
        finally:
            self.busy = False

    # Python setters: validate the whole new state, then apply, before the trait changes.
    @traitlets.validate(*_LAYOUT_TRAITS)
    def _validate_layout(self, proposal: Any) -> Any:
        value = proposal["value"]
        if self._quiet:
            return value
        st = self._candidate({proposal["trait"].name: value})
        if self._pending is None or self._pending[0] != st:
            self._pending = (st, self._apply(st))
        return value

    @traitlets.observe(*_LAYOUT_TRAITS)
    def _on_layout_trait(self, _change: Any) -> None:
        if self._quiet or self._pending is None:
            return
        st, arr = self._pending
        self._pending = None
        self._publish(arr, _source_of(arr, self._source), st)

    @traitlets.validate("view_dims")
    def _validate_view_dims(self, proposal: Any) -> Any:
        dims = list(proposal["value"])
        want = min(self._ndim, 2)
        if (
            len(dims) != want
            or len(set(dims)) != len(dims)
            or any(not 0 <= d < self._ndim for d in dims)
        ):
            raise ValueError(
                f"view_dims must list {want} distinct dimension(s) of the {self._ndim}-d array "
                f"(0 to {self._ndim - 1}); got {dims}"
            )
        return dims

    @traitlets.observe("view_dims")
    def _on_view_dims(self, _change: Any) -> None:
        if not self._quiet:
            self._send_stats()  # thumbnails are drawn over the view dims


def _source_of(arr: Any, original: Any) -> str:
    return "original" if arr is original else "resharded"


def _process_index() -> int:
    import jax

    return int(jax.process_index())
