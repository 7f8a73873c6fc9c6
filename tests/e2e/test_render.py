"""The real bundle renders real ShardView state in Chromium, and its controls drive the kernel."""

import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .conftest import ARTIFACTS
from .harness import STATIC, Loop, page_html

pytestmark = pytest.mark.e2e
ROOT = pathlib.Path(__file__).parents[2]


def screenshot(page, name):
    """Keep a picture of the page in test-artifacts/ (looked at by people, not compared)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"render_{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000, "an empty screenshot"
    return path


def render_measures(page):
    return page.evaluate("performance.getEntriesByName('shardwidget:render').map(m => m.duration)")


def open_view(page, tmp_path, view):
    assert STATIC.exists(), "the JS bundle is missing: npm run build"
    f = tmp_path / "view.html"
    f.write_text(page_html(view))
    page.goto(f.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    return Loop(view, page)


def block_labels(page):
    return page.eval_on_selector_all(
        ".sw-grid .sw-block", "els => els.map(e => e.innerText.trim())"
    )


def row_ticks(page):
    return page.eval_on_selector_all(".sw-tick-row", "els => els.map(e => e.innerText.trim())")


def settle(page, loop, n=1):
    """Wait for the renderer to send its (coalesced) request(s), and answer them."""
    handled = 0
    for _ in range(100):
        page.wait_for_timeout(20)
        handled += loop.pump()
        if handled >= n and page.evaluate("window.__sent.length") == 0:
            page.wait_for_timeout(60)
            handled += loop.pump()
            return handled
    raise AssertionError(f"the page sent {handled} requests, expected {n}")


@pytest.fixture
def arr():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jnp.arange(64.0 * 32).reshape(64, 32)
    return jax.device_put(x, NamedSharding(mesh, P("x", "y")))


def test_renders_geometry_and_data_without_errors(page, tmp_path, arr):
    open_view(page, tmp_path, ShardView(arr))
    assert page.errors == []
    assert sorted(block_labels(page)) == [str(i) for i in range(8)]
    assert row_ticks(page) == ["0:32", "32:64"]
    assert page.locator(".sw-mesh .sw-dev").count() == 8
    assert "float32[64@x,32@y]" in page.inner_text(".sw-typeof")
    # every block shows its thumbnail: its part of one atlas image, which has loaded
    assert page.locator(".sw-block.sw-has-thumb").count() == 8
    assert page.eval_on_selector(
        ".sw-block.sw-has-thumb", "e => getComputedStyle(e).backgroundImage"
    ).startswith('url("blob:')
    page.wait_for_function(
        """() => new Promise((ok) => {
          const u = getComputedStyle(document.querySelector('.sw-grid'))
            .getPropertyValue('--sw-atlas').trim().slice(5, -2);
          const img = new Image(); img.onload = () => ok(img.width > 0); img.onerror = () => ok(false);
          img.src = u;
        })"""
    )
    assert render_measures(page), "every render is marked with performance.measure"
    screenshot(page, "8")


def test_controls_relayout_on_the_kernel(page, tmp_path, arr):
    view = ShardView(arr)
    loop = open_view(page, tmp_path, view)
    page.select_option("[data-key=spec-1]", "")  # dim 1 replicated
    settle(page, loop)
    assert view.spec == ["x", None]
    assert view.array.sharding.spec == P("x", None)
    assert sorted(block_labels(page), key=len)[0].startswith("0")
    assert page.locator(".sw-grid .sw-block").count() == 2
    page.select_option("[data-key=spec-0]", "x+y")  # dim 0 over both axes: 8 row blocks
    settle(page, loop)
    assert view.array.sharding.spec == P(("x", "y"), None)
    assert len(row_ticks(page)) == 8
    page.select_option("[data-key=shape]", "4,2")
    settle(page, loop)
    assert view.mesh_shape == [4, 2]
    assert dict(view.array.sharding.mesh.shape) == {"x": 4, "y": 2}
    assert "mesh" in page.inner_text(".sw-mesh").lower()
    assert page.errors == []
    # what the page shows is what the kernel holds
    blocks = view.layout.blocks
    assert page.locator(".sw-grid .sw-block").count() == len(blocks)
    np.testing.assert_array_equal(np.asarray(view.array), np.asarray(arr))


def test_invalid_choices_are_explained_and_keep_the_view(page, tmp_path, arr):
    view = ShardView(arr)
    loop = open_view(page, tmp_path, view)
    before = block_labels(page)
    # The controls explain a bad name before sending anything.
    page.fill("[data-key=name-1]", "x")
    page.press("[data-key=name-1]", "Enter")
    assert page.get_attribute("[data-key=name-1]", "aria-invalid") == "true"
    assert '"x" is already used' in (page.get_attribute("[data-key=name-1]", "title") or "")
    shown = page.inner_text(".sw-axis-row .sw-field-msg >> nth=1")
    assert shown == page.get_attribute("[data-key=name-1]", "title")  # in words, not only a tooltip
    assert page.evaluate("window.__sent.length") == 0
    # A request the kernel refuses (as a stale or hand-made one would be): message, same view.
    bad = {
        "mesh_shape": [2, 4],
        "axis_names": ["x", "y"],
        "axis_types": ["auto", "auto"],
        "spec": ["y", "y"],
        "memory_kind": "device",
    }
    page.evaluate("(s) => window.__sent.push({type: 'request', seq: 99, state: s})", bad)
    loop.pump()
    assert "'y' is used by dimensions 0 and 1" in view.error
    page.wait_for_selector(".sw-error:not([hidden])")
    assert "used by dimensions 0 and 1" in page.inner_text(".sw-error")
    assert block_labels(page) == before
    assert view.array is arr
    assert page.errors == []


def test_3d_slider_and_single_device(page, tmp_path):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    cube = jax.device_put(
        jnp.arange(4.0 * 8 * 8).reshape(4, 8, 8), NamedSharding(mesh, P("x", None, "y"))
    )
    open_view(page, tmp_path, ShardView(cube, view_dims=[1, 2]))  # d0 (sharded) as a slider
    assert page.errors == []
    assert sorted(block_labels(page)) == ["0", "1", "2", "3"]  # d0 in [0:2): mesh row x=0
    assert page.locator("[data-key=slice-0]").count() == 1
    screenshot(page, "3d")
    page.fill("[data-key=slice-0]", "3")  # range input: set the value and fire input
    page.dispatch_event("[data-key=slice-0]", "input")
    page.wait_for_function(
        "[...document.querySelectorAll('.sw-grid .sw-block')].map(e => e.innerText.trim())"
        ".sort().join() === '4,5,6,7'"
    )
    page.goto("about:blank")
    open_view(page, tmp_path, ShardView(jnp.arange(12.0).reshape(3, 4)))
    assert block_labels(page) == ["0"]
    assert page.errors == []


MANY = textwrap.dedent("""
    import sys, jax, numpy as np
    jax.config.update("jax_num_cpu_devices", {n})
    from jax.sharding import NamedSharding, PartitionSpec as P
    sys.path.insert(0, {e2e!r})
    from shardwidget import ShardView
    from harness import page_html
    mesh = jax.make_mesh({mesh}, ("x", "y"))
    x = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    a = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
    open({out!r}, "w").write(page_html(ShardView(a)))
