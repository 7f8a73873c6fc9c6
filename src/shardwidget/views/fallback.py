"""The picture beside each displayed view, for notebooks read without the kernel that made them.

A widget output needs its live model: a notebook reopened in JupyterLab or Notebook 7 (a new
kernel, or none) shows "Error displaying widget: model not found", and ``nbconvert --execute``
stores widget state, so its page prefers the widget (require.js and the html-manager from CDNs:
blank offline). So in a kernel a view displays as two outputs:

1. a static picture of its last state (:mod:`shardwidget.render.snapshot`, text/html only) under a
   display id of its own (the view's ``_fallback_id``), displayed while IPython formats the
   view, so it comes just before
2. the widget (the cell's result, as before: its mimebundle with the terminal text).

The live widget hides (1) while it is shown (js/shared/fallback.ts). Without a live model, (1)
carries a style rule that hides the widget output's "Loading widget..." / "model not found" text
just after it, so only the picture is seen; where no widget manager runs at all (nbconvert
offline, GitHub, nbviewer) the picture shows as any HTML output does.

Keeping (1) current is lazy, never on the update path (a picture of 4096 blocks takes a while): a
change marks the view stale; stale pictures are redrawn after the cell that changed them
(IPython's ``post_run_cell``, so ``nbconvert --execute`` saves the last state), or, for changes
from the widget's controls, once the kernel has been quiet for twice as long as the last redraw
took (``MIN_QUIET_S`` to ``QUIET_S``): a quick picture is current before a save a moment later.
"""

from __future__ import annotations

import asyncio
import html
import sys
import time
import weakref
from typing import TYPE_CHECKING, Any

import IPython.display
from IPython import get_ipython

if TYPE_CHECKING:
    from .base import ShardView

QUIET_S = 1.0
"""The longest wait without a change before the pictures of changes from the controls are
redrawn (a picture that takes long to draw waits this long, so a drag does not redraw it)."""
MIN_QUIET_S = 0.1
"""The shortest wait: a notebook saved half a second after a change must hold its picture."""

_last_draw_s = 0.0  # how long the last redraw of the stale pictures took

ATTR = "data-shardwidget-fallback"

_stale: weakref.WeakSet[ShardView[Any, Any]] = weakref.WeakSet()
_timer: Any = None
_hooked = False


def in_kernel() -> bool:
    """Whether this runs in an IPython kernel (a front end that keeps display outputs)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def bundle(view: ShardView[Any, Any]) -> dict[str, str]:
    """The display data of the picture output: text/html only (a text/plain would print the
    terminal grid a second time where HTML is not shown)."""
    return picture(view._fallback_id, view._static_html())


def picture(fid: str, body: str, note: str = "the view's last state") -> dict[str, str]:
    """A picture output whose live widget (the one that hides fallback id ``fid``) follows it."""
    fid = html.escape(fid)
    # The widget output just after, when it shows text instead of a view ("Loading widget...",
    # "Error displaying widget: model not found"), only the widget's script tag (nbconvert's
    # page with no html-manager) or its text/plain as of the display (a page saved without
    # widget state): a live view is an element of another kind in it.
    hide_widget_error = (
        f'.jp-OutputArea-child:has([{ATTR}="{fid}"]) + .jp-OutputArea-child'
        ":not(:has(> .jp-OutputArea-output > :not(script, pre))){display:none}"
    )
    return {
        "text/html": f'<div class="shardwidget-fallback" {ATTR}="{fid}">'
        f"<style>{hide_widget_error}</style>"
        f'<div style="color:#777;font:11px system-ui,sans-serif">picture of {html.escape(note)} '
        "(run the notebook for the live view)</div>"
        f"{body}</div>"
    }


def emit(view: ShardView[Any, Any]) -> bool:
    """In a kernel, display view's picture (under its display id) and say True: the widget's
    own output follows it. False elsewhere (nothing displayed)."""
    if not in_kernel():
        return False
    _ipython_display("display")(bundle(view), raw=True, display_id=view._fallback_id)
    view._fallback_shown = True
    _hook()
    return True


def emit_static(hide_with: str, body: str, note: str) -> bool:
    """In a kernel, display a picture that is not redrawn (no display id of its own), hidden
    while a live view with fallback id ``hide_with`` is shown; True when displayed."""
    if not in_kernel():
        return False
    _ipython_display("display")(picture(hide_with, body, note), raw=True)
    return True


def mark_stale(view: ShardView[Any, Any]) -> None:
    """A shown view changed: redraw its picture after the cell, or once the kernel is quiet."""
    global _timer
    _stale.add(view)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop: the cell's post_run_cell redraws it
    if _timer is not None:
        _timer.cancel()
    _timer = loop.call_later(quiet_s(), refresh_stale)


def quiet_s() -> float:
    """How long the kernel must be quiet before the stale pictures are redrawn: twice the last
    redraw's time, within MIN_QUIET_S and QUIET_S (a redraw must not slow a drag's replies)."""
    return min(QUIET_S, max(MIN_QUIET_S, 2 * _last_draw_s))


def refresh_stale(*_: Any) -> None:
    """Redraw every stale picture now (update_display by its display id)."""
    global _timer
    if _timer is not None:
        _timer.cancel()
        _timer = None
    views = list(_stale)
    _stale.clear()
    if not views:
        return
    global _last_draw_s
    update_display = _ipython_display("update_display")
    t0 = time.perf_counter()
    for v in views:
        try:
            update_display(bundle(v), raw=True, display_id=v._fallback_id)
        except Exception:  # a picture must never break the kernel's cell
            continue
    _last_draw_s = time.perf_counter() - t0


def _ipython_display(name: str) -> Any:
    """IPython.display's function (untyped there), looked up when called."""
    return getattr(IPython.display, name)


def _hook() -> None:
    global _hooked
    if _hooked:
        return

    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_run_cell", refresh_stale)
        _hooked = True
