"""A function of a model's parameters in Chromium: a table of its input and output leaves and
ONE card (controls, grid, mesh) for the leaf picked in it; a spec chosen on that card re-compiles
and the table follows. The page stays short (the cards were a grid and a mesh per leaf)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .conftest import ARTIFACTS
from .test_function_view import FnLoop, open_fn

pytestmark = pytest.mark.e2e


def step(params: Any, x: Any) -> Any:
    def loss(p: Any) -> Any:
        return jnp.tanh(jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]).sum()

    value, grads = jax.value_and_grad(loss)(params)
    return value, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def test_leaf_table_one_card_and_a_spec_change(page: Any, tmp_path: Any) -> None:
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    put = lambda a, *s: jax.device_put(a, NamedSharding(mesh, P(*s)))  # noqa: E731
    params = {
        "w1": put(jnp.ones((32, 64)), "data", "model"),
        "b1": put(jnp.zeros(64), "model"),
        "w2": put(jnp.ones((64, 16)), "model", "data"),
        "b2": put(jnp.zeros(16)),
    }
    x = put(jnp.ones((8, 32)), "data")
    view = ShardView(step, params, x)
    assert view.error == ""
    open_fn(page, tmp_path, view)
    loop = FnLoop(view, page)
    n_in, n_out = len(view.trace.input_leaves), len(view.trace.output_leaves)
    assert page.locator(".sw-tr-leafrow").count() == n_in + n_out == 10
    assert page.locator(".sw-tr-leaf").count() == 1
    assert page.locator(".sw-tr-leaf .sw-mesh").count() == 1
    row = page.locator(".sw-tr-leafrow[data-side='in']").filter(has_text="['w1']")
    assert "P('data', 'model')" in row.inner_text() and "float32[32,64]" in row.inner_text()
    # Pick an output: its card and grid replace the first one.
    out = page.locator(".sw-tr-leafrow[data-side='out']").nth(2)
    path = out.locator(".sw-tr-leafpath").inner_text()
    out.click()
    expect_path = page.locator(".sw-tr-leaf .sw-tr-path")
    page.wait_for_function(
        "(p) => document.querySelector('.sw-tr-leaf .sw-tr-path')?.textContent === p", arg=path
    )
    assert expect_path.count() == 1
    assert page.locator(".sw-tr-leaf[data-side='out'] .sw-block").count() >= 1
    # Pick input w1 and replicate its dimension 0 on its card: the kernel re-compiles, the
    # table's row says the new spec.
    w1 = [leaf.path for leaf in view.trace.input_leaves].index("params['w1']")
    row.click()
    page.select_option(f"select[data-key='in-{w1}-dim-0']", "")
    loop.settle()
    assert view.in_specs[w1] == [None, "model"]
    page.wait_for_function(
        "() => [...document.querySelectorAll('.sw-tr-leafrow[data-side=\"in\"]')]"
        ".some((r) => r.textContent.includes(\"P(None, 'model')\"))"
    )
    page.set_viewport_size({"width": 1100, "height": 900})
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 3 * 900, height
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "function_table.png"), full_page=True)
    assert page.errors == []


def test_every_leaf_picked_in_the_table_draws_its_data(page: Any, tmp_path: Any) -> None:
    """Issue 38 item 10: a batch of 12 leaves; the 9th on were drawn without data ("statistics
    are sent for the first 8 leaves"). Each leaf picked shows its values' range, as numpy
    computes it from the leaf."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    batch = {
        f"l{i:02d}": jax.device_put(
            jnp.arange(128.0).reshape(8, 16) * (i + 1), NamedSharding(mesh, P("x", "y"))
        )
        for i in range(12)
    }
    view = ShardView(lambda b: {k: v + 1 for k, v in b.items()}, batch)
    open_fn(page, tmp_path, view)
    for side, i in (("in", 10), ("out", 11), ("in", 0)):
        row = page.locator(f".sw-tr-leafrow[data-side='{side}']").nth(i)
        row.click()
        page.wait_for_function(
            "(s) => document.querySelector('.sw-tr-leaf')?.dataset.side === s", arg=side
        )
        card = page.locator(".sw-tr-leaf")
        assert card.locator(".sw-block.sw-has-thumb").count() == 8, (side, i)
        nums = card.locator(".sw-heat-legend .sw-num").all_inner_texts()
        host = np.asarray(batch[f"l{i:02d}"]) + (0 if side == "in" else 1)
        assert [float(t) for t in nums] == [host.min(), host.max()], (side, i, nums)
    assert page.errors == []
