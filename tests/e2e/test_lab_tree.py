"""A tree view in a real JupyterLab: the rules editor takes Enter and Shift+Enter as text (Lab's
notebook bindings would insert or run a cell), and at 1,024 px with the file browser open the
leaf table's spec and per-device columns are in sight without a horizontal scroll inside the view.

One server and one page for the module (a server and a kernel cost ~15 s on this machine)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .jupyter_page import new_page, open_and_run_all, run_cell, write_notebook
from .servers import ARTIFACTS, Server, artifacts_on_failure, jupyter_lab

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CELLS = [
    """\
import jax
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P
from shardwidget import ShardView
mesh = jax.make_mesh((4, 2), ("data", "model"))
params = {f"layer{i:03d}": {"w": jnp.zeros((64, 32)), "b": jnp.zeros(32)} for i in range(12)}""",
    "tv = ShardView(params, mesh=mesh)\ntv",
]


@pytest.fixture(scope="module")
def lab_page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    tmp = tmp_path_factory.mktemp("labtree")
    root = tmp / "root"
    root.mkdir()
    write_notebook(root / "tree.ipynb", CELLS)
    with jupyter_lab(root, tmp / "server") as server:
        page = new_page(browser, width=1400, height=1000)
        page.server = server  # type: ignore[attr-defined]
        with artifacts_on_failure("lab-tree-open", page, server.log):
            open_and_run_all(page, server.url + "lab/tree/tree.ipynb")
            expect(page.locator(".shardwidget.sw-tree")).to_have_count(1)
        yield page
        page.context.close()


def _cells(page: Page) -> int:
    return int(page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length"))


def _count(page: Page, i: int) -> Any:
    return page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.executionCount", i
    )


def test_enter_and_shift_enter_type_newlines_in_the_rules_editor(lab_page: Page) -> None:
    page = lab_page
    server: Server = page.server  # type: ignore[attr-defined]
    with artifacts_on_failure("lab-tree-enter", page, server.log):
        cells, ran = _cells(page), _count(page, 1)
        area = page.locator(".sw-tree textarea.sw-tree-rules-text")
        area.click()
        page.keyboard.type("w  P('data')")
        page.keyboard.press("Enter")
        page.keyboard.type("b  P('model')")
        page.keyboard.press("Shift+Enter")
        page.keyboard.type("# end")
        assert area.input_value() == "w  P('data')\nb  P('model')\n# end"
        assert _cells(page) == cells  # Lab inserted no cell, ran nothing
        assert _count(page, 1) == ran
        # The kernel got both lines as two rules (not "P('data')b  P('model')").
        expect(page.locator(".sw-tree .sw-tree-rules-error")).to_be_hidden(timeout=10_000)
        page.wait_for_timeout(800)
        out = run_cell(page, "print(repr(tv.rules_text))")
        assert out == repr("w  P('data')\nb  P('model')\n# end"), out


def test_narrow_window_with_the_file_browser_shows_every_column(lab_page: Page) -> None:
    page = lab_page
    server: Server = page.server  # type: ignore[attr-defined]
    with artifacts_on_failure("lab-tree-narrow", page, server.log):
        page.set_viewport_size({"width": 1024, "height": 800})
        page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
        expect(page.locator(".jp-FileBrowser")).to_be_visible()
        view = page.locator(".shardwidget.sw-tree")
        view.scroll_into_view_if_needed()
        page.wait_for_timeout(400)  # the panels settle to their new widths
        right = page.evaluate(
            "() => document.querySelector('.jp-NotebookPanel').getBoundingClientRect().right"
        )
        for col in (".sw-tree-headrow .sw-tree-spec", ".sw-tree-headrow .sw-tree-bytes"):
            box = view.locator(col).bounding_box()
            assert box is not None and box["width"] > 40, col
            assert box["x"] + box["width"] <= right, (col, box, right)
        # Nothing inside the view scrolls sideways (the output area's own scroll is the only one).
        wide = page.evaluate(
            """() => [...document.querySelectorAll('.shardwidget.sw-tree, .shardwidget.sw-tree *')]
                 .filter((e) => e.scrollWidth > e.clientWidth + 1 &&
                   ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).length"""
        )
        assert wide == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "lab_tree_narrow.png"))
