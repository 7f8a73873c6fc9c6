"""Drawing details checked in Chromium (issue 13): arrows, clipping, the heatmap."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .test_render import open_view, screenshot

pytestmark = pytest.mark.e2e

# The reading direction of a vertical label: where its first and last characters are drawn.
_CHAR_TOPS = """el => {
  const t = el.firstChild;
  const r = document.createRange();
  const at = (i) => { r.setStart(t, i); r.setEnd(t, i + 1); return r.getBoundingClientRect(); };
  const n = t.textContent.length;
  return { text: t.textContent, first: at(0).top, last: at(n - 1).top,
           lastW: at(n - 1).width, lastH: at(n - 1).height };
}"""


@pytest.fixture
def arr2d():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jnp.arange(64.0 * 32).reshape(64, 32)
    return jax.device_put(x, NamedSharding(mesh, P("x", "y")))


def test_vertical_axis_labels_read_downward_and_point_down(page, tmp_path, arr2d):
    """Indices grow downward, so the rotated "dim 0 … →" and the mesh's "x=2 →" must run top to
    bottom, ending in an arrow drawn pointing down (rotated a quarter turn clockwise)."""
    open_view(page, tmp_path, ShardView(arr2d))
    assert page.errors == []
    for sel in (".sw-axis-title-row", ".sw-mesh-axis-row"):
        m = page.eval_on_selector(sel, _CHAR_TOPS)
        assert m["text"].endswith("→"), m
        assert m["first"] < m["last"], f"{sel} reads upward: {m}"
    screenshot(page, "vertical_axis_labels")


@pytest.fixture
def tall_blocks():
    """8 blocks of 2048×1024 (taller than wide)."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jnp.sin(jnp.arange(4096.0 * 4096).reshape(4096, 4096) / 37.0)
    return jax.device_put(x, NamedSharding(mesh, P("x", "y")))


def test_heatmap_colour_bar_ring_and_tall_card(page, tmp_path, tall_blocks):
    """The grid has the heatmap's colour bar; a white ring parts heatmap and device colour; the
    card draws a 2048×1024 block tall; pooled means that hide the data say so."""
    open_view(page, tmp_path, ShardView(tall_blocks))
    assert page.errors == []
    legend = page.locator(".sw-array .sw-heat-legend")
    assert legend.is_visible()
    assert "each pixel the mean of" in legend.inner_text()
    ring = page.eval_on_selector(".sw-grid .sw-block.sw-t", "e => getComputedStyle(e).boxShadow")
    assert "inset" in ring and "255, 255, 255" in ring, ring
    page.click('.sw-grid [data-block="0"]')
    box = page.locator(".sw-detail canvas.sw-thumb-big").bounding_box()
    assert box is not None and box["height"] > 1.8 * box["width"], box
    # sin(x/37) pooled over 128-row patches averages to ~0: the card says the mean hides it.
    assert "The means hide the data" in page.locator(".sw-detail").inner_text()
    # The card's keys never wrap ("memory kind", "shard shape" on one line each).
    heights = page.eval_on_selector_all(
        ".sw-detail dt", "els => els.map(e => e.getBoundingClientRect().height)"
    )
    assert heights and max(heights) < 1.6 * min(heights), heights
    screenshot(page, "heatmap_tall_card")


def test_axis_titles_are_never_cut(page, tmp_path):
    """A 3-D view's short grid: the rotated title shortens ("dim 1 · x") instead of being cut
    mid-word ("sharded ove"); the full title stays in its tooltip."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jnp.arange(4.0 * 8 * 256).reshape(4, 8, 256)
    arr = jax.device_put(x, NamedSharding(mesh, P(None, "x", "y")))
    open_view(page, tmp_path, ShardView(arr, view_dims=(1, 2)))
    assert page.errors == []
    titles = page.eval_on_selector_all(
        ".sw-axis-title",
        """els => els.map(e => ({text: e.textContent, title: e.title, cls: e.className,
            sh: e.scrollHeight, ch: e.clientHeight, sw: e.scrollWidth, cw: e.clientWidth}))""",
    )
    assert len(titles) == 2, titles
    for t in titles:
        assert t["sh"] <= t["ch"] + 1 and t["sw"] <= t["cw"] + 1, f"cut: {t}"
        assert t["title"].startswith("dim "), t
    row = next(t for t in titles if "row" in t["cls"])
    assert row["title"] == "dim 1 (8) · sharded over x"
    assert row["text"].endswith("→") and "sharded ove" not in row["text"].replace(
        "sharded over x", ""
    )
    screenshot(page, "axis_titles_3d")


_POSITIONS = """() => [...document.querySelectorAll('.sw-controls select, .sw-controls input')]
  .map(e => { const r = e.getBoundingClientRect(); return [e.dataset.key, r.top, r.left]; })"""


def test_controls_hold_still_when_messages_appear(page, tmp_path, arr2d):
    """A field's message and the kernel's error banner appear without moving any control."""
    view = ShardView(arr2d)
    open_view(page, tmp_path, view)
    before = page.evaluate(_POSITIONS)
    page.fill('[data-key="name-0"]', "1x")
    page.press('[data-key="name-0"]', "Enter")
    assert "not starting with a digit" in page.inner_text(".sw-controls .sw-field-msg")
    assert page.evaluate(_POSITIONS) == before
    # The kernel refuses a layout: the banner shows below the controls, which stay put.
    page.evaluate(
        "() => window.__push({error: 'dimension 0 has size 64, which q does not divide'})"
    )
    banner = page.locator(".sw-error")
    assert banner.is_visible()
    assert page.evaluate(_POSITIONS) == before
    controls_bottom = page.eval_on_selector(".sw-controls", "e => e.getBoundingClientRect().bottom")
    assert banner.bounding_box()["y"] >= controls_bottom
    screenshot(page, "controls_with_messages")


def test_pinned_card_stays_next_to_its_block(page, tmp_path):
    """A tall mesh pane (8×1) puts the card's place in the side column far below the top
    blocks: pinning one floats the card beside it; every pinned block has its card near."""
    mesh = jax.make_mesh((8, 1), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jnp.arange(2048.0 * 64).reshape(2048, 64)
    open_view(page, tmp_path, ShardView(jax.device_put(x, NamedSharding(mesh, P("x", None)))))
    assert page.errors == []
    for k in range(8):
        block = page.locator(f'.sw-grid [data-block="{k}"]')
        block.click()
        top = block.bounding_box()["y"]
        card = page.locator(".sw-detail").bounding_box()
        assert card is not None and abs(card["y"] - top) <= 240, (k, top, card)
        if k == 0:
            assert "sw-detail-float" in page.get_attribute(".sw-detail", "class")
            screenshot(page, "card_next_to_block")
        page.keyboard.press("Escape")
