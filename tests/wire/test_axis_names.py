"""The default mesh axis names, one rule in two languages (issue 34, item 5).

Python's ``mesh.default_axis_names`` is the source; ``js/tests/wire/axis_names.gen.json`` holds
what it gives for 1..HARD_MAX_AXES axes, and vitest (js/tests/wire/axis_names.test.ts) checks
the TypeScript ``defaultAxisNames`` and both views' "number of axes" controls against it.
``SHARDWIDGET_REGEN=1`` rewrites it.
"""

from __future__ import annotations

import json

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.model import mesh as mesh_mod

from . import pinned

FIXTURE = pinned.FOLDER / "axis_names.gen.json"


def names_by_count() -> dict[str, list[str]]:
    return {str(k): mesh_mod.default_axis_names(k) for k in range(1, mesh_mod.HARD_MAX_AXES + 1)}


def test_fixture_is_what_python_gives() -> None:
    fresh = json.dumps(names_by_count(), indent=1) + "\n"
    pinned.check(FIXTURE, fresh)


def test_the_fallback_is_pinned_too() -> None:
    """The fixture covers the a{i} fallback, where the two sides once disagreed."""
    names = names_by_count()
    assert names["4"] == ["x", "y", "z", "w"]
    assert names["5"] == ["a0", "a1", "a2", "a3", "a4"]


def test_jax_accepts_every_default_as_a_mesh() -> None:
    """Each list is distinct names that JAX takes for a mesh and shards an array over."""
    dev = jax.devices()[0]
    for k, names in names_by_count().items():
        assert len(set(names)) == len(names) == int(k)
        mesh = Mesh(np.array([dev]).reshape((1,) * len(names)), tuple(names))
        x = jax.device_put(np.zeros((1, 1), np.float32), NamedSharding(mesh, P(tuple(names))))
        assert tuple(x.sharding.mesh.axis_names) == tuple(names)
