"""The arrays JAX's own tests make, drawn by the real bundle in Chromium: a sub-mesh re-laid out
from the devices control (its own devices, then all), an unreduced array's partials, an empty
array, a GSPMD layout, a pmap output."""

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .test_render import open_view, screenshot, settle

pytestmark = pytest.mark.e2e


def _select(page, key, value):
    page.select_option(f'select[data-key="{key}"]', value)


def test_sub_mesh_devices_control_relays_out_onto_own_then_all(page, tmp_path):
    mesh = jax.make_mesh(
        (2,), ("x",), devices=jax.devices()[2:4], axis_types=(AxisType.Explicit,) * 1
    )
    host = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    view = ShardView(jax.device_put(host, NamedSharding(mesh, P("x"))))
    loop = open_view(page, tmp_path, view)
    labels = page.eval_on_selector_all(
        'select[data-key="devices"] option', "o => o.map(e => e.textContent)"
    )
    assert labels == ["the array's 2 devices (2,3)", "all 8 devices"]
    assert "re-lay out onto" in page.inner_text("legend >> nth=0").lower()
    _select(page, "spec-0", "")  # within its own mesh: x moves from dimension 0 to 1
    settle(page, loop)
    _select(page, "spec-1", "x")
    settle(page, loop)
    assert view.error == "" and view.spec == [None, "x"]
    assert {d.id for d in view.layout.devices} == {2, 3}
    _select(page, "devices", "all")
    settle(page, loop)
    assert view.devices == "all" and view.layout.n_devices == 8 and view.error == ""
    page.wait_for_function("document.querySelectorAll('.sw-mesh .sw-dev').length === 8")
    np.testing.assert_array_equal(np.asarray(view.array), host)
    screenshot(page, "sub_mesh_all")
    assert not page.errors


def test_partials_empty_gspmd_and_pmap_are_drawn(page, tmp_path):
    from jax._src.sharding_impls import GSPMDSharding

    em = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(np.arange(64.0).reshape(8, 8), NamedSharding(em, P("x", "y")))
    with jax.set_mesh(em):
        y = jax.lax.reduce_sum(x, [0], out_sharding=P("y", unreduced={"x"}))
    loop = open_view(page, tmp_path, ShardView(y))
    assert "each device holds a partial value" in page.inner_text(".sw-summary")
    page.click(".sw-grid .sw-block[data-block='0']")
    rows = page.eval_on_selector_all(".sw-partials tbody tr", "r => r.map(e => e.dataset.device)")
    assert rows == ["0", "4"]
    screenshot(page, "unreduced")
    del loop

    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    open_view(
        page,
        tmp_path,
        ShardView(jax.device_put(np.zeros((0, 8), np.float32), NamedSharding(mesh, P(None, "x")))),
    )
    assert "empty array" in page.inner_text(".sw-summary")
    assert page.eval_on_selector_all(".sw-grid .sw-block", "b => b.length") == 8

    m2 = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    hs = NamedSharding(m2, P("y", None))._to_xla_hlo_sharding(2)
    g = jax.device_put(np.arange(32.0).reshape(8, 4), GSPMDSharding(tuple(m2.devices.flat), hs))
    open_view(page, tmp_path, ShardView(g))
    assert "(its tile assignment)" in page.inner_text(".sw-summary")
    assert page.input_value('select[data-key="devices"]') == "array"

    p = jax.pmap(lambda v: 2 * v)(np.arange(16.0).reshape(8, 2))
    open_view(page, tmp_path, ShardView(p))
    text = page.inner_text("body")
    assert "_internal_pmap_axis_name" not in text and "8@pmap" in text
    assert not page.errors


def test_saved_page_answers_the_devices_choice(page, tmp_path):
    mesh = jax.make_mesh(
        (2,), ("x",), devices=jax.devices()[2:4], axis_types=(AxisType.Explicit,) * 1
    )
    view = ShardView(
        jax.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), NamedSharding(mesh, P("x")))
    )
    path = tmp_path / "sub.html"
    view.save_html(path, variants=[{"devices": "all"}])
    page.goto(path.as_uri())
    page.wait_for_selector(".sw-grid .sw-block")
    assert page.eval_on_selector_all(".sw-mesh .sw-dev", "d => d.length") == 2
    _select(page, "devices", "all")
    page.wait_for_function("document.querySelectorAll('.sw-mesh .sw-dev').length === 8")
    assert page.input_value('select[data-key="devices"]') == "all"
    assert not page.errors
