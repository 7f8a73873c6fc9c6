"""A compiled HLO module's computations and instructions, parsed once for the readers that follow
values through it (:mod:`.flow`, :mod:`.concat`): each instruction's name, op, result shape,
operands, attributes and metadata. Pure text; no JAX.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from . import collectives as hlo

_HEAD = re.compile(r"^\s+(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*")
_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?(?P<name>[\w.\-]+)\s*\(.*\{\s*$")
_OP = re.compile(r"\s*(?P<op>[a-z][a-z0-9\-]*)\(")
_COMMENT = re.compile(r"/\*.*?\*/")
"""XLA's ``/*index=5*/`` marks before every fifth operand or tuple element: not a name."""


@dataclass
class Instr:
    """One instruction of the module."""

    name: str
    op: str
    tuple_size: int  # elements of a tuple result; 0 for an array
    operands: list[str]
    attrs: str  # the text after the operands, metadata left out
    root: bool = False
    op_name: str = ""  # its metadata's op_name
    shape: str = ""  # its result's shape as the text writes it ("f32[16,64]{1,0}")
    source: str = ""  # its metadata's "file.py:12", or "frame N" (a stack frame id)


@dataclass
class Computation:
    """One computation: its instructions in text order, its parameters by number."""

    instrs: list[Instr] = field(default_factory=list)
    params: dict[int, str] = field(default_factory=dict)


def split_top(text: str) -> list[str]:
    """text split at its top-level commas (shapes' ``[4,8]{1,0}`` stay whole)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [t.strip() for t in out if t.strip()]


def source_of(meta: str) -> str:
    """An instruction's source as its metadata writes it: "file.py:12", or "frame N"."""
    f = re.search(r'source_file="([^"]*)"', meta)
    ln = re.search(r"source_line=(\d+)", meta)
    if f and ln:
        return hlo.where(f.group(1), ln.group(1))
    frame = re.search(r"stack_frame_id=(\d+)", meta)
    return f"frame {frame.group(1)}" if frame else ""


def parse_instr(line: str) -> Instr | None:
    """One instruction line, read; None for a line that is none."""
    line = _COMMENT.sub("", line)
    m = _HEAD.match(line)
    if m is None:
        return None
    i = m.end()
    shape = hlo.balanced(line, i) if line.startswith("(", i) else ""
    if not shape:
        sm = re.match(r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[^}]*\})?", line[i:])
        if sm is None:
            return None
        shape = sm.group(0)
    om = _OP.match(line, i + len(shape))
    if om is None:
        return None
    group = hlo.balanced(line, om.end() - 1)
    operands = [t.split()[-1].lstrip("%") for t in split_top(group[1:-1])]
    rest, _, meta = line[om.end() - 1 + len(group) :].partition(", metadata=")
    size = len(split_top(shape[1:-1])) if shape.startswith("(") else 0
    name = re.search(r'op_name="([^"]*)"', meta)
    root = "ROOT " in line[:i]
    return Instr(
        m.group("name"),
        om.group("op"),
        size,
        operands,
        rest,
        root,
        name.group(1) if name else "",
        shape,
        source_of(meta),
    )


@functools.lru_cache(maxsize=4)
def parse(hlo_text: str) -> tuple[dict[str, Computation], str]:
    """(computations by name, the entry's name) of an HLO module's text (the last few texts
    kept: the readers of one compile parse it once; callers do not change what it returns)."""
    comps: dict[str, Computation] = {}
    entry, current = "", None
    for line in hlo_text.splitlines():
        if line[:1] not in (" ", "\t", ""):
            m = _COMPUTATION.match(line)
            current = comps.setdefault(m.group("name"), Computation()) if m else None
            if m and line.startswith("ENTRY"):
                entry = m.group("name")
            continue
        ins = parse_instr(line) if current is not None else None
        if ins is None or current is None:
            continue
        current.instrs.append(ins)
        if ins.op == "parameter" and ins.operands and ins.operands[0].isdigit():
            current.params[int(ins.operands[0])] = ins.name
    return comps, entry
