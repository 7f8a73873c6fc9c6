"""ShardView(f, *args) in Chromium: the real bundle draws a real FunctionView's state, its spec
controls re-compile the function in this process, and a saved page works offline."""

from __future__ import annotations

import pathlib
from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .conftest import ARTIFACTS
from .harness import STATIC, Loop, page_html

pytestmark = pytest.mark.e2e


class FnLoop(Loop):
    """Plays the kernel for a function-view page, as harness.Loop does for array views."""

    def settle(self) -> None:
        for _ in range(100):
            self.page.wait_for_timeout(20)
            if self.pump():
                self.page.wait_for_timeout(80)
                self.pump()
                return
        raise AssertionError("the page sent no trace_request")


@pytest.fixture
def x() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    return jax.device_put(a, NamedSharding(mesh, P("x", "y")))


def open_fn(page: Any, tmp_path: Any, view: Any) -> None:
    assert STATIC.exists(), "the JS bundle is missing: npm run build"
    f = tmp_path / "fn.html"
    f.write_text(page_html(view))
    page.goto(f.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    page.wait_for_timeout(100)


def kinds(page: Any) -> list[str]:
    return page.eval_on_selector_all("tr[data-kind]", "els => els.map(e => e.dataset.kind)")


def test_function_view_renders_and_recompiles(page: Any, tmp_path: Any, x: Any) -> None:
    def f_contract(a: Any) -> Any:
        return a.sum(axis=0)

    view = ShardView(f_contract, x)
    open_fn(page, tmp_path, view)
    loop = FnLoop(view, page)
    text = page.inner_text(".shardwidget")
    assert "f_contract" in text
    assert kinds(page) == ["all-reduce"]
    row = page.inner_text("tr[data-kind='all-reduce']")
    assert "x" in row
    # one grid per input and output card, the output with per-shard data
    assert page.locator(".sw-tr-leaf").count() == 2
    assert page.locator(".sw-tr-leaf[data-side='out'] .sw-block").count() == 4
    # inputs and outputs both draw each device's data (heatmap thumbnails)
    assert page.locator(".sw-tr-leaf[data-side='in'] .sw-block.sw-has-thumb").count() == 8
    assert page.locator(".sw-tr-leaf[data-side='out'] .sw-block.sw-has-thumb").count() == 4
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "function_view_sum.png"), full_page=True)

    # Move x off the summed dimension with the real control: the all-reduce disappears.
    page.select_option("select[data-key='in-0-dim-0']", "")
    loop.settle()
    assert view.in_specs == [[None, "y"]]
    assert view.trace is not None and view.trace.collectives == []
    page.wait_for_function("document.querySelectorAll('tr[data-kind]').length === 0")
    assert "No collectives" in page.inner_text(".shardwidget")
    assert page.errors == []


def test_function_view_error_keeps_last_good_view(page: Any, tmp_path: Any) -> None:
    me = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(me, P("x", None)))
    b = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(me, P(None, None)))
    view = ShardView(lambda p, q: p @ q, a, b)
    assert view.error == ""
    open_fn(page, tmp_path, view)
    loop = FnLoop(view, page)
    # Shard the contracting dimension of both: Explicit axes refuse it.
    page.select_option("select[data-key='in-0-dim-1']", "y")
    loop.settle()
    page.select_option("select[data-key='in-1-dim-0']", "y")
    loop.settle()
    page.wait_for_function(
        "document.querySelector('.shardwidget').innerText.includes('out_sharding')"
    )
    assert "ShardingTypeError" in view.error
    assert page.locator(".sw-tr-leaf").count() == 3  # the last good cards stay
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "function_view_error.png"), full_page=True)
    assert page.errors == []


def test_saved_function_page_works_offline(page: Any, tmp_path: Any, x: Any) -> None:
    view = ShardView(lambda a: jax.lax.psum(a, "y"), x, mode="shard_map",
                     in_specs=[P("x", "y")], out_specs=[P("x", "y")])  # fmt: skip
    report = view.save_html(tmp_path / "saved.html")
    path = pathlib.Path(report.path)
    assert report.variants == 1 and report.bytes == path.stat().st_size
    requests: list[str] = []
    page.on(
        "request",
        lambda r: (
            requests.append(r.url) if not r.url.startswith(("file:", "blob:", "data:")) else None
        ),
    )
    page.goto(path.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    text = page.inner_text(".shardwidget")
    assert "device local shape" in text.lower() or "(32, 8)" in text
    assert kinds(page) == ["all-reduce"]
    sel = page.locator("select[data-key='in-0-dim-0']")
    assert sel.is_disabled()
    assert requests == [] and page.errors == []


def test_pmap_view_and_its_jaxpr_panel(page: Any, tmp_path: Any) -> None:
    """A pmap'd function in Chromium: mode pmap, leaves in words, controls off with the reason,
    and the jaxpr panel (collapsed, then opened) showing view.trace.jaxpr."""
    f = jax.pmap(lambda r: r / jax.lax.psum(r, "p"), axis_name="p")
    view = ShardView(f, np.arange(1, 33, dtype=np.float32).reshape(8, 4))
    assert view.error == "" and view.trace is not None
    open_fn(page, tmp_path, view)
    assert page.inner_text(".sw-tr-mode") == "pmap"
    notes = page.eval_on_selector_all(".sw-tr-note", "els => els.map(e => e.textContent)")
    assert notes == view.trace.notes["in"] + view.trace.notes["out"]
    assert kinds(page) == [c.kind for c in view.trace.collectives] == ["all-reduce"]
    assert page.eval_on_selector_all("fieldset", "es => es.map(e => e.disabled)") == [True]
    selects = page.eval_on_selector_all(".sw-tr-leaf select", "es => es.map(e => e.disabled)")
    assert selects and all(selects)
    assert "pmap fixes this layout" in page.inner_text(".sw-disabled-note")
    panel = page.locator("details.sw-tr-jaxpr")
    assert panel.evaluate("e => e.open") is False
    assert not page.locator(".sw-tr-jaxpr-text").is_visible()
    page.click("details.sw-tr-jaxpr > summary")
    assert page.locator(".sw-tr-jaxpr-text").is_visible()
    assert page.inner_text(".sw-tr-jaxpr-text") == view.trace.jaxpr
    panel.screenshot(path=str(ARTIFACTS / "pmap_jaxpr_panel.png"))
