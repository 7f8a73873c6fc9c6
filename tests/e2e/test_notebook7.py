"""The same checks as in JupyterLab, in Jupyter Notebook 7 (``jupyter notebook``) in Chromium:
the widget draws, a click on a block selects it, a spec change from the widget's controls
re-lays the array out on the kernel, and the notebook saved and reopened with its kernel shut
down shows each view's picture.

One server and one page for the module, on the round-trip notebook (``jupyter_page.CELLS``); the
tests run in order on it. Notebook 7 is built from JupyterLab's components: the page is
``notebooks/<path>`` and its application object is ``window.jupyterapp`` (the server's
``--JupyterNotebookApp.expose_app_in_browser``), so the JupyterLab helpers drive it unchanged.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from .jupyter_page import (
    CELLS,
    KERNEL_READY,
    check_pictures,
    new_page,
    open_and_run_all,
    pictures,
    run_cell,
    save,
    shut_down,
    widget_errors,
    write_notebook,
)
from .servers import ROOT, Server, artifacts_on_failure, jupyter_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SHOTS = pathlib.Path(os.environ.get("SHARDWIDGET_SHOTS", ROOT / "test-artifacts" / "shots"))
WAIT = 60_000  # ms, for what the kernel must answer first: a loaded 2-core machine is slow


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("notebook7")
    root = tmp / "root"
    root.mkdir()
    write_notebook(root / "rt.ipynb", CELLS)
    with jupyter_notebook(root, tmp / "server", timeout=120) as server:
        yield server


@pytest.fixture(scope="module")
def nb_page(browser: Any, notebook7: Server) -> Iterator[Page]:
    """The notebook open in Notebook 7, run top to bottom."""
    page = new_page(browser, 1200)
    with artifacts_on_failure("notebook7-open", page, notebook7.log):
        open_and_run_all(page, notebook7.url + "notebooks/rt.ipynb", timeout=300_000)
    page.server_log = notebook7.log  # type: ignore[attr-defined]  # for `artifacts`
    yield page
    page.context.close()


def array_view(page: Page) -> Locator:
    """The array view (cell 1; the function view and the comparison follow it)."""
    view = page.locator(".shardwidget").first
    expect(view.locator(".sw-typeof")).to_contain_text("float32[64", timeout=WAIT)
    view.scroll_into_view_if_needed()
    return view


# --------------------------------------------------------------------------------------- tests
def test_the_page_is_notebook7_and_the_widget_draws(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        # Notebook 7's own shell, not JupyterLab's
        assert page.evaluate("() => document.body.dataset.notebook") == "notebooks"
        expect(page.locator(".jp-LabShell")).to_have_count(0)
        view = array_view(page)
        # P('y', None) since cell 2: four row blocks, each held by two devices
        expect(view.locator(".sw-grid .sw-block")).to_have_count(4, timeout=WAIT)
        assert "float32[64@y,32]" in view.locator(".sw-typeof").inner_text()
        assert view.locator(".sw-mesh .sw-dev").count() == 8
        grid = view.locator(".sw-grid").bounding_box()
        assert grid is not None and grid["width"] > 100 and grid["height"] > 100, grid
        # the function view's collectives table: its all-reduce over x
        all_reduce = page.locator(".sw-tr-coll-row[data-kind=all-reduce]:not(.sw-xfer *)")
        expect(all_reduce.first).to_be_visible()
        # live widgets: their pictures hidden, no "model not found"
        expect(pictures(page)).to_have_count(3)
        for i in range(3):
            expect(pictures(page).nth(i)).to_be_hidden()
        assert page.get_by_text("model not found").filter(visible=True).count() == 0  # type: ignore[call-arg]
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "notebook7_live.png"))
        assert widget_errors(page) == []


def test_a_click_on_a_block_selects_it(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        view = array_view(page)
        block = view.locator('.sw-grid .sw-block[data-block="0"]')
        block.click()
        expect(block).to_have_class(re.compile(r"\bsw-pinned\b"))
        detail = view.locator(".sw-detail")
        expect(detail).to_be_visible()
        expect(detail).to_contain_text("shard shape")
        expect(detail).to_contain_text("(16, 32)")
        assert view.locator(".sw-grid .sw-block.sw-pinned").count() == 1
        assert widget_errors(page) == []


def test_controls_relayout_on_the_kernel(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        view = array_view(page)
        view.locator("[data-key=spec-0]").select_option("x")  # dim 0 over x: 2 row blocks
        expect(view.locator(".sw-grid .sw-block")).to_have_count(2, timeout=WAIT)
        expect(view.locator(".sw-typeof")).to_contain_text("float32[64@x,32]")
        # what the page shows is what the kernel holds
        out = run_cell(page, "print(view.spec, view.array.sharding.spec)", timeout=WAIT * 2)
        assert out == "['x', None] P('x', None)", out
        # the picture saved with the notebook follows, once the kernel is quiet
        expect(pictures(page).nth(0)).to_contain_text("P('x', None)", timeout=WAIT)
        # and back (the saved notebook's pictures are checked against this state)
        view.locator("[data-key=spec-0]").select_option("y")
        expect(view.locator(".sw-grid .sw-block")).to_have_count(4, timeout=WAIT)
        out = run_cell(page, "print(view.spec, view.array.sharding.spec)", timeout=WAIT * 2)
        assert out == "['y', None] P('y', None)", out
        expect(pictures(page).nth(0)).to_contain_text("P('y', None)", timeout=WAIT)
        assert widget_errors(page) == []


def test_saved_notebook_reopens_with_pictures(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        save(page)
        shut_down(page)
        # reopened: Notebook 7 starts a new kernel, the widget models are gone
        page.reload()
        page.wait_for_function(KERNEL_READY, timeout=120_000, polling=100)
        expect(page.locator(".jupyter-widgets", has_text="model not found")).to_have_count(
            3, timeout=WAIT
        )  # what the widget manager writes in the widget outputs: hidden by the pictures
        check_pictures(page)
        # and with the kernel shut down (the one Notebook 7 starts on opening it included)
        shut_down(page)
        page.reload()
        page.wait_for_function(KERNEL_READY, timeout=120_000, polling=100)
        shut_down(page)
        check_pictures(page)
        pictures(page).nth(0).scroll_into_view_if_needed()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "notebook7_reopened_no_kernel.png"))
