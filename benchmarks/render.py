"""How long the front end takes to draw a real view in headless Chromium.

    python benchmarks/render.py [--devices 8 64 256 1024 4096] [--loads N] [--rerenders N]
                                [--traced N] [--lab]

For each device count a subprocess (the number of simulated CPU devices is fixed when JAX
starts) puts a 2048×2048 float32 array on a square-ish 2-D mesh (8 → 2×4, 64 → 8×8, …,
4096 → 64×64) with P('x', 'y'), makes a ShardView and writes a page of it
(the renderer's page from ``tests/e2e/harness.py``, which can push new traits), and the layout
and statistics of P('y', 'x') too.
Each page is opened in headless Chromium from file://, and we read the performance measures
the renderer records (medians over --loads fresh pages for the first render):

- first:     ``shardwidget:render`` of the page's first render: drawing the array pane (blocks,
             colours, labels, ticks, the thumbnails' places) and the mesh pane, as a person
             first sees them, with the statistics in the page (as in a saved page);
- live:      the same, of a page whose statistics are pending: what a live kernel first sends
             (views/array.py publishes the geometry first and the statistics after the cell),
             so no thumbnail is placed yet; loaded interleaved with the first's pages;
- re-render: median of N renders of a new layout, alternating P('y', 'x') and P('x', 'y')
             (every block changes device, colour and label; the geometry stays);
- hover:     median time of a hover update: dispatching mouseover/mouseenter/mousemove on a
             block (or the canvas) and then forcing style and layout, timed in-page with
             performance.now() (paint and compositing are not included);
- grid:      ``shardwidget:grid``, the array pane's part of the first render;
- flush:     ``shardwidget:flush``, the whole first update: the render plus the header and
             controls (``shardwidget:chrome``) and the first read of the panes' widths, which
             forces the page's first style and layout pass (``shardwidget:layout-read``);
- thumbs:    ``shardwidget:thumbs``, the thumbnails' pixels, drawn after the render in the same
             task (before the first paint);
- layout:    the style and layout pass of the frame after the first update (forced and timed
             in a requestAnimationFrame callback): the browser's own work on what was drawn;
- second:    the first render of a second view of the same state, mounted in the same page once
             the first is drawn (``window.__mountAgain()`` of the harness, in a fixed box that
             leaves the first view's size alone, so the next measure is the second view's): the
             same drawing with the code compiled and warm and the module's colour caches filled,
             so ``first - second`` is what a fresh page's start costs the first render;
- traced, compile, gc: in --traced extra loads (Chrome tracing of V8's compile and GC events;
             loads not counted above), the first render's duration (tracing slows it) and the
             main thread's time inside it in V8.CompileCode (compiling each function the render
             runs for the first time: V8 compiles lazily) and in MinorGC / MajorGC (the page's
             first scavenge tends to land here).

--lab also runs the view in a real JupyterLab (tests/e2e/servers.py; one kernel per device count,
the notebook reloaded --loads times after a first load not counted) and prints its first render
there: what a person opening the notebook waits for, in a page that JupyterLab has warmed (a heap
already grown, its parsers and DOM bindings run) and with statistics pending, as from a kernel.

Targets: one render ≤ 16 ms at 256 devices and ≤ 100 ms at 4096 devices (first and re-render;
live and the JupyterLab figures are shown, not judged), hover under one frame (16 ms). The
machine's load moves these figures: run it a few times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MESHES = {8: (2, 4), 64: (8, 8), 256: (16, 16), 1024: (32, 32), 4096: (64, 64)}
TARGETS = {256: 16.0, 4096: 100.0}
CHROMIUM = "/usr/bin/chromium"

# The view's array, as the page builders and the JupyterLab notebook make it ({n} devices).
_ARRAY = """\
import jax
jax.config.update("jax_num_cpu_devices", {n})
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
from shardwidget import ShardView
a = jax.device_put(
    np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32),
    NamedSharding(jax.make_mesh({shape}, ("x", "y")), P("x", "y")),
)
"""

_MAKE_PAGE = (
    _ARRAY
    + r"""import json
