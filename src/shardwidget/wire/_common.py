"""The wire format: the only module that writes the JSON shapes the front end reads.

Synced traits of an array view: ``_options`` (:class:`Options`), ``_layout`` (:class:`LayoutWire`),
``_stats`` (:class:`Stats`); of a function view: ``_trace_options`` (:class:`TraceOptions`),
``_trace`` (:class:`Trace`), ``_trace_stats`` (:class:`TraceStats`). Custom messages:
:class:`RequestMsg` / :class:`TraceRequestMsg` (front end → kernel) and :class:`ResultMsg`
(kernel → front end). Saved pages carry :class:`PageData`. The TypedDicts below mirror the
TypeScript types in ``js/wire/`` field for field; change both together.

Size: the synced state plus binary buffers of one view stay within
``16 KiB + 400 bytes × n_devices`` whatever the array's element count; thumbnails and small-block
values get fixed budgets below, and everything else is a few numbers per block or device.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

import numpy as np

from .model import mesh as mesh_mod
from .model.layout import Layout
from .model.state import LayoutState
from .model.summary import Summary

if TYPE_CHECKING:
    from .cost.estimate import Estimate
    from .cost.hardware import Hardware
    from .cost.reshard import Transfer
    from .trace.traced import Traced, TraceResult, TraceState

SpecEntry = str | list[str] | None


# ---------------------------------------------------------------------- shapes (twin: js/wire/)
class LayoutStateWire(TypedDict):
    """A layout as the controls send it (``LayoutState.to_wire``)."""

    mesh_shape: list[int]
    axis_names: list[str]
    axis_types: list[str]
    spec: list[SpecEntry]
    memory_kind: str
    devices: str
    """"array" (the array's own devices) or "all" (every device of the kernel)."""


class Options(TypedDict):
    """``_options``: what the controls may offer; fixed for the life of an array view."""

    n_devices: int
    platform: str
    ndim: int
    shape: list[int]
    dtype: str
    factorizations: dict[str, list[list[int]]]
    memory_kinds: list[str]
    original: LayoutStateWire | None
    reshard_disabled: str
    own_devices: list[int]
    """The array's own devices (ids, in its own mesh order): what ``devices="array"`` lays
    out on."""
    own_factorizations: dict[str, list[list[int]]]
    """Mesh shapes over the array's own devices, as ``factorizations`` over all."""
    static_states: NotRequired[list[str]]
    """Saved pages only: the state keys the page can answer."""


class MeshWire(TypedDict):
    """The mesh of a layout."""

    axis_names: list[str]
    axis_sizes: list[int]
    axis_types: list[str]
    device_ids: list[int]


class DeviceTable(TypedDict):
    """The devices of a layout, one entry per device in each list."""

    ids: list[int]
    process: list[int]
    platform: str
    kind: str
    coords: list[list[int]] | None
    core_on_chip: list[int] | None
    local_process: int


class BlockWire(TypedDict):
    """One block of a layout."""

    i: list[list[int]]
    """[start, stop) per dimension."""
    d: list[int]
    """The devices holding the block."""


class LegendWire(TypedDict):
    """What the marks of the grid mean and how the array is split and copied, in words
    (:mod:`shardwidget.render.legend`)."""

    marks: list[list[str]]
    """[mark, meaning] for the border, the inner heatmap, the stripes and the labels."""
    replication: list[str]
    """"dimension 0 split 2 ways over x", "replicated over y: 4 copies", …"""


class LayoutWire(TypedDict):
    """``_layout``: the geometry of the array shown (and of every function-view leaf)."""

    key: int
    shape: list[int]
    dtype: str
    itemsize: int
    typeof: str
    sharding: str
    source: str
    mesh: MeshWire | None
    spec: list[SpecEntry]
    spec_str: str
    memory_kind: str
    devices: DeviceTable
    blocks: list[BlockWire]
    bytes_per_device: int
    logical_bytes: int
    replication: int
    note: str
    code: str
    """Python that lays an array bound to ``x`` out like this (ArrayView.code); "" for
    function-view leaves."""
    unreduced: list[str]
    """The unreduced axes of the spec (Layout.unreduced): each device holds a partial value,
    the block's value is the sum of its holders' partials over them. [] for other layouts."""
    legend: LegendWire


class Stats(TypedDict):
    """``_stats``: per-block statistics for the layout with the same key (binary as bytes)."""

    key: int
    status: Literal["pending", "ready", "unavailable"]
    message: str
    blocks: list[list[float | None] | None]
    values: bytes | None
    values_offsets: list[int]
    thumbs: bytes | None
    thumb_shapes: list[list[int]]
    thumb_offsets: list[int]
    thumbs_dims: list[int]
    vmin: float
    vmax: float
    partials: list[list[float | None] | None]
    """Unreduced layouts: each device's partial statistics, parallel to the layout's
    ``devices.ids`` (rows as ``blocks``); [] for other layouts."""


class RequestMsg(TypedDict):
    """An array view's request: lay the array out as ``state``."""

    type: Literal["request"]
    seq: int
    state: LayoutStateWire


class ResultMsg(TypedDict):
    """The kernel's answer to request ``seq``."""

    type: Literal["result"]
    seq: int
    ok: bool
    error: str


class HistoryMsg(TypedDict):
    """The undo/redo buttons: step back (-1) or forward (1) through the layouts shown."""

    type: Literal["history"]
    step: int


class HistoryWire(TypedDict):
    """``_history``: how far undo and redo can go, and where the next step of each leads."""

    undo: int
    redo: int
    undo_label: str
    """The layout undo shows, in a few words ("" when there is none)."""
    redo_label: str


class PictureRequestMsg(TypedDict):
    """The "save picture" button: ask for the view's picture (``view.to_svg()``)."""

    type: Literal["picture_request"]


class PictureMsg(TypedDict):
    """The answer: the SVG and a file name for it, or why there is none."""

    type: Literal["picture"]
    ok: bool
    svg: str
    name: str
    error: str


class TraceStateWire(TypedDict):
    """A function view's layout as the controls send it (``TraceState.to_wire``)."""

    mesh_shape: list[int]
    axis_names: list[str]
    axis_types: list[str]
    in_specs: list[list[SpecEntry]]
    out_specs: list[list[SpecEntry] | None]


class LeafInfo(TypedDict):
    """An input or output leaf of a function: path, global shape, dtype."""

    path: str
    shape: list[int]
    dtype: str


class TraceOptions(TypedDict):
    """``_trace_options``: fixed facts of a function view (its leaves, the mesh choices)."""

    n_devices: int
    platform: str
    factorizations: dict[str, list[list[int]]]
    memory_kinds: list[str]
    mode: str
    fn_name: str
    inputs: list[LeafInfo]
    outputs: list[LeafInfo]
    static_args: list[str]
    original: TraceStateWire
    run_disabled: str
    static: NotRequired[str]
    """Why the controls cannot re-compile: a saved page, or several processes."""


class TraceLeaf(TypedDict):
    """One leaf of a compiled layout, with its geometry."""

    path: str
    shape: list[int]
    dtype: str
    typeof: str
    spec_str: str
    local_shape: list[int]
    layout: LayoutWire
    note: str
    """The layout in words where the spec alone would mislead (a pmap'd function's); "" else."""


class ConstraintWire(TypedDict):
    """A sharding the user pinned inside the function."""

    kind: str
    shape: list[int]
    dtype: str
    spec_str: str
    source: str


class CollectiveWire(TypedDict):
    """One collective in the compiled HLO, with its mesh axes and bytes sent per device."""

    kind: str
    axes: list[str]
    shape: list[int]
    dtype: str
    bytes: int
    group_size: int
    n_groups: int
    op_name: str
    source: str
    groups_text: str
    group_set: int
    """Index into ``Trace.group_sets``: the device groups it runs over (collective-permute: the
    (source, target) pairs that move data); -1 when left out of a bounded payload."""


class Memory(TypedDict):
    """Per-device bytes of the compiled executable."""

    argument: int
    output: int
    alias: int
    temp: int
    generated_code: int
    peak: int


class Trace(TypedDict):
    """``_trace``: one compiled layout of the function (or an error with no result)."""

    key: int
    status: Literal["ok", "error"]
    message: str
    mode: str
    inputs: list[TraceLeaf]
    outputs: list[TraceLeaf]
    constraints: list[ConstraintWire]
    collectives: list[CollectiveWire]
    memory: Memory | None
    flops: float | None
    compile_ms: float
    run_ms: float
    cached: bool
    ran: bool
    left_out: LeftOut
    """How many leaves and records beyond the MAX_LEAVES / MAX_RECORDS sent were left out."""
    jaxpr: str
    """The jaxpr of the traced program: whole lines, MAX_JAXPR characters at most ("" before a
    compile)."""
    jaxpr_cut: int
    """Characters of the jaxpr left out (0 when it was sent whole)."""
    group_sets: list[list[list[int]]]
    """The distinct device groups of the collectives (device ids), each set once: many
    collectives run over the same axis, so a set is shared (see ``group_sets``)."""
    code: str
    """Python for this compiled layout (FunctionView.code); "" without a result."""


class LeftOut(TypedDict):
    """Counts of what a bounded function-view payload left out."""

    inputs: int
    outputs: int
    constraints: int
    collectives: int


class TraceStats(TypedDict):
    """``_trace_stats``: per-leaf statistics of a function view (same key as ``_trace``)."""

    key: int
    outputs: list[Stats]
    inputs: NotRequired[list[Stats]]


class TraceRequestMsg(TypedDict):
    """A function view's request: compile and run for ``state``."""

    type: Literal["trace_request"]
    seq: int
    state: TraceStateWire


class Variant(TypedDict):
    """One layout a saved page can answer: the state asked for, its geometry and statistics."""

    state: LayoutStateWire
    layout: LayoutWire
    stats: Stats


class PageData(TypedDict):
    """What a saved page carries (``shardwidget-data``): synced traits and stored answers,
    binary values as ``{"__b64__": ...}`` (see :func:`encode`)."""

    state: dict[str, Any]
    answers: dict[str, Any]


class HardwareWire(TypedDict):
    """A hardware preset the dropdown offers (``_hardware_presets``); units: FLOP/s, bytes,
    bytes/s, per device (see :mod:`shardwidget.cost.hardware`)."""

    name: str
    label: str
    peak_flops: float
    hbm_bytes: float
    hbm_bandwidth: float
    ici_bandwidth: float
    source: str


class EstimatePart(TypedDict):
    """One bar of an estimate: compute, memory, one collective, or a point-to-point transfer."""

    kind: Literal["compute", "memory", "collective", "transfer"]
    label: str
    seconds: float
    collective: int
    """Index into the collectives it comes from (the trace's or the transfer's); -1 if none."""
    formula: str


class EstimateWire(TypedDict):
    """``_estimate`` of a function view (and ``estimate`` of a transfer) for ``hardware``."""

    key: int
    hardware: str
    parts: list[EstimatePart]
    total_s: float
    overlap: str
    bound: Literal["compute", "memory", "communication", ""]
    fits: bool | None
    fits_text: str
    peak_bytes: int
    hbm_bytes: float


class TransferWire(TypedDict):
    """``_transfer`` of an array view: what moving the original layout to the shown one moves
    (same key as ``_layout``). Per-device lists are parallel to ``_layout.devices.ids``."""

    key: int
    status: Literal["none", "pending", "ready", "unavailable"]
    message: str
    line: str
    total: int
    received: list[int]
    sent: list[int]
    pairs: list[list[int]]
    """[sender id, receiver id, bytes], at most MAX_PAIRS_PER_DEVICE × n_devices."""
    pairs_left_out: int
    collectives: list[CollectiveWire]
    group_sets: list[list[list[int]]]
    """The collectives' distinct device groups (as ``Trace.group_sets``)."""
    estimate: EstimateWire | None


# ---------------------------------------------------------------------- budgets
# Bytes for the binary parts; the JSON parts are ~150 bytes per device at most.
THUMB_BASE, THUMB_PER_DEVICE = 4096, 144
VALUES_BASE, VALUES_PER_DEVICE = 4096, 64
MAX_OUTPUT_STATS = 8  # function-view leaves beyond this get no per-shard data (bounded payload)
MAX_LEAVES = 64  # function-view leaves per side sent with their geometry (and statistics)
MAX_JAXPR = 20_000  # characters of a function view's jaxpr text sent (the rest: view.trace.jaxpr)
MAX_RECORDS = 256  # collectives / sharding constraints sent, at most
MAX_PAIRS_PER_DEVICE = 2  # transfer pairs (sender, receiver, bytes) sent: 2 × n_devices + 64


def size_budget(n_devices: int) -> int:
    """Bytes one view's synced state may take: 16 KiB + 400 B per device."""
    return 16 * 1024 + 400 * n_devices


def thumb_pixel_budget(n_devices: int) -> int:
    """Thumbnail pixels (one byte each) a view sends for all blocks together."""
    return THUMB_BASE + THUMB_PER_DEVICE * n_devices


def values_budget(n_devices: int) -> int:
    """Bytes of raw block values a view may send (small blocks only)."""
    return VALUES_BASE + VALUES_PER_DEVICE * n_devices


def _num(x: float) -> float | None:
    """7 significant digits keep the JSON small; JSON has no NaN/Inf, so those become None."""
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.7g}")


