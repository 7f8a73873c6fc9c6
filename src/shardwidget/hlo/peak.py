"""Where the memory goes: the peak of one compile, read from the compiler's own dump.

XLA (CPU, TPU, GPU) writes, for a module it dumps (``xla_dump_hlo_module_re``), a live-range
report (``*after_optimizations-live-range.txt``: the program's instruction sequence, each
value's live range over it, the values live at the report's peak) and its buffer assignment
(``*after_optimizations-buffer-assignment.txt``: each allocation, its kind, memory space and the
values it holds at which offsets). The live-range report's own peak is a sum over values, and
it does not agree with the buffer assignment of the same compile either way: two values the
compiler put in the same bytes (an in-place update) count twice there (measured on XLA:CPU: a
gradient whose report says 8,388,608 B while ``memory_analysis()`` totals 6,815,760 B), and an
op's operand that dies at the op is left out beside its result (a 2048² matmul of a temporary:
16,793,600 B reported, while the assignment gives operand and result 16 MiB each, and
``memory_analysis()`` 32 MiB of temporaries). So the peak here is the bytes of device memory
(memory space 0: HBM on a TPU) that live values occupy in the buffer assignment, each byte
once, at every point of the sequence (a value counts from its first point to its last, both
included); the report's own figure stays beside it (``reported_bytes``).

Pure text reading: no JAX (the helper processes send the files' text back, see
:func:`dump_texts`).
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from . import collectives as hlo
from . import peak_reports as reports

LIVE_RANGE = "after_optimizations-live-range.txt"
ASSIGNMENT = "after_optimizations-buffer-assignment.txt"
FILES = (LIVE_RANGE, ASSIGNMENT, "after_optimizations.txt")
"""The dump files the peak is read from (the optimized HLO gives each value's op and line)."""

NO_REPORT = (
    "the compiler wrote no live-range report for this compile (the dump has no "
    "*after_optimizations-live-range.txt and buffer assignment)"
)
NO_LIVE_RANGE = (
    "the compiler wrote its buffer assignment but no live-range report, so what is live when "
    "is not known (XLA:CPU writes none before jaxlib 0.10; measured on 0.7.2, 0.8.3 and 0.9.2)"
)


@dataclass(frozen=True)
class Buffer:
    """Bytes of device memory live at the peak: one value, or several the compiler put in
    the same bytes (``also``)."""

    bytes: int
    """Bytes it occupies on one device (each byte counted once)."""
    shape: str
    """The value's shape as HLO writes it ("f32[1024,512]")."""
    dtype: str
    """Its element type ("f32", "bf16"); "tuple" for a tuple's index table."""
    kind: str
    """"argument", "output" or "temporary"."""
    value: str
    """The HLO value's name ("wrapped_tanh{}")."""
    op_name: str = ""
    """JAX's name of the op that made it ("jit(step)/transpose(jvp())/dot_general"), or the
    argument's path as JAX writes it ("p['w1']")."""
    source: str = ""
    """Where the user's code made it ("model.py:41"), "" when the compiler does not say."""
    path: str = ""
    """For an argument: the input leaf's path ("p['w1']")."""
    parameter: int | None = None
    """For an argument: its parameter number in the compiled program."""
    aliased: bool = False
    """For an argument: whether an output reuses its buffer (a donated argument)."""
    also: tuple[str, ...] = ()
    """Other values held in the same bytes (the compiler reused them in place)."""


@dataclass(frozen=True)
class Point:
    """A point of the program's instruction sequence."""

    index: int
    """Its place in the compiler's instruction sequence (0 first)."""
    instruction: str
    """The HLO instruction there ("fusion.21")."""
    op_name: str = ""
    """JAX's name of its op ("jit(step)/jvp()/dot_general")."""
    source: str = ""
    """Where the user's code wrote it ("model.py:41"), "" when the compiler does not say."""
    loop: str = ""
    """"" outside loops; inside a loop's body, which loop and how often it runs
    ("in the body of while.30, run 4 times"; the same bytes are live in every iteration)."""


@dataclass(frozen=True)
class Peak:
    """The most device memory one device holds during the program, where, and what.

    Attributes:
        bytes: bytes live at the peak on one device (memory space 0), each byte once.
        at: the program point of the peak (the first, where several points tie).
        buffers: what is live there, largest first; their bytes sum to ``bytes``.
        timeline: bytes live at each point of the instruction sequence.
        reported_bytes: the live-range report's own peak (a sum over values; see above).
        instructions: the instruction sequence's length.
    """

    bytes: int
    at: Point
    buffers: tuple[Buffer, ...]
    timeline: tuple[int, ...]
    reported_bytes: int
    instructions: int

    def by_source(self) -> dict[str, dict[str, int]]:
        """Bytes at the peak grouped two ways: ``{"leaf": {path: bytes}, "source": {line:
        bytes}}``; outputs and temporaries the compiler names no line for go under their kind
        ("output", "temporary")."""
        leaf: dict[str, int] = {}
        line: dict[str, int] = {}
        for b in self.buffers:
            if b.kind == "argument":
                key = b.path or b.op_name or f"parameter {b.parameter}"
                leaf[key] = leaf.get(key, 0) + b.bytes
            else:
                key = b.source or b.op_name or b.kind
                line[key] = line.get(key, 0) + b.bytes
        return {"leaf": leaf, "source": line}

    def of_kind(self, kind: str) -> int:
        """Bytes at the peak of buffers of one kind ("argument", "output", "temporary")."""
        return sum(b.bytes for b in self.buffers if b.kind == kind)


# ------------------------------------------------------------------------------ reading
FAST_DUMP_FREE = 1 << 30
"""Free bytes a memory-backed folder must have to take compile dumps (a big program's dump is
tens of MB; a container's /dev/shm is often 64 MB: then the disk is used)."""

DUMP_DIR_ENV = "SHARDWIDGET_DUMP_DIR"
"""The environment variable that tells a helper process where to make its dump folders."""


def dump_root() -> str | None:
    """Where a compile's dump folder is made: /dev/shm (memory) where it exists, is writable
    and has :data:`FAST_DUMP_FREE` free, else None (the system's temporary folder). XLA writes
    30-40 files per dumped compile and they are read once and deleted: on this machine's disk
    that cost the 24-layer gradient of ``benchmarks/peak_cost.py`` +12.1 % over the compile
    (median of 5 runs of 7 pairs, loaded) against +7.4 % in /dev/shm."""
    shm = "/dev/shm"
    try:
        usable = os.path.isdir(shm) and os.access(shm, os.W_OK)
        if usable and shutil.disk_usage(shm).free >= FAST_DUMP_FREE:
            return shm
    except OSError:
        pass
    return None


def dump_texts(folder: str) -> dict[str, str]:
    """The texts of :data:`FILES` in an XLA dump folder (the last module's where several),
    by file suffix; missing ones left out. What any helper (CPU, TPU, GPU) sends back."""
    out: dict[str, str] = {}
    for suffix in FILES:
        found = sorted(glob.glob(os.path.join(folder, "*" + suffix)))
        if found:
            with open(found[-1], encoding="utf-8") as f:
                out[suffix] = f.read()
    return out


def peak_of(
    texts: Mapping[str, str], in_paths: Sequence[str] = (), aliased: Sequence[int] = ()
) -> Peak | str:
    """The peak read from a dump's texts (:func:`dump_texts`), or why it cannot be.

    ``in_paths``: the compiled program's parameters' paths as the view names them, in
    parameter order (the input leaves XLA kept); empty: JAX's own names from the parameters'
    metadata ("p['w1']"); ``aliased``: the
    parameter numbers an output reuses (donated), where known beyond the dump's own record."""
    report, assign = texts.get(LIVE_RANGE), texts.get(ASSIGNMENT)
    if assign and not report:
        return NO_LIVE_RANGE
    if not report or not assign:
        return NO_REPORT
    seq, ranges, reported = reports.read_live_range(report)
    if not seq:
        return "the compiler's live-range report lists no instructions"
    allocs = reports.read_assignment(assign)
    hlo_text = texts.get("after_optimizations.txt", "")
    timeline = _timeline(len(seq), allocs, ranges)
    at = max(range(len(timeline)), key=lambda i: (timeline[i], -i))
    live = _live_at(at, len(seq), allocs, ranges)
    names = {_instruction(v.name) for group in live.values() for g in group for *_, v in g}
    meta = _metadata(hlo_text, sorted(names | {seq[at]}))
    buffers = _buffers(live, allocs, meta, (in_paths, set(aliased)), _live_out(ranges, len(seq)))
    return Peak(
        bytes=timeline[at],
        at=_point(at, seq[at], meta, hlo_text),
        buffers=tuple(buffers),
        timeline=tuple(timeline),
        reported_bytes=reported,
        instructions=len(seq),
    )


def peak_fields(texts: Mapping[str, str], in_paths: Sequence[str] = ()) -> dict[str, Any]:
    """``{"peak": Peak | None, "peak_unknown": why}`` of a dump's texts: the fields a
    compile's result (``TraceResult``, ``Plan``) carries."""
    try:
        found = peak_of(texts, in_paths)
    except (ValueError, IndexError, KeyError) as e:  # a report this reader does not know
        found = f"the compiler's memory report could not be read ({type(e).__name__}: {e})"
    if isinstance(found, str):
        return {"peak": None, "peak_unknown": found}
    return {"peak": found, "peak_unknown": ""}


def with_paths(peak: Peak | None, in_paths: Sequence[str]) -> Peak | None:
    """The peak with its arguments named by the view's input leaves, in parameter order,
    where the program kept every leaf as a parameter (every parameter is live at the peak:
    their count tells); else as it was (JAX's own names)."""
    if peak is None:
        return None
    params = {b.parameter for b in peak.buffers if b.kind == "argument"}
    if params != set(range(len(in_paths))):
        return peak
    named = [
        replace(b, path=in_paths[b.parameter])
        if b.kind == "argument" and b.parameter is not None
        else b
        for b in peak.buffers
    ]
    return replace(peak, buffers=tuple(named))


def _counted(a: reports.Alloc) -> bool:
    """Whether an allocation is device memory the program holds: memory space 0 (HBM on a
    TPU; other spaces are on-chip scratch), not a constant baked into the executable or a
    per-thread scratch slot."""
    return a.color == 0 and a.kind not in ("constant", "thread-local")


_Span = tuple[int, int, int, int, reports.Value]
"""(first point, last point, byte offset, bytes, value): one value's place and time."""


def _intervals(a: reports.Alloc, ranges: Mapping[str, tuple[int, int]], n: int) -> list[_Span]:
    """Each value of an allocation that has a live range, over n points. A parameter's bytes
    are held for the whole program (the caller owns them)."""
    out = []
    for v in a.values:
        if a.kind == "parameter":
            out.append((0, n - 1, v.offset, v.size, v))
        elif v.name in ranges:
            first, last = ranges[v.name]
            out.append((first, min(last, n - 1), v.offset, v.size, v))
    return out


def _union(spans: list[tuple[int, int]]) -> int:
    """Bytes covered by byte ranges (offset, size), each byte once."""
    total, end = 0, -1
    for off, size in sorted(spans):
        lo, hi = max(off, end), off + size
        if hi > lo:
            total += hi - lo
        end = max(end, hi)
    return total


def _timeline(
    n: int, allocs: Sequence[reports.Alloc], ranges: Mapping[str, tuple[int, int]]
) -> list[int]:
    """Bytes live at each of n points, each byte once. Per allocation, its bytes are cut at
    every value's edges; a piece counts while any value over it is live (the union of those
    values' live ranges), added to a difference array: linear in the values, not values x
    points."""
    diff = [0] * (n + 1)
    for a in allocs:
        if _counted(a):
            for first, last, size in _pieces(_intervals(a, ranges, n)):
                diff[first] += size
                diff[last + 1] -= size
    out, run = [], 0
    for d in diff[:n]:
        run += d
        out.append(run)
    return out


def _pieces(iv: Sequence[_Span]) -> list[tuple[int, int, int]]:
    """(first, last, bytes): each byte range between value edges, over each merged run of
    the live ranges of the values that cover it."""
    if len(iv) == 1:
        return [(iv[0][0], iv[0][1], iv[0][3])]
    edges = sorted({o for *_, o, _s, _v in iv} | {o + sz for *_, o, sz, _v in iv})
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, (_f, _la, o, sz, _v) in enumerate(iv):
        if sz > 0:  # (a value of no bytes covers nothing)
            starts.setdefault(o, []).append(i)
            ends.setdefault(o + sz, []).append(i)
    # A sweep over the edges: the values over [lo, hi) are those begun at or before lo and
    # not ended by it (hi is the next edge, so they reach it): linear, not edges x values.
    over: dict[int, tuple[int, int]] = {}
    out = []
    for lo, hi in itertools.pairwise(edges):
        for i in ends.get(lo, ()):
            del over[i]
        for i in starts.get(lo, ()):
            over[i] = (iv[i][0], iv[i][1])
        for first, last in _merged(sorted(over.values())):
            out.append((first, last, hi - lo))
    return out


def _merged(times: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted inclusive point ranges merged where they touch or overlap."""
    out: list[tuple[int, int]] = []
    for f, la in times:
        if out and f <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], la))
        else:
            out.append((f, la))
    return out


# ------------------------------------------------------------------------------ naming
@dataclass
class _Meta:
    op_name: str
    source: str
    shape: str


def _metadata(hlo_text: str, names: Sequence[str]) -> dict[str, _Meta]:
    """Instruction name -> its JAX op name, source line and result shape, from the optimized
    HLO's text, for the names asked for only (found by plain text search: the text of a
    20,000-instruction program is read once by C, not line by line in Python)."""
    frames: dict[int, str] | None = None
    out: dict[str, _Meta] = {}
    lines = _lines_of(hlo_text, names)
    for name in names:
        line = lines.get(name, "")
        if not line:
            continue
        shape = line.split(" = ", 1)[1].split(" ", 1)[0] if " = " in line else ""
        op = re.search(r'op_name="((?:[^"\\]|\\.)*)"', line)
        src_f = re.search(r'source_file="([^"]*)"', line)
        src_l = re.search(r"source_line=(\d+)", line)
        source = hlo.where(src_f.group(1), src_l.group(1)) if src_f and src_l else ""
        frame = re.search(r"stack_frame_id=(\d+)", line)
        if not source and frame:
            frames = frames if frames is not None else hlo.stack_frames(hlo_text)
            source = frames.get(int(frame.group(1)), "")
        text = op.group(1).replace("\\'", "'") if op else ""
        out[name] = _Meta(text, source, re.sub(r"\{[^}]*\}$", "", shape))
    return out


def _lines_of(hlo_text: str, names: Sequence[str]) -> dict[str, str]:
    """The line that defines each instruction of names ("  %name = ...", "name = ..." or
    "ROOT name = ..."): one pass over the text's lines, not a search of the whole text per
    name (the names live at a peak grow with the program: 300 names of a 100-layer gradient
    searched one by one took 77 ms)."""
    wanted = set(names)
    out: dict[str, str] = {}
    for line in hlo_text.splitlines():
        head, eq, _ = line.partition(" = ")
        if not eq:
            continue
        name = head.strip().removeprefix("ROOT ").lstrip("%")
        if name in wanted and name not in out:
            out[name] = line
            if len(out) == len(wanted):
                break
    return out


def _instruction(value: str) -> str:
    """The instruction that defines a value ("fusion.21{3}" -> "fusion.21")."""
    return value.split("{", 1)[0]


def _point(at: int, instruction: str, meta: Mapping[str, _Meta], hlo_text: str) -> Point:
    md = meta.get(instruction, _Meta("", "", ""))
    return Point(at, instruction, md.op_name, md.source, _loop_of(instruction, hlo_text))


def _loop_of(instruction: str, hlo_text: str) -> str:
    """Which loop's body holds an instruction, and its trip count where the compiler wrote it
    (``known_trip_count``), "" outside loops."""
    pos = hlo_text.find(f"%{instruction} = ")
    if pos < 0:
        return ""
    head = max(hlo_text.rfind("\n%", 0, pos), hlo_text.rfind("\nENTRY ", 0, pos))
    m = re.match(r"\n(?:ENTRY )?%?([\w.\-]+)", hlo_text[head : head + 200])
    if head < 0 or not m:
        return ""
    use = hlo_text.find(f"body=%{m.group(1)},")
    if use < 0:
        use = hlo_text.find(f"body=%{m.group(1)} ")
    if use < 0:
        return ""
    line = hlo_text[hlo_text.rfind("\n", 0, use) + 1 : hlo_text.find("\n", use)]
    loop = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = ", line)
    trips = re.search(r"known_trip_count[^0-9]*(\d+)", line)
    name = loop.group(1) if loop else "a loop"
    return (
        f"in the body of {name}, run {trips.group(1)} times" if trips else f"in the body of {name}"
    )


_Group = list[tuple[int, int, reports.Value]]


def _live_at(
    at: int, n: int, allocs: Sequence[reports.Alloc], ranges: Mapping[str, tuple[int, int]]
) -> dict[int, list[_Group]]:
    """Allocation index -> the values live at point ``at`` in it, grouped where their bytes
    overlap (one buffer, reused in place)."""
    out: dict[int, list[_Group]] = {}
    for a in allocs:
        if _counted(a):
            live = [(o, sz, v) for f, la, o, sz, v in _intervals(a, ranges, n) if f <= at <= la]
            if live:
                out[a.index] = _overlapping(live)
    return out


def _live_out(ranges: Mapping[str, tuple[int, int]], n: int) -> set[str]:
    """The values live past the last instruction: the program's outputs."""
    return {k for k, (_, last) in ranges.items() if last >= n}


def _buffers(
    live: Mapping[int, list[_Group]],
    allocs: Sequence[reports.Alloc],
    meta: Mapping[str, _Meta],
    args: tuple[Sequence[str], set[int]],
    outs: set[str],
) -> list[Buffer]:
    """One :class:`Buffer` per group of :func:`_live_at`, largest first."""
    in_paths, aliased = args
    by_index = {a.index: a for a in allocs}
    reused = {a.parameter for a in allocs if a.parameter is not None and a.live_out} | aliased
    out = [
        _buffer(by_index[i], g, meta, in_paths, reused, outs)
        for i, groups in live.items()
        for g in groups
    ]
    out.sort(key=lambda b: -b.bytes)
    return out


def _overlapping(
    live: list[tuple[int, int, reports.Value]],
) -> list[list[tuple[int, int, reports.Value]]]:
    """Live values grouped where their bytes overlap (one buffer reused in place)."""
    groups: list[list[tuple[int, int, reports.Value]]] = []
    end = -1
    for item in sorted(live, key=lambda x: x[0]):
        if groups and item[0] < end:
            groups[-1].append(item)
            end = max(end, item[0] + item[1])
        else:
            groups.append([item])
            end = item[0] + item[1]
    return groups


def _buffer(
    a: reports.Alloc,
    group: list[tuple[int, int, reports.Value]],
    meta: Mapping[str, _Meta],
    in_paths: Sequence[str],
    outputs_reuse: set[int],
    outs: set[str],
) -> Buffer:
    size = _union([(o, s) for o, s, _ in group])
    main = max(group, key=lambda x: x[1])[2]
    md = meta.get(_instruction(main.name), _Meta("", "", ""))
    kind = "argument" if a.kind == "parameter" else "temporary"
    if kind == "temporary" and (a.kind == "output" or main.name in outs):
        kind = "output"  # the program's result, or a value that is one
    own = re.sub(r"\{[^}]*\}$", "", main.shape.split(" ")[0])
    shape = own if main.name.endswith("}") and not main.name.endswith("{}") else md.shape or own
    path = ""
    if kind == "argument":
        n = a.parameter
        path = (
            in_paths[n] if n is not None and n < len(in_paths) else _leaf_path(md.op_name, in_paths)
        )
    return Buffer(
        bytes=size,
        shape=shape,
        dtype=_dtype(shape),
        kind=kind,
        value=main.name,
        op_name=md.op_name,
        source=md.source if kind != "argument" else "",
        path=path,
        parameter=a.parameter,
        aliased=kind == "argument" and a.parameter in outputs_reuse,
        also=tuple(v.name for _, _, v in group if v is not main),
    )


def _dtype(shape: str) -> str:
    if shape.startswith("("):
        return "tuple"
    m = re.match(r"([a-z]+\d*)", shape)
    return m.group(1) if m else ""


def _leaf_path(op_name: str, in_paths: Sequence[str]) -> str:
    """The view's name of the input leaf a parameter holds: JAX writes the argument's path as
    the parameter's op name ("p['w1']", "x"); matched to the view's paths where one agrees,
    else JAX's own text."""
    if not op_name:
        return ""
    plain = re.sub(r"[\[\]'\".]", "", op_name)
    for p in in_paths:
        if p == op_name or re.sub(r"[\[\]'\".]", "", p) == plain:
            return p
    return op_name
