"""Issue 10 (function side) in Chromium: a function of arrays on 2 of the 8 devices, switched to
every device and back with the real mesh-shape control; PRNG keys and unused arguments drawn
with their notes."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .conftest import ARTIFACTS
from .test_function_view import FnLoop, open_fn

pytestmark = pytest.mark.e2e


def metrics(page: Any) -> str:
    return str(page.inner_text(".sw-tr-metrics"))


def test_sub_mesh_to_every_device_and_back(page: Any, tmp_path: Any) -> None:
    devs = [jax.devices()[5], jax.devices()[2]]
    sub = jax.make_mesh((2,), ("x",), devices=devs, axis_types=(AxisType.Auto,))
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(sub, P("x")))

    def f(a: Any, unused: Any) -> Any:
        return jnp.sin(a).sum(0), 3.0

    view = ShardView(f, x, jnp.ones((8, 8)))
    assert view.error == ""
    open_fn(page, tmp_path, view)
    loop = FnLoop(view, page)
    assert "mesh x=2 · 2 of 8 devices" in metrics(page)
    text = page.inner_text(".shardwidget")
    assert "not used by the function: XLA drops it" in text
    assert "a constant: the function returns it" in text
    shape = page.locator("select[data-key='shape']")
    assert shape.evaluate("s => [...s.options].map(o => o.value)") == ["2", "8"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "function_view_sub_mesh.png"), full_page=True)

    page.select_option("select[data-key='shape']", "8")
    loop.settle()
    assert view.error == "" and view.mesh_shape == [8]
    assert view.trace is not None
    assert {d.id for d in view.trace.in_shardings[0].device_set} == set(range(8))
    page.wait_for_function("document.querySelector('.sw-tr-metrics').innerText.includes('x=8')")
    assert "2 of 8" not in metrics(page)

    page.select_option("select[data-key='shape']", "2")
    loop.settle()
    assert view.mesh_shape == [2]
    assert {d.id for d in view.trace.in_shardings[0].device_set} == {5, 2}
    page.wait_for_function(
        "document.querySelector('.sw-tr-metrics').innerText.includes('2 of 8 devices')"
    )
    assert page.errors == []


def test_prng_key_argument_is_drawn_by_layout(page: Any, tmp_path: Any) -> None:
    view = ShardView(lambda k: jax.random.normal(k, (8, 8)), jax.random.key(0))
    assert view.error == ""
    open_fn(page, tmp_path, view)
    card = page.locator(".sw-tr-leaf[data-side='in']").first
    assert "key<fry>" in card.inner_text()
    assert "PRNG keys" in card.inner_text()
    assert page.locator(".sw-tr-leaf[data-side='out'] .sw-block.sw-has-thumb").count() >= 1
    assert page.errors == []
