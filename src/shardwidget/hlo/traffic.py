"""Bytes accessed per device, counted from compiled HLO text: for a compiler with no cost
analysis (XLA's GPU compiler, compile-only, says "GetCostAnalysis is not supported").

Pure text: imports no JAX and no widget code.

As XLA's cost analysis defines "bytes accessed": each instruction of the entry and of the loop
bodies and conditions (not inside fusions or reducers) reads its operands and writes its
result; a loop body is counted once (not times its trip count), as XLA counts it. Parameters,
constants, get-tuple-element, tuple, bitcast and the loop / call instructions themselves move
nothing here (their bodies are counted). An estimate where XLA is finer: a fusion that reads
only a slice of an operand, or updates a buffer in place, is counted with the whole operand
(XLA counts the part it touches), so the count can be above XLA's; tests/hlo/test_traffic.py
compares it with XLA:CPU's cost analysis on the same programs.
"""

from __future__ import annotations

import re

from .collectives import balanced, parse_shapes

SOURCE = "counted from the HLO (each op's operands and result; no cost analysis)"
"""How an estimate names bytes from :func:`bytes_accessed`."""

_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_OP = re.compile(r"(?:^|[\s)}\]])([a-z][a-z0-9\-]*)\(")
_HEADER = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_CALLED = re.compile(r"\b(calls|to_apply|called_computations)=\{?%?([\w.\-]+)")
_FREE = frozenset(
    {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "while", "call",
     "conditional", "after-all", "partition-id", "replica-id"}
)  # fmt: skip


def _computations(text: str) -> dict[str, list[str]]:
    """Each computation's instruction lines, by name."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if current is None:
            m = _HEADER.match(line)
            if m and "=" not in line.split("(")[0]:
                current = out.setdefault(m.group(2), [])
        elif line.strip() == "}":
            current = None
        elif line.strip():
            current.append(line)
    return out


def _split(line: str) -> tuple[str, str, str, list[str]] | None:
    """(name, result shape, opcode, operand names) of one instruction line."""
    m = _INSTR.match(line)
    if m is None:
        return None
    name, rest = m.group(1), m.group(2)
    op = _OP.search(rest)
    if op is None:
        return None
    shape = rest[: op.start(1)]
    args = balanced(rest, op.end(1) - 1)[1:-1]
    operands = re.findall(r"%([\w.\-]+)", args)
    return name, shape, op.group(1), operands


def _inner(comps: dict[str, list[str]]) -> set[str]:
    """Computations called from inside an instruction (fusions, reducers, sorts' comparators):
    their instructions are part of the caller's cost, not counted on their own."""
    inner: set[str] = set()
    for lines in comps.values():
        for line in lines:
            inner.update(m.group(2) for m in _CALLED.finditer(line))
    return inner


def bytes_accessed(text: str) -> float | None:
    """Bytes read and written per device by the program ``text`` (compiled HLO), as defined
    in the module docstring; None when the text has no computation."""
    comps = _computations(text)
    if not comps:
        return None
    inner = _inner(comps)
    total = 0.0
    for cname, lines in comps.items():
        if cname in inner:
            continue
        sizes: dict[str, int] = {}
        for line in lines:
            parts = _split(line)
            if parts is None:
                continue
            name, shape, opcode, operands = parts
            own = sum(s.nbytes for s in parse_shapes(shape))
            sizes[name] = own
            if opcode not in _FREE:
                total += own + sum(sizes.get(o, 0) for o in operands)
    return total
