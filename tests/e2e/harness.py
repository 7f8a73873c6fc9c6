"""The package's own static page (shardwidget.export), with a loop back to a live ShardView.

With ``static=False`` the page collects the renderer's requests in ``window.__sent``; :class:`Loop`
hands them to the ShardView in this process and pushes the traits it changed back into the page,
the way a kernel and a widget manager would.
"""

from __future__ import annotations

from typing import Any

from shardwidget.export import STATIC, TRAITS, encode
from shardwidget.export import page_html as _page_html

__all__ = ["STATIC", "Loop", "page_html", "state_of"]


def state_of(view: Any) -> dict[str, Any]:
    return {k: encode(getattr(view, k)) for k in TRAITS}


def page_html(view: Any) -> str:
    return _page_html(view, static=False)[0]


class Loop:
    """Plays the kernel for a page: applies its requests to the view, pushes changed traits."""

    def __init__(self, view: Any, page: Any) -> None:
        self.view = view
        self.page = page
        self.replies: list[dict[str, Any]] = []
        view.send = lambda content, buffers=None: self.replies.append(content)

    def pump(self) -> int:
        """Handle every request the page sent since the last call; returns how many."""
        sent = self.page.evaluate("window.__sent.splice(0)")
        for msg in sent:
            self.replies.clear()
            self.view._on_custom_msg(self.view, msg, [])
            self.page.evaluate("(p) => window.__push(p)", state_of(self.view))
            for r in self.replies:
                self.page.evaluate("(m) => window.__msg(m)", r)
        return len(sent)
