"""The "copy as code" button in Chromium: what lands on the clipboard is view.code, and the
copied snippet, run, makes the layout the page shows."""

from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .harness import STATIC, Loop, page_html

pytestmark = pytest.mark.e2e


@pytest.fixture
def clip_page(browser: Any) -> Any:
    """A page allowed to read the clipboard (file:// pages are a secure context)."""
    ctx = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    pg = ctx.new_page()
    yield pg
    ctx.close()


def _copy(page: Any) -> str:
    btn = page.locator(".sw-header-right button.sw-copy:visible").first
    page.wait_for_function(  # the label of an earlier copy has gone back
        "document.querySelector('button.sw-copy:not([hidden])').textContent === 'copy as code'"
    )
    btn.click()
    page.wait_for_function(
        "document.querySelector('button.sw-copy:not([hidden])').textContent === 'copied ✓'"
    )
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_the_copied_code_makes_the_layout_shown(clip_page: Any, tmp_path: Any) -> None:
    assert STATIC.exists(), "the JS bundle is missing: npm run build"
    mesh = Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ("x", "y"))
    host = np.arange(64, dtype=np.float32).reshape(8, 8)
    view = ShardView(jax.device_put(host, NamedSharding(mesh, P("y", "x"))))
    f = tmp_path / "view.html"
    f.write_text(page_html(view))
    clip_page.goto(f.as_uri())
    clip_page.wait_for_function("window.__ready === true", timeout=15000)
    loop = Loop(view, clip_page)
    copied = _copy(clip_page)
    assert copied == view.code
    ns: dict[str, Any] = {"x": host}
    exec(copied, ns)
    assert ns["x"].sharding.devices_indices_map((8, 8)) == view.array.sharding.devices_indices_map(
        (8, 8)
    )
    # a change from the page's controls: the button copies the new layout's code
    clip_page.select_option("[data-key=spec-1]", "")
    clip_page.wait_for_function("window.__sent.length > 0")
    assert loop.pump() == 1
    clip_page.wait_for_function(
        "!document.querySelector('button.sw-copy:not([hidden])').title.includes(\"P('y', 'x')\")"
    )
    copied = _copy(clip_page)
    assert copied == view.code and "P('y', None)" in copied