from shardwidget import wire
from tests.e2e.harness import page_html, state_of  # the renderer's page (window.__push etc.)
v = ShardView(a)
open({page!r}, "w", encoding="utf-8").write(page_html(v))
# What a kernel first sends: the same traits with the statistics pending (views/array.py
# publishes the geometry first and the statistics after the cell).
live = state_of(v)
live["_stats"] = wire.encode({{"_stats": wire.pending_stats(v._layout["key"])}})["_stats"]
open({live!r}, "w", encoding="utf-8").write(page_html(v, live))
first = wire.encode({{"_layout": v._layout, "_stats": v._stats}})
v.spec = ["y", "x"]
other = wire.encode({{"_layout": v._layout, "_stats": v._stats}})
json.dump([first, other], open({traits!r}, "w", encoding="utf-8"))
"""
)


_RERENDER_JS = """async ([layouts, n]) => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const wait = async () => { await frame(); await frame(); };
  const out = [];
  let key = 2000000;
  for (let i = 0; i < n; i++) {
    key += 1;
    const traits = layouts[(i + 1) % 2];
    const before = performance.getEntriesByName('shardwidget:render').length;
    window.__push({_layout: {...traits._layout, key}, _stats: {...traits._stats, key}});
    await wait();
    const es = performance.getEntriesByName('shardwidget:render');
    if (es.length > before) out.push(es[es.length - 1].duration);
  }
  return out;
}"""

_HOVER_JS = """async (points) => {
  const grid = document.querySelector('.sw-grid');
  const target = (x, y) => {
    const cv = grid.querySelector('canvas.sw-canvas');
    if (cv) return cv;
    const e = document.elementFromPoint(x, y);
    return e && (e.closest('.sw-block') || e);
  };
  const out = [];
  for (const [x, y] of points) {
    const el = target(x, y);
    if (!el) continue;
    const t0 = performance.now();
    const init = {clientX: x, clientY: y, bubbles: true};
    el.dispatchEvent(new MouseEvent('mouseover', init));
    el.dispatchEvent(new MouseEvent('mouseenter', {...init, bubbles: false}));
    el.dispatchEvent(new MouseEvent('mousemove', init));
    document.body.offsetHeight;  // the style and layout work of the highlight, done now
    out.push(performance.now() - t0);
    el.dispatchEvent(new MouseEvent('mouseleave', {...init, bubbles: false}));
    await new Promise((r) => requestAnimationFrame(() => r()));
  }
  return out;
}"""


_FIRST_JS = """() => {
  const one = (name) => {
    const e = performance.getEntriesByName(name);
    return e.length ? e[0].duration : NaN;
  };
  return {
    render: one('shardwidget:render'),
    grid: one('shardwidget:grid'),
    flush: one('shardwidget:flush'),
    thumbs: one('shardwidget:thumbs'),
    renders: performance.getEntriesByName('shardwidget:render').length,
    laidout: window.__laidOut ?? NaN,
  };
}"""

# Runs before the page's scripts: when the first update ends, time the next frame's style and
# layout pass.
_FRAME_INIT = """(() => {
  const measure = performance.measure.bind(performance);
  performance.measure = (name, ...rest) => {
    const m = measure(name, ...rest);
    if (name === 'shardwidget:render' && window.__laidOut === undefined) {
      window.__laidOut = null;
      requestAnimationFrame(() => {
        const t0 = performance.now();
        document.body.offsetHeight;
        window.__laidOut = performance.now() - t0;
      });
    }
    return m;
  };
})();"""


def first_render(browser, page_path: Path, second: bool = True) -> dict[str, float]:
    """The first render of a freshly loaded page (and, with `second`, of a second view)."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.add_init_script(_FRAME_INIT)
    page.goto(page_path.as_uri())
    page.wait_for_function("window.__ready === true && typeof window.__laidOut === 'number'")
    r = page.evaluate(_FIRST_JS)
    if second:
        n = r["renders"]
        page.evaluate("window.__mountAgain()")
        page.wait_for_function(f"performance.getEntriesByName('shardwidget:render').length > {n}")
        r["second"] = page.evaluate(_NTH_RENDER_JS, n)
    page.close()
    return r


_NTH_RENDER_JS = "(n) => performance.getEntriesByName('shardwidget:render')[n].duration"

