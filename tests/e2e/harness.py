"""A page that renders the real bundle with a real ShardView's state, and a loop back to it.

The page holds a small in-page model (get/set/on/off/send/save_changes, as anywidget gives the
renderer). Requests the renderer sends are collected in ``window.__sent``; :class:`Loop` hands
them to the ShardView in this process and pushes the traits it changed back into the page, the
way a kernel and a widget manager would.
"""

from __future__ import annotations

import base64
import json
import pathlib
from typing import Any

STATIC = pathlib.Path(__file__).parents[2] / "src" / "shardwidget" / "static" / "widget.js"
TRAITS = (
    "mesh_shape",
    "axis_names",
    "axis_types",
    "spec",
    "memory_kind",
    "view_dims",
    "error",
    "busy",
    "_options",
    "_layout",
    "_stats",
)


def encode(v: Any) -> Any:
    if isinstance(v, bytes | bytearray | memoryview):
        return {"__b64__": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [encode(x) for x in v]
    return v


def state_of(view: Any) -> dict[str, Any]:
    return {k: encode(getattr(view, k)) for k in TRAITS}


PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>shardwidget test</title>
<style>body{margin:16px;font-family:system-ui,sans-serif} #root{max-width:1000px}</style></head>
<body><div id="root"></div>
<script type="module">
function revive(v) {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if ("__b64__" in v) {
      const s = atob(v.__b64__); const u = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
      return new DataView(u.buffer);
    }
    const o = {}; for (const k in v) o[k] = revive(v[k]); return o;
  }
  return Array.isArray(v) ? v.map(revive) : v;
}
const state = revive(%(state)s);
const handlers = {};
const emit = (ev, ...a) => (handlers[ev] || []).slice().forEach((cb) => cb(...a));
window.__sent = [];
const model = {
  get: (k) => state[k],
  set: (k, v) => { state[k] = v; emit("change:" + k); },
  save_changes: () => { window.__saved = (window.__saved || 0) + 1; },
  on: (ev, cb) => { (handlers[ev] = handlers[ev] || []).push(cb); },
  off: (ev, cb) => { if (!ev) { for (const k in handlers) delete handlers[k]; return; }
    handlers[ev] = (handlers[ev] || []).filter((c) => c !== cb); },
  send: (msg) => { window.__sent.push(msg); },
};
window.__push = (patch) => {
  const p = revive(patch); for (const k in p) state[k] = p[k];
  for (const k in p) emit("change:" + k);
  emit("change");
};
window.__msg = (content) => emit("msg:custom", content, []);
window.__state = state;
const code = %(code)s;
const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
const mod = await import(url);
const widget = mod.default;
const def = typeof widget === "function" ? await widget() : widget;
if (def.initialize) await def.initialize({ model });
await def.render({ model, el: document.getElementById("root") });
window.__ready = true;
</script></body></html>
"""


def page_html(view: Any) -> str:
    code = STATIC.read_text()
    return PAGE % {"state": json.dumps(state_of(view)), "code": json.dumps(code)}


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
