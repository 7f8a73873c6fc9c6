"""Drawing details checked in Chromium (issue 13): arrows, clipping, the heatmap."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
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
    mesh = jax.make_mesh((2, 4), ("x", "y"))
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
