"""compare(): several function views of one computation side by side; two array views of one
array as a layout diff (see :mod:`shardwidget.model.layout_diff`)."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from typing import Any

import ipywidgets
import numpy as np

from .. import _widgets, wire
from ..cost import hardware as hw_mod
from ..cost.estimate import fmt_seconds
from ..cost.hardware import Hardware
from ..model.layout_diff import LayoutDiff, diff
from ..model.units import fmt_bytes
from . import fallback
from .array import ArrayView
from .function import FunctionView


@dataclasses.dataclass
class Comparison:
    """Several function views side by side: do the outputs agree, and what does each cost?"""

    names: list[str]
    """One label per view (the function names unless given)."""
    views: list[FunctionView]
    """The views compared, the first one the reference."""
    rows: list[dict[str, Any]]
    """One dict per view: name, mode, agreement, collective_kinds, bytes_sent, peak, flops,
    out_types (each output's jax.typeof-style type: where its pieces live, e.g. vmap's
    ``float32[8]`` whole on every device against pmap's ``float32[8@pmap]``)."""
    agree: bool
    """True when every view's outputs match the first view's (np.allclose, rtol 1e-5)."""
    hardware: list[str] = dataclasses.field(default_factory=list)
    """The hardware presets the estimates are for (``compare(..., hardware=[...])``)."""
    estimates: list[dict[str, wire.EstimateWire]] = dataclasses.field(default_factory=list)
    """One dict per view: preset name -> its estimate (wire.EstimateWire, the shape the
    function view's ``_estimate`` has; ``parts`` empty when the view has no result)."""

    def _estimate_cells(self, i: int) -> list[str]:
        """One cell per preset: "38.1 ns (communication)", or "—"."""
        out = []
        for h in self.hardware:
            e = self.estimates[i][h] if i < len(self.estimates) else None
            out.append(f"{fmt_seconds(e['total_s'])} ({e['bound']})" if e and e["parts"] else "—")
        return out

    def _table_html(self) -> str:
        cols = ["name", "mode", "outputs", "collectives", "sent per device", "peak memory", "flops"]
        cols.append("output types")
        # the preset as the widget's hardware dropdown names it ("TPU v5e"), not its key
        cols += [f"est. {hw_mod.hardware(h).label or h}" for h in self.hardware]
        head = "".join(
            f"<th style='text-align:left;padding:2px 8px'>{html.escape(c)}</th>" for c in cols
        )
        body = ""
        for i, r in enumerate(self.rows):
            cells = [
                r["name"],
                r["mode"],
                r["agreement"],
                ", ".join(r["collective_kinds"]) or "none",
                fmt_bytes(r["bytes_sent"]),
                fmt_bytes(r["peak"]) if r["peak"] is not None else "—",
                f"{r['flops']:.3g}" if r["flops"] is not None else "—",
                ", ".join(r["out_types"]) or "—",
                *self._estimate_cells(i),
            ]
            body += (
                "<tr>"
                + "".join(f"<td style='padding:2px 8px'>{html.escape(str(c))}</td>" for c in cells)
                + "</tr>"
            )
        return f"<table class='shardwidget-compare'><tr>{head}</tr>{body}</table>"

    def widget(self) -> Any:
        """The table above the views side by side, as one ipywidgets box."""
        # Side by side while each view has room for its tables (560 px), else one under the
        # other; a column that is still too narrow scrolls rather than cutting its tables.
        column = ipywidgets.Layout(flex="1 1 560px", min_width="0", overflow="auto")
        return ipywidgets.VBox(
            [
                ipywidgets.HTML(self._table_html()),
                ipywidgets.HBox(
                    [
                        ipywidgets.VBox(
                            [ipywidgets.HTML(f"<b>{html.escape(n)}</b>"), v], layout=column
                        )
                        for n, v in zip(self.names, self.views, strict=True)
                    ],
                    layout=ipywidgets.Layout(flex_flow="row wrap", align_items="flex-start"),
                ),
            ]
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The table and the views as one widget; in a kernel a picture of them as displayed comes
        just before it (views/fallback.py), hidden while the first view is live."""
        w = self.widget()
        bundle = _widgets.mimebundle(w, **kwargs)
        if bundle is not None:
            data = bundle[0]
            pictures = "".join(
                '<div style="display:inline-block;vertical-align:top;margin-right:16px">'
                f"<b>{html.escape(n)}</b>{v._static_html()}</div>"
                for n, v in zip(self.names, self.views, strict=True)
            )
            body = f"{self._table_html()}<div>{pictures}</div>"
            shown = self.views and fallback.emit_static(
                self.views[0]._fallback_id,
                f'<div class="shardwidget-snapshot">{body}</div>',
                "the comparison as displayed",
            )
            if shown:
                data.pop("text/html", None)
            else:
                data["text/html"] = self._table_html()
            data["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        """One aligned row per view under a header: columns as wide as their longest cell, so
        a long name or type never pushes the next column out of line."""
        head = ["name", "mode", "outputs", "collectives", "sent", "peak", "output types"]
        head += [f"est. {h}" for h in self.hardware]
        rows = [
            [
                r["name"],
                r["mode"],
                r["agreement"],
                ", ".join(r["collective_kinds"]) or "none",
                fmt_bytes(r["bytes_sent"]),
                fmt_bytes(r["peak"]) if r["peak"] is not None else "-",
                ", ".join(r["out_types"]) or "-",
                *self._estimate_cells(i),
            ]
            for i, r in enumerate(self.rows)
        ]
        widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=True)]
        return "\n".join(
            "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in [head, *rows]
        )


def distinct_labels(views: Sequence[Any]) -> list[str]:
    """One row name per function view: its function's name; where two views share it, with the
    view's mode ("f · jit", "f · shard_map"), and where that still repeats, its place
    ("f · jit #2")."""
    labels = [v.fn_name for v in views]
    if len(set(labels)) == len(labels):
        return labels
    shared = {n for n in labels if labels.count(n) > 1}
    labels = [f"{n} · {v.mode}" if n in shared else n for n, v in zip(labels, views, strict=True)]
    seen: dict[str, int] = {}
    out = []
    for n in labels:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if labels.count(n) == 1 else f"{n} #{seen[n]}")
    return out


def compare(
    *views: Any,
    names: Sequence[str] | None = None,
    hardware: str | Hardware | Sequence[str | Hardware] | None = None,
) -> Any:
    """Compare function views of the same computation (e.g. jit, with_sharding_constraint and
    shard_map versions of one layer): output agreement with the first view, collectives, bytes
    sent per device, peak memory and flops, and the estimated time of each on ``hardware``
    (one preset or several; default: the first view's ``hardware``) (a :class:`Comparison`).

    Two array views of one array, ``compare(view_a, view_b)``, give a
    :class:`~shardwidget.model.layout_diff.LayoutDiff`: which blocks moved to which devices, and the
    bytes per device that differ."""
    if not views:
        raise ValueError("compare() needs at least one view")
    if any(isinstance(v, ArrayView) for v in views):
        return compare_arrays(*views, names=names)
    for v in views:
        if not isinstance(v, FunctionView):
            raise TypeError(
                f"compare() takes views of functions, ShardView(f, ...); got {type(v).__name__}"
            )
    labels = list(names) if names is not None else distinct_labels(views)
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
                "out_types": [lf.layout.typeof for lf in res.output_leaves] if res else [],
            }
        )
    presets = _presets(hardware, views[0].hardware)
    estimates = [{h.name: _estimate_of(v, h, i) for h in presets} for i, v in enumerate(views)]
    return Comparison(labels, list(views), rows, agree, [h.name for h in presets], estimates)


def _presets(
    hardware: str | Hardware | Sequence[str | Hardware] | None, default: str
) -> list[Hardware]:
    """The Hardware presets asked for (ValueError naming an unknown one)."""
    if hardware is None:
        hardware = default
    items = [hardware] if isinstance(hardware, str | Hardware) else list(hardware)
    return [hw_mod.hardware(h) for h in items]


def _estimate_of(v: FunctionView, h: Hardware, key: int) -> wire.EstimateWire:
    """A view's estimate on h, or an empty one when the view has no compiled result."""
    res = v.trace
    if res is None:
        return wire.empty_estimate(key, h.name, "no compiled result")
    return wire.estimate(res.estimate(h), key=key)


def compare_arrays(*views: Any, names: Sequence[str] | None = None) -> LayoutDiff:
    """Two array views of one array: the second's layout against the first's."""
    if len(views) != 2 or not all(isinstance(v, ArrayView) for v in views):
        kinds = ", ".join(type(v).__name__ for v in views)
        raise TypeError(
            f"compare() of array layouts takes exactly two array views, ShardView(x); got {kinds}"
        )
    labels = tuple(names) if names is not None else ("A", "B")
    if len(labels) != 2:
        raise ValueError(f"{len(labels)} names for 2 views")
    return diff(views[0].layout, views[1].layout, (str(labels[0]), str(labels[1])))
