"""A test page of a view, built from the saved page's own bundle, with a loop back to the live view.

The page imports ``static/page.js`` (js/static/page.ts) and wires its stand-in model to the test
instead of to stored answers: the renderer's requests collect in ``window.__sent``,
``window.__push(patch)`` applies traits the way a kernel would, ``window.__msg(content)``
delivers a custom message, and ``window.__mountAgain()`` mounts a second view of the first state
(benchmarks/render.py times its first render). :class:`Loop` hands the requests to the view in
this process and pushes the traits it changed back into the page, as a kernel and a widget manager
would.
"""

from __future__ import annotations

import html
from typing import Any

from shardwidget.export._page import PAGE_JS, script_json
from shardwidget.wire import encode

__all__ = ["STATIC", "Loop", "page_html", "state_of"]

STATIC = PAGE_JS

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{margin:16px;font-family:system-ui,-apple-system,sans-serif}}\
#shardwidget-root{{max-width:1060px}}</style>
</head><body><div id="shardwidget-root"></div>
<script type="application/json" id="test-state">{state}</script>
<script type="module">
const url = URL.createObjectURL(new Blob([{code}], {{type: "text/javascript"}}));
const page = await import(url);
// the page's first state, parsed and revived afresh for each view, as the saved page's boot() does
// (a model owns the objects it is given)
const firstState = () => page.reviveOwned(JSON.parse(document.getElementById("test-state").textContent));
const state = firstState();
window.__sent = [];
const model = page.createModel(state, (msg) => window.__sent.push(msg));
window.__push = (patch) => model.push(page.revive(patch));
window.__msg = (content) => model.emitCustom(content);
page.mount(document.getElementById("shardwidget-root"), model);
// A second view of the page's first state, mounted on demand (benchmarks/render.py: the first
// render again, with the code and caches warm), in a fixed box that leaves the page's size alone.
window.__mountAgain = () => {{
  const box = document.createElement("div");
  box.style.cssText = "position:fixed;left:16px;top:0;width:1060px;height:100vh;overflow:hidden";
  document.body.append(box);
  page.mount(box, page.createModel(firstState(), () => {{}}));
}};
window.__ready = true;
</script></body></html>
"""


def state_of(view: Any) -> dict[str, Any]:
    """The view's synced traits, JSON-safe (binary values as {"__b64__": ...})."""
    return encode(view.synced_state())


def page_html(view: Any, state: dict[str, Any] | None = None) -> str:
    """A page showing `view` (its synced traits, or `state`: such traits, JSON-safe) whose
    requests wait in window.__sent (see Loop)."""
    assert STATIC.exists(), "the JS bundle is missing: npm run build"
    return _PAGE.format(
        title=html.escape(f"shardwidget test · {type(view).__name__}"),
        state=script_json(state_of(view) if state is None else state),
        code=script_json(STATIC.read_text(encoding="utf-8")),
    )


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