def _round_rows(rows: Sequence[np.ndarray | None]) -> list[list[float | None] | None]:
    """7 significant digits (small JSON), NaN/Inf as None (JSON has neither), vectorized."""
    present = [r for r in rows if r is not None]
    if not present:
        return [None] * len(rows)
    a = np.asarray(present, dtype=np.float64)
    fin = np.isfinite(a)
    mag = np.where(fin & (a != 0), np.floor(np.log10(np.abs(np.where(fin & (a != 0), a, 1)))), 0)
    scale = 10.0 ** (6 - mag)
    r = np.where(fin, np.round(a * scale) / scale, 0.0).tolist()
    if fin.all():  # the common case: no element-wise pass (4096 blocks: ~25k values)
        it = iter(r)
    else:
        it = iter(
            [
                [v if ok else None for v, ok in zip(row, oks, strict=True)]
                for row, oks in zip(r, fin.tolist(), strict=True)
            ]
        )
    return [None if row is None else next(it) for row in rows]


# ---------------------------------------------------------------------- array views
def options(
    *,
    n_devices: int,
    platform: str,
    shape: Sequence[int],
    dtype: str,
    memory_kinds: Sequence[str],
    original: LayoutState | None,
    reshard_disabled: str,
    own_devices: Sequence[int] | None = None,
    max_axes: int = mesh_mod.MAX_AXES,
) -> Options:
    """``_options`` of an array view. ``own_devices``: the array's own devices (default: all
    n_devices), ``max_axes``: mesh axes offered (more when the array's own mesh has more)."""
    own = list(own_devices) if own_devices is not None else list(range(n_devices))
    return {
        "n_devices": n_devices,
        "platform": platform,
        "ndim": len(shape),
        "shape": list(shape),
        "dtype": dtype,
        "factorizations": mesh_mod.all_factorizations(n_devices, max_axes),
        "memory_kinds": list(memory_kinds),
        "original": state_wire(original) if original is not None else None,
        "reshard_disabled": reshard_disabled,
        "own_devices": own,
        "own_factorizations": mesh_mod.all_factorizations(len(own), max_axes),
    }


