"""FunctionView: ShardView(f, *args) — what XLA does with a layout. Traits and the request path.

``ShardView(f, *args, **kwargs)`` returns a FunctionView. The model (tracing, compiling,
collectives, memory) lives in :mod:`shardwidget.trace` and :mod:`shardwidget.hlo`; the wire
format in :mod:`shardwidget.payload`. As with array views, a front-end request that fails sets
``error`` and keeps the last good view; a Python setter that fails raises ValueError with the same
message and changes nothing.
"""

from __future__ import annotations

import dataclasses
import html
import pathlib
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import anywidget
import numpy as np
import traitlets

from . import payload
from . import trace as trace_mod
from .layout import layout_of
from .summary import LeafStats, Summary, plan_for

_STATIC = pathlib.Path(__file__).parent / "static"
_STATE_TRAITS = ("mesh_shape", "axis_names", "axis_types", "in_specs", "out_specs")
OWN_KWARGS = ("mode", "stats", *_STATE_TRAITS)


class FunctionView(anywidget.AnyWidget):
    """Live view of a function compiled for a layout of its inputs: input and output shardings,
    the collectives XLA inserted, per-device memory and flops, and the outputs it computes.

    Made by ``ShardView(f, *args, **kwargs)``. Keyword arguments named ``mode`` ("jit" or
    "shard_map"), ``mesh_shape``, ``axis_names``, ``axis_types``, ``in_specs``, ``out_specs`` and
    ``stats`` set up the view; all other keyword arguments go to ``f``. Array leaves of the
    arguments (jax.Array, numpy arrays, jax.ShapeDtypeStruct) get a sharding from the view; other
    leaves are static.
    """

    _esm = _STATIC / "widget.js"

    _kind = traitlets.Unicode("function").tag(sync=True)
    mode = traitlets.Unicode("jit").tag(sync=True)
    """str: "jit" or "shard_map" (fixed when the view is made)."""
    mesh_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int]: the mesh every input is laid out on. Both directions."""
    axis_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    axis_types = traitlets.List(traitlets.Unicode()).tag(sync=True)
    in_specs = traitlets.List(traitlets.Any()).tag(sync=True)
    """list: one spec per input array leaf (as ShardView.spec). Both directions."""
    out_specs = traitlets.List(traitlets.Any()).tag(sync=True)
    """list: one spec per output leaf; None lets XLA choose (jit mode only). Both directions."""
    error = traitlets.Unicode("").tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)
    _trace_options = traitlets.Dict().tag(sync=True)
    _trace = traitlets.Dict().tag(sync=True)
    _trace_stats = traitlets.Dict().tag(sync=True)

    def __init__(self, f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        import jax

        own = {k: kwargs.pop(k) for k in list(kwargs) if k in OWN_KWARGS}
        mode = own.get("mode", "jit")
        self._devices = list(jax.devices())
        self._traced = trace_mod.Traced(f, args, kwargs, mode, self._devices)
        self._with_stats = bool(own.get("stats", True))
        self._key = 0
        self._last_seq = -1
        self._quiet = True
        self._pending: tuple[trace_mod.TraceState, trace_mod.TraceResult] | None = None
        self._result: trace_mod.TraceResult | None = None
        super().__init__()
        self.mode = mode
        n = len(self._devices)
        base = trace_mod.default_state(self._traced, n)
        self._original = base
        self._set_state_traits(base)
        self._out_leaves: list[tuple[str, list[int], str]] = []
        self._publish_options(base)
        self._quiet = False
        self.on_msg(self._on_custom_msg)
        overrides = {k: own[k] for k in _STATE_TRAITS if k in own}
        st = self._candidate(overrides) if overrides else base  # malformed input raises here
        self._set_state_traits(st)
        try:
            res = self._traced.result(st)
        except ValueError as e:  # f fails for this layout: show why; the controls can fix it
            self._show_error(str(e))
            return
        self._original = res.state
        self._publish_options(res.state)
        self._publish(res, cached=False)

    # ---------------------------------------------------------------- public API
    @property
    def trace(self) -> trace_mod.TraceResult | None:
        """The compiled layout now shown: ``.in_shardings``, ``.out_shardings``,
        ``.collectives`` (records with ``.kind``, ``.axes``, ``.shape``, ``.bytes``),
        ``.memory``, ``.flops``, ``.local_shapes``, ``.constraints``, ``.hlo_text``,
        ``.compiled``. None when no layout has compiled yet."""
        return self._result

    @property
    def outputs(self) -> list[Any] | None:
        """The output arrays of the last good run, flattened (one per output leaf)."""
        return None if self._result is None else self._result.outputs

    def set_layout(self, **changes: Any) -> None:
        """Change several layout traits at once; ValueError (nothing changed) when invalid."""
        bad = [k for k in changes if k not in _STATE_TRAITS]
        if bad:
            raise TypeError(f"set_layout got {bad[0]!r}; it takes: {', '.join(_STATE_TRAITS)}")
        st = self._candidate(changes)
        res = self._traced.result(st)
        self._publish(res, cached=False)

    def reset(self) -> None:
        """Back to the layout the view was made with."""
        self.set_layout(**self._original.to_wire())

    def save_html(self, path: str | pathlib.Path) -> pathlib.Path:
        """Write one self-contained HTML file (no network, no kernel) showing the function as
        compiled now: shardings, collectives, memory and outputs. Returns the path."""
        from .export import function_page_html

        p = pathlib.Path(path)
        p.write_text(function_page_html(self, static=True), encoding="utf-8")
        return p

    def __repr__(self) -> str:
        return render_text(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle
        data["text/html"] = f"<pre>{html.escape(render_text(self))}</pre>"
        return data, meta

    # ---------------------------------------------------------------- internals
    def _ndims(self) -> list[int]:
        return [len(lf.shape) for lf in self._traced.leaves]

    def _out_ndims(self) -> list[int]:
        return [len(s) for _, s, _ in self._out_leaves]

    def _candidate(self, changes: dict[str, Any]) -> trace_mod.TraceState:
        d = {k: getattr(self, k) for k in _STATE_TRAITS}
        d.update(changes)
        k = len(d["mesh_shape"]) if isinstance(d["mesh_shape"], list | tuple) else 0
        names = list(d["axis_names"])
        if "axis_names" not in changes and len(names) != k:
            from .mesh import default_axis_names

            extra = [x for x in default_axis_names(k + len(names)) if x not in names]
            d["axis_names"] = (names + extra)[:k]
        if "axis_types" not in changes and len(d["axis_types"]) != k:
            d["axis_types"] = (list(d["axis_types"]) + ["auto"] * k)[:k]
        # A mesh change alone drops the axes the new mesh no longer has from every spec.
        keep = set(d["axis_names"])
        if "in_specs" not in changes:
            d["in_specs"] = [_drop_axes(s, keep) for s in d["in_specs"]]
        if "out_specs" not in changes:
            d["out_specs"] = [None if s is None else _drop_axes(s, keep) for s in d["out_specs"]]
        if "in_specs" in changes:
            d["in_specs"] = list(d["in_specs"])
        if "out_specs" in changes:
            d["out_specs"] = list(d["out_specs"])
        return trace_mod.TraceState.from_wire(d, self._ndims(), self._out_ndims())

    def _set_state_traits(self, st: trace_mod.TraceState) -> None:
        quiet, self._quiet = self._quiet, True
        try:
            with self.hold_sync():
                for k, v in st.to_wire().items():
                    setattr(self, k, v)
        finally:
            self._quiet = quiet

    def _publish_options(self, st: trace_mod.TraceState) -> None:
        res = self._traced
        outs: list[tuple[str, list[int], str]] = []
        try:
            shapes, dtypes = res.output_info(st)
            paths = payload.out_paths(len(shapes), res.out_tree)
            gshapes = res.global_out_shapes(trace_mod.complete(res, st))
            from .layout import _dtype_name

            outs = [
                (p, list(s), _dtype_name(dt))
                for p, s, dt in zip(paths, gshapes, dtypes, strict=True)
            ]
        except ValueError:
            outs = []
        self._out_leaves = outs
        self._trace_options = payload.trace_options(
            self._traced,
            n_devices=len(self._devices),
            platform=self._devices[0].platform,
            memory_kinds=[m.kind for m in self._devices[0].addressable_memories()],
            original=self._original,
            outputs=outs,
        )

    def _show_error(self, msg: str) -> None:
        """Keep the last good trace (or an empty one) and say why the new one failed."""
        self.error = msg
        if self._result is None:
            self._key += 1
            self._trace = payload.trace(None, self._traced, key=self._key, message=msg)
            self._trace_stats = {"key": self._key, "outputs": []}

    def _publish(self, res: trace_mod.TraceResult, *, cached: bool) -> None:
        self._result = res
        self._key += 1
        if not self._out_leaves and res.out_shapes:
            self._publish_options(res.state)
        quiet, self._quiet = self._quiet, True
        try:
            with self.hold_sync():
                for k, v in res.state.to_wire().items():
                    setattr(self, k, v)
                self.error = ""
                self._trace = payload.trace(res, self._traced, key=self._key, cached=cached)
                self._trace_stats = {
                    "key": self._key,
                    "outputs": [
                        payload.pending_stats(self._key) for _ in range(len(res.out_shapes))
                    ],
                }
        finally:
            self._quiet = quiet
        self._send_stats()

    def _send_stats(self) -> None:
        res = self._result
        if res is None:
            return
        outs = [
            self._leaf_stats(res.outputs, i, res, partial(_blocks, res, i), None)
            for i in range(len(res.out_shapes))
        ]
        ins = [
            self._leaf_stats(res.inputs, i, res, partial(_in_blocks, res, self._traced, i), i)
            for i in range(len(res.in_shapes))
        ]
        self._trace_stats = payload.trace_stats(outs, key=self._key, inputs=ins)

    def _leaf_stats(
        self,
        arrays: list[Any] | None,
        i: int,
        res: Any,
        blocks: Callable[[], Any],
        argument: int | None,
    ) -> Summary:
        """Statistics of one input or output leaf (the first MAX_OUTPUT_STATS of each side).
        `blocks` gives the leaf's blocks from its sharding, for a function that did not run;
        `argument` is the input's index (its tiles are kept across layouts), None for an output."""
        n = len(self._devices)
        if arrays is None:
            why = self._trace_options.get("run_disabled") or res.run_error or "not run"
            return Summary.unavailable(len(blocks()), why)
        arr = arrays[i]
        lay = layout_of(arr)
        if not self._with_stats:
            return Summary.unavailable(len(lay.blocks), "statistics are off")
        if i >= payload.MAX_OUTPUT_STATS:
            return Summary.unavailable(
                len(lay.blocks),
                f"statistics are sent for the first {payload.MAX_OUTPUT_STATS} leaves",
            )
        vd = tuple(range(min(arr.ndim, 2)))
        pixels, values = payload.thumb_pixel_budget(n), payload.values_budget(n)
        plan = plan_for(lay, vd, pixels, values)
        if getattr(self, "_leaf_sources", None) is None:  # one per view: inputs' tiles persist
            self._leaf_sources = LeafStats(n, values)
        try:
            return self._leaf_sources.summarize(arr, lay, plan, pixels, argument)
        except Exception as e:  # statistics are an extra: never lose the view
            return Summary.unavailable(len(lay.blocks), f"statistics failed: {e}")

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        req = payload.parse_trace_request(content)
        if req is None:
            return
        seq, raw = req
        if seq <= self._last_seq:
            self.send(payload.result_msg(seq, "superseded by a newer request"))
            return
        self._last_seq = seq
        self.busy = True
        try:
            st = trace_mod.TraceState.from_wire(raw, self._ndims(), self._out_ndims())
            cached = self._traced.cached(st)
            res = self._traced.result(st)
            self._publish(res, cached=cached)
            self.send(payload.result_msg(seq, ""))
        except Exception as e:  # the boundary: a bad request is shown, never raised
            self.error = str(e) or type(e).__name__
            self.send(payload.result_msg(seq, self.error))
        finally:
            self.busy = False

    @traitlets.validate(*_STATE_TRAITS)
    def _validate_state(self, proposal: Any) -> Any:
        value = proposal["value"]
        if self._quiet:
            return value
        st = self._candidate({proposal["trait"].name: value})
        if self._pending is None or self._pending[0] != st:
            self._pending = (st, self._traced.result(st))
        return value

    @traitlets.observe(*_STATE_TRAITS)
    def _on_state_trait(self, _change: Any) -> None:
        if self._quiet or self._pending is None:
            return
        _, res = self._pending
        self._pending = None
        self._publish(res, cached=False)


