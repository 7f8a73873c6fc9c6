"""The tree view's memory chart and legend in Chromium: every device of the mesh drawn (one full
bar and seven empty ones when everything sits on device 0), and 2,500 top-level groups (a flat
params dict) bounded to the largest groups and "others", the leaf grid still near the top."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest

from shardwidget import ShardView

from .conftest import ARTIFACTS
from .test_tree import open_tree

pytestmark = pytest.mark.e2e

BARS = ".sw-tree-mem-plot g[data-device], .sw-tree-mem-plot g[data-unsent]"


def test_everything_on_device_0_one_full_bar_seven_empty(
    page: Any, tmp_path: Any, request: Any
) -> None:
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    view = ShardView({"w": jnp.ones((256, 64)), "b": jnp.zeros(64)}, mesh=mesh)
    request.addfinalizer(view.close)
    open_tree(page, tmp_path, view)
    bars = page.locator(BARS)
    assert bars.count() == 8
    filled = page.eval_on_selector_all(BARS, "gs => gs.map(g => g.querySelectorAll('rect').length)")
    assert sorted(filled) == [1] * 7 + [3]  # the slot alone, or the slot and both groups
    assert "7 devices of 8 hold nothing" in page.inner_text(".sw-tree-mem-note")
    assert page.errors == []


def test_2500_groups_bounded_legend_and_bars(page: Any, tmp_path: Any, request: Any) -> None:
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    tree = {f"layer{i:04d}": {"w": jnp.zeros((8, 4)), "b": jnp.zeros(4)} for i in range(2500)}
    view = ShardView(tree, mesh=mesh)
    request.addfinalizer(view.close)
    open_tree(page, tmp_path, view)
    keys = page.locator(".sw-tree-mem-key")
    assert keys.count() == 8
    assert "2,493 other groups" in keys.last.inner_text()
    per_bar = page.eval_on_selector_all(
        BARS, "gs => gs.map(g => g.querySelectorAll('rect').length)"
    )
    assert per_bar and max(per_bar) <= 9  # the slot and at most 8 segments
    top = page.evaluate(
        "() => document.querySelector('.sw-tree-leafhead').getBoundingClientRect().top"
    )
    assert top < 1000, top  # the grid is not buried under the legend (it was ~25,000 px down)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "tree_2500_groups.png"))
    assert page.errors == []
