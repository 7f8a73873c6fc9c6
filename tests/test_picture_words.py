"""The function view's picture names each leaf as the widget does."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView


def test_function_picture_names_each_leaf_once() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("y", None)))
    one = ShardView(lambda a, b: a @ b, x, w).to_svg()
    assert "in a: float32[16@x,8@y]" in one and "in b: " in one
    assert "out: float32[16@x,4]" in one and "out out" not in one
    two = ShardView(lambda a, b: (a @ b, a), x, w).to_svg()
    assert "out[0]: " in two and "out[1]: " in two and "out out" not in two
