"""The static picture of a function of many leaves: a table of its leaves and one grid, as the
widget draws it (a grid per leaf for a function of a few)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.render.function_leaves import CARDS_UP_TO


def _grids(svg: str) -> int:
    """Grids drawn: each has its dimension-0 title."""
    return len(re.findall(r"dim 0 \(\d+\)", svg))


def test_many_leaves_one_table_one_grid():
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    params = {
        f"w{i}": jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data", "model")))
        for i in range(6)
    }
    view = ShardView(lambda p: jax.tree.map(lambda w: w * 2, p), params)
    try:
        leaves = len(view.trace.input_leaves) + len(view.trace.output_leaves)
        assert leaves > CARDS_UP_TO
        svg = view.to_svg()
        assert _grids(svg) == 1
        # every input and output in the table (the first input also over its grid)
        for i in range(6):
            assert svg.count(f"[&#x27;w{i}&#x27;]") == (3 if i == 0 else 2), i
        assert svg.count("P(&#x27;data&#x27;, &#x27;model&#x27;)") >= 12
        assert "64 B" in svg  # 16x8 float32 over 8 devices: 2x4 elements each
    finally:
        view.close()


def test_a_few_leaves_keep_a_grid_each():
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data", "model")))
    view = ShardView(lambda a: a.sum(0), x)
    try:
        assert _grids(view.to_svg()) == 2
    finally:
        view.close()