""")


def open_many(page, tmp_path, n, mesh):
    out = tmp_path / "many.html"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run(
        [
            sys.executable,
            "-c",
            MANY.format(n=n, mesh=mesh, out=str(out), e2e=str(pathlib.Path(__file__).parent)),
        ],
        check=True,
        env=env,
        timeout=300,
    )
    page.goto(out.as_uri())
    page.wait_for_function("window.__ready === true", timeout=30000)


# The keyboard cursor on the canvas: the pixels of the ring drawn around block (r, c), in the
# theme's accent colour (--sw-accent; #1976d2 outside JupyterLab).
_RING = """([r, c]) => {
  const cv = document.querySelector('.sw-grid canvas.sw-canvas');
  const ctx = cv.getContext('2d');
  const d = ctx.getImageData(0, 0, cv.width, cv.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4)
    if (d[i] === 0x19 && d[i + 1] === 0x76 && d[i + 2] === 0xd2) n++;
  return n;
}"""


@pytest.mark.slow
def test_256_devices_dom_grid(page, tmp_path):
    open_many(page, tmp_path, 256, (16, 16))
    assert page.errors == []
    assert render_measures(page)
    # one element per block, each labelled with its whole device id
    assert sorted(block_labels(page), key=int) == [str(i) for i in range(256)]
    assert page.locator(".sw-grid .sw-block.sw-has-thumb").count() == 256
    assert row_ticks(page)[:2] == ["0:128", "128:256"]
    assert page.locator(".sw-mesh").count() == 1
    screenshot(page, "256")
    # keyboard: one tab stop; the cursor walks the blocks and pins one
    assert page.locator(".sw-grid .sw-block[tabindex]").count() == 0
    page.focus(".sw-grid")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("End")
    assert page.inner_text(".sw-grid .sw-block.sw-cursor") == "31"
    outline = page.eval_on_selector(
        ".sw-grid .sw-block.sw-cursor", "e => getComputedStyle(e).outlineStyle"
    )
    assert outline == "solid"
    page.keyboard.press("Enter")
    assert page.is_visible(".sw-detail")
    assert "[128:256) × [1920:2048)" in page.inner_text(".sw-detail")
    page.keyboard.press("Escape")
    assert not page.is_visible(".sw-detail")
    assert page.errors == []


@pytest.mark.slow
def test_1024_devices_canvas_labels(page, tmp_path):
    open_many(page, tmp_path, 1024, (32, 32))
    assert page.errors == []
    assert page.locator(".sw-grid canvas.sw-canvas").count() == 1
    # block (0, 0) holds device 0 on a thumbnail: its label is drawn on a light chip in #111
    ink = page.evaluate(
        """() => {
          const cv = document.querySelector('.sw-grid canvas.sw-canvas');
          const k = cv.width / cv.getBoundingClientRect().width;
          const d = cv.getContext('2d').getImageData(0, 0, Math.round(14 * k), Math.round(14 * k)).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i] === 17 && d[i + 1] === 17 && d[i + 2] === 17) n++;
          return n;
        }"""
    )
    assert ink >= 8, "no label pixels in block 0"
    screenshot(page, "1024")


@pytest.mark.slow
def test_4096_devices_canvas_and_keyboard(page, tmp_path):
    open_many(page, tmp_path, 4096, (64, 64))
    assert page.errors == []
    measures = render_measures(page)
    assert measures, "the renderer marks every render with performance.measure"
    assert page.locator(".sw-grid canvas.sw-canvas").count() == 1
    assert page.locator(".sw-grid .sw-block").count() == 0
    assert page.locator(".sw-mesh").count() == 1
    # XLA's CPU backend runs no computation on 4096 simulated devices; statistics come anyway
    assert "statistics failed" not in page.inner_text("body")
    screenshot(page, "4096")
    assert page.evaluate(_RING, [0, 1]) == 0  # no cursor before the grid has keyboard focus
    page.keyboard.press("Tab")
    for _ in range(40):  # tab through the header and controls to the grid
        if page.evaluate("document.activeElement?.classList.contains('sw-grid')"):
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('sw-grid')")
    page.keyboard.press("ArrowRight")
    live = page.inner_text(".sw-array [aria-live]")
    assert live.startswith("row 1 of 64, column 2 of 64: dim 0 [0:32), dim 1 [32:64); device 1")
    assert page.evaluate(_RING, [0, 1]) > 20  # a visible ring in the accent colour
    screenshot(page, "4096_keyboard")
    page.keyboard.press("Enter")
    assert "[0:32) × [32:64)" in page.inner_text(".sw-detail")
    page.keyboard.press("Escape")
    assert not page.is_visible(".sw-detail")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(_RING, [0, 1]) == 0  # the ring goes with the focus
    assert page.errors == []
