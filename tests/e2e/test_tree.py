"""The tree view in Chromium (ShardView of a model's parameters): the leaf table grouped and
sortable, a leaf selected into the array grid, the memory chart with the HBM line, a large
replicated leaf flagged, and the rules editor: a bad rule marked inline, a good one re-lays out.
10,000 leaves scroll with a bounded number of rows in the DOM."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.cost import hardware as hw_mod

from .conftest import ARTIFACTS
from .harness import Loop, page_html

pytestmark = pytest.mark.e2e


def _model() -> dict[str, Any]:
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    put = jax.device_put
    every = NamedSharding(mesh, P())
    return {
        "params": {
            "embed": put(jnp.ones((4096, 256)), every),  # 4 MiB on each device: replicated
            "layers": [
                {
                    "w": put(jnp.ones((256, 1024)), NamedSharding(mesh, P("data", "model"))),
                    "b": put(jnp.zeros(1024)),
                }
                for _ in range(3)
            ],
        },
        "opt_state": {
            "count": put(jnp.int32(0)),
            "mu": {"embed": put(jnp.zeros((4096, 256)), every)},
        },
        "step": 7,
    }


class TreeLoop(Loop):
    def settle(self, want: int = 1) -> None:
        for _ in range(150):
            self.page.wait_for_timeout(20)
            if self.pump() >= want:
                self.page.wait_for_timeout(60)
                self.pump()
                return
        raise AssertionError("the page sent nothing")


def open_tree(page: Any, tmp_path: Any, view: Any) -> TreeLoop:
    f = tmp_path / "tree.html"
    f.write_text(page_html(view))
    page.goto(f.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    page.wait_for_selector(".sw-tree-row[data-leaf]")
    return TreeLoop(view, page)


def test_tree_pane_select_chart_and_rules(page: Any, tmp_path: Any, request: Any) -> None:
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    import dataclasses

    tiny = dataclasses.replace(
        hw_mod.hardware("h100"), name="tiny", label="tiny", hbm_bytes=6 << 20
    )
    hw_mod.register(tiny)
    view = ShardView(_model(), mesh=mesh, hardware="tiny")
    request.addfinalizer(view.close)  # its arrays are freed for the tests after this one
    loop = open_tree(page, tmp_path, view)
    head = page.inner_text(".sw-header")
    assert "9 array leaves" in head and "data=4 × model=2" in head
    assert "2 large leaves replicated on every device" in head
    assert "['opt_state']['mu']['embed']" in head
    # groups in tree order (dict keys sorted), the large replicated embeddings flagged
    groups = page.eval_on_selector_all(".sw-tree-group", "els => els.map(e => e.dataset.group)")
    assert groups == [
        "['opt_state']",
        "['opt_state']['mu']",
        "['params']",
        "['params']['layers']",
        "['params']['layers'][0]",
        "['params']['layers'][1]",
        "['params']['layers'][2]",
    ]
    large = page.eval_on_selector_all(".sw-tree-large", "els => els.map(e => e.dataset.leaf)")
    paths = [leaf.path for leaf in view.leaves]
    embeds = [str(paths.index(p)) for p in ("['opt_state']['mu']['embed']", "['params']['embed']")]
    assert large == embeds
    # memory chart: 8 bars, devices over the 6 MiB line marked (the embedding twice: 8 MiB+)
    assert page.locator(".sw-tree-mem-plot g[data-device]").count() == 8
    assert page.locator(".sw-tree-over").count() == 8
    assert "8 devices over the tiny HBM" in page.inner_text(".sw-tree-mem-note")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "tree_view.png"), full_page=True)

    # sort by bytes: the largest leaf first
    page.click("[data-key='tree-sort']")
    first = page.locator(".sw-tree-row[data-leaf]").first
    assert first.get_attribute("data-leaf") == embeds[1]  # params: the larger group first

    # select a sharded weight: the array grid shows its 8 blocks
    w = paths.index("['params']['layers'][0]['w']")
    page.click(f".sw-tree-row[data-leaf='{w}']")
    loop.settle()
    assert view.selected == w
    page.wait_for_function(
        "document.querySelector('.sw-tree-leafhead').innerText.includes(\"['layers'][0]['w']\")"
    )
    assert len(view._layout["blocks"]) == 8
    # the keyboard: ArrowDown selects the next leaf row shown
    rows = page.eval_on_selector_all(
        ".sw-tree-row[data-leaf]", "els => els.map(e => e.dataset.leaf)"
    )
    page.focus(".sw-tree-scroll")
    page.keyboard.press("ArrowDown")
    loop.settle()
    assert view.selected == int(rows[rows.index(str(w)) + 1])
    page.wait_for_selector(f".sw-tree-selected[data-leaf='{view.selected}']")

    # a bad rule: refused, its line marked, nothing changed
    box = page.locator("textarea[data-key='tree-rules']")
    box.fill("embed  P('model')\nlayers.*b  P('data', 'model')")
    loop.settle()
    assert "line 2" in view.error
    page.wait_for_selector(".sw-tree-gutter-bad")
    assert page.inner_text(".sw-tree-gutter-bad") == "2"
    assert view.rules == []
    # fixed: the tree re-lays out, the embedding is no longer flagged, no device over the line
    box.fill("embed  P(('data', 'model'))\nlayers.*b  P('model')")
    loop.settle()
    assert view.error == ""
    assert view.leaf("['params']['embed']").spec == P(("data", "model"))
    page.wait_for_function("document.querySelectorAll('.sw-tree-large').length === 0")
    assert page.locator(".sw-tree-gutter-bad").count() == 0
    assert page.locator(".sw-tree-over").count() == 0
    page.screenshot(path=str(ARTIFACTS / "tree_view_fixed.png"), full_page=True)
    assert page.errors == []


def test_ten_thousand_leaves_scroll_with_few_rows(page: Any, tmp_path: Any, request: Any) -> None:
    tree = {
        "layers": [jax.ShapeDtypeStruct((64, 64), jnp.float32) for _ in range(10_000)],
        "head": jax.ShapeDtypeStruct((128, 64), jnp.float32),
    }
    view = ShardView(tree, rules=[("head", P("x"))])
    request.addfinalizer(view.close)
    open_tree(page, tmp_path, view)
    assert "10,001 of 10,001 leaves" in page.inner_text(".sw-tree-count")
    rows = page.locator(".sw-tree-body .sw-tree-row").count()
    assert rows < 60
    page.eval_on_selector(".sw-tree-scroll", "s => { s.scrollTop = 22 * 5000; }")
    page.wait_for_function(
        "[...document.querySelectorAll('.sw-tree-row[data-leaf]')]"
        ".some(e => e.dataset.leaf === '5000')"
    )
    assert page.locator(".sw-tree-body .sw-tree-row").count() < 60
    # fold the big group: the table is short
    page.eval_on_selector(".sw-tree-scroll", "s => { s.scrollTop = 0; }")
    page.click(""".sw-tree-group[data-group="['layers']"]""")
    assert page.locator(".sw-tree-row[data-leaf]").count() == 1
    assert page.errors == []
