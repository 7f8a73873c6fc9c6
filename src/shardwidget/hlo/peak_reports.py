"""The two reports of XLA's dump the memory peak is read from (:mod:`.peak`): the live-range
report (the instruction sequence, each value's live range, the report's own peak) and the buffer
assignment (each allocation, its kind and memory space, the values it holds at which offsets).
Each section is read by one regular expression over its text, not a Python loop per line (a
20,000-instruction program's reports have ~100,000 lines). Pure text reading: no JAX."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEQ = re.compile(r"^[ \t]*(\d+):(\S+)[ \t]*$", re.M)
_RANGE = re.compile(r"^[ \t]*(.+):(\d+)-(\d+)[ \t]*$", re.M)
_CUMULATIVE = re.compile(r"cumulative: (\d+) bytes")
_SECTIONS = ("InstructionSequence:", "BufferLiveRange:", "Live ranges at")
_BREAKDOWN = "Stack trace breakdown for peak usage:"


def read_live_range(text: str) -> tuple[list[str], dict[str, tuple[int, int]], int]:
    """(instruction sequence, value -> (first, last) point inclusive, the report's peak).
    Each section is read by one regular expression over its text (C, not a Python loop per
    line: a 20,000-instruction program's report has ~100,000 lines)."""
    seq_t, ranges_t, peak_t, breakdown = _sections(text)
    seq = [m[1] for m in _SEQ.findall(seq_t)]
    ranges = {name: (int(f), int(la)) for name, f, la in _RANGE.findall(ranges_t)}
    found = _CUMULATIVE.findall(peak_t)
    reported = int(found[-1]) if found else 0
    if breakdown is not None:
        reported = int(re.sub(r"\D", "", breakdown) or 0)
    return seq, ranges, reported


def _sections(text: str) -> tuple[str, str, str, str | None]:
    """The text of the report's sequence, live ranges and peak sections (each up to the next
    heading), and the rest of the breakdown's heading line (None: no breakdown). Nothing is
    read past the breakdown's heading."""
    stop = _heading(text, _BREAKDOWN)
    breakdown = None
    if stop is not None:
        end = text.find("\n", stop)
        line = text[stop : end if end >= 0 else len(text)].strip()
        breakdown = line.split(":", 1)[1]
        text = text[:stop]
    starts = [_heading(text, h) for h in _SECTIONS]
    known = sorted(x for x in starts if x is not None)
    out = []
    for at in starts:
        if at is None:
            out.append("")
            continue
        body = text.find("\n", at) + 1 if text.find("\n", at) >= 0 else len(text)
        nxt = next((k for k in known if k > at), len(text))
        out.append(text[body:nxt])
    return out[0], out[1], out[2], breakdown


def _heading(text: str, heading: str) -> int | None:
    """Where the line that begins (after spaces) with heading starts, None if none does."""
    m = re.search(r"^[ \t]*" + re.escape(heading), text, re.M)
    return m.start() if m else None


@dataclass
class Value:
    name: str
    size: int
    offset: int
    shape: str


@dataclass
class Alloc:
    index: int
    size: int
    color: int
    kind: str
    """"parameter", "output", "temp", "constant", "thread-local" or "other"."""
    parameter: int | None
    live_out: bool
    values: list[Value]


_ENTRY = re.compile(
    r"^[ \t]*(?:allocation (\d+): size (\d+)(.*):"
    r"|value: <\d+ (\S+)(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\): (.*?))[ \t]*$",
    re.M,
)
_ASSIGNMENT_END = re.compile(r"^[ \t]*(?:Total bytes used|Used values)", re.M)
_COLOR = re.compile(r"color (\d+)")
_PARAMETER = re.compile(r"parameter (\d+)")


def read_assignment(text: str) -> list[Alloc]:
    """The allocations of a buffer assignment and the values each holds (read up to its
    summary: one regular expression over the text)."""
    end = _ASSIGNMENT_END.search(text)
    allocs: list[Alloc] = []
    for index, size, rest, name, vsize, offset, shape in _ENTRY.findall(
        text[: end.start()] if end else text
    ):
        if index:
            color = _COLOR.search(rest)
            param = _PARAMETER.search(rest)
            allocs.append(
                Alloc(
                    index=int(index),
                    size=int(size),
                    color=int(color.group(1)) if color else 0,
                    kind=_alloc_kind(rest),
                    parameter=int(param.group(1)) if param else None,
                    live_out="maybe-live-out" in rest,
                    values=[],
                )
            )
        elif allocs:
            name = name if name.endswith("}") else name + "{}"
            allocs[-1].values.append(Value(name, int(vsize), int(offset), shape))
    return allocs


def _alloc_kind(rest: str) -> str:
    for key, kind in (
        ("parameter", "parameter"),
        ("output shape", "output"),
        ("preallocated-temp", "temp"),
        ("constant", "constant"),
        ("thread-local", "thread-local"),
    ):
        if key in rest:
            return kind
    return "temp"  # (a "maybe-live-out" one: its values say whether they are outputs)
