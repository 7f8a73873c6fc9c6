"""Driving a notebook in a Jupyter front end from Playwright: JupyterLab and Notebook 7 alike.

Both front ends are built from JupyterLab's components, and both servers (``servers.py``) put
the application object in the page as ``window.jupyterapp``: the same commands
(``notebook:run-all-cells``, ``docmanager:save``), the same notebook panel as
``shell.currentWidget`` and the same output area serve both. Also the round-trip notebook
(``CELLS``) and what its pictures must show once the notebook is saved and reopened.
"""

from __future__ import annotations

import base64
import json
import pathlib
from typing import Any

import nbformat
from playwright.sync_api import Locator, Page, expect

DONE = "<<cell done>>"

# Run the notebook (page → app), insert a code cell at the end and run it, read a cell's text.
RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
KERNEL_READY = """() => {
  const panel = window.jupyterapp?.shell.currentWidget;
  const kernel = panel?.sessionContext?.session?.kernel;
  return panel?.content?.widgets?.length > 0 && panel.sessionContext.isReady &&
    kernel?.connectionStatus === 'connected' && kernel.status === 'idle';
}"""
ALL_RAN = """() => {
  const nb = window.jupyterapp.shell.currentWidget?.content;
  if (!nb) return false;
  const code = nb.widgets.filter((c) => c.model.type === 'code');
  const idle = document.querySelector('.jp-Notebook-ExecutionIndicator[data-status="idle"]');
  return idle !== null && code.length > 0 && code.every((c) => c.model.executionCount !== null);
}"""
RUN_NEW_CELL = """async (code) => {
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  nb.activeCellIndex = nb.widgets.length - 1;
  await app.commands.execute('notebook:insert-cell-below');
  const cell = nb.activeCell;
  cell.model.sharedModel.setSource(code);
  app.commands.execute('notebook:run-cell');
  return nb.widgets.indexOf(cell);
}"""
CELL_TEXT = """(i) => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  const cell = typeof i === 'number' ? cells[i] : cells.find((c) => c.model.id === i);
  const parts = [];
  for (const o of cell.model.outputs.toJSON()) {
    if (o.output_type === 'stream') parts.push([].concat(o.text).join(''));
    else if (o.output_type === 'error') parts.push(o.ename + ': ' + o.evalue);
    else if (o.data && o.data['text/plain']) parts.push([].concat(o.data['text/plain']).join(''));
  }
  return parts.join('');
}"""
SAVED = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel && !panel.context.model.dirty;
}"""
NO_KERNEL = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel?.sessionContext && !panel.sessionContext.session?.kernel;
}"""

# The round-trip notebook: views, a change after the display, a frozen snapshot, a comparison.
SETUP = """\
import jax
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from shardwidget import ShardView
mesh = jax.make_mesh((2, 4), ("x", "y"))
x = jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32), NamedSharding(mesh, P("x", "y")))"""
CELLS = [
    SETUP,
    "view = ShardView(x)\nview",
    'view.spec = ["y", None]  # a change after the display: the picture follows it',
    "fview = ShardView(lambda a: a.sum(axis=0), x)\nfview",
    "frozen = view.snapshot()\nview.spec = [None, None]\nframe = frozen\nframe",
    'view.spec = ["y", None]',
    "from shardwidget import compare\n"
    "compare(fview, ShardView(lambda a: a.sum(axis=0), x, in_specs=[[None, 'y']]))",
]


def write_notebook(path: pathlib.Path, cells: list[str]) -> None:
    """A notebook of code cells (ids ``c0``, ``c1``, ...) for the ``python3`` kernel."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(c, id=f"c{i}") for i, c in enumerate(cells)]
    nbformat.write(nb, path)


def new_page(browser: Any, width: int = 1400, height: int = 1000) -> Page:
    """A page in a browser context of its own (``page.context.close()`` ends both), its console
    errors collected in ``page.errors``, 30 s for each wait unless told otherwise."""
    page: Page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors  # type: ignore[attr-defined]
    page.set_default_timeout(30_000)
    return page


def open_and_run_all(page: Page, url: str, timeout: float = 180_000) -> None:
    """Open the notebook at ``url``, wait for its kernel, run every cell and wait until each has
    run and the kernel is idle again (generous waits: a loaded 2-core machine is slow)."""
    page.goto(url)
    page.wait_for_function(KERNEL_READY, timeout=90_000, polling=100)
    expect(page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')).to_have_count(1)
    page.evaluate(RUN_ALL)
    page.wait_for_function(ALL_RAN, timeout=timeout, polling=100)


def save(page: Page) -> None:
    """Save the notebook shown, and wait until it is saved."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(SAVED, timeout=30_000, polling=100)


