"""A notebook saved and reopened in JupyterLab (a new kernel, then none) shows each view's last
state as a picture, with no "model not found" text; ``jupyter nbconvert --to html --execute``
(no extra flags) shows every view offline."""

from __future__ import annotations

import base64
import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from playwright.sync_api import Page, expect

from .servers import ROOT, Server, artifacts_on_failure, jupyter_lab
from .test_jupyterlab import ALL_RAN, KERNEL_READY, RUN_ALL

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SHOTS = pathlib.Path(os.environ.get("SHARDWIDGET_SHOTS", ROOT / "test-artifacts" / "shots"))
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
ROOTS: dict[str, pathlib.Path] = {}  # the notebook folder of each server
SAVED = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel && !panel.context.model.dirty;
}"""
NO_KERNEL = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel?.sessionContext && !panel.sessionContext.session?.kernel;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("roundtrip")
    root = tmp / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c, id=f"c{i}") for i, c in enumerate(CELLS)]
    nbformat.write(nb, root / "rt.ipynb")
    with jupyter_lab(root, tmp / "server") as server:
        ROOTS[server.url] = root
        yield server


def _pictures(page: Page) -> Any:
    return page.locator("[data-shardwidget-fallback]")


def _drawn(pic: Any) -> str:
    """The picture's text and its SVGs' source (the pictures are <img>s of SVG data: URIs, shown
    when the image loaded)."""
    imgs = pic.locator("img.shardwidget-picture")
    for i in range(imgs.count()):
        assert imgs.nth(i).evaluate("e => e.complete && e.naturalWidth > 0"), "image not drawn"
    srcs = imgs.evaluate_all("els => els.map(e => e.getAttribute('src'))")
    svgs = [base64.b64decode(u.split(",", 1)[1]).decode() for u in srcs]
    return pic.inner_text() + "\n".join(svgs)


def _check_pictures(page: Page) -> None:
    pics = _pictures(page)
    expect(pics).to_have_count(3)  # the array view, the function view, the comparison
    for i in range(3):
        expect(pics.nth(i)).to_be_visible()
    cmp = _drawn(pics.nth(2))
    # two function views, each one picture (to_svg's) of its leaves
    assert "comparison" in cmp and "all-reduce" in cmp and cmp.count("<svg") == 2, cmp[:300]
    arr = _drawn(pics.nth(0))
    # the last state (P('y', None), set by cell 6), its axes and ranges, every holder
    assert "P('y', None)" in arr and "dim 0 (64) · sharded over y →" in arr, arr
    assert "dim 1 (32) · not sharded →" in arr and "heatmap" in arr, arr
    for label in ("0,4", "1,5", "2,6", "3,7", "16", "48", "64"):
        assert label in arr, (label, arr)
    assert arr.count("<image ") == 4  # thumbnails (the colour bar is a gradient)
    assert pics.nth(0).locator("area[title]").count() == 4  # hover, block by block
    fn = _drawn(pics.nth(1))
    assert "all-reduce" in fn and "over x" in fn, fn
    assert page.get_by_text("model not found").filter(visible=True).count() == 0  # type: ignore[call-arg]
    assert page.get_by_text("Loading widget").filter(visible=True).count() == 0  # type: ignore[call-arg]
    # the frozen snapshot stays as it was made (P('y', None) before the later change)
    snap = page.locator(".shardwidget-snapshot:not([data-shardwidget-fallback] *)")
    expect(snap).to_have_count(1)
    assert "P('y', None)" in snap.inner_text()


def test_saved_notebook_reopens_with_pictures(browser: Any, lab: Server) -> None:
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    with artifacts_on_failure("roundtrip", page, lab.log):
        page.goto(lab.url + "lab/tree/rt.ipynb")
        page.wait_for_function(KERNEL_READY, timeout=60_000, polling=100)
        page.evaluate(RUN_ALL)
        page.wait_for_function(ALL_RAN, timeout=180_000, polling=100)
        # live: two widgets, their pictures hidden (the frozen snapshot shows)
        live = page.locator(".shardwidget").nth(0)  # the array view (the function view follows)
        expect(live.locator(".sw-grid .sw-block")).to_have_count(4)
        # the function view's all-reduce (not the array view's re-layout table), and the same
        # view again in the comparison
        expect(page.locator(".sw-tr-coll-row:not(.sw-xfer *)")).to_have_count(2)
        all_reduce = page.locator(".sw-tr-coll-row[data-kind=all-reduce]:not(.sw-xfer *)")
        expect(all_reduce.first).to_be_visible()
        expect(_pictures(page)).to_have_count(3)
        for i in range(3):  # the comparison's picture too: its first view is live
            expect(_pictures(page).nth(i)).to_be_hidden()
        expect(live).to_be_visible()
        # a change from the widget's controls reaches the saved picture once the kernel is quiet
        live.locator("[data-key=spec-0]").select_option("x")
        expect(live.locator(".sw-grid .sw-block")).to_have_count(2)
        expect(_pictures(page).nth(0)).to_contain_text("P('x', None)", timeout=15_000)
        live.locator("[data-key=spec-0]").select_option("y")
        expect(live.locator(".sw-grid .sw-block")).to_have_count(4)
        expect(_pictures(page).nth(0)).to_contain_text("P('y', None)", timeout=15_000)
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function(SAVED, timeout=30_000, polling=100)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        page.wait_for_function(NO_KERNEL, timeout=30_000, polling=100)

        # reopened: a new kernel starts, the widget models are gone
        page.reload()
        page.wait_for_function(KERNEL_READY, timeout=60_000, polling=100)
        expect(page.locator(".jupyter-widgets", has_text="model not found")).to_have_count(
            3, timeout=30_000
        )  # what JupyterLab writes in the widget outputs: hidden by the pictures
        _check_pictures(page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "reopened_new_kernel.png"), full_page=True)

        # and with no kernel at all
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        page.wait_for_function(NO_KERNEL, timeout=30_000, polling=100)
        page.reload()
        page.wait_for_function(
            "() => window.jupyterapp?.shell.currentWidget?.content?.widgets?.length > 0",
            timeout=60_000,
        )
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        page.wait_for_function(NO_KERNEL, timeout=30_000, polling=100)
        # (not the toolbar's kernel indicator: on a loaded machine it may still show the kernel
        # JupyterLab started on reload; the session having none is what counts)
        _check_pictures(page)
        page.screenshot(path=str(SHOTS / "reopened_no_kernel.png"), full_page=True)

        # a copy someone else saved (not signed by this server: untrusted, its HTML sanitized)
        saved = nbformat.read(ROOTS[lab.url] / "rt.ipynb", as_version=4)
        saved.cells[0].source += "\n# shared copy"
        nbformat.write(saved, ROOTS[lab.url] / "shared.ipynb")
        page.goto(lab.url + "lab/tree/shared.ipynb")
        page.wait_for_function(
            """() => {
              const w = window.jupyterapp?.shell.currentWidget;
              return w?.context?.path === 'shared.ipynb' && w.content?.widgets?.length >= 6;
            }""",
            timeout=60_000,
        )
        trusted = "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model.trusted"
        assert page.evaluate(trusted) is False  # JupyterLab does not trust it: HTML sanitized
        pics = _pictures(page)
        expect(pics).to_have_count(3)
        # sanitized (no <style>, no inline SVG), the pictures still show whole, as images
        arr = _drawn(pics.nth(0))
        assert "P('y', None)" in arr and "0,4" in arr and "dim 0 (64) · sharded over y →" in arr
        assert "not sharded0" not in pics.nth(0).inner_text()  # no jumble of loose SVG text
        assert page.get_by_text("model not found").filter(visible=True).count() == 0  # type: ignore[call-arg]
        page.screenshot(path=str(SHOTS / "reopened_untrusted.png"), full_page=True)
    ctx.close()


def _execute_to_html(
    tmp: pathlib.Path, nb_path: pathlib.Path, flags: tuple[str, ...] = ()
) -> pathlib.Path:
    from ipykernel.kernelspec import install

    prefix = tmp / "kernel"
    install(prefix=str(prefix), kernel_name="python3")  # this interpreter, found first
    env = {
        **os.environ,
        "JUPYTER_PATH": str(prefix / "share" / "jupyter"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "JAX_PLATFORMS": "cpu",
    }
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute", *flags]
    out = subprocess.run(
        [*cmd, str(nb_path)], env=env, timeout=400, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return nb_path.with_suffix(".html")


@pytest.mark.parametrize(
    "flags",
    [(), ("--ExecutePreprocessor.store_widget_state=False",)],
    ids=["no-flags", "no-widget-state"],
)
def test_nbconvert_execute_shows_every_view_offline(
    page: Page, tmp_path: pathlib.Path, flags: tuple[str, ...]
) -> None:
    src = tmp_path / "rt.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nbformat.write(nb, src)
    html_path = _execute_to_html(tmp_path, src, flags)
    text = html_path.read_text()
    # no flags: --execute stores widget state (the widget outputs want an html-manager); without
    # it the widget outputs are their text/plain as of the display
    assert ("application/vnd.jupyter.widget-state+json" in text) == (not flags)
    assert len(re.findall(r"<div class=\"shardwidget-fallback\"", text)) == 3
    blocked: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(("file:", "data:", "about:", "blob:")):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(html_path.as_uri())
    page.wait_for_load_state("load")
    _check_pictures_static(page)
    # the widget outputs are hidden: no stale text (P('x', 'y') at the display) below a picture
    assert page.get_by_text("spec P('x', 'y')").filter(visible=True).count() == 0  # type: ignore[call-arg]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"nbconvert_offline_{len(flags)}.png"), full_page=True)
    if not flags:
        assert any("require" in u or "html-manager" in u for u in blocked), blocked  # it tried


def _check_pictures_static(page: Page) -> None:
    pics = _pictures(page)
    expect(pics).to_have_count(3)
    for i in range(3):
        expect(pics.nth(i)).to_be_visible()
    arr = _drawn(pics.nth(0))
    assert "P('y', None)" in arr and "dim 0 (64) · sharded over y →" in arr, arr
    for label in ("0,4", "3,7", "16", "64"):
        assert label in arr, (label, arr)
    assert "all-reduce" in pics.nth(1).inner_text()
    snap = page.locator(".shardwidget-snapshot:not([data-shardwidget-fallback] *)")
    expect(snap).to_have_count(1)
    assert "P('y', None)" in snap.inner_text()


def test_nbconvert_execute_shows_every_view_of_an_example_offline(
    page: Page, tmp_path: pathlib.Path
) -> None:
    src = tmp_path / "01_arrays.ipynb"
    nb = nbformat.read(ROOT / "examples" / "01_arrays.ipynb", as_version=4)
    nbformat.write(nb, src)
    views = sum(1 for c in nb.cells if str(c.get("id")).startswith("view-"))
    snaps = sum(1 for c in nb.cells if str(c.get("id")).startswith("snap-"))
    html_path = _execute_to_html(tmp_path, src)
    page.route(
        "**/*",
        lambda r: r.continue_() if r.request.url.startswith(("file:", "data:")) else r.abort(),
    )
    page.goto(html_path.as_uri())
    page.wait_for_load_state("load")
    pics = _pictures(page)
    expect(pics).to_have_count(views)  # one per displayed view (a cell may display one view twice)
    for i in range(views):
        expect(pics.nth(i)).to_be_visible()
        drawn = _drawn(pics.nth(i))
        assert '<g class="block">' in drawn and "dim 0" in drawn
    # the widget outputs (a script tag each, for an html-manager that is not there) are hidden
    widget_outputs = page.locator(".jp-OutputArea-child", has=page.locator("script[type*=widget]"))
    expect(widget_outputs).to_have_count(views)
    for i in range(views):
        expect(widget_outputs.nth(i)).to_be_hidden()
    frozen = page.locator(".shardwidget-snapshot:not([data-shardwidget-fallback] *)")
    expect(frozen).to_have_count(snaps)
    assert "P('y', 'x')" in frozen.nth(0).inner_text()  # "Swap the axes" shows its own step
    page.screenshot(path=str(SHOTS / "nbconvert_example01_offline.png"), full_page=True)
