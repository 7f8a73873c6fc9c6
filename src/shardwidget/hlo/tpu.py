"""What the TPU compiler's HLO says beyond :mod:`.hlo`'s reading: collectives it fused.

The TPU compiler (libtpu) puts some collectives inside fusions: a reduce-scatter becomes a
``fusion(...), kind=kCustom, calls=%all-reduce-scatter`` whose computation holds an
``all-reduce`` and a ``dynamic-slice`` of this device's part. :func:`.hlo.collectives` finds the
inner all-reduce (it reads every computation) but without a source line (the metadata is on the
fusion) and with an all-reduce's bytes. :func:`fused_collectives` gives such a collective its
fusion's source, and reads an all-reduce-scatter fusion as the reduce-scatter it runs (its
result shape, a reduce-scatter's bytes). Pure text; imports no JAX and no widget code.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from . import collectives as hlo

_COMPUTATION = re.compile(r"^%?(?P<name>[\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_CALLS = re.compile(r"\bcalls=%?(?P<name>[\w.\-]+)")


def computations_of(hlo_text: str) -> dict[str, str]:
    """Instruction name -> the name of the computation it is in."""
    out: dict[str, str] = {}
    current = ""
    for line in hlo_text.splitlines():
        m = _COMPUTATION.match(line.removeprefix("ENTRY ").strip())
        if m and not line.startswith(" "):
            current = m.group("name")
            continue
        head = re.match(r"^\s+(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=", line)
        if head:
            out[head.group("name")] = current
    return out


def fusion_callers(hlo_text: str) -> dict[str, tuple[str, str, str]]:
    """Called computation -> (the fusion's shape text, its whole line, its kind) for fusions."""
    out: dict[str, tuple[str, str, str]] = {}
    for _name, shape, op, line in hlo.instructions(hlo_text):
        if op != "fusion":
            continue
        called = _CALLS.search(line)
        kind = re.search(r"\bkind=(k\w+)", line)
        if called:
            out[called.group("name")] = (shape, line, kind.group(1) if kind else "")
    return out


def fused_collectives(hlo_text: str, found: Sequence[hlo.Collective]) -> list[hlo.Collective]:
    """``found`` (from :func:`.hlo.collectives` of the same text) with each collective inside a
    fusion given the fusion's op name and source line, and an all-reduce-scatter fusion read
    as a reduce-scatter."""
    where = computations_of(hlo_text)
    callers = fusion_callers(hlo_text)
    frames: dict[int, str] | None = None
    out = []
    for c in found:
        comp = where.get(c.name, "")
        if comp not in callers:
            out.append(c)
            continue
        shape_text, line, _kind = callers[comp]
        changes: dict[str, Any] = {}  # (Collective's fields: replace() checks them)
        op = re.search(r'op_name="([^"]*)"', line)
        if op and not c.op_name:
            changes["op_name"] = op.group(1)
        frame = re.search(r"stack_frame_id=(\d+)", line)
        if frame and not c.source:
            frames = frames if frames is not None else hlo.stack_frames(hlo_text)
            changes["source"] = frames.get(int(frame.group(1)), "")
        if c.kind == "all-reduce" and "reduce-scatter" in comp:
            result = hlo.parse_shapes(shape_text)[0]
            changes.update(
                kind="reduce-scatter",
                shape=result.dims,
                dtype=result.dtype,
                bytes=(c.group_size - 1) * result.nbytes,
            )
        out.append(dataclasses.replace(c, **changes))
    return out
