"""A notebook saved and reopened in JupyterLab (a new kernel, then none) shows each view's last
state as a picture, with no "model not found" text; ``jupyter nbconvert --to html --execute``
(no extra flags) shows every view offline."""

from __future__ import annotations

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

from .jupyter_page import (
    CELLS,
    KERNEL_READY,
    check_pictures,
    drawn,
    new_page,
    open_and_run_all,
    pictures,
    save,
    shut_down,
    write_notebook,
)
from .servers import ROOT, Server, artifacts_on_failure, jupyter_lab

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SHOTS = pathlib.Path(os.environ.get("SHARDWIDGET_SHOTS", ROOT / "test-artifacts" / "shots"))
ROOTS: dict[str, pathlib.Path] = {}  # the notebook folder of each server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("roundtrip")
    root = tmp / "root"
    root.mkdir()
    write_notebook(root / "rt.ipynb", CELLS)
    with jupyter_lab(root, tmp / "server") as server:
        ROOTS[server.url] = root
        yield server


def test_saved_notebook_reopens_with_pictures(browser: Any, lab: Server) -> None:
    page = new_page(browser, 1200)
    with artifacts_on_failure("roundtrip", page, lab.log):
        open_and_run_all(page, lab.url + "lab/tree/rt.ipynb")
        # live: two widgets, their pictures hidden (the frozen snapshot shows)
        live = page.locator(".shardwidget").nth(0)  # the array view (the function view follows)
        expect(live.locator(".sw-grid .sw-block")).to_have_count(4)
        # the function view's all-reduce (not the array view's re-layout table), and the same
        # view again in the comparison
        expect(page.locator(".sw-tr-coll-row:not(.sw-xfer *)")).to_have_count(2)
        all_reduce = page.locator(".sw-tr-coll-row[data-kind=all-reduce]:not(.sw-xfer *)")
        expect(all_reduce.first).to_be_visible()
        expect(pictures(page)).to_have_count(3)
        for i in range(3):  # the comparison's picture too: its first view is live
            expect(pictures(page).nth(i)).to_be_hidden()
        expect(live).to_be_visible()
        # a change from the widget's controls reaches the saved picture once the kernel is quiet
        live.locator("[data-key=spec-0]").select_option("x")
        expect(live.locator(".sw-grid .sw-block")).to_have_count(2)
        expect(pictures(page).nth(0)).to_contain_text("P('x', None)", timeout=15_000)
        live.locator("[data-key=spec-0]").select_option("y")
        expect(live.locator(".sw-grid .sw-block")).to_have_count(4)
        expect(pictures(page).nth(0)).to_contain_text("P('y', None)", timeout=15_000)
        save(page)
        shut_down(page)

        # reopened: a new kernel starts, the widget models are gone
        page.reload()
        page.wait_for_function(KERNEL_READY, timeout=60_000, polling=100)
        expect(page.locator(".jupyter-widgets", has_text="model not found")).to_have_count(
            3, timeout=30_000
        )  # what JupyterLab writes in the widget outputs: hidden by the pictures
        check_pictures(page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "reopened_new_kernel.png"), full_page=True)

        # and with no kernel at all
        shut_down(page)
        page.reload()
        page.wait_for_function(
            "() => window.jupyterapp?.shell.currentWidget?.content?.widgets?.length > 0",
            timeout=60_000,
        )
        shut_down(page)
        # (not the toolbar's kernel indicator: on a loaded machine it may still show the kernel
        # JupyterLab started on reload; the session having none is what counts)
        check_pictures(page)
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
        pics = pictures(page)
        expect(pics).to_have_count(3)
        # sanitized (no <style>, no inline SVG), the pictures still show whole, as images
        arr = drawn(pics.nth(0))
        assert "P('y', None)" in arr and "0,4" in arr and "dim 0 (64) · sharded over y →" in arr
        assert "not sharded0" not in pics.nth(0).inner_text()  # no jumble of loose SVG text
        assert page.get_by_text("model not found").filter(visible=True).count() == 0  # type: ignore[call-arg]
        page.screenshot(path=str(SHOTS / "reopened_untrusted.png"), full_page=True)
    page.context.close()


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
    pics = pictures(page)
    expect(pics).to_have_count(3)
    for i in range(3):
        expect(pics.nth(i)).to_be_visible()
    arr = drawn(pics.nth(0))
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
    pics = pictures(page)
    expect(pics).to_have_count(views)  # one per displayed view (a cell may display one view twice)
    for i in range(views):
        expect(pics.nth(i)).to_be_visible()
        text = drawn(pics.nth(i))
        assert '<g class="block">' in text and "dim 0" in text
    # the widget outputs (a script tag each, for an html-manager that is not there) are hidden
    widget_outputs = page.locator(".jp-OutputArea-child", has=page.locator("script[type*=widget]"))
    expect(widget_outputs).to_have_count(views)
    for i in range(views):
        expect(widget_outputs.nth(i)).to_be_hidden()
    frozen = page.locator(".shardwidget-snapshot:not([data-shardwidget-fallback] *)")
    expect(frozen).to_have_count(snaps)
    assert "P('y', 'x')" in frozen.nth(0).inner_text()  # "Swap the axes" shows its own step
    page.screenshot(path=str(SHOTS / "nbconvert_example01_offline.png"), full_page=True)
