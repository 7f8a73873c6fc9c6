"""Copies against replication on every device (issue 30, item 3), and every device of the mesh in
the memory per device (item 4), checked against JAX's own ``devices_indices_map``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model.copies import on_every_device, replication
from shardwidget.model.tree import flatten
from shardwidget.render import tree as tree_render

MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
SHAPE = (64, 32)
SHARDINGS = [
    NamedSharding(MESH, P()),
    NamedSharding(MESH, P("model", None)),
    NamedSharding(MESH, P("data")),
    NamedSharding(MESH, P(None, "model")),
    NamedSharding(MESH, P(("data", "model"))),
    NamedSharding(MESH, P("data", "model")),
    SingleDeviceSharding(jax.devices()[0]),
]


def _jax_says(sharding) -> tuple[bool, int]:
    """(every device of the mesh holds all of it, devices holding element 0) from JAX."""
    idx = sharding.devices_indices_map(SHAPE)
    whole = all(
        all(
            s.indices(n)[:2] == (0, n) and s.indices(n)[2] == 1
            for s, n in zip(i, SHAPE, strict=True)
        )
        for i in idx.values()
    )
    ids = {d.id for d in idx}
    holders_of_first = sum(
        all(s.indices(n)[0] == 0 for s, n in zip(i, SHAPE, strict=True)) for i in idx.values()
    )
    return whole and ids >= {d.id for d in MESH.devices.flat}, holders_of_first


@pytest.mark.parametrize("sharding", SHARDINGS, ids=str)
def test_replicated_on_every_device_is_what_devices_indices_map_says(sharding):
    x = jax.device_put(jnp.zeros(SHAPE), sharding)
    (leaf,) = flatten({"w": x}).leaves
    everywhere, copies = _jax_says(sharding)
    assert on_every_device(leaf, [d.id for d in MESH.devices.flat]) is everywhere
    assert replication(leaf) == copies


def test_the_banner_flags_only_leaves_on_every_device():
    tree = {"split": jnp.zeros((1024, 512)), "whole": jnp.zeros((1024, 512))}
    view = ShardView(
        tree,
        mesh=MESH,
        rules=[("split", P("model", None)), ("whole", P())],
        large_bytes=1 << 20,
    )
    t = view._tree
    at = {p: i for i, p in enumerate(t["paths"])}
    assert t["replication"][at["['split']"]] == 4  # copies, split in two
    assert t["everywhere"] == [False, True]
    flagged = [line for line in repr(view).splitlines() if "large replicated" in line]
    assert len(flagged) == 1 and "['whole']" in flagged[0]
    assert "⚠" not in tree_render.text(view).split("['split']")[1].splitlines()[0]


def test_per_device_lists_every_device_zeros_included():
    tree = {"a": jnp.ones((256, 64)), "b": jnp.ones((16,))}  # all on device 0
    view = ShardView(tree, mesh=MESH)
    every = sorted(d.id for d in MESH.devices.flat)
    assert sorted(view.per_device) == every
    on0 = sum(int(x.nbytes) for x in tree.values())
    assert view.per_device[jax.devices()[0].id] == on0
    assert sum(view.per_device.values()) == on0
    assert view._tree["memory"]["ids"] == every
    assert [sum(col) for col in zip(*view._tree["memory"]["by_group"], strict=True)] == [
        view.per_device[d] for d in every
    ]