# Chrome tracing: V8's compile and GC events and the page's performance measures.
_TRACE_CATEGORIES = [
    "v8",
    "disabled-by-default-v8.compile",
    "disabled-by-default-v8.gc",
    "blink.user_timing",
]
_GC_EVENTS = ("MinorGC", "MajorGC")


def render_window_costs(events: list[dict]) -> dict[str, float]:
    """From a trace of one page load: the first ``shardwidget:render`` measure's duration and the
    renderer main thread's time inside it in V8.CompileCode and in MinorGC / MajorGC (ms).
    Only complete events that lie wholly inside the measure count; NaN without the measure."""
    nan = float("nan")
    mine = [e for e in events if e.get("name") == "shardwidget:render"]
    begin = [e["ts"] for e in mine if e.get("ph") == "b"]
    end = [e["ts"] for e in mine if e.get("ph") == "e"]
    if not begin or not end:
        return {"render": nan, "compile": nan, "gc": nan}
    t0, t1 = min(begin), min(end)
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    compile_us = gc_us = 0.0
    for e in events:
        if e.get("ph") != "X" or (e.get("pid"), e.get("tid")) not in main:
            continue
        ts, dur = e["ts"], e.get("dur", 0)
        if ts < t0 or ts + dur > t1:
            continue
        if e["name"] == "V8.CompileCode":
            compile_us += dur
        elif e["name"] in _GC_EVENTS:
            gc_us += dur
    return {"render": (t1 - t0) / 1000, "compile": compile_us / 1000, "gc": gc_us / 1000}


