"""The wire format shared by every view: budgets, messages (requests, results, history, pictures),
sizes and encoding. The view-specific payloads live in :mod:`.array`, :mod:`.function` and
:mod:`.cost`; :mod:`shardwidget.wire` re-exports them all.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import numpy as np

if TYPE_CHECKING:
    pass

SpecEntry = str | list[str] | None


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


class PageData(TypedDict):
    """What a saved page carries (``shardwidget-data``): synced traits and stored answers,
    binary values as ``{"__b64__": ...}`` (see :func:`encode`)."""

    state: dict[str, Any]
    answers: dict[str, Any]


# ---------------------------------------------------------------------- budgets
# Bytes for the binary parts; the JSON parts are ~150 bytes per device at most.
THUMB_BASE, THUMB_PER_DEVICE = 4096, 144
VALUES_BASE, VALUES_PER_DEVICE = 4096, 64
STATS_SHARES = 8
"""A function view's leaves of one side share this many leaves' worth of thumbnail pixels and
raw values (thumb_pixel_budget, values_budget): up to 8 leaves get a whole one each, more get
8/n each, so every leaf drawn has its data and the bytes stay bounded (issue 38: the leaves past
the 8th had none)."""
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


def num(x: float) -> float | None:
    """7 significant digits keep the JSON small; JSON has no NaN/Inf, so those become None."""
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.7g}")


def round_rows(rows: Sequence[np.ndarray | None]) -> list[list[float | None] | None]:
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


# ---------------------------------------------------------------------- messages
MAX_MESSAGE = 1000
"""Characters of an error message shown or raised at most (messages can echo input). JAX's own
errors run to several sentences (a ShardingTypeError, mesh_utils' NotImplementedError): at 300
they were cut mid-sentence ("via…", "E.g. logic…", issue 38); 1000 keeps them whole."""


def cap_message(msg: str, limit: int = MAX_MESSAGE) -> str:
    """msg, cut to ``limit`` characters with an ellipsis when longer."""
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def result_msg(seq: int, error: str) -> ResultMsg:
    """The answer to request ``seq``: ok when error is ""."""
    return {"type": "result", "seq": seq, "ok": not error, "error": error}


def parse_request(content: object, kind: str = "request") -> tuple[int, dict[str, Any]] | None:
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


def parse_history(content: object) -> int | None:
    """The step (-1 or 1) of a HistoryMsg, or None when the message is something else."""
    if not isinstance(content, dict) or content.get("type") != "history":
        return None
    step = content.get("step")
    return step if step in (-1, 1) and not isinstance(step, bool) else None


def is_picture_request(content: object) -> bool:
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

    def strip(v: object) -> Any:
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


def encode(v: object) -> Any:
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
