"""The memory panel's payload (``Trace.peak``): the peak of one compile, its timeline cut to
a bounded width, and the buffers live at it grouped as the panel shows them. The twin of
``PeakWire`` in js/wire/function.ts."""

from __future__ import annotations

from typing import TypedDict

from ..hlo import peak_text
from ..hlo.peak import Buffer, Peak

MAX_POINTS = 600
"""Points of the timeline sent (each the largest of its run of instructions): the panel is
at most this wide, so a 20,000-instruction program draws as fast as a small one."""
MAX_ROWS = 12
"""Buffers sent per group (largest first); the rest are counted in ``more``."""


class PeakRow(TypedDict):
    """One buffer live at the peak."""

    label: str
    """Its input leaf's path, else JAX's op and its line."""
    bytes: int
    shape: str
    path: str
    """The input leaf it is ("" for outputs and temporaries): a click lights its card."""
    op_name: str
    aliased: bool


class PeakGroup(TypedDict):
    name: str
    """One of "parameters and inputs", "optimizer state", "saved activations", "temporaries",
    "outputs"."""
    bytes: int
    rows: list[PeakRow]
    more: int
    """Buffers of the group left out of ``rows``."""


class PeakWire(TypedDict):
    """The peak of one compile, or why it is unknown (``unknown``; then the rest is empty)."""

    unknown: str
    bytes: int
    title: str
    """"peak 12.1 GiB at … (2.3 GiB over the 15.75 GiB of HBM)"."""
    timeline: list[int]
    """Bytes live over the program, MAX_POINTS points at most (each the largest of its run)."""
    at: int
    """The peak's point in ``timeline``."""
    instructions: int
    hbm: float | None
    """The device memory the line is drawn at (None: not known)."""
    hbm_name: str
    """Whose memory that is ("tpu-v5e", "the TPU compiler's")."""
    groups: list[PeakGroup]


def empty(unknown: str) -> PeakWire:
    """A payload that says why there is no peak."""
    return {
        "unknown": unknown,
        "bytes": 0,
        "title": "",
        "timeline": [],
        "at": 0,
        "instructions": 0,
        "hbm": None,
        "hbm_name": "",
        "groups": [],
    }


def peak(
    p: Peak | None, unknown: str = "", hbm: float | None = None, hbm_name: str = ""
) -> PeakWire:
    """The payload of a peak (None: :func:`empty` with ``unknown``)."""
    if p is None:
        return empty(unknown or "the compiler gave no memory report")
    n = len(p.timeline)
    line = peak_text.downsample(p.timeline, MAX_POINTS)
    return {
        "unknown": "",
        "bytes": p.bytes,
        "title": peak_text.title(p, hbm),
        "timeline": line,
        "at": min(len(line) - 1, p.at.index * len(line) // max(1, n)),
        "instructions": n,
        "hbm": hbm,
        "hbm_name": hbm_name,
        "groups": [
            {
                "name": g,
                "bytes": total,
                "rows": [_row(b) for b in bs[:MAX_ROWS]],
                "more": max(0, len(bs) - MAX_ROWS),
            }
            for g, total, bs in peak_text.grouped(p)
        ],
    }


def _row(b: Buffer) -> PeakRow:
    return {
        "label": peak_text.label(b),
        "bytes": b.bytes,
        "shape": b.shape,
        "path": b.path,
        "op_name": b.op_name,
        "aliased": b.aliased,
    }


class FitWire(TypedDict):
    """``view.largest_fit``'s progress and answer for the layout shown (``Trace.fit``)."""

    input: str
    dim: int
    compiles: int
    """Compiles finished so far."""
    of: int
    """The most compiles it makes."""
    done: bool
    error: str
    text: str
    """"largest x dim 0 that fits in 15.75 GiB: 4096 (peak 14.2 GiB); 4352 does not …"."""


def fit(input: str, dim: int, compiles: int, of: int, done: bool, error: str, text: str) -> FitWire:
    """The payload of a largest_fit as it stands."""
    return {
        "input": input,
        "dim": dim,
        "compiles": compiles,
        "of": of,
        "done": done,
        "error": error,
        "text": text,
    }