def traced_first_render(browser, page_path: Path) -> dict[str, float]:
    """One fresh page load under Chrome tracing: render_window_costs of its first render."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    browser.start_tracing(page=page, categories=_TRACE_CATEGORIES)
    page.goto(page_path.as_uri())
    page.wait_for_function("window.__ready === true")
    page.wait_for_function("performance.getEntriesByName('shardwidget:render').length > 0")
    data = json.loads(browser.stop_tracing())
    page.close()
    return render_window_costs(data["traceEvents"] if isinstance(data, dict) else data)


def med(xs: list[float]) -> float:
    xs = [x for x in xs if x == x]  # not NaN
    return statistics.median(xs) if xs else float("nan")


def measure(
    browser,
    page_path: Path,
    live_path: Path,
    traits_path: Path,
    rerenders: int,
    loads: int,
    traced: int,
    shot,
):
    firsts, lives = [], []
    for _ in range(loads):  # interleaved: the two pages load under the same conditions
        firsts.append(first_render(browser, page_path))
        lives.append(first_render(browser, live_path, second=False))
    traces = [traced_first_render(browser, page_path) for _ in range(traced)]
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(page_path.as_uri())
    page.wait_for_function("window.__ready === true", timeout=60000)
    info = page.evaluate(
        """() => ({blocks: document.querySelectorAll('.sw-grid .sw-block').length,
                   canvas: !!document.querySelector('.sw-grid canvas.sw-canvas')})"""
    )
    traits = json.loads(traits_path.read_text())
    again = page.evaluate(_RERENDER_JS, [traits, rerenders])
    box = page.eval_on_selector(
        ".sw-grid",
        "e => { const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }",
    )
    x0, y0, w, h = box
    pts = [
        [x0 + w * fx, y0 + h * fy]
        for fx, fy in [(0.1, 0.1), (0.5, 0.5), (0.9, 0.3), (0.3, 0.8), (0.7, 0.6), (0.2, 0.4)]
    ]
    hover = page.evaluate(_HOVER_JS, pts)
    # and one real pointer move, so the browser's own hit-testing path runs too
    page.mouse.move(x0 + w * 0.5, y0 + h * 0.5)
    page.mouse.move(0, 0)
    if shot is not None:
        page.screenshot(path=str(shot), full_page=True)
    page.close()
    n_blocks = len(traits[0]["_layout"]["blocks"])
    out = {
        "blocks": n_blocks,
        "mode": "canvas" if info["canvas"] else f"dom({info['blocks']})",
        "rerender": med(again),
        "rerender_max": max(again) if again else float("nan"),
        "hover": med(hover),
        "hover_max": max(hover) if hover else float("nan"),
        "renders_at_load": max(f["renders"] for f in firsts),
    }
    for k in ("render", "grid", "flush", "thumbs", "laidout", "second"):
        out[k] = med([f[k] for f in firsts])
    for k in ("compile", "gc"):
        out[k] = med([t[k] for t in traces])
    out["traced_render"] = med([t["render"] for t in traces])
    out["live"] = med([f["render"] for f in lives])
    out["first"] = out["render"]
    out["first_range"] = (min(f["render"] for f in firsts), max(f["render"] for f in firsts))
    return out


def _lab_setup(n: int) -> str:
    """The notebook's first cell: the array, once a kernel (a reloaded page re-runs the notebook
    on the same kernel, whose device count is fixed)."""
    body = _ARRAY.format(n=n, shape=MESHES[n])
    return 'if "a" not in globals():\n' + textwrap.indent(body, "    ")


_LAB_FIRST = """() => {
  const e = performance.getEntriesByName('shardwidget:render');
  const thumbs = performance.getEntriesByName('shardwidget:thumbs');
  const end = e[0].startTime + e[0].duration;
  return {render: e[0].duration, renders: e.length,
          thumbsAfter: thumbs.length ? thumbs[0].startTime >= end : null};
}"""


def lab_first_renders(devices: list[int], loads: int) -> dict[int, list[dict]]:
    """The first render of the view in a real JupyterLab, for each device count: a server and
    notebook (and kernel) each, opened loads + 1 times in a fresh browser context, the first not
    counted (the kernel's JAX and the server warm up there)."""
    import nbformat
    from playwright.sync_api import sync_playwright

    if str(ROOT) not in sys.path:  # the e2e suite's servers and notebook driving, as a package
        sys.path.insert(0, str(ROOT))
    from tests.e2e.jupyter_page import new_page, open_and_run_all
    from tests.e2e.servers import jupyter_lab

    out: dict[int, list[dict]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        for n in devices:
            with tempfile.TemporaryDirectory() as d:
                root = Path(d) / "root"
                root.mkdir()
                nb = nbformat.v4.new_notebook()
                nb.cells = [
                    nbformat.v4.new_code_cell(_lab_setup(n), id="setup"),
                    nbformat.v4.new_code_cell("ShardView(a)", id="view"),
                ]
                nbformat.write(nb, root / "render.ipynb")
                out[n] = []
                with jupyter_lab(root, Path(d) / "server") as server:
                    for i in range(loads + 1):
                        page = new_page(browser)
                        open_and_run_all(page, f"{server.url}lab/tree/render.ipynb", 300_000)
                        page.wait_for_function(
                            "performance.getEntriesByName('shardwidget:thumbs').length > 0",
                            timeout=60_000,
                        )
                        r = page.evaluate(_LAB_FIRST)
                        page.context.close()
                        if i > 0:
                            out[n].append(r)
        browser.close()
    return out


def print_lab(res: dict[int, list[dict]], loads: int) -> None:
    print(f"in JupyterLab: the view's first render over {loads} notebook loads (one more first)")
    print(f"{'devices':>7} {'first ms':>9}  {'min–max':>11}  {'renders':>7}  thumbnails")
    for n, rs in res.items():
        xs = [r["render"] for r in rs]
        later = sum(1 for r in rs if r["thumbsAfter"])
        when = (
            "after the first render (statistics pending)"
            if later == len(rs)
            else "in the first render"
            if later == 0
            else f"after the first render in {later} of {len(rs)} loads"
        )
        renders = max(r["renders"] for r in rs)
        print(f"{n:>7} {med(xs):>9.1f}  {min(xs):>5.1f}–{max(xs):<5.1f}  {renders:>7}  {when}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--devices", type=int, nargs="+", default=sorted(MESHES))
    ap.add_argument("--rerenders", type=int, default=9)
    ap.add_argument("--loads", type=int, default=5, help="fresh page loads for the first render")
    ap.add_argument(
        "--traced", type=int, default=3, help="extra traced loads for compile and gc (0: none)"
    )
    ap.add_argument("--keep", type=Path, default=None, help="write pages (and screenshots) here")
    ap.add_argument("--screenshots", action="store_true", help="save a screenshot per page")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--lab", action="store_true", help="also the first render in a real JupyterLab")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    t_start = time.perf_counter()
    tmp = tempfile.TemporaryDirectory() if args.keep is None else None
    out = Path(tmp.name) if tmp else args.keep
    out.mkdir(parents=True, exist_ok=True)
    for n in args.devices:
        if n not in MESHES:
            ap.error(f"no mesh for {n} devices; choose from {sorted(MESHES)}")
    t0 = time.perf_counter()
    with subprocess_pool(args.devices, out) as pages:
        t_pages = time.perf_counter() - t0
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            for n in args.devices:
                page_path, live_path, traits_path = pages[n]
                shot = out / f"render_{n}.png" if args.screenshots else None
                rows.append(
                    (
                        n,
                        measure(
                            browser,
                            page_path,
                            live_path,
                            traits_path,
                            args.rerenders,
                            args.loads,
                            args.traced,
                            shot,
                        ),
                    )
                )
            browser.close()
    print(f"pages built in {t_pages:.1f} s; chromium {CHROMIUM}")
    print(
        f"medians: first render over {args.loads} page loads (live: {args.loads} more,"
        f" interleaved), {args.rerenders} re-renders,"
        f" 6 hovers; traced, compile and gc over {args.traced} traced loads"
    )
    hdr = (
        f"{'devices':>7} {'blocks':>6} {'mode':>9} {'first ms':>9} {'live':>5} {'re-render ms':>13}"
        f" {'hover ms':>9} {'grid':>6} {'flush':>6} {'thumbs':>6} {'layout':>6}"
        f" {'second':>6} {'traced':>6} {'compile':>7} {'gc':>5}"
        f"  {'first min–max':>13}  target (first and re-render; hover < 16)"
    )
    print(hdr)
    print("-" * len(hdr))
    missed = False
    for n, r in rows:
        tgt = TARGETS.get(n)
        verdict = ""
        if tgt is not None:
            ok = r["first"] <= tgt and r["rerender"] <= tgt
            missed |= not ok
            verdict = f"≤ {tgt:g} ms {'ok' if ok else 'MISSED'}"
        if r["hover"] >= 16:
            missed = True
            verdict += " hover MISSED"
        lo, hi = r["first_range"]
        print(
            f"{n:>7} {r['blocks']:>6} {r['mode']:>9} {r['first']:>9.1f} {r['live']:>5.1f}"
            f" {r['rerender']:>13.1f}"
            f" {r['hover']:>9.1f} {r['grid']:>6.1f} {r['flush']:>6.1f} {r['thumbs']:>6.1f}"
            f" {r['laidout']:>6.1f} {r['second']:>6.1f} {r['traced_render']:>6.1f}"
            f" {r['compile']:>7.1f} {r['gc']:>5.1f}"
            f"  {lo:>6.1f}–{hi:<6.1f}  {verdict}"
        )
        if r["renders_at_load"] > 1:
            print(f"        note: {r['renders_at_load']} renders at load (a resize re-rendered)")
    if args.lab:
        print_lab(lab_first_renders(args.devices, args.loads), args.loads)
    print(f"total {time.perf_counter() - t_start:.1f} s")
    if tmp:
        tmp.cleanup()
    return 1 if (args.check and missed) else 0


class subprocess_pool:
    """Build the pages in parallel subprocesses (each sets its own device count)."""

    def __init__(self, ns: list[int], out: Path):
        self.ns, self.out = ns, out

    def __enter__(self) -> dict[int, tuple[Path, Path, Path]]:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "JAX_PLATFORMS": "cpu",
        }
        procs = {}
        for n in self.ns:
            page, traits = self.out / f"render_{n}.html", self.out / f"render_{n}.json"
            live = self.out / f"render_{n}_live.html"
            code = _MAKE_PAGE.format(
                n=n, shape=MESHES[n], page=str(page), live=str(live), traits=str(traits)
            )
            procs[n] = (subprocess.Popen([sys.executable, "-c", code], env=env), page, live, traits)
        res = {}
        for n, (p, page, live, traits) in procs.items():
            if p.wait() != 0:
                raise SystemExit(f"building the {n}-device page failed (exit {p.returncode})")
            res[n] = (page, live, traits)
        return res

    def __exit__(self, *exc) -> None:
        return None


if __name__ == "__main__":
    sys.exit(main())
