"""The device groups a function view sends with each collective (the widget lights them on hover).

Checked against the compiled sharding's mesh (its device array): the devices that share every
coordinate but the reduced axis form one group."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.wire import group_sets


@pytest.fixture(scope="module")
def mesh() -> Any:
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


@pytest.fixture(scope="module")
def x(mesh: Any) -> Any:
    a = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    return jax.device_put(a, NamedSharding(mesh, P("x", "y")))


def ids(v: Any) -> np.ndarray:
    """Device ids of the mesh the view compiled on, laid out as the mesh."""
    mesh = v.trace.in_shardings[0].mesh
    return np.vectorize(lambda d: d.id)(mesh.devices)


def as_sets(groups: list[list[int]]) -> set[frozenset[int]]:
    return {frozenset(g) for g in groups}


def wire_groups(v: Any, i: int) -> list[list[int]]:
    c = v._trace["collectives"][i]
    assert c["group_set"] >= 0
    groups: list[list[int]] = v._trace["group_sets"][c["group_set"]]
    return groups


def test_psum_groups_are_the_mesh_rows_and_columns(mesh: Any, x: Any) -> None:
    def f(a: Any) -> Any:
        return jax.lax.psum(jax.lax.psum(a, "y") * 2, "x")

    v = ShardView(f, x, mode="shard_map", in_specs=[P("x", "y")], out_specs=[P(None, "y")])
    assert [(c.kind, c.axes) for c in v.trace.collectives] == [
        ("all-reduce", ("y",)),
        ("all-reduce", ("x",)),
    ]
    m = ids(v)
    assert as_sets(wire_groups(v, 0)) == {frozenset(r) for r in m.tolist()}  # along y: rows
    assert as_sets(wire_groups(v, 1)) == {frozenset(c) for c in m.T.tolist()}  # along x: columns
    assert len(v._trace["group_sets"]) == 2


def test_two_collectives_over_one_axis_share_a_set(mesh: Any, x: Any) -> None:
    def f(a: Any) -> Any:
        return jax.lax.psum(jax.lax.psum(a, "y") + 1, "y")

    v = ShardView(f, x, mode="shard_map", in_specs=[P("x", "y")], out_specs=[P("x", None)])
    cs = v._trace["collectives"]
    if len(cs) < 2:  # XLA may combine the two all-reduces: then there is nothing to share
        pytest.skip("XLA combined the all-reduces")
    assert cs[0]["group_set"] == cs[1]["group_set"] == 0
    assert v._trace["group_sets"] == [[list(g) for g in v.trace.collectives[0].groups]]


def test_permute_pairs_are_x_neighbours(mesh: Any, x: Any) -> None:
    v = ShardView(lambda a: jax.numpy.roll(a, 1, axis=0), x)
    (c,) = v.trace.collectives
    assert c.kind == "collective-permute"
    pairs = wire_groups(v, 0)
    m = ids(v)
    # Each pair joins the two devices of one mesh column (x neighbours), both ways round.
    assert {tuple(p) for p in pairs} == {(int(a), int(b)) for a, b in m.T} | {
        (int(b), int(a)) for a, b in m.T
    }


def test_group_sets_budget_leaves_out_whole_sets() -> None:
    g1 = [[0, 1], [2, 3]]
    g2 = [[0, 2], [1, 3]]
    sets, of = group_sets([g1, g2, g1, [[0, 1, 2, 3]]], budget=8)
    assert sets == [g1, g2] and of == [0, 1, 0, -1]
    assert group_sets([], budget=0) == ([], [])