def state_wire(st: LayoutState) -> LayoutStateWire:
    """A LayoutState as the controls send it."""
    return cast(LayoutStateWire, st.to_wire())


def state_key(st: LayoutState) -> str:
    """Canonical text of a layout, the key of a saved page's answers; the front end's
    ``stateKey`` writes the same string."""
    return json.dumps(st.to_wire(), separators=(",", ":"), ensure_ascii=False)


def layout(
    lay: Layout, *, key: int, source: str, note: str, local_process: int, code: str = ""
) -> LayoutWire:
    """``_layout`` of an array view (and the ``layout`` of a function-view leaf)."""
    devs = lay.devices
    has_coords = any(d.coords is not None for d in devs)
    has_core = any(d.core_on_chip is not None for d in devs)
    mesh: MeshWire | None = None
    if lay.mesh is not None:
        mesh = {
            "axis_names": list(lay.mesh.axis_names),
            "axis_sizes": list(lay.mesh.axis_sizes),
            "axis_types": list(lay.mesh.axis_types),
            "device_ids": list(lay.mesh.device_ids),
        }
    spec: list[SpecEntry] = (
        [None if not a else a[0] if len(a) == 1 else list(a) for a in lay.spec]
        if lay.spec is not None
        else [None] * len(lay.shape)
    )
    return {
        "key": key,
        "shape": list(lay.shape),
        "dtype": lay.dtype,
        "itemsize": lay.itemsize,
        "typeof": lay.typeof,
        "sharding": lay.sharding_type,
        "source": source,
        "mesh": mesh,
        "spec": spec,
        "spec_str": lay.spec_text,
        "memory_kind": lay.memory_kind,
        "devices": {
            "ids": [d.id for d in devs],
            "process": [d.process_index for d in devs],
            "platform": devs[0].platform if devs else "",
            "kind": devs[0].kind if devs else "",
            "coords": [list(d.coords or ()) for d in devs] if has_coords else None,
            "core_on_chip": [d.core_on_chip or 0 for d in devs] if has_core else None,
            "local_process": local_process,
        },
        "blocks": [{"i": [list(r) for r in b.index], "d": list(b.devices)} for b in lay.blocks],
        "bytes_per_device": lay.bytes_per_device,
        "logical_bytes": lay.logical_bytes,
        "replication": lay.replication,
        "note": note,
        "code": code,
        "unreduced": list(lay.unreduced),
        "legend": legend_wire(lay),
    }