def _blocks(res: trace_mod.TraceResult, i: int) -> Any:
    from .layout import layout_of_sharding

    return layout_of_sharding(
        res.out_shardings[i], tuple(res.out_shapes[i]), res.out_dtypes[i]
    ).blocks


def _in_blocks(res: trace_mod.TraceResult, traced: trace_mod.Traced, i: int) -> Any:
    from .layout import layout_of_sharding

    return layout_of_sharding(
        res.in_shardings[i], tuple(res.in_shapes[i]), traced.leaves[i].dtype
    ).blocks


def _drop_axes(spec: Any, keep: set[str]) -> Any:
    if spec is None:
        return None
    out: list[Any] = []
    for e in spec:
        if e is None:
            out.append(None)
        elif isinstance(e, str):
            out.append(e if e in keep else None)
        else:
            kept = [a for a in e if a in keep]
            out.append(kept[0] if len(kept) == 1 else kept or None)
    return out


# ---------------------------------------------------------------------- terminal view
def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def render_text(view: FunctionView) -> str:
    t = view._traced
    res = view.trace
    mesh = dict(zip(view.axis_names, view.mesh_shape, strict=False))
    lines = [f"ShardView of {t.fn_name} ({t.mode}), mesh {mesh}"]
    if view.error:
        lines.append(f"  error: {view.error}")
    if res is None:
        return "\n".join(lines)
    lines.append("  inputs:")
    for lf, sh, loc in zip(t.leaves, res.in_shardings, res.local_shapes["in"], strict=True):
        lines.append(
            f"    {lf.path:<12} {layout_of_typeof(sh, lf.shape, lf.dtype):<28} local {tuple(loc)}"
        )
    lines.append("  outputs:")
    paths = payload.out_paths(len(res.out_shapes), res.out_tree)
    for p, sh, shape, dt, loc in zip(
        paths,
        res.out_shardings,
        res.out_shapes,
        res.out_dtypes,
        res.local_shapes["out"],
        strict=True,
    ):
        lines.append(f"    {p:<12} {layout_of_typeof(sh, shape, dt):<28} local {tuple(loc)}")
    for k in res.constraints:
        lines.append(f"  constraint: {k.kind} {k.spec_text} on {k.dtype}{list(k.shape)}")
    if res.collectives:
        lines.append("  collectives:")
        for c in res.collectives:
            axes = ",".join(c.axes) or "-"
            lines.append(
                f"    {c.kind:<18} over {axes:<6} {c.dtype}{list(c.shape)}  "
                f"{_human(c.bytes)} sent per device"
            )
    else:
        lines.append("  collectives: none (every device computes its part alone)")
    if res.memory:
        m = res.memory
        lines.append(
            "  memory per device: "
            + ", ".join(f"{k} {_human(m[k])}" for k in ("argument", "output", "temp", "peak"))
        )
    if res.flops is not None:
        lines.append(f"  flops per device: {res.flops:.3g}")
    return "\n".join(lines)


