"""Re-running a cell frees the views it left, whatever their kind (issue 34): the base registers
every view it makes (views/rerun.py), so a tree view, a function view, an array view and a
kind the package does not know (tests/views/mesh_kind.py) are all closed and freed when the
cell that made them runs again; a view the user kept stays. In a stand-in IPython (execution
count, post_run_cell hooks) with a front end assumed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.views import rerun
from tests.views.mesh_kind import MeshOf
from tests.views.test_memory import FakeIPython, live_bytes


def _arr() -> jax.Array:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    return jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", "y")))


MAKERS: dict[str, Callable[[jax.Array], Any]] = {
    "array": lambda a: ShardView(a, spec=["y", "x"]),
    "function": lambda a: ShardView(lambda x: x * 2, a),
    "tree": lambda a: ShardView({"w": a, "b": jnp.zeros(8)}, rules=[("w", P("y", None))]),
    "fourth kind": lambda a: ShardView(MeshOf(8, (2, 4))),
}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_rerunning_a_cell_closes_and_frees_the_views_it_left(kind: str, monkeypatch: Any) -> None:
    ip = FakeIPython()
    monkeypatch.setattr(rerun, "_ipython", lambda: ip)
    monkeypatch.setattr(rerun, "_no_front_end", lambda view: False)
    monkeypatch.setattr(rerun, "_views", [])
    arr = _arr()
    before = live_bytes()
    ns: dict[str, Any] = {}
    refs: list[weakref.ref[Any]] = []

    def cell() -> None:  # `view = ShardView(...)`
        ns["view"] = MAKERS[kind](arr)
        refs.append(weakref.ref(ns["view"]))

    for run in range(4):
        ip.run_cell(cell)
        if run == 1:  # another cell: `kept = view`
            ip.run_cell(lambda: ns.update(kept=ns["view"]))
    gc.collect()
    alive = [r() is not None for r in refs]
    assert alive == [False, True, False, True], alive
    assert ns["kept"].comm is not None  # the user keeps it: it stays open
    ns.clear()
    for r in refs:
        v = r()
        if v is not None:
            v.close()
    del v
    assert live_bytes() == before
