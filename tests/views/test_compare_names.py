"""compare() names its rows by each view's function; two views of one function are told apart
(by mode, then by place) instead of both being "f"."""

from __future__ import annotations

from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, compare
from shardwidget.views.compare import distinct_labels


def f(a):
    return a.sum(axis=0)


def g(a):
    return a * 2


def test_two_layouts_of_one_function_get_two_names():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32), NamedSharding(mesh, P("x", "y")))
    views = [ShardView(f, x), ShardView(f, x, in_specs=[[None, "y"]]), ShardView(g, x)]
    try:
        c = compare(*views)
        assert c.names == ["f · jit #1", "f · jit #2", "g"]
        assert [r["name"] for r in c.rows] == c.names
        assert compare(views[0], views[2]).names == ["f", "g"]
    finally:
        for v in views:
            v.close()


def test_mode_tells_views_of_one_function_apart_first():
    views = [
        SimpleNamespace(fn_name="f", mode="jit"),
        SimpleNamespace(fn_name="f", mode="shard_map"),
    ]
    assert distinct_labels(views) == ["f · jit", "f · shard_map"]
