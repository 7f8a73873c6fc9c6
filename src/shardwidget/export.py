"""Self-contained HTML pages of a view: the notebook's own renderer, no kernel, no network.

The page carries the bundle inline, the view's synced state, and optionally precomputed
*variants* (other layouts of the same array). A small in-page model stands in for the widget
manager; when the controls ask for a layout, the page answers from its variants, and controls
whose layout it does not carry are shown as unavailable (``_options.static_states``).
"""

from __future__ import annotations

import base64
import html as html_mod
import itertools
import json
import pathlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import payload
from . import spec as spec_mod
from . import state as state_mod
from .layout import layout_of

if TYPE_CHECKING:
    from .widget import ShardView

STATIC = pathlib.Path(__file__).parent / "static" / "widget.js"
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
FUNCTION_TRAITS = (
    "_kind",
    "mode",
    "mesh_shape",
    "axis_names",
    "axis_types",
    "in_specs",
    "out_specs",
    "error",
    "busy",
    "_trace_options",
    "_trace",
    "_trace_stats",
)
LAYOUT_TRAITS = ("mesh_shape", "axis_names", "axis_types", "spec", "memory_kind")
DEFAULT_BUDGET = 4 << 20  # bytes of variant data a page may carry


@dataclass(frozen=True)
class ExportReport:
    path: str
    bytes: int  # size of the written file
    variants: int  # layouts the page answers, the shown one included
    skipped: int  # variants left out to stay within the budget
    budget: int

    def __str__(self) -> str:
        s = f"{self.path}: {self.bytes:,} bytes, {self.variants} layout(s)"
        if self.skipped:
            s += f", {self.skipped} more left out to stay within {self.budget:,} bytes"
        return s


def state_key(st: state_mod.LayoutState) -> str:
    """Canonical text of a layout; js/state.ts stateKey() writes the same string."""
    return json.dumps(st.to_wire(), separators=(",", ":"), ensure_ascii=False)


