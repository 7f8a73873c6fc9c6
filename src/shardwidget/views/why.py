"""The "why" panel's answers (the messages' shape is :mod:`shardwidget.wire.why`): the cause of
a collective, its fixes (one compile each) or applying one (a layout change through the view's
request boundary, which undo restores). Called inside the view's boundary (``busy``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..wire import why as why_wire

if TYPE_CHECKING:
    from .function import FunctionView


def answer(view: FunctionView, req: tuple[int, bool, int]) -> why_wire.WhyMsg:
    """The view's answer: the cause of collective i, its fixes when asked (or after applying
    fix k: the view shows that layout then); a refusal said in ``error``, nothing changed."""
    i, want_fixes, k = req
    msg = why_wire.empty(i)
    try:
        res = view.trace
        if res is None or not 0 <= i < len(res.collectives):
            raise ValueError(f"collective {i} is not in the layout shown")
        cause = res.collectives[i].cause
        if cause is None:
            raise ValueError("no explanation was asked for in this compile")
        why_wire.with_cause(msg, cause)
        why_wire.with_leaves(msg, res.collectives[i])
        if k >= 0:
            view.apply_fix(i, k)
            msg["applied"] = k
        elif want_fixes:
            msg["fixes"] = [why_wire.fix(f) for f in view.fixes(i)]
        msg["ok"] = True
    except ValueError as e:  # refused in words, nothing changed
        msg["error"] = str(e)
    return msg
