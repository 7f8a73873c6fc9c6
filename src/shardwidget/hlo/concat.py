"""The parts of a flat all-reduce: XLA's GPU compiler combines a data-parallel step's gradients
into one all-reduce of a 1-d ``concatenate`` of their bitcasts (``f32[2049] =
concatenate(bitcast(f32[]), bitcast(f32[16,64]), bitcast(f32[64,16]))``), and its op carries no
op_name. Each part is followed back from the concatenate's operand (through bitcasts and copies,
and from a fusion's parameter to the fusion's operand) to the op that makes it: the array it is
(shape and bytes), that op's name and line, and where it sits in the flat result. Pure text; no
JAX.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from . import collectives as hlo
from .program import Computation, Instr, parse

PASS = ("bitcast", "copy", "reshape")
"""Ops that give the same elements another shape or place: a part is followed through them."""
MAX_STEPS = 8
"""Bitcasts and copies followed back from a part, at most."""


@dataclass(frozen=True)
class Part:
    """One array in a flat all-reduce's concatenate."""

    shape: hlo.HloShape
    """The array as the op that makes it makes it (f32[16,64]); the part's own 1-d shape where
    that op's has other elements."""
    value: str
    """The instruction that is the concatenate's operand (computation of the all-reduce)."""
    op_name: str
    """The op_name of the instruction that makes it ("" where it has none)."""
    source: str
    """That instruction's line ("file.py:12"), "" where not told."""
    start: int
    """Its first element in the concatenation."""
    stop: int
    """One past its last element."""


@functools.lru_cache(maxsize=4)
def _index(hlo_text: str) -> dict[str, Instr]:
    comps, _entry = parse(hlo_text)
    return {i.name: i for c in comps.values() for i in c.instrs}


def _back(instrs: dict[str, Instr], name: str) -> str:
    """name, followed back through :data:`PASS` ops to the instruction that makes its data."""
    for _ in range(MAX_STEPS):
        ins = instrs.get(name)
        if ins is None or ins.op not in PASS or not ins.operands:
            break
        name = ins.operands[0]
    return name


def _array(shape_text: str) -> hlo.HloShape | None:
    shapes = hlo.parse_shapes(shape_text)
    return shapes[0] if len(shapes) == 1 and not shape_text.startswith("(") else None


def _flat_concat(ins: Instr) -> bool:
    return ins.op == "concatenate" and re.search(r"dimensions=\{0\}", ins.attrs) is not None


def _operands(comps: dict[str, Computation], instrs: dict[str, Instr], src: Instr) -> list[str]:
    """The values concatenated into src: a concatenate's operands, or a fusion's operands that
    its called computation's root concatenates (each through bitcasts to a parameter); [] where
    src is neither or a part is computed inside the fusion."""
    if _flat_concat(src):
        return list(src.operands)
    called = re.search(r"\bcalls=%?([\w.\-]+)", src.attrs) if src.op == "fusion" else None
    comp = comps.get(called.group(1)) if called else None
    root = next((i for i in comp.instrs if i.root), None) if comp else None
    if root is None or not _flat_concat(root):
        return []
    inner = {i.name: i for i in comp.instrs} if comp else {}
    out = []
    for o in root.operands:
        param = inner.get(_back(inner, o))
        if param is None or param.op != "parameter" or not param.operands[0].isdigit():
            return []
        k = int(param.operands[0])
        if k >= len(src.operands):
            return []
        out.append(src.operands[k])
    return out


def concatenated(hlo_text: str, name: str) -> list[Part]:
    """The parts of the all-reduce ``name`` when its one operand is a 1-d concatenate (through
    bitcasts, copies or a fusion), in order; [] for any other collective, or where the parts'
    elements do not add up to the all-reduce's."""
    instrs = _index(hlo_text)
    coll = instrs.get(name)
    if coll is None or coll.op not in ("all-reduce", "all-reduce-start"):
        return []
    if len(coll.operands) != 1 or (whole := _array(coll.shape)) is None:
        return []
    src = instrs.get(_back(instrs, coll.operands[0]))
    values = _operands(parse(hlo_text)[0], instrs, src) if src is not None else []
    out: list[Part] = []
    start = 0
    for v in values:
        arr = _array(instrs[v].shape) if v in instrs else None
        if arr is None or len(arr.dims) != 1:
            return []
        maker = instrs.get(_back(instrs, v), instrs[v])
        made = _array(maker.shape)
        same = made is not None and made.dtype == arr.dtype and math.prod(made.dims) == arr.dims[0]
        out.append(
            Part(made if same and made else arr, v, maker.op_name, maker.source, start,
                 start + arr.dims[0])
        )  # fmt: skip
        start += arr.dims[0]
    if len(out) < 2 or start != math.prod(whole.dims):
        return []
    return _with_lines(hlo_text, out)


def _with_lines(hlo_text: str, parts: list[Part]) -> list[Part]:
    """parts with their "frame N" sources read from the module's stack frame tables."""
    if not any(p.source.startswith("frame ") for p in parts):
        return parts
    frames = hlo.stack_frames(hlo_text)
    return [
        Part(p.shape, p.value, p.op_name, frames.get(int(p.source.split()[1]), ""), p.start, p.stop)
        if p.source.startswith("frame ")
        else p
        for p in parts
    ]


def made_by(hlo_text: str, name: str) -> tuple[str, str]:
    """(op name, line) of the instruction that makes the one operand of the collective ``name``
    (through bitcasts and copies): what a sum of partial results XLA names no op for sums;
    ("", "") where it has several operands or that instruction has no op_name."""
    instrs = _index(hlo_text)
    coll = instrs.get(name)
    if coll is None or len(coll.operands) != 1:
        return "", ""
    maker = instrs.get(_back(instrs, coll.operands[0]))
    if maker is None or not maker.op_name:
        return "", ""
    part = Part(hlo.HloShape("f32", ()), maker.name, maker.op_name, maker.source, 0, 0)
    return maker.op_name, _with_lines(hlo_text, [part])[0].source
