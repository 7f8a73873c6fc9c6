"""The parts of a view drawn together, in Chromium: nothing cut off, nothing said twice."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .test_render import open_view

pytestmark = pytest.mark.e2e


def test_collectives_table_fits_beside_its_mesh(page, tmp_path):
    # The Communication section puts a mesh pane beside the table; a long op name
    # (jit(<lambda>)/shard_map/psum_invariant) wraps in its cell instead of being cut off.
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", None)))
    view = ShardView(
        lambda a: jax.lax.psum(a, "x"),
        x,
        mode="shard_map",
        in_specs=[P("x", None)],
        out_specs=[P("x", None)],
    )
    open_view(page, tmp_path, view)
    cause = page.inner_text(".sw-tr-coll-table .sw-tr-cause")
    assert "shard_map/psum" in cause.replace("\n", "")
    widths = page.eval_on_selector(
        ".sw-tr-collectives .sw-tr-scroll", "e => [e.scrollWidth, e.clientWidth]"
    )
    assert widths[0] <= widths[1], widths
    assert page.errors == []


def test_find_box_shows_its_whole_example(page, tmp_path):
    # The placeholder names ids and a mesh coordinate; with long axis names it is longer than
    # the box's default width, and the box grows to show it whole.
    mesh = jax.make_mesh((2, 4), ("batch", "model"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("batch", "model")))
    open_view(page, tmp_path, ShardView(x))
    fit = page.eval_on_selector(
        ".sw-find input",
        """e => {
          const cs = getComputedStyle(e);
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.font = `${cs.fontSize} ${cs.fontFamily}`;
          const pad = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
          return [e.placeholder, ctx.measureText(e.placeholder).width, e.clientWidth - pad];
        }""",
    )
    assert "batch=1,model=*" in fit[0]
    assert fit[1] <= fit[2], fit
    assert page.errors == []


def test_saved_page_controls_as_wide_as_the_live_ones(page, tmp_path):
    # A saved page marks the choices it did not save ("2 × 4 — not in this page"); the selects
    # keep the live widget's widths instead of growing to those long labels.
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32), NamedSharding(mesh, P("x", "y")))
    view = ShardView(x)
    keys = ["naxes", "shape", "type-0", "type-1", "spec-0", "spec-1", "mem"]
    widths = "(ks) => ks.map(k => document.querySelector(`[data-key='${k}']`).offsetWidth)"
    open_view(page, tmp_path, view)
    live = page.evaluate(widths, keys)
    view.save_html(tmp_path / "saved.html")
    page.goto((tmp_path / "saved.html").as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    assert "not in this page" in page.inner_text("[data-key=shape]")
    saved = page.evaluate(widths, keys)
    for k, a, b in zip(keys, live, saved, strict=True):
        assert b <= a + 8, (k, a, b)
    assert page.errors == []