def shut_down(page: Page) -> None:
    """Shut the notebook's kernel down, and wait until its session has none."""
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    page.wait_for_function(NO_KERNEL, timeout=30_000, polling=100)


def blocks(view: Locator) -> list[str]:
    return view.locator(".sw-grid .sw-block").evaluate_all(
        "els => els.map(e => e.innerText.trim())"
    )


def run_cell(page: Page, code: str, timeout: float = 60_000) -> str:
    """Insert a code cell at the end of the notebook, run it, and return its output text."""
    i = page.evaluate(RUN_NEW_CELL, code + f"\nprint({DONE!r})")
    page.wait_for_function(
        f"(i) => ({CELL_TEXT})(i).includes({json.dumps(DONE)})", arg=i, timeout=timeout
    )
    text: str = page.evaluate(CELL_TEXT, i)
    return text.replace(DONE, "").strip()


def widget_errors(page: Page) -> list[str]:
    """Console errors from the widget (JupyterLab itself may log unrelated ones offline)."""
    keys = ("shardwidget", "anywidget", "sw-", "widget", "model")
    return [e for e in page.errors if any(k in e.lower() for k in keys)]  # type: ignore[attr-defined]


def pictures(page: Page) -> Any:
    return page.locator("[data-shardwidget-fallback]")


def drawn(pic: Any) -> str:
    """The picture's text and its SVGs' source (the pictures are <img>s of SVG data: URIs, shown
    when the image loaded)."""
    imgs = pic.locator("img.shardwidget-picture")
    for i in range(imgs.count()):
        assert imgs.nth(i).evaluate("e => e.complete && e.naturalWidth > 0"), "image not drawn"
    srcs = imgs.evaluate_all("els => els.map(e => e.getAttribute('src'))")
    svgs = [base64.b64decode(u.split(",", 1)[1]).decode() for u in srcs]
    return pic.inner_text() + "\n".join(svgs)


def check_pictures(page: Page) -> None:
    pics = pictures(page)
    expect(pics).to_have_count(3)  # the array view, the function view, the comparison
    for i in range(3):
        expect(pics.nth(i)).to_be_visible()
    cmp = drawn(pics.nth(2))
    # two function views, each one picture (to_svg's) of its leaves
    assert "comparison" in cmp and "all-reduce" in cmp and cmp.count("<svg") == 2, cmp[:300]
    arr = drawn(pics.nth(0))
    # the last state (P('y', None), set by cell 6), its axes and ranges, every holder
    assert "P('y', None)" in arr and "dim 0 (64) · sharded over y →" in arr, arr
    assert "dim 1 (32) · not sharded →" in arr and "heatmap" in arr, arr
    for label in ("0,4", "1,5", "2,6", "3,7", "16", "48", "64"):
        assert label in arr, (label, arr)
    assert arr.count("<image ") == 4  # thumbnails (the colour bar is a gradient)
    assert pics.nth(0).locator("area[title]").count() == 4  # hover, block by block
    fn = drawn(pics.nth(1))
    assert "all-reduce" in fn and "over x" in fn, fn
    assert page.get_by_text("model not found").filter(visible=True).count() == 0  # type: ignore[call-arg]
    assert page.get_by_text("Loading widget").filter(visible=True).count() == 0  # type: ignore[call-arg]
    # the frozen snapshot stays as it was made (P('y', None) before the later change)
    snap = page.locator(".shardwidget-snapshot:not([data-shardwidget-fallback] *)")
    expect(snap).to_have_count(1)
    assert "P('y', None)" in snap.inner_text()