def legend_wire(lay: Layout) -> LegendWire:
    """``LayoutWire.legend`` of a layout."""
    from .render.legend import legend_of

    lg = legend_of(lay)
    return {"marks": [list(m) for m in lg.marks], "replication": list(lg.replication)}


def pending_stats(key: int) -> Stats:
    """``_stats`` while the statistics of layout ``key`` are being computed."""
    return {
        "key": key,
        "status": "pending",
        "message": "",
        "blocks": [],
        "values": None,
        "values_offsets": [],
        "thumbs": None,
        "thumb_shapes": [],
        "thumb_offsets": [],
        "thumbs_dims": [],
        "vmin": 0.0,
        "vmax": 0.0,
        "partials": [],
    }


def stats(summary: Summary, *, key: int) -> Stats:
    """``_stats`` of a Summary: rounded per-block rows, raw values and uint8 thumbnails."""
    out = pending_stats(key)
    out["status"] = cast(Literal["pending", "ready", "unavailable"], summary.status)
    out["message"] = summary.message
    out["blocks"] = _round_rows(summary.stats)
    out["partials"] = _round_rows(summary.partials or [])
    # Values: float64 little-endian, complex interleaved (re, im).
    chunks: list[np.ndarray] = []
    offsets: list[int] = []
    pos = 0
    for v in summary.values:
        if v is None:
            offsets.append(-1)
            continue
        arr = np.asarray(v)
        flat = (
            np.stack([arr.real, arr.imag], -1).astype("<f8").reshape(-1)
            if np.iscomplexobj(arr)
            else arr.astype("<f8").reshape(-1)
        )
        offsets.append(pos)
        pos += arr.size
        chunks.append(flat)
    out["values_offsets"] = offsets
    out["values"] = np.concatenate(chunks).tobytes() if chunks else None
    # Thumbnails: uint8 between the finite min and max of all thumbnails; non-finite pixels 0.
    present = [t for t in summary.thumbs if t is not None]
    flat = np.concatenate([t.reshape(-1) for t in present]) if present else np.zeros(0)
    fin = flat[np.isfinite(flat)]
    vmin = float(fin.min()) if fin.size else 0.0
    vmax = float(fin.max()) if fin.size else 0.0
    if vmax > vmin:
        q = np.where(np.isfinite(flat), (flat - vmin) * (255.0 / (vmax - vmin)), 0.0)
    else:
        q = np.where(np.isfinite(flat), 128.0, 0.0)
    quant = np.clip(np.rint(q), 0, 255).astype(np.uint8)
    shapes: list[list[int]] = []
    toffs: list[int] = []
    tpos = 0
    for t in summary.thumbs:
        if t is None:
            shapes.append([0, 0])
            toffs.append(-1)
            continue
        shapes.append([int(t.shape[0]), int(t.shape[1])])
        toffs.append(tpos)
        tpos += t.size
    out["thumbs"] = quant.tobytes() if present else None
    out["thumb_shapes"] = shapes
    out["thumb_offsets"] = toffs
    out["thumbs_dims"] = list(summary.thumb_dims)
    out["vmin"], out["vmax"] = _num(vmin) or 0.0, _num(vmax) or 0.0
    return out


