"""A planned tree view in Chromium: ShardView(shapes, mesh=AbstractMesh((32, 8))) on a kernel of
8 devices draws its "planned" badge with the hardware preset, all 256 positions in the memory
chart and in the selected leaf's grid, and re-lays out from the rules editor."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from ..helpers import collect
from .conftest import ARTIFACTS
from .test_tree import open_tree

pytestmark = pytest.mark.e2e


def test_planned_tree_of_256_positions_draws_with_its_badge(
    page: Any, tmp_path: Any, request: Any
) -> None:
    f32 = jnp.float32
    shapes = {
        "embed": jax.ShapeDtypeStruct((32_000, 4096), f32),
        "layers": [
            {
                "w": jax.ShapeDtypeStruct((4096, 16_384), f32),
                "b": jax.ShapeDtypeStruct((16_384,), f32),
            }
            for _ in range(2)
        ],
    }
    collect()  # (garbage an earlier test left is not counted, nor seen to vanish)
    before = len(jax.live_arrays())
    pod = AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    view = ShardView(
        shapes, mesh=pod, rules=[("w", P("data", "model"))], hardware="tpu-v5e", selected=1
    )
    request.addfinalizer(view.close)
    loop = open_tree(page, tmp_path, view)
    badge = page.inner_text(".sw-planned-badge")
    assert "planned on AbstractMesh (32, 8) · no devices" in badge
    assert "estimates for tpu-v5e" in badge
    assert "data=32 × model=8" in page.inner_text(".sw-header")
    assert page.locator(".sw-tree-mem-plot g[data-device]").count() == 256
    # the replicated 500 MiB embedding is over the 16 GB HBM on no device, flagged as large
    assert page.locator(".sw-tree-large").count() == 1
    page.wait_for_selector(".sw-tree-leafgrid .sw-mesh")
    assert page.locator(".sw-tree-leafgrid .sw-mesh .sw-dev[data-device]").count() == 256
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "plan_view_256.png"), full_page=True)

    box = page.locator("textarea[data-key='tree-rules']")
    box.fill("w  P('data', 'model')\nembed  P(None, ('data', 'model'))")
    loop.settle()
    assert view.error == ""
    assert view.leaf("['embed']").spec == P(None, ("data", "model"))
    page.wait_for_function("document.querySelectorAll('.sw-tree-large').length === 0")
    # the mesh-shape select offers every 2-axis factorization of 256, not of the kernel's 8
    values = page.eval_on_selector_all(
        "select[data-key='tree-mesh-shape'] option", "os => os.map(o => o.value)"
    )
    assert len(values) == 9 and "16,16" in values
    page.select_option("select[data-key='tree-mesh-shape']", "16,16")
    loop.settle()
    assert tuple(view.mesh.axis_sizes) == (16, 16) and view.error == ""
    page.wait_for_function("document.querySelector('.sw-header').innerText.includes('data=16')")
    assert page.locator(".sw-tree-mem-plot g[data-device]").count() == 256
    collect()
    assert len(jax.live_arrays()) == before
    assert page.errors == []


def test_planned_function_view_of_256_positions_draws_with_its_badge(
    page: Any, tmp_path: Any, request: Any
) -> None:
    from .test_function_view import kinds, open_fn

    def step(w: Any, x: Any) -> Any:
        return (x @ w).sum(0)

    w = jax.ShapeDtypeStruct((512, 256), jnp.float32)
    x = jax.ShapeDtypeStruct((64, 512), jnp.float32)
    pod = AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    collect()  # (garbage an earlier test left is not counted, nor seen to vanish)
    before = len(jax.live_arrays())
    view = ShardView(step, w, x, mesh=pod, in_specs=[P("model", None), P("data", "model")])
    request.addfinalizer(view.close)
    view.hardware = "tpu-v5p"
    assert view.error == ""
    open_fn(page, tmp_path, view)
    badge = page.inner_text(".sw-planned-badge")
    assert "planned on AbstractMesh (32, 8) · no devices" in badge
    assert "estimates for tpu-v5p" in badge
    assert "256 devices (planned)" in page.inner_text(".shardwidget")
    assert kinds(page) == [c.kind for c in view.trace.collectives] != []
    page.wait_for_selector(".sw-tr-leaf .sw-mesh")
    cells = page.eval_on_selector_all(
        ".sw-tr-leaf", "els => els.map(e => e.querySelectorAll('.sw-mesh .sw-dev').length)"
    )
    assert cells and all(n == 256 for n in cells)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "plan_function_view_256.png"), full_page=True)
    collect()
    assert len(jax.live_arrays()) == before
    assert page.errors == []


@pytest.mark.parametrize("sizes", [(64, 64), (96, 96)])
def test_planned_tree_draws_thousands_of_positions(
    page: Any, tmp_path: Any, request: Any, sizes: tuple[int, int]
) -> None:
    n = sizes[0] * sizes[1]
    shapes = {"w": jax.ShapeDtypeStruct((sizes[0] * 16, sizes[1] * 8), jnp.float32)}
    view = ShardView(
        shapes,
        mesh=AbstractMesh(sizes, ("data", "model"), axis_types=(AxisType.Auto,) * 2),
        spec=P("data", "model"),
    )
    request.addfinalizer(view.close)
    open_tree(page, tmp_path, view)
    assert f"AbstractMesh ({sizes[0]}, {sizes[1]})" in page.inner_text(".sw-planned-badge")
    # Thousands of positions: the chart draws bins of consecutive positions (every one counted).
    assert page.locator(".sw-tree-mem-plot g[data-devices]").count() == 256
    assert f"{n} devices in 256 bins" in page.get_attribute(".sw-tree-mem-plot svg", "aria-label")
    page.wait_for_selector(".sw-tree-leafgrid .sw-mesh")
    mesh = page.inner_text(".sw-tree-leafgrid .sw-mesh")
    assert f"Mesh data={sizes[0]} × model={sizes[1]}" in mesh
    assert f"–{n - 1}" in mesh  # the colour key reaches the last position
    assert page.locator(".sw-tree-leafgrid canvas.sw-canvas").count() >= 1
    page.screenshot(path=str(ARTIFACTS / f"plan_view_{n}.png"), full_page=False)
    assert page.errors == []
