"""The function view's picture names each leaf as the widget does."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.legend import legend_of

from .helpers import svgs_in


def test_function_picture_names_each_leaf_once() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("y", None)))
    one = ShardView(lambda a, b: a @ b, x, w).to_svg()
    assert "in a: float32[16@x,8@y]" in one and "in b: " in one
    assert "out: float32[16@x,4]" in one and "out out" not in one
    two = ShardView(lambda a, b: (a @ b, a), x, w).to_svg()
    assert "out[0]: " in two and "out[1]: " in two and "out out" not in two


def _multi_axis_array() -> jax.Array:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(("x", "y"), None)))


def test_a_dimension_over_two_axes_is_spelled_as_the_widget_spells_it() -> None:
    # The widget's axis title (js/array/grid/geometry.ts dimTitle) joins the axes with "+".
    v = ShardView(_multi_axis_array())
    picture, snap = v.to_svg(), "".join(svgs_in(v.snapshot().html))
    legend = legend_of(v.layout).replication
    assert "dim 0 (16) · sharded over x+y" in picture
    assert "sharded over x+y" in snap
    assert "dimension 0 split 8 ways over x+y" in legend
    for text in (picture, snap, *legend):
        assert "x × y" not in text and "x, y" not in text