def variant(st: LayoutState, lay: LayoutWire, summ: Stats) -> Variant:
    """One stored answer of a saved page."""
    return {"state": state_wire(st), "layout": lay, "stats": summ}


# ---------------------------------------------------------------------- messages
MAX_MESSAGE = 300
"""Characters of an error message shown or raised at most (messages can echo input)."""


def cap_message(msg: str, limit: int = MAX_MESSAGE) -> str:
    """msg, cut to ``limit`` characters with an ellipsis when longer."""
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def result_msg(seq: int, error: str) -> ResultMsg:
    """The answer to request ``seq``: ok when error is ""."""
    return {"type": "result", "seq": seq, "ok": not error, "error": error}


def parse_request(content: Any, kind: str = "request") -> tuple[int, dict[str, Any]] | None:
    """(seq, state dict) of a front-end request of type ``kind`` ("request" for array views,
    "trace_request" for function views), or None when the message is something else."""
    if not isinstance(content, dict) or content.get("type") != kind:
        return None
    seq, st = content.get("seq"), content.get("state")
    if isinstance(seq, float) and math.isfinite(seq) and seq.is_integer():
        seq = int(seq)  # JSON from JS writes integers past 1e21 as floats (1e+21)
    if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(st, dict):
        return None
    return seq, st


