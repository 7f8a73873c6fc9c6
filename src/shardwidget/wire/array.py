"""The array view's wire format: ``_options`` (:class:`Options`), ``_layout`` (:class:`LayoutWire`),
``_stats`` (:class:`Stats`), and the variants a saved page carries. Mirrors ``js/wire/array.ts``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

import numpy as np

from ..model import mesh as mesh_mod
from ..model.layout import Layout
from ..model.state import LayoutState
from ..model.summary import Summary
from ..render.legend import legend_of
from ..render.scene import heat_range
from ._common import SpecEntry, num, round_rows

if TYPE_CHECKING:
    pass


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


class RequestMsg(TypedDict):
    """An array view's request: lay the array out as ``state``."""

    type: Literal["request"]
    seq: int
    state: LayoutStateWire


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
    axis_links: NotRequired[list[str]]
    """What a step along each axis travels over, in words (a ``gpu_mesh``'s); sent only where
    the mesh says (:attr:`shardwidget.model.layout.MeshInfo.axis_links`)."""
    domain_hosts: NotRequired[int]
    """Hosts one NVLink domain joins where it spans several; sent with ``axis_links``."""


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


class Variant(TypedDict):
    """One layout a saved page can answer: the state asked for, its geometry and statistics."""

    state: LayoutStateWire
    layout: LayoutWire
    stats: Stats


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
    ``stateKey`` writes the same string (pinned by js/tests/wire/state_key.gen.json)."""
    return json.dumps(st.to_wire(), separators=(",", ":"), ensure_ascii=False)


def layout(
    lay: Layout, *, key: int, source: str, note: str, local_process: int, code: str = ""
) -> LayoutWire:
    """``_layout`` of an array view (and the ``layout`` of a function-view leaf)."""
    mesh: MeshWire | None = None
    if lay.mesh is not None:
        mesh = {
            "axis_names": list(lay.mesh.axis_names),
            "axis_sizes": list(lay.mesh.axis_sizes),
            "axis_types": list(lay.mesh.axis_types),
            "device_ids": lay.derived("wire.mesh_ids", _mesh_ids),
        }
        if lay.mesh.axis_links:
            mesh["axis_links"] = list(lay.mesh.axis_links)
            mesh["domain_hosts"] = lay.mesh.domain_hosts
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
        "devices": cast(
            DeviceTable,
            {**lay.derived("wire.devices", _devices_wire), "local_process": local_process},
        ),
        "blocks": lay.derived("wire.blocks", _blocks_wire),
        "bytes_per_device": lay.bytes_per_device,
        "logical_bytes": lay.logical_bytes,
        "replication": lay.replication,
        "note": note,
        "code": code,
        "unreduced": list(lay.unreduced),
        "legend": lay.derived("wire.legend", legend_wire),
    }


# The per-device and per-block lists of a layout's payload are made once per Layout (a 4096-device
# layout shown again costs no rebuild: ~20,000 lists). The payloads of every update share them:
# nothing may change them in place.
def _mesh_ids(lay: Layout) -> list[int]:
    return list(lay.mesh.device_ids) if lay.mesh is not None else []


def _devices_wire(lay: Layout) -> dict[str, Any]:
    devs = lay.devices
    has_coords = any(d.coords is not None for d in devs)
    has_core = any(d.core_on_chip is not None for d in devs)
    return {
        "ids": [d.id for d in devs],
        "process": [d.process_index for d in devs],
        "platform": devs[0].platform if devs else "",
        "kind": devs[0].kind if devs else "",
        "coords": [list(d.coords or ()) for d in devs] if has_coords else None,
        "core_on_chip": [d.core_on_chip or 0 for d in devs] if has_core else None,
    }


def _blocks_wire(lay: Layout) -> list[BlockWire]:
    return [{"i": [list(r) for r in b.index], "d": list(b.devices)} for b in lay.blocks]


def legend_wire(lay: Layout) -> LegendWire:
    """``LayoutWire.legend`` of a layout."""
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
    out["blocks"] = round_rows(summary.stats)
    out["partials"] = round_rows(summary.partials or [])
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
    # Thumbnails: uint8 between the finite min and max of all thumbnails (render.scene's
    # heat_range); non-finite pixels 0. Without one finite pixel (all NaN / Inf) there is no
    # heatmap to draw: none is sent, not a flat one that reads as zeros (the legend says why).

    scale = heat_range(summary)
    thumbs = list(summary.thumbs) if scale is not None else [None] * len(summary.thumbs)
    present = [t for t in thumbs if t is not None]
    flat = np.concatenate([t.reshape(-1) for t in present]) if present else np.zeros(0)
    vmin, vmax = scale or (0.0, 0.0)
    if vmax > vmin:
        q = np.where(np.isfinite(flat), (flat - vmin) * (255.0 / (vmax - vmin)), 0.0)
    else:
        q = np.where(np.isfinite(flat), 128.0, 0.0)
    quant = np.clip(np.rint(q), 0, 255).astype(np.uint8)
    shapes: list[list[int]] = []
    toffs: list[int] = []
    tpos = 0
    for t in thumbs:
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
    out["vmin"], out["vmax"] = num(vmin) or 0.0, num(vmax) or 0.0
    return out


def variant(st: LayoutState, lay: LayoutWire, summ: Stats) -> Variant:
    """One stored answer of a saved page."""
    return {"state": state_wire(st), "layout": lay, "stats": summ}