def layout_of_typeof(sharding: Any, shape: Sequence[int], dtype: Any) -> str:
    from .layout import layout_of_sharding

    return layout_of_sharding(sharding, tuple(shape), dtype).typeof


# ---------------------------------------------------------------------- comparison
@dataclasses.dataclass
class Comparison:
    """Several function views side by side: do the outputs agree, and what does each cost?"""

    names: list[str]
    views: list[FunctionView]
    rows: list[dict[str, Any]]
    agree: bool
    """True when every view's outputs match the first view's (np.allclose, rtol 1e-5)."""

    def _table_html(self) -> str:
        cols = ["name", "mode", "outputs", "collectives", "sent per device", "peak memory", "flops"]
        head = "".join(f"<th style='text-align:left;padding:2px 8px'>{c}</th>" for c in cols)
        body = ""
        for r in self.rows:
            cells = [
                r["name"],
                r["mode"],
                r["agreement"],
                ", ".join(r["collective_kinds"]) or "none",
                _human(r["bytes_sent"]),
                _human(r["peak"]) if r["peak"] is not None else "—",
                f"{r['flops']:.3g}" if r["flops"] is not None else "—",
            ]
            body += (
                "<tr>"
                + "".join(f"<td style='padding:2px 8px'>{html.escape(str(c))}</td>" for c in cells)
                + "</tr>"
            )
        return f"<table class='shardwidget-compare'><tr>{head}</tr>{body}</table>"

    def widget(self) -> Any:
        import ipywidgets

        return ipywidgets.VBox(
            [
                ipywidgets.HTML(self._table_html()),
                ipywidgets.HBox(
                    [
                        ipywidgets.VBox([ipywidgets.HTML(f"<b>{html.escape(n)}</b>"), v])
                        for n, v in zip(self.names, self.views, strict=True)
                    ]
                ),
            ]
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        w = self.widget()
        bundle = w._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/html"] = self._table_html()
            data["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        out = []
        for r in self.rows:
            out.append(
                f"{r['name']:<20} {r['mode']:<9} {r['agreement']:<22} "
                f"{', '.join(r['collective_kinds']) or 'none':<30} sent {_human(r['bytes_sent'])}"
                f"  peak {_human(r['peak']) if r['peak'] is not None else '-'}"
            )
        return "\n".join(out)


def compare(*views: FunctionView, names: Sequence[str] | None = None) -> Comparison:
    """Compare function views of the same computation (e.g. jit, with_sharding_constraint and
    shard_map versions of one layer): output agreement with the first view, collectives, bytes
    sent per device, peak memory and flops."""
    if not views:
        raise ValueError("compare() needs at least one view")
    for v in views:
        if not isinstance(v, FunctionView):
            raise TypeError(
                f"compare() takes views of functions, ShardView(f, ...); got {type(v).__name__}"
            )
    labels = list(names) if names is not None else [v._traced.fn_name for v in views]
    if len(labels) != len(views):
        raise ValueError(f"{len(labels)} names for {len(views)} views")
    ref = views[0].outputs
    rows = []
    agree = True
    for name, v in zip(labels, views, strict=True):
        res = v.trace
        outs = v.outputs
        if res is None or outs is None or ref is None:
            agreement = "not run"
            agree = False
        elif len(outs) != len(ref) or any(
            np.shape(a) != np.shape(b) for a, b in zip(outs, ref, strict=False)
        ):
            agreement = "different shapes"
            agree = False
        else:
            diff = max(
                (
                    float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
                    if np.size(a)
                    else 0.0
                )
                for a, b in zip(outs, ref, strict=True)
            )
            ok = all(
                np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
                for a, b in zip(outs, ref, strict=True)
            )
            agree = agree and ok
            agreement = ("agrees" if ok else "DIFFERS") + f" (max |diff| {diff:.2g})"
        rows.append(
            {
                "name": name,
                "mode": v.mode,
                "agreement": agreement,
                "collective_kinds": [
                    f"{c.kind} over {','.join(c.axes) or '-'}"
                    for c in (res.collectives if res else [])
                ],
                "bytes_sent": sum(c.bytes for c in res.collectives) if res else 0,
                "peak": res.memory.get("peak") if res and res.memory else None,
                "flops": res.flops if res else None,
            }
        )
    return Comparison(labels, list(views), rows, agree)
