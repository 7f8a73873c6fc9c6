"""Saved tree pages (TreeView.save_html) in Chromium: a click on another leaf draws that leaf's
grid from the page (or says the page left it out), the mesh select and the rules editor cannot
pretend to lay the tree out again; and in a live view a leaf click never shows saved-page words."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .conftest import ARTIFACTS
from .test_tree import open_tree

pytestmark = pytest.mark.e2e

# Every text the selected leaf's header shows, recorded as it changes.
RECORD = """() => { window.__heads = [];
  const head = document.querySelector('.sw-tree-leafhead');
  new MutationObserver(() => window.__heads.push(head.textContent))
    .observe(head, {childList: true, subtree: true, characterData: true}); }"""


def _tree() -> dict[str, Any]:
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    put = jax.device_put
    return {
        "embed": put(jnp.ones((64, 16)), NamedSharding(mesh, P("data", "model"))),
        "layers": [
            {
                "w": put(jnp.ones((16, 32)), NamedSharding(mesh, P(None, "model"))),
                "b": jnp.zeros(32),
            }
            for _ in range(3)
        ],
    }


def _open(page: Any, path: Any) -> None:
    page.goto(path.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    page.wait_for_selector(".sw-tree-row[data-leaf]")


def test_saved_page_draws_the_clicked_leaf_and_fixes_the_layout(
    page: Any, tmp_path: Any, request: Any
) -> None:
    view = ShardView(
        _tree(),
        mesh=jax.make_mesh(
            (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
        ),
    )
    request.addfinalizer(view.close)
    report = view.save_html(tmp_path / "tree.html")
    paths = [leaf.path for leaf in view.leaves]
    assert report.variants == len(paths) and report.skipped == 0
    _open(page, tmp_path / "tree.html")
    w = paths.index("['layers'][1]['w']")
    page.click(f".sw-tree-row[data-leaf='{w}']")
    head = page.locator(".sw-tree-leafhead")
    page.wait_for_function(
        "(p) => document.querySelector('.sw-tree-leafhead').textContent.startsWith(p)",
        arg="['layers'][1]['w']",
    )
    assert "P(None, 'model')" in head.inner_text()
    grid = page.inner_text(".sw-tree-leafgrid")
    assert "dim 1 (32) · sharded over model" in grid and "dim 0 (16) · not sharded" in grid
    assert "saved page" not in head.inner_text()
    # The mesh select shows the saved shape and cannot change it; the editor is read-only.
    shape = page.locator("select[data-key='tree-mesh-shape']")
    assert shape.is_disabled() and shape.input_value() == "4,2"
    assert page.locator("textarea.sw-tree-rules-text").get_attribute("readonly") is not None
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "tree_saved_page.png"), full_page=True)
    assert page.errors == []


def test_saved_page_says_which_leaves_it_left_out(page: Any, tmp_path: Any, request: Any) -> None:
    view = ShardView(
        _tree(),
        mesh=jax.make_mesh(
            (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
        ),
    )
    request.addfinalizer(view.close)
    report = view.save_html(tmp_path / "tree.html", budget=0)
    n = len(view.leaves)
    assert (report.variants, report.skipped) == (1, n - 1)
    _open(page, tmp_path / "tree.html")
    other = 1 if view.selected == 0 else 0
    page.click(f".sw-tree-row[data-leaf='{other}']")
    page.wait_for_selector(".sw-tree-waiting")
    words = page.inner_text(".sw-tree-waiting")
    assert f"not in this saved page (1 of {n} leaves' grids fit in it" in words


def test_live_leaf_clicks_never_show_saved_page_words(
    page: Any, tmp_path: Any, request: Any
) -> None:
    view = ShardView(
        _tree(),
        mesh=jax.make_mesh(
            (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
        ),
    )
    request.addfinalizer(view.close)
    loop = open_tree(page, tmp_path, view)
    page.evaluate(RECORD)
    for leaf in (1, 2, 3, 0):
        page.click(f".sw-tree-row[data-leaf='{leaf}']")
        loop.settle()
        page.wait_for_function(
            "(p) => document.querySelector('.sw-tree-leafhead').textContent.startsWith(p)",
            arg=view.leaves[leaf].path,
        )
    heads = page.evaluate("window.__heads")
    assert heads and not [h for h in heads if "saved page" in h or "waiting" in h]
