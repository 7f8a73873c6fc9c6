"""A view's static picture in a page (nbconvert, a reopened notebook, a snapshot): under the
picture, no second copy of it in text; its words (a function's collectives, a tree's leaves)
still in the page's text, where search, copy and screen readers find them (issue 38 item 9)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

pytestmark = pytest.mark.e2e


@pytest.fixture
def x() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    return jax.device_put(jnp.ones((64, 32)), NamedSharding(mesh, P("x", "y")))


def _shown(page: Any, html: str) -> dict[str, Any]:
    """The picture's page: the snapshot's height, its image's, its text as read (innerText)."""
    page.set_content(f"<html><body>{html}</body></html>")
    page.wait_for_load_state("load")
    return dict(
        page.evaluate(
            """() => {
        const s = document.querySelector('.shardwidget-snapshot');
        const img = s.querySelector('img.shardwidget-picture');
        return {box: s.getBoundingClientRect().height, img: img.getBoundingClientRect().height,
                loaded: img.complete && img.naturalWidth > 0, text: s.innerText};
    }"""
        )
    )


def test_function_picture_is_not_followed_by_its_text(page: Any, x: Any) -> None:
    f = ShardView(lambda a: a.sum(axis=0), x)
    got = _shown(page, f._static_html())
    assert got["loaded"]
    # the page is as tall as the picture: before, ~20 lines of text followed it (~40 for a step)
    assert got["box"] <= got["img"] + 8, got
    assert "all-reduce over x" in got["text"]  # what a reader searches for, and hears
    assert "inputs:" not in got["text"] and "memory per device" not in got["text"]
    assert not page.errors


def test_tree_picture_is_not_followed_by_its_table(page: Any, x: Any) -> None:
    t = ShardView({"x": x, "b": jnp.ones((8,))})
    got = _shown(page, t._static_html())
    assert got["loaded"] and got["box"] <= got["img"] + 8, got
    assert "['x']" in got["text"] and "P('x', 'y')" in got["text"]
    assert not page.errors
