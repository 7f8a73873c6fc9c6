"""Issue 14 in Chromium: the "save picture" buttons download view.to_svg() as SVG and as a PNG the
page draws from it; the undo/redo buttons step the live view back and forth."""

from __future__ import annotations

import pathlib
import xml.etree.ElementTree as ET
from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.render import png

from .harness import Loop, page_html

pytestmark = pytest.mark.e2e


def _open(page: Any, view: Any, tmp_path: pathlib.Path) -> Loop:
    f = tmp_path / "view.html"
    f.write_text(page_html(view))
    page.goto(f.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    loop = Loop(view, page)
    # a kernel-backed widget has _history (a saved page has not): push it as a kernel would
    page.evaluate("(p) => window.__push(p)", {"_history": view._history})
    return loop


def _pump_until(page: Any, loop: Loop) -> None:
    page.wait_for_function("window.__sent.length > 0")
    assert loop.pump() == 1
    page.evaluate("(p) => window.__push(p)", {"_history": loop.view._history})


@pytest.fixture
def view() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    host = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    return ShardView(jax.device_put(host, NamedSharding(mesh, P("x", "y"))))


def test_save_picture_downloads_svg_and_png(page: Any, view: Any, tmp_path: pathlib.Path) -> None:
    loop = _open(page, view, tmp_path)
    with page.expect_download() as dl:
        page.click("[data-key=save-svg]")
        _pump_until(page, loop)
    d = dl.value
    assert d.suggested_filename == "shardwidget_float32_64x32_P_x_y.svg"
    svg = pathlib.Path(d.path()).read_text()
    assert svg == view.to_svg()
    root = ET.fromstring(svg)
    w, h = int(root.get("width", 0)), int(root.get("height", 0))
    with page.expect_download() as dl:
        page.click("[data-key=save-png]")
        _pump_until(page, loop)
    d = dl.value
    assert d.suggested_filename.endswith(".png")
    data = pathlib.Path(d.path()).read_bytes()
    assert data[:8] == png.PNG_MAGIC and png.png_size(data) == (2 * w, 2 * h)
    assert page.errors == []


def test_undo_redo_buttons_step_the_view(page: Any, view: Any, tmp_path: pathlib.Path) -> None:
    loop = _open(page, view, tmp_path)
    assert page.locator("[data-key=undo]").is_disabled()
    page.select_option("[data-key=spec-1]", "")
    _pump_until(page, loop)
    assert view.spec == ["x", None]
    page.wait_for_function("!document.querySelector('[data-key=undo]').disabled")
    page.click("[data-key=undo]")
    _pump_until(page, loop)
    assert view.spec == ["x", "y"] and view.array.sharding.spec == P("x", "y")
    page.wait_for_function(
        "document.querySelector('.sw-typeof').textContent === 'float32[64@x,32@y]'"
    )
    assert page.locator("[data-key=undo]").is_disabled()
    page.click("[data-key=redo]")
    _pump_until(page, loop)
    assert view.spec == ["x", None]
    page.wait_for_function(
        "document.querySelector('.sw-typeof').textContent === 'float32[64@x,32]'"
    )
    assert page.errors == []


def test_find_by_mesh_coordinate(page: Any, view: Any, tmp_path: pathlib.Path) -> None:
    """x=1 lights the devices JAX puts at x=1 (mesh.devices[1, :]) and their blocks."""
    _open(page, view, tmp_path)
    page.fill(".sw-find input", "x=1")
    mesh = view.array.sharding.mesh
    want = sorted(int(d.id) for d in mesh.devices[1, :])
    page.wait_for_function("document.querySelectorAll('.sw-mesh .sw-dev.sw-found').length === 4")
    lit = page.eval_on_selector_all(
        ".sw-mesh .sw-dev.sw-found", "els => els.map(e => Number(e.dataset.device))"
    )
    assert sorted(lit) == want
    assert page.locator(".sw-find-msg").text_content() == "4 devices · 4 blocks"
    page.fill(".sw-find input", "x=1,y=2")
    page.wait_for_function(
        "document.querySelector('.sw-find-msg').textContent.startsWith('device ')"
    )
    assert page.locator(".sw-find-msg").text_content() == (
        f"device {int(mesh.devices[1, 2].id)} at x=1, y=2 · 1 block"
    )
    assert page.errors == []
