"""Plain-text rendering of a Layout for terminals and ``repr``: any rank, any device count.

The grid is a table over two array dimensions (rows: the first, columns: the second), one table
per block position along the other dimensions (up to a limit), each cell naming the devices that
hold the block. Device lists are written as ranges ("0-3", "0,4") and shortened with a count
("0-7,16-23 (16)") rather than cut mid-number. Wide grids fall back to a per-block listing.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from ..hlo import peak_text
from ..model.gspmd import CUSTOM
from ..model.layout import Block, Layout
from ..model.units import fmt_bytes
from .scene import facts

if TYPE_CHECKING:
    from ..trace.result import TraceResult

MAX_WIDTH = 100
MAX_TABLES = 4
MAX_LIST = 24
EMPTY = "empty array: no elements, the layout only"
"""What every rendering says of an array with a dimension of size 0."""


def id_ranges(ids: tuple[int, ...] | list[int]) -> str:
    """0,1,2,3,8 -> "0-3,8" (sorted)."""
    s = sorted(ids)
    parts = []
    for _, grp in itertools.groupby(enumerate(s), lambda t: t[1] - t[0]):
        g = [v for _, v in grp]
        parts.append(str(g[0]) if len(g) == 1 else f"{g[0]}-{g[-1]}")
    return ",".join(parts)


def compress_ids(ids: tuple[int, ...] | list[int]) -> str:
    """Sorted ids with runs of three or more as ranges, as the widget writes them
    (js/array/labels.ts compressIds): 0,1,2,3,8 -> "0–3,8"; 0,1 -> "0,1"."""
    s = sorted(set(ids))
    parts: list[str] = []
    for _, grp in itertools.groupby(enumerate(s), lambda t: t[1] - t[0]):
        g = [v for _, v in grp]
        parts += [f"{g[0]}–{g[-1]}"] if len(g) >= 3 else [str(v) for v in g]
    return ",".join(parts)


def holder_candidates(ids: tuple[int, ...] | list[int], badge: bool = False) -> list[str]:
    """Labels for a block held by ``ids``, longest first, as the widget's
    (js/array/labels.ts deviceLabelCandidates): "0,4" / "0–3 ×4" / "×4". With ``badge`` (a
    separate ×N badge is drawn) the count-only forms are left out."""
    if not ids:
        return ["–"]
    if len(ids) == 1:
        return [str(ids[0])]
    n = len(ids)
    out: list[str] = []
    listed, ordered, comp = (
        ",".join(map(str, ids)),
        ",".join(map(str, sorted(ids))),
        compress_ids(ids),
    )
    if len(comp) < len(ordered):
        out.append(comp if badge else f"{comp} ×{n}")
    if n <= 16:
        out += [listed, ordered]
    if not badge:
        out.append(f"×{n}")
    return list(dict.fromkeys(out))


def devices_label(ids: tuple[int, ...], width: int) -> str:
    """The holders in at most width characters, never cut mid-number."""
    full = id_ranges(ids)
    if len(full) <= width:
        return full
    tail = f" ({len(ids)})"
    parts = full.split(",")
    out = ""
    for p in parts:
        cand = f"{out},{p}" if out else p
        if len(cand) + len(",…") + len(tail) > width:
            break
        out = cand
    if out:
        return f"{out},…{tail}"
    short = f"×{len(ids)}"
    return short if len(short) <= width else "…"


def _range(r: tuple[int, int]) -> str:
    return f"{r[0]}:{r[1]}"


def _header(lay: Layout, source: str, note: str) -> list[str]:
    lines = [f"ShardView {lay.typeof}  {lay.sharding_type}  memory={lay.memory_kind}"]
    if lay.mesh is not None:
        axes = ", ".join(
            f"{n}={s}" + (" explicit" if t == "explicit" else "")
            for n, s, t in zip(
                lay.mesh.axis_names, lay.mesh.axis_sizes, lay.mesh.axis_types, strict=True
            )
        )
        tiles = " (its tile assignment)" if lay.sharding_type != "NamedSharding" else ""
        lines.append(f"mesh({axes}){tiles}  spec {lay.spec_text}")
    elif lay.custom:
        lines.append(f"{CUSTOM}: no mesh and spec describe it; its blocks are below")
    elif lay.devices:
        d = lay.devices[0]
        lines.append(f"one device: {d.platform} {d.id}")
    procs = lay.processes
    f = facts(lay)  # the numbers the picture writes under its title
    lines.append(
        f"{f.n_blocks} block{'s' if f.n_blocks != 1 else ''} of shape "
        f"{lay.shard_shape} on {f.n_devices} {lay.devices[0].platform if lay.devices else ''} "
        f"device{'s' if f.n_devices != 1 else ''}"
        + (f" in {len(procs)} processes" if len(procs) > 1 else "")
        + f" · replication {f.replication} · {f.bytes_per_device} per device"
        f" · {f.logical_bytes} logical" + ("" if source == "original" else " · re-laid out")
    )
    if lay.empty:
        lines.append(EMPTY)
    if lay.partial:
        lines.append(lay.partial_note)
    if note:
        lines.append(note)
    return lines


def _table(lay: Layout, blocks: list[Block], r: int | None, c: int) -> list[str] | None:
    rows = sorted({b.index[r] for b in blocks}) if r is not None else [None]
    cols = sorted({b.index[c] for b in blocks})
    cell = {(b.index[r] if r is not None else None, b.index[c]): b for b in blocks}
    row_w = max([len(_range(x)) for x in rows if x is not None] + [3])
    col_w = max(5, *(len(_range(x)) for x in cols))
    if row_w + 3 + len(cols) * (col_w + 1) > MAX_WIDTH:
        return None
    # Widen columns to fit the holders' full labels while the table still fits.
    want = max(len(id_ranges(b.devices)) for b in blocks)
    room = (MAX_WIDTH - row_w - 3) // len(cols) - 1
    col_w = max(col_w, min(want, room))
    rname = f"d{r}" if r is not None else ""
    head = f"{rname:>{row_w}} \\d{c} " + " ".join(f"{_range(x):<{col_w}}" for x in cols)
    out = [head.rstrip()]
    for y in rows:
        label = _range(y) if y is not None else ""
        cells = []
        for x in cols:
            b = cell.get((y, x))
            cells.append(f"{devices_label(b.devices, col_w) if b else '':<{col_w}}")
        out.append((f"{label:>{row_w}}    " + " ".join(cells)).rstrip())
    return out


def _listing(blocks: list[Block], limit: int = MAX_LIST) -> list[str]:
    out = []
    for b in blocks[:limit]:
        idx = ", ".join(_range(x) for x in b.index)
        out.append(f"  [{idx}] shape {b.shape} on {devices_label(b.devices, 40)}")
    if len(blocks) > limit:
        out.append(f"  … {len(blocks) - limit} more blocks")
    return out


def render(
    lay: Layout,
    *,
    source: str = "original",
    note: str = "",
    view_dims: tuple[int, ...] | None = None,
) -> str:
    """The text picture of an array view: a header, then a table of blocks over view_dims."""
    lines = _header(lay, source, note)
    nd = len(lay.shape)
    if nd == 0:
        lines.append(f"scalar on devices {devices_label(lay.blocks[0].devices, 60)}")
        return "\n".join(lines)
    dims = tuple(view_dims) if view_dims else ((0, 1) if nd >= 2 else (0,))
    r, c = (dims[0], dims[1]) if len(dims) == 2 else (None, dims[0])
    other = [d for d in range(nd) if d not in dims]
    groups: dict[tuple[tuple[int, int], ...], list[Block]] = {}
    for b in lay.blocks:
        groups.setdefault(tuple(b.index[d] for d in other), []).append(b)
    for n, (pos, blocks) in enumerate(sorted(groups.items())):
        if n == MAX_TABLES:
            lines.append(f"… {len(groups) - MAX_TABLES} more slices along dims {other}")
            break
        if other:
            where = ", ".join(f"d{d}={_range(x)}" for d, x in zip(other, pos, strict=True))
            lines.append(f"[{where}]")
        table = _table(lay, blocks, r, c)
        lines.extend(table if table is not None else _listing(blocks))
    return "\n".join(lines)


def render_trace(
    fn_name: str, mode: str, mesh: dict[str, Any], error: str, res: TraceResult | None
) -> str:
    """The text picture of a function view: its leaves, constraints, collectives, memory."""
    lines = [f"ShardView of {fn_name} ({mode}), mesh {mesh}"]
    if error:
        lines.append(f"  error: {error}")
    if res is None:
        return "\n".join(lines)
    for side, leaves in (("inputs", res.input_leaves), ("outputs", res.output_leaves)):
        lines.append(f"  {side}:")
        notes = res.notes.get("in" if side == "inputs" else "out", [])
        for i, lf in enumerate(leaves):
            lines.append(f"    {lf.path:<12} {lf.layout.typeof:<28} local {lf.local_shape}")
            if i < len(notes) and notes[i]:  # a pmap'd function's layout, in words
                lines.append(f"      {notes[i]}")
            if lf.layout.partial:  # an unreduced output: partial sums on each device
                lines.append(f"      {lf.layout.partial_note}")
    for k in res.constraints:
        lines.append(f"  constraint: {k.kind} {k.spec_text} on {k.dtype}{list(k.shape)}")
    if res.collectives:
        lines.append("  collectives:")
        for c in res.collectives:
            axes = ",".join(c.axes) or "-"
            lines.append(
                f"    {c.kind:<18} over {axes:<6} {c.result_text}  "
                f"{fmt_bytes(c.bytes)} sent per device"
            )
            if getattr(c.explainer, "ready", False):  # why XLA inserted it (why/cause.py)
                lines.append(f"      why: {c.cause.text}")
        if any(c.explainer is not None and not c.explainer.ready for c in res.collectives):
            lines.append("    (why each is there: collectives[i].cause, worked out when asked)")
    else:
        lines.append("  collectives: none (every device computes its part alone)")
    if res.memory:
        m = res.memory
        lines.append(
            "  memory per device: "
            + ", ".join(f"{k} {fmt_bytes(m[k])}" for k in ("argument", "output", "temp"))
            + f", total {fmt_bytes(m['peak'])}"  # the compiler's peak (at most this) follows
        )
    lines.extend(f"  {line}" for line in peak_text.compact(res.peak, res.peak_unknown))
    if res.flops is not None:
        lines.append(f"  flops per device: {res.flops:.3g}")
    return "\n".join(lines)


def collectives_said(res: TraceResult | None) -> list[str]:
    """A function view's collectives in a few words, one line per kind and axes (a count and the
    bytes each device sends in all), for the static picture's text: the picture draws them, a
    saved page's reader must still find them as words (search, screen readers)."""
    if res is None:
        return []
    if not res.collectives:
        return ["collectives: none (every device computes its part alone)"]
    groups: dict[tuple[str, str], list[int]] = {}
    for c in res.collectives:
        over = f"over {','.join(c.axes)}" if c.axes else "over device groups"
        groups.setdefault((c.kind, over), []).append(c.bytes)
    return [f"collectives ({len(res.collectives)}):"] + [
        f"{kind} {over}"
        + (f" ×{len(sent)}" if len(sent) > 1 else "")
        + f": {fmt_bytes(sum(sent))} sent per device"
        for (kind, over), sent in groups.items()
    ]