def parse_history(content: Any) -> int | None:
    """The step (-1 or 1) of a HistoryMsg, or None when the message is something else."""
    if not isinstance(content, dict) or content.get("type") != "history":
        return None
    step = content.get("step")
    return step if step in (-1, 1) and not isinstance(step, bool) else None


def is_picture_request(content: Any) -> bool:
    """Whether a front-end message asks for the view's picture (PictureRequestMsg)."""
    return isinstance(content, dict) and content.get("type") == "picture_request"


def picture_msg(svg: str, name: str, error: str = "") -> PictureMsg:
    """The answer to a picture request."""
    return {"type": "picture", "ok": not error, "svg": svg, "name": name, "error": error}


def history(states: Sequence[Any], at: int, label: Callable[[Any], str]) -> HistoryWire:
    """``_history`` for the layouts ``states`` with ``states[at]`` shown."""
    return {
        "undo": max(0, at),
        "redo": max(0, len(states) - 1 - at),
        "undo_label": label(states[at - 1]) if at > 0 else "",
        "redo_label": label(states[at + 1]) if 0 <= at < len(states) - 1 else "",
    }


# ---------------------------------------------------------------------- sizes and saved pages
def wire_size(*values: Any) -> int:
    """Bytes of JSON plus binary buffers, as ipywidgets would send these trait values."""
    total = 0

    def strip(v: Any) -> Any:
        nonlocal total
        if isinstance(v, bytes | bytearray | memoryview):
            total += len(v)
            return None
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [strip(x) for x in v]
        return v

    for v in values:
        total += len(json.dumps(strip(v), separators=(",", ":")))
    return total


