"""Find by mesh coordinate (issue 14, item 7): the device ids JAX puts at mesh positions, for
the renderer's find box to match. ``js/tests/wire/mesh_coords.gen.json`` holds, per mesh (device
orders that differ from id order included), the layout the widget receives and, per query
("x=1", "y=*", "a=1,c=0", "x=0-1"), the ids ``mesh.devices[...]`` gives; vitest
(js/tests/array/find.test.ts) checks the find box against it. ``SHARDWIDGET_REGEN=1`` rewrites it."""

from __future__ import annotations

import json
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from . import pinned

FIXTURE = pinned.FOLDER / "mesh_coords.gen.json"


def _ids(mesh: Mesh, query: dict[str, Any]) -> list[int]:
    """JAX's answer: index mesh.devices by the query (an int, a slice, or every position)."""
    idx = tuple(query.get(n, slice(None)) for n in mesh.axis_names)
    sel = np.asarray(mesh.devices[idx]).reshape(-1)
    return sorted(int(d.id) for d in sel)


def _case(mesh: Mesh, spec: P, queries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    x = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, spec))
    layout = ShardView(x)._layout
    return {"layout": layout, "queries": {q: _ids(mesh, sel) for q, sel in queries.items()}}


def cases() -> dict[str, Any]:
    devs = jax.devices()
    auto = AxisType.Auto
    rev = Mesh(np.array(devs[::-1]).reshape(2, 4), ("x", "y"), axis_types=(auto, auto))
    perm = Mesh(
        np.array([devs[i] for i in (3, 6, 0, 5, 2, 7, 1, 4)]).reshape(2, 2, 2),
        ("a", "b", "c"),
        axis_types=(auto,) * 3,
    )
    flat = jax.make_mesh((8,), ("d",), axis_types=(auto,))
    return {
        "reversed2x4": _case(
            rev,
            P("x", "y"),
            {
                "x=1": {"x": 1},
                "y=*": {},
                "y=2": {"y": 2},
                "x=1,y=2": {"x": 1, "y": 2},
                "x=0 y=1-3": {"x": 0, "y": slice(1, 4)},
                "x=*,y=0": {"y": 0},
            },
        ),
        "permuted2x2x2": _case(
            perm,
            P("a", None),
            {
                "a=1": {"a": 1},
                "a=1,c=0": {"a": 1, "c": 0},
                "b=0 c=1": {"b": 0, "c": 1},
                "a=0,b=1,c=1": {"a": 0, "b": 1, "c": 1},
            },
        ),
        "flat8": _case(flat, P("d"), {"d=5": {"d": 5}, "d=2-4": {"d": slice(2, 5)}}),
    }


def test_fixture_is_what_jax_says() -> None:
    fresh = json.dumps(cases(), indent=1, sort_keys=True) + "\n"
    pinned.check(FIXTURE, fresh)


def test_jax_mesh_order_is_row_major_device_ids() -> None:
    """What the renderer assumes: LayoutWire.mesh.device_ids is mesh.devices row-major."""
    c = cases()["permuted2x2x2"]
    assert c["layout"]["mesh"]["device_ids"] == [3, 6, 0, 5, 2, 7, 1, 4]
    assert c["queries"]["a=1"] == [1, 2, 4, 7]
