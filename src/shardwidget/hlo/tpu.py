"""What the TPU compiler's HLO says beyond :mod:`.hlo`'s reading: collectives it fused, and
collectives across slices.

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


MEGASCALE_KINDS = {
    "ALL_REDUCE": "all-reduce",
    "ALL_GATHER": "all-gather",
    "REDUCE_SCATTER": "reduce-scatter",
    "ALL_TO_ALL": "all-to-all",
}
"""libtpu's ``_xla_megascale_transfer_type`` -> the collective it runs over DCN."""

_TARGET = re.compile(r"^\{(?P<slices>[\d,\s]+)\}x\{(?P<local>[\d,:\s]+)\}$")


def megascale_target(text: str, n_slices: int, n_local: int) -> tuple[list[int], list[int]]:
    """(slices from 0, partitions) of a ``_xla_megascale_target`` ("{1,2}x{0:3}": slices 0
    and 1, partitions 0 to 3); every slice and partition where the text says otherwise."""
    m = _TARGET.match(text.strip())
    every = list(range(n_slices)), list(range(n_local))
    if m is None:
        return every
    slices = [int(v) - 1 for v in m.group("slices").split(",")]
    local: list[int] = []
    for part in m.group("local").split(","):
        lo, _, hi = part.partition(":")
        local += list(range(int(lo), int(hi or lo) + 1))
    if not all(0 <= v < n_slices for v in slices) or not all(0 <= v < n_local for v in local):
        return every
    return slices, local


def _frontend(line: str, key: str) -> str:
    m = re.search(key + r'="([^"]*)"', line)
    return m.group(1) if m else ""


def megascale_collectives(
    hlo_text: str,
    slices: Sequence[Sequence[int]],
    device_coords: dict[int, tuple[int, ...]],
    axis_names: Sequence[str],
    axis_sizes: Sequence[int],
) -> list[hlo.Collective]:
    """The collectives across slices in a slice's compiled program: one per Megascale ``recv``
    (its result is what the collective gives a device), with its groups of mesh positions,
    the mesh axes they span and the bytes one device sends (the module docstring of
    :mod:`.collectives`). ``slices[s][p]``: the mesh position of slice ``s``'s partition
    ``p``."""
    out: list[hlo.Collective] = []
    n_local = min((len(s) for s in slices), default=0)
    origin = _sent_from(hlo_text)
    for name, shape_text, op, line in hlo.instructions(hlo_text):
        kind = MEGASCALE_KINDS.get(_frontend(line, "_xla_megascale_transfer_type"), "")
        if op != "recv" or not kind or not n_local:
            continue
        which, local = megascale_target(
            _frontend(line, "_xla_megascale_target"), len(slices), n_local
        )
        groups = tuple(tuple(slices[s][p] for s in which) for p in local)
        arrays = [a for a in hlo.parse_shapes(shape_text) if a.dims]
        if not arrays or len(which) < 2:
            continue
        result, gs = arrays[0], len(which)
        total = result.nbytes
        sent = {"all-reduce": 2 * (gs - 1) * total / gs, "reduce-scatter": (gs - 1) * total}
        axes, partial = hlo.axes_of_groups(groups, device_coords, axis_names, axis_sizes)
        out.append(
            hlo.Collective(
                kind=kind,
                axes=axes,
                shape=result.dims,
                dtype=result.dtype,
                bytes=round(sent.get(kind, (gs - 1) * total / gs)),
                group_size=gs,
                n_groups=len(groups),
                groups=groups,
                groups_text=_frontend(line, "_xla_megascale_target"),
                op_name=origin.get(_frontend(line, "_xla_host_transfer_rendezvous"), ("", ""))[0],
                source=origin.get(_frontend(line, "_xla_host_transfer_rendezvous"), ("", ""))[1],
                partial=partial,
                name=name,
                elements=(result,),
            )
        )
    return out


def _sent_from(hlo_text: str) -> dict[str, tuple[str, str]]:
    """Rendezvous -> (op name, source) of what its Megascale ``send`` sends: the send and the
    bitcasts and copies before it carry no metadata, the value they pass on does (followed
    back through first operands, a few steps)."""
    lines = {name: line for name, _s, _o, line in hlo.instructions(hlo_text)}
    frames = hlo.stack_frames(hlo_text) if "stack_frame_id=" in hlo_text else {}
    out: dict[str, tuple[str, str]] = {}
    for line in lines.values():
        key = _frontend(line, "_xla_host_transfer_rendezvous")
        if not key or " send(" not in line:
            continue
        value = line
        for _ in range(6):  # send <- bitcast <- copy <- … <- the op that made the value
            first = re.search(r" [a-z][a-z\-]*\(%?([\w.\-]+)", value)
            if first is None or first.group(1) not in lines:
                break
            value = lines[first.group(1)]
            op = re.search(r'op_name="([^"]*)"', value)
            if op:
                frame = re.search(r"stack_frame_id=(\d+)", value)
                out[key] = (op.group(1), frames.get(int(frame.group(1)), "") if frame else "")
                break
    return out


def in_text_order(hlo_text: str, colls: Sequence[hlo.Collective]) -> list[hlo.Collective]:
    """``colls`` in the order their instructions appear in the module text."""
    at = {name: i for i, (name, _s, _o, _l) in enumerate(hlo.instructions(hlo_text))}
    return sorted(colls, key=lambda c: at.get(c.name, len(at)))


def in_every_slice(c: hlo.Collective, slices: Sequence[Sequence[int]]) -> hlo.Collective:
    """A collective read from slice 0's program (its groups: slice 0's mesh positions) with
    the same groups in every slice (partition ``p`` of slice ``s``: ``slices[s][p]``)."""
    local = {pos: p for p, pos in enumerate(slices[0])}
    if not all(d in local for g in c.groups for d in g):
        return c  # not slice 0's positions: left as read
    groups = tuple(tuple(sl[local[d]] for d in g) for sl in slices for g in c.groups)
    return dataclasses.replace(c, groups=groups, n_groups=len(groups))
