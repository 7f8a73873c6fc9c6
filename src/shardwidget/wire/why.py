"""The "why" panel's messages: the front end asks why collective i is there (``{"type": "why",
"index": i}``), for the layouts that remove it (``"fixes": true``, one compile each), or to apply
one (``"apply": k``, a layout change that undo restores); the view answers with a
:class:`WhyMsg`. Only the message's shape and its parse are here: the view computes the answer
(:mod:`shardwidget.views.why`, inside its request boundary).
"""

from __future__ import annotations

from typing import Any, TypedDict

from ..hlo.collectives import where


class PlaceWire(TypedDict):
    """An input, output or constraint a cause involves."""

    index: int
    label: str
    spec: str
    where: str


class FixWire(TypedDict):
    """One layout that may remove the collective, with what its compile gives."""

    what: str
    removes: bool
    collectives: int
    peak: int | None
    error: str


class TouchWire(TypedDict):
    """One array the collective carries, and the leaves it touches by dataflow (paths)."""

    what: str
    """Its per-device shape ("f32[64, 64]")."""
    gradient_of: str
    """The input leaf whose gradient it carries ("" where none is told)."""
    inputs: list[str]
    outputs: list[str]


class WhyMsg(TypedDict):
    """The answer to a "why" request (``error`` says why there is none)."""

    type: str
    index: int
    ok: bool
    error: str
    text: str
    known: bool
    checked: str
    op: str
    inputs: list[PlaceWire]
    outputs: list[PlaceWire]
    constraints: list[PlaceWire]
    fixes: list[FixWire] | None
    applied: int
    touches: list[TouchWire]
    """Per element it carries, the leaves it touches ([]: not told; leaves_note says why)."""
    leaves_note: str


def parse(content: object) -> tuple[int, bool, int] | None:
    """(collective index, fixes asked for, fix to apply or -1) of a "why" request, else None."""
    if not isinstance(content, dict) or content.get("type") != "why":
        return None
    i, k = content.get("index"), content.get("apply", -1)
    if not isinstance(i, int) or isinstance(i, bool) or not isinstance(k, int):
        return None
    return i, bool(content.get("fixes")), k


def _place(p: Any) -> PlaceWire:
    return {
        "index": p.index,
        "label": p.label,
        "spec": p.spec,
        "where": where(p.file, p.line) if p.file else "",
    }


def empty(i: int) -> WhyMsg:
    """The answer to a "why" request about collective i before anything is known."""
    return {
        "type": "why", "index": i, "ok": False, "error": "", "text": "", "known": False,
        "checked": "", "op": "", "inputs": [], "outputs": [], "constraints": [], "fixes": None,
        "applied": -1, "touches": [], "leaves_note": "",
    }  # fmt: skip


def with_cause(msg: WhyMsg, cause: Any) -> None:
    """Write a collective's cause (a ``trace`` cause record) into msg, in place."""
    msg["text"], msg["known"], msg["checked"] = cause.text, cause.known, cause.checked
    msg["op"] = cause.op.where if cause.op is not None else ""
    msg["inputs"] = [_place(p) for p in cause.inputs]
    msg["outputs"] = [_place(p) for p in cause.outputs]
    msg["constraints"] = [_place(p) for p in cause.constraints]


def with_leaves(msg: WhyMsg, c: Any) -> None:
    """Write the leaves a collective (an ``hlo.Collective``) touches into msg, in place: per
    element its input and output paths and whose gradient it is; the note where not told."""
    msg["leaves_note"] = c.leaves_note
    if c.in_leaves is None:
        return
    n = len(c.elements)
    ins = c.element_in_leaves if len(c.element_in_leaves) == n else [c.in_leaves] * n
    outs = c.element_out_leaves if len(c.element_out_leaves) == n else [c.out_leaves or ()] * n
    grads = c.element_gradients if len(c.element_gradients) == n else [""] * n
    msg["touches"] = [
        {
            "what": f"{e.dtype}{list(e.dims)}",
            "gradient_of": g,
            "inputs": list(i),
            "outputs": list(o),
        }
        for e, i, o, g in zip(c.elements, ins, outs, grads, strict=True)
    ]


def fix(f: Any) -> FixWire:
    """One of ``view.fixes(i)`` as the panel lists it."""
    return {
        "what": f.what,
        "removes": bool(f.removes),
        "collectives": len(f.collectives),
        "peak": f.memory.get("peak"),
        "error": f.error,
    }