def encode(v: Any) -> Any:
    """JSON-safe copy of trait values: binary buffers become {"__b64__": ...}."""
    if isinstance(v, bytes | bytearray | memoryview):
        return {"__b64__": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [encode(x) for x in v]
    return v


def _dumps(v: Any) -> str:
    # Safe inside <script>: no "</" sequence can close the element early.
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def every_spec(view: ShardView) -> list[state_mod.LayoutState]:
    """Every valid spec for the view's current mesh (each axis used at most once, in any
    order within a dimension), with the current mesh, names, types and memory kind."""
    base = view._candidate({})
    names = list(base.axis_names)
    sizes = dict(zip(names, base.mesh_shape, strict=True))
    choices: list[tuple[str, ...]] = [()]
    for r in range(1, len(names) + 1):
        choices += [c for c in itertools.permutations(names, r) if all(sizes[a] > 1 for a in c)]
    out = []
    for combo in itertools.product(choices, repeat=view._ndim):
        used = [a for c in combo for a in c]
        if len(used) != len(set(used)):
            continue
        try:
            spec_mod.validate(tuple(combo), view._source.shape, sizes)
        except ValueError:
            continue
        out.append(
            state_mod.LayoutState(
                base.mesh_shape, base.axis_names, base.axis_types, tuple(combo), base.memory_kind
            )
        )
    return out


def _variant(view: ShardView, st: state_mod.LayoutState, key: int) -> dict[str, Any]:
    arr = view._apply(st)
    lay = layout_of(arr)
    source = "original" if arr is view._source else "resharded"
    return {
        "state": st.to_wire(),
        "layout": payload.layout(
            lay,
            key=key,
            source=source,
            note=view._note,
            local_process=view._layout["devices"]["local_process"],
        ),
        "stats": payload.stats(view._summarize(arr, lay), key=key),
    }


def page_html(
    view: ShardView,
    variants: Iterable[state_mod.LayoutState] = (),
    budget: int = DEFAULT_BUDGET,
    static: bool = True,
) -> tuple[str, int, int]:
    """(html, layouts carried, variants skipped). With static=False the page only collects the
    renderer's requests in window.__sent (for tests that answer them from a live view)."""
    traits = {k: getattr(view, k) for k in TRAITS}
    current = view._candidate({})
    answers: dict[str, Any] = {}
    used, skipped = 0, 0
    key = 1_000_000
    for st in variants:
        k = state_key(st)
        if k in answers or k == state_key(current):
            continue
        key += 1
        v = encode(_variant(view, st, key))
        size = len(_dumps(v))
        if used + size > budget:
            skipped += 1
            continue
        used += size
        answers[k] = v
    if static:
        here = {"state": current.to_wire(), "layout": traits["_layout"], "stats": traits["_stats"]}
        answers[state_key(current)] = encode(here)
        traits["_options"] = {**traits["_options"], "static_states": sorted(answers)}
    if not STATIC.exists():
        raise FileNotFoundError(f"the JS bundle is missing ({STATIC}); run `npm run build`")
    fill = {
        "__TITLE__": html_mod.escape(f"shardwidget · {traits['_layout']['typeof']}"),
        "__STATE__": _dumps(encode(traits)),
        "__ANSWERS__": _dumps(answers) if static else "null",
        "__CODE__": _dumps(STATIC.read_text()),
    }
    html = re.sub("|".join(fill), lambda m: fill[m.group(0)], _PAGE)
    return html, len(answers), skipped


def function_page_html(view: Any, static: bool = True) -> str:
    """A page of a function view (ShardView(f, ...)) as compiled now. With static=True its
    controls say there is no kernel to re-compile; with static=False requests are collected in
    window.__sent (tests answer them from the live view)."""
    traits = {k: getattr(view, k) for k in FUNCTION_TRAITS}
    if static:
        traits["_trace_options"] = {
            **traits["_trace_options"],
            "static": "saved page: no kernel to re-compile the function",
        }
    if not STATIC.exists():
        raise FileNotFoundError(f"the JS bundle is missing ({STATIC}); run `npm run build`")
    name = traits["_trace_options"].get("fn_name", "function")
    fill = {
        "__TITLE__": html_mod.escape(f"shardwidget · {name}"),
        "__STATE__": _dumps(encode(traits)),
        "__ANSWERS__": "{}" if static else "null",
        "__CODE__": _dumps(STATIC.read_text()),
    }
    return re.sub("|".join(fill), lambda m: fill[m.group(0)], _PAGE)


def save_html(
    view: ShardView,
    path: str | pathlib.Path,
    variants: str | Sequence[dict[str, Any]] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> ExportReport:
    """Write one self-contained HTML file showing the view; see ShardView.save_html."""
    if variants is None:
        states: list[state_mod.LayoutState] = []
    elif variants == "specs":
        states = every_spec(view)
    elif isinstance(variants, str):
        raise ValueError(
            f"variants must be None, 'specs' or a list of layout dicts, not {variants!r}"
        )
    else:
        states = []
        for i, change in enumerate(variants):
            if not isinstance(change, dict):
                raise ValueError(f"variant {i} must be a dict of layout traits, got {change!r}")
            bad = [k for k in change if k not in LAYOUT_TRAITS]
            if bad:
                raise ValueError(
                    f"variant {i}: unknown key {bad[0]!r}; use {', '.join(LAYOUT_TRAITS)}"
                )
            st = view._candidate(change)
            try:
                state_mod.validate(st, view._source.shape, len(view._devices), view._memory_kinds)
            except ValueError as e:
                raise ValueError(f"variant {i} ({change}): {e}") from None
            states.append(st)
    html, n, skipped = page_html(view, states, budget)
    p = pathlib.Path(path)
    p.write_text(html, encoding="utf-8")
    return ExportReport(str(p), p.stat().st_size, n, skipped, budget)


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>__TITLE__</title>
<style>body{margin:16px;font-family:system-ui,-apple-system,sans-serif}#root{max-width:1060px}</style>
</head><body><div id="root"></div>
<script type="module">
// A stand-in for the widget manager: the synced state, and answers to layout requests.
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
const state = revive(__STATE__);
const answers = __ANSWERS__;
const handlers = {};
const emit = (ev, ...a) => (handlers[ev] || []).slice().forEach((cb) => cb(...a));
const keyOf = (s) => JSON.stringify({mesh_shape: s.mesh_shape, axis_names: s.axis_names,
  axis_types: s.axis_types, spec: s.spec, memory_kind: s.memory_kind});
window.__sent = [];
function push(patch) {
  for (const k in patch) state[k] = patch[k];
  for (const k in patch) emit("change:" + k);
  emit("change");
}
function answer(msg) {
  const a = answers[keyOf(msg.state)];
  if (a) {
    const v = revive(a);
    push({...v.state, _layout: v.layout, _stats: v.stats, error: ""});
  } else {
    push({error: msg.type === "trace_request"
      ? "this page has no kernel: it shows the function as it was compiled when saved"
      : "this layout was not saved in this page (it has no kernel to compute it)"});
  }
  emit("msg:custom", {type: "result", seq: msg.seq, ok: !!a, error: a ? "" : state.error}, []);
}
const model = {
  get: (k) => state[k],
  set: (k, v) => { state[k] = v; emit("change:" + k); },
  save_changes: () => {},
  on: (ev, cb) => { (handlers[ev] = handlers[ev] || []).push(cb); },
  off: (ev, cb) => { if (!ev) { for (const k in handlers) delete handlers[k]; return; }
    handlers[ev] = (handlers[ev] || []).filter((c) => c !== cb); },
  send: (msg) => { if (answers && msg.type.endsWith("request")) setTimeout(() => answer(msg), 0);
    else window.__sent.push(msg); },
};
window.__push = (patch) => push(revive(patch));
window.__msg = (content) => emit("msg:custom", content, []);
const code = __CODE__;
const url = URL.createObjectURL(new Blob([code], {type: "text/javascript"}));
const widget = (await import(url)).default;
const def = typeof widget === "function" ? await widget() : widget;
if (def.initialize) await def.initialize({model});
await def.render({model, el: document.getElementById("root")});
window.__ready = true;
</script></body></html>
"""