def encode(v: Any) -> Any:
    """JSON-safe copy of trait values: binary buffers become {"__b64__": base64 text} (a saved
    page's ``revive`` turns them back into DataViews)."""
    if isinstance(v, bytes | bytearray | memoryview):
        return {"__b64__": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [encode(x) for x in v]
    return v


def page_data(state: dict[str, Any], answers: dict[str, Any]) -> PageData:
    """The data a saved page carries: synced traits and answers, binary encoded."""
    return {"state": encode(state), "answers": {k: encode(v) for k, v in answers.items()}}


# ---------------------------------------------------------------------- function views
def leaf_info(path: str, shape: Sequence[int], dtype: str) -> LeafInfo:
    """An input or output leaf of a function view: its name, global shape and dtype."""
    return {"path": path, "shape": list(shape), "dtype": dtype}


def trace_options(
    traced: Traced,
    *,
    n_devices: int,
    platform: str,
    memory_kinds: Sequence[str],
    original: TraceState,
    outputs: Sequence[LeafInfo],
) -> TraceOptions:
    """``_trace_options`` of a function view."""
    from .model.layout import _dtype_name

    return {
        "n_devices": n_devices,
        "platform": platform,
        "factorizations": mesh_mod.all_factorizations(n_devices),
        "memory_kinds": list(memory_kinds),
        "mode": traced.mode,
        "fn_name": traced.fn_name,
        "inputs": [leaf_info(lf.path, lf.shape, _dtype_name(lf.dtype)) for lf in traced.leaves],
        "outputs": list(outputs),
        "static_args": list(traced.static_args),
        "original": cast(TraceStateWire, original.to_wire()),
        "run_disabled": traced.run_disabled,
    }


def _leaf(
    path: str, lay: Layout, local_shape: Sequence[int], *, key: int, note: str = ""
) -> TraceLeaf:
    return {
        "path": path,
        "shape": list(lay.shape),
        "dtype": lay.dtype,
        "typeof": lay.typeof,
        "spec_str": lay.spec_text,
        "local_shape": list(local_shape),
        "layout": layout(lay, key=key, source="original", note="", local_process=0),
        "note": note,
    }


def collective(c: Any, group_set: int) -> CollectiveWire:
    """One hlo.Collective as the front end reads it (a reshard's; the same fields as the
    collectives of :func:`trace`, keep the two in step)."""
    return {
        "kind": c.kind,
        "axes": list(c.axes),
        "shape": list(c.shape),
        "dtype": c.dtype,
        "bytes": c.bytes,
        "group_size": c.group_size,
        "n_groups": c.n_groups,
        "op_name": c.op_name,
        "source": c.source,
        "groups_text": c.groups_text[:400],
        "group_set": group_set,
    }


def trace(
    res: TraceResult | None,
    *,
    mode: str,
    key: int,
    message: str = "",
    cached: bool = False,
    code: str = "",
) -> Trace:
    """``_trace`` for a result (or, with res None, an empty error trace carrying message)."""
    out: Trace = {
        "key": key,
        "status": "error" if message else "ok",
        "message": message,
        "mode": mode,
        "inputs": [],
        "outputs": [],
        "constraints": [],
        "collectives": [],
        "memory": None,
        "flops": None,
        "compile_ms": 0.0,
        "run_ms": 0.0,
        "cached": False,
        "ran": False,
        "left_out": {"inputs": 0, "outputs": 0, "constraints": 0, "collectives": 0},
        "jaxpr": "",
        "jaxpr_cut": 0,
        "group_sets": [],
        "code": code,
    }
    if res is None:
        return out
    ins, outs = res.input_leaves[:MAX_LEAVES], res.output_leaves[:MAX_LEAVES]
    notes_in, notes_out = res.notes.get("in", []), res.notes.get("out", [])
    out["inputs"] = [
        _leaf(lf.path, lf.layout, lf.local_shape, key=key, note=_at(notes_in, i))
        for i, lf in enumerate(ins)
    ]
    out["outputs"] = [
        _leaf(lf.path, lf.layout, lf.local_shape, key=key, note=_at(notes_out, i))
        for i, lf in enumerate(outs)
    ]
    out["jaxpr"] = _cut_lines(res.jaxpr, MAX_JAXPR)
    out["jaxpr_cut"] = len(res.jaxpr) - len(out["jaxpr"])
    out["left_out"] = {
        "inputs": len(res.input_leaves) - len(ins),
        "outputs": len(res.output_leaves) - len(outs),
        "constraints": max(0, len(res.constraints) - MAX_RECORDS),
        "collectives": max(0, len(res.collectives) - MAX_RECORDS),
    }
    out["constraints"] = [
        {
            "kind": c.kind,
            "shape": list(c.shape),
            "dtype": c.dtype,
            "spec_str": c.spec_text,
            "source": c.source,
        }
        for c in res.constraints[:MAX_RECORDS]
    ]
    sets, set_of = group_sets(
        [c.groups for c in res.collectives[:MAX_RECORDS]], budget=_group_id_budget(res)
    )
    out["group_sets"] = sets
    out["collectives"] = [
        collective(c, set_of[i]) for i, c in enumerate(res.collectives[:MAX_RECORDS])
    ]
    out["memory"] = cast(Memory, dict(res.memory)) if res.memory else None
    out["flops"] = res.flops
    out["cached"] = cached
    out["compile_ms"] = 0.0 if cached else round(res.compile_ms, 1)
    out["run_ms"] = round(res.run_ms, 1)
    out["ran"] = res.ran
    if res.run_error:
        out["status"] = "error"
        out["message"] = f"compiled, but the run failed: {res.run_error}"
    return out


def _cut_lines(text: str, limit: int) -> str:
    """text's first ``limit`` characters at most, ending at a whole line where one fits."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = head.rfind("\n")
    return head[:end] if end > 0 else head


def _at(notes: Sequence[str], i: int) -> str:
    return notes[i] if i < len(notes) else ""


def _group_id_budget(res: TraceResult) -> int:
    """Device ids all group sets may hold together: 8 sets over every device (a few bytes per id,
    well inside size_budget's 400 bytes per device)."""
    leaves = [*res.input_leaves, *res.output_leaves]
    n = leaves[0].layout.n_devices if leaves else 0
    return 8 * max(n, 64)


def group_sets(
    groups: Sequence[Sequence[Sequence[int]]], *, budget: int
) -> tuple[list[list[list[int]]], list[int]]:
    """The distinct group sets among ``groups`` (one per collective) and each one's index.

    A set that would take the ids sent past ``budget`` is left out: its collectives get -1 (the
    widget then lights no devices for them, and says so)."""
    sets: list[list[list[int]]] = []
    index: dict[tuple[tuple[int, ...], ...], int] = {}
    of: list[int] = []
    used = 0
    for g in groups:
        k = tuple(tuple(int(d) for d in grp) for grp in g)
        if k not in index:
            size = sum(len(grp) for grp in k)
            if used + size > budget:
                of.append(-1)
                continue
            used += size
            index[k] = len(sets)
            sets.append([list(grp) for grp in k])
        of.append(index[k])
    return sets, of


def trace_stats(
    summaries: Sequence[Summary], *, key: int, inputs: Sequence[Summary] | None = ()
) -> TraceStats:
    """Per-leaf statistics of a function view: outputs, and inputs as laid out for the run
    (``inputs=None`` leaves the field out, as for a view that never compiled)."""
    out: TraceStats = {
        "key": key,
        "outputs": [stats(s, key=key) for s in summaries[:MAX_LEAVES]],
    }
    if inputs is not None:
        out["inputs"] = [stats(s, key=key) for s in inputs[:MAX_LEAVES]]
    return out


def pending_trace_stats(key: int, n_outputs: int) -> TraceStats:
    """``_trace_stats`` while the statistics of trace ``key`` are being computed."""
    return {"key": key, "outputs": [pending_stats(key) for _ in range(min(n_outputs, MAX_LEAVES))]}


# ---------------------------------------------------------------------- cost (issue 12)
def hardware_presets(presets: Sequence[Hardware]) -> list[HardwareWire]:
    """``_hardware_presets``: what the hardware dropdown offers."""
    return [cast(HardwareWire, h.to_wire()) for h in presets]


def empty_estimate(key: int, hardware: str, message: str = "") -> EstimateWire:
    """An estimate with no parts (no compiled result to estimate)."""
    return {
        "key": key,
        "hardware": hardware,
        "parts": [],
        "total_s": 0.0,
        "overlap": message,
        "bound": "",
        "fits": None,
        "fits_text": "",
        "peak_bytes": 0,
        "hbm_bytes": 0.0,
    }


def estimate(est: Estimate, *, key: int) -> EstimateWire:
    """``_estimate`` of a function view (and ``estimate`` of a transfer); the parts in order
    compute, memory, each collective (at most MAX_RECORDS), a point-to-point transfer."""
    parts = est.parts()
    colls = [p for p in parts if p["kind"] == "collective"][:MAX_RECORDS]
    parts = (
        [p for p in parts if p["kind"] != "collective"][:2]
        + colls
        + [p for p in parts if p["kind"] == "transfer"]
    )
    return {
        "key": key,
        "hardware": est.hardware.name,
        "parts": [cast(EstimatePart, {**p, "seconds": _num(p["seconds"]) or 0.0}) for p in parts],
        "total_s": _num(est.total_s) or 0.0,
        "overlap": est.overlap,
        "bound": cast(Literal["compute", "memory", "communication", ""], est.bound),
        "fits": est.fits,
        "fits_text": est.fits_text,
        "peak_bytes": int(est.peak_bytes or 0),
        "hbm_bytes": float(est.hardware.hbm_bytes),
    }


def no_transfer(
    key: int, status: Literal["none", "pending", "unavailable"] = "none", message: str = ""
) -> TransferWire:
    """``_transfer`` with nothing to show: the original layout ("none"), still being computed,
    or unavailable (message says why)."""
    line = "the original layout: nothing moves" if status == "none" else ""
    return {
        "key": key,
        "status": status,
        "message": cap_message(message) if message else "",
        "line": line,
        "total": 0,
        "received": [],
        "sent": [],
        "pairs": [],
        "pairs_left_out": 0,
        "collectives": [],
        "group_sets": [],
        "estimate": None,
    }


def transfer(
    t: Transfer, *, key: int, device_ids: Sequence[int], est: Estimate | None
) -> TransferWire:
    """``_transfer`` of an array view: per-device lists in ``device_ids`` order (the shown
    layout's devices), pairs capped at MAX_PAIRS_PER_DEVICE × n + 64 (largest first). With
    ``est`` None the reshard is not compiled yet: status "pending", the bytes without the
    collectives and the estimate (they follow)."""
    cap = MAX_PAIRS_PER_DEVICE * len(device_ids) + 64
    pairs = t.plan.pairs
    if len(pairs) > cap:
        pairs = pairs[np.argsort(-pairs[:, 2], kind="stable")[:cap]]
    colls = t.collectives[:MAX_RECORDS] if est is not None else []
    sets, set_of = group_sets([c.groups for c in colls], budget=8 * max(len(device_ids), 64))
    out = no_transfer(key)
    out.update(
        {
            "status": "ready" if est is not None else "pending",
            "line": t.line(compiled=est is not None),
            "total": t.total,
            "received": [int(t.received.get(d, 0)) for d in device_ids],
            "sent": [int(t.sent.get(d, 0)) for d in device_ids],
            "pairs": pairs.tolist(),
            "pairs_left_out": len(t.plan.pairs) - len(pairs),
            "collectives": [collective(c, set_of[i]) for i, c in enumerate(colls)],
            "group_sets": sets,
            "estimate": estimate(est, key=key) if est is not None else None,
        }
    )
    return out
