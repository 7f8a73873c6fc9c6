"""The "why" panel's messages: the front end asks why collective i is there (``{"type": "why",
"index": i}``), for the layouts that remove it (``"fixes": true``, one compile each), or to apply
one (``"apply": k``, a layout change that undo restores); the view answers with a
:class:`WhyMsg`. Built from the view's public API (``trace``, ``fixes``, ``apply_fix``).
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


def parse(content: Any) -> tuple[int, bool, int] | None:
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


def answer(view: Any, req: tuple[int, bool, int]) -> WhyMsg:
    """The view's answer: the cause of collective i, its fixes when asked (or after applying
    fix k: the view shows that layout then); a failure said in ``error``."""
    i, want_fixes, k = req
    msg: WhyMsg = {
        "type": "why", "index": i, "ok": False, "error": "", "text": "", "known": False,
        "checked": "", "op": "", "inputs": [], "outputs": [], "constraints": [], "fixes": None,
        "applied": -1,
    }  # fmt: skip
    try:
        res = view.trace
        if res is None or not 0 <= i < len(res.collectives):
            raise ValueError(f"collective {i} is not in the layout shown")
        cause = res.collectives[i].cause
        if cause is None:
            raise ValueError("no explanation was asked for in this compile")
        msg["text"], msg["known"], msg["checked"] = cause.text, cause.known, cause.checked
        msg["op"] = cause.op.where if cause.op is not None else ""
        msg["inputs"] = [_place(p) for p in cause.inputs]
        msg["outputs"] = [_place(p) for p in cause.outputs]
        msg["constraints"] = [_place(p) for p in cause.constraints]
        if k >= 0:
            view.apply_fix(i, k)
            msg["applied"] = k
        elif want_fixes:
            msg["fixes"] = [_fix(f) for f in view.fixes(i)]
        msg["ok"] = True
    except ValueError as e:  # refused in words, nothing changed
        msg["error"] = str(e)
    return msg


def _fix(f: Any) -> FixWire:
    return {
        "what": f.what,
        "removes": bool(f.removes),
        "collectives": len(f.collectives),
        "peak": f.memory.get("peak"),
        "error": f.error,
    }
