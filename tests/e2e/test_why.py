"""The function view's "why" column in Chromium: a row's "why?" asks the view in this process,
the panel says why (and lights the input cards involved), finds the layouts that remove the
collective, and applying one changes the layout (undo restores)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, _jax

from .conftest import ARTIFACTS
from .harness import Loop
from .test_function_view import open_fn

pytestmark = pytest.mark.e2e


def pump(loop: Loop, page: Any) -> None:
    for _ in range(200):
        page.wait_for_timeout(20)
        if loop.pump():
            page.wait_for_timeout(60)
            loop.pump()
            return
    raise AssertionError("the page sent nothing")


def test_why_panel_explains_and_applies_a_fix(page: Any, tmp_path: Any) -> None:
    if _jax.shardy_missing():
        pytest.skip(_jax.shardy_missing())
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(np.ones((16, 32), np.float32), NamedSharding(mesh, P("x", None)))
    w = jax.device_put(np.ones((32, 64), np.float32), NamedSharding(mesh, P(None, "x")))

    def f(x: Any, w: Any) -> Any:
        return x @ w

    view = ShardView(f, x, w)
    open_fn(page, tmp_path, view)
    loop = Loop(view, page)
    n = len(view.trace.collectives)
    assert page.locator("button.sw-tr-why").count() == n > 0
    i = next(k for k, c in enumerate(view.trace.collectives) if c.cause.known)
    page.locator("button.sw-tr-why").nth(i).click()
    pump(loop, page)
    text = page.inner_text(".sw-why")
    assert view.trace.collectives[i].cause.text in text
    lit = page.eval_on_selector_all(
        ".sw-why-lit", "es => es.map(e => e.dataset.side + e.dataset.index)"
    )
    assert sorted(lit) == sorted(f"in{p.index}" for p in view.trace.collectives[i].cause.inputs)
    page.locator("button.sw-why-find").click()
    pump(loop, page)
    assert page.locator(".sw-why-fix").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "function_view_why.png"), full_page=True)
    section = page.locator(".sw-tr-section", has=page.locator(".sw-why"))
    section.screenshot(path=str(ARTIFACTS / "function_view_why_panel.png"))
    before = view.trace.state
    page.locator("button.sw-why-apply").first.click()
    pump(loop, page)
    assert view.trace.state != before and view.history[-2] == before
