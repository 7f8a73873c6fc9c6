"""Saved pictures stay within 512 KiB per view and say what they left out (issue 30, item 9):
``to_svg``, the display bundle's picture, ``snapshot()`` and a saved page's ``<noscript>``, for
a plan of many positions, a tree of many groups, a function of many leaves; and the last guard
of every saved picture. Sizes measured before the fix: a 65,536-position tree plan 29 MB,
notebook 06's step planned on 256 positions 2.0 MB, a 5,000-leaf tree 2.4 MB
(benchmarks/pictures.py)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.render import budget
from shardwidget.render.function_leaves import MAX_TABLE_ROWS
from shardwidget.render.picture import MAX_TITLES
from shardwidget.render.snapshot import PICTURE_BUDGET, picture_html

f32 = jnp.float32


def _within(view) -> None:
    for text in (view.to_svg(), view._static_html(), view.snapshot().html):
        assert len(text.encode()) <= PICTURE_BUDGET


def test_a_plan_of_16384_positions_is_drawn_within_budget():
    tree = {"w": jax.ShapeDtypeStruct((4096, 4096), f32), "b": jax.ShapeDtypeStruct((4096,), f32)}
    pod = AbstractMesh((128, 128), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    view = ShardView(tree, mesh=pod, rules=[("w", P("data", "model"))])
    _within(view)
    svg = view.to_svg()
    assert '<image class="mesh"' in svg  # the mesh is one image, not 16,384 rectangles
    assert svg.count("<rect") < 2_000
    k = -(-16384 // budget.MAX_BARS)
    assert f"showing {budget.MAX_BARS} bars of 16,384 devices: each the fullest of {k}" in svg


def test_a_tree_of_many_groups_names_the_largest_then_others():
    tree = {f"layer{i:04d}": {"w": jnp.zeros((8, 8 + i % 7))} for i in range(300)}
    view = ShardView(
        tree,
        mesh=jax.make_mesh(
            (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
        ),
    )
    _within(view)
    svg = view.to_svg()
    kept = budget.MAX_GROUPS - 1
    assert f"others ({300 - kept} groups)" in svg
    names = re.findall(r"&#x27;layer\d{4}&#x27;|'layer\d{4}'", svg)
    assert 0 < len(set(names)) <= kept + 1  # the largest groups (and the selected leaf's path)


def step(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return x


def test_a_function_of_many_leaves_stays_within_budget(tmp_path):
    params = [jnp.ones((8, 8)) * (i + 1) for i in range(130)]
    view = ShardView(step, params, jnp.ones((8, 8)), mesh_shape=[8], in_specs=P("x"))
    assert view.error == ""
    _within(view)
    blocks = sum(len(lf.layout.blocks) for lf in view.trace.input_leaves)
    assert blocks > MAX_TITLES
    svg = view.to_svg()
    assert svg.count('<g class="block">') <= MAX_TITLES  # hover text for a bounded few
    n = len(view.trace.input_leaves) + len(view.trace.output_leaves)
    # a model's leaves: a bounded table (what it leaves out, counted) and one grid
    assert f"… and {n - MAX_TABLE_ROWS} more leaves" in svg
    assert svg.count('class="block"') < blocks
    assert view.save_html(tmp_path / "f.html")
    page = (tmp_path / "f.html").read_text()
    noscript = re.search(r"<noscript>(.*?)</noscript>", page, re.S)
    assert noscript is not None and len(noscript.group(1).encode()) <= PICTURE_BUDGET


def test_the_last_guard_drops_the_map_then_the_picture_and_says_so():
    titled = "".join(
        f'<g><title>block {i} {"x" * 200}</title><rect x="{i}" y="0" width="1" height="1"/></g>'
        for i in range(3000)
    )
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">{titled}</svg>'
    html = picture_html(svg)
    assert len(html.encode()) <= PICTURE_BUDGET
    assert "<map" not in html and "<img" in html  # the hover map went first
    assert "hover text left out" in html
    huge = svg.replace("</svg>", f"<desc>{'y' * PICTURE_BUDGET}</desc></svg>")
    html = picture_html(huge, text="ShardView(...)")
    assert len(html.encode()) <= PICTURE_BUDGET
    assert "picture left out" in html and "ShardView(...)" in html
