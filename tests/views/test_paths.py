"""Each view kind's change path as a plain class, driven without a widget or a kernel:
ArrayPath, FunctionPath and TreePath read a state, check it and compute it, checked against
JAX itself (devices_indices_map, jax.jit's own compile)."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.model import rules as rules_mod
from shardwidget.model.layout import layout_of
from shardwidget.model.state import LayoutState
from shardwidget.model.tree import flatten, on_mesh
from shardwidget.views import array_path
from shardwidget.views.array_path import ArrayPath
from shardwidget.views.function_path import FunctionPath
from shardwidget.views.tree_path import TreePath, TreeState
from tests.model.test_summary import ref_stats

VIEWS = pathlib.Path(array_path.__file__).parent
WIDGET_MODULES = ("traitlets", "anywidget", "ipywidgets", "IPython")


@pytest.mark.parametrize("name", ["path", "array_path", "function_path", "tree_path"])
def test_a_change_path_holds_no_widget_code(name: str) -> None:
    tree = ast.parse((VIEWS / f"{name}.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or "").split(".")[0])
    assert not imported & {*WIDGET_MODULES, ".base", ".array", ".function", ".tree", ".cost"}


def _index_map(sharding: Any, shape: tuple[int, ...]) -> dict[int, Any]:
    return {d.id: idx for d, idx in sharding.devices_indices_map(shape).items()}


def test_array_path_lays_out_as_device_put(arr: Any) -> None:
    path = ArrayPath(arr)
    st = path.from_wire({**path.first.to_wire(), "spec": [None, ["x", "y"]]})
    path.check(st)
    out = path.compute(st)
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    want = jax.device_put(arr, NamedSharding(mesh, P(None, ("x", "y"))))
    assert _index_map(out.sharding, arr.shape) == _index_map(want.sharding, arr.shape)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(arr))
    assert path.compute(path.first) is arr  # its own layout: the user's array, no copy
    assert not arr.is_deleted()
    assert path.label(st).startswith("mesh x=2 × y=4 · ")


def test_array_path_refuses_in_words_and_knows_every_spec(arr: Any) -> None:
    path = ArrayPath(arr)
    with pytest.raises(ValueError, match="3 entries but the array has 2"):
        path.check(path.from_wire({**path.first.to_wire(), "spec": [None, None, None]}))
    with pytest.raises(ValueError, match=r"does not divide.*pad to 8×8"):
        path.check(path.from_wire({**path.first.to_wire(), "spec": [["x", "y"], None]}))
    specs = list(path.iter_specs(path.first))
    # each one lays out as JAX says it does: every block of the array, on its devices
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    for st in specs:
        sharding = NamedSharding(mesh, P(*st.spec))
        assert len(sharding.devices_indices_map(arr.shape)) == 8
    assert LayoutState(*path.first.mesh_key, ((), ("x", "y")), "device", "array") in specs
    assert all(st.spec[0] != ("x", "y") for st in specs)  # 4 rows over 8 shards: no


def test_array_path_statistics_match_numpy(arr: Any) -> None:
    path = ArrayPath(arr)
    lay = layout_of(arr)
    summ = path.summarize(lay, (0, 1), lambda: arr)
    host = np.asarray(arr)
    for blk, stats in zip(lay.blocks, summ.stats, strict=True):
        np.testing.assert_allclose(stats, ref_stats(host[blk.slices]), rtol=1e-5)


def test_function_path_compiles_as_jax_jit(arr: Any) -> None:
    def f(a: Any) -> Any:
        return jnp.sin(a).sum(axis=1)

    path = FunctionPath(f, (arr,), {}, {})
    st = path.default_state()
    path.out_leaves = path.output_infos(None, st)
    path.check(st)
    res, cached, arrays = path.compute(st)
    assert not cached
    compiled = jax.jit(f).lower(arr).compile()
    assert res.flops == compiled.cost_analysis()["flops"]
    want = jax.jit(f)(arr)
    np.testing.assert_allclose(np.asarray(arrays[1][0]), np.asarray(want), rtol=1e-6)
    assert _index_map(res.out_shardings[0], want.shape) == _index_map(want.sharding, want.shape)
    res2, cached2, _ = path.compute(st)  # the same layout: the compile cache answers
    assert cached2 and res2.state == res.state
    sides = path.leaf_summaries(res, arrays)
    out_lay = layout_of(want)
    for blk, stats in zip(out_lay.blocks, sides[0][0].stats, strict=True):
        np.testing.assert_allclose(stats, ref_stats(np.asarray(want)[blk.slices]), rtol=1e-4)
    assert path.label(st).startswith("mesh x=2 × y=4 · ")


def test_function_path_refuses_a_spec_that_does_not_fit(arr: Any) -> None:
    path = FunctionPath(lambda a: a * 2, (arr,), {}, {})
    st = path.default_state()
    path.out_leaves = path.output_infos(None, st)
    with pytest.raises(ValueError, match="3 entries"):
        path.check(path.from_wire({**st.to_wire(), "in_specs": [[None, None, "x"]]}))
    with pytest.raises(ValueError, match="does not divide"):
        path.check(path.from_wire({**st.to_wire(), "in_specs": [[["x", "y"], None]]}))


def test_tree_path_applies_rules_as_jax_lays_out(arr: Any) -> None:
    w = jnp.ones((8, 16))
    tree = {"a": arr, "w": w}
    mesh = arr.sharding.mesh
    flat = flatten(tree)
    path = TreePath(dataclasses.replace(flat, leaves=on_mesh(flat.leaves, mesh)), mesh)
    st = TreeState(
        (2, 4), ("x", "y"), ("explicit", "explicit"), rules_mod.make_rules([("w", P("y", "x"))])
    )
    path.check(st)
    got_mesh, applied = path.compute(st)
    assert got_mesh is mesh
    leaf = next(lf for lf in applied.leaves if lf.path == "['w']")
    want = jax.device_put(w, NamedSharding(mesh, P("y", "x")))
    assert _index_map(leaf.sharding, w.shape) == _index_map(want.sharding, w.shape)
    placed = path.placed(applied, tuple(i for i in range(2) if path.changed(applied, i)))
    assert _index_map(placed["w"].sharding, w.shape) == _index_map(want.sharding, w.shape)
    assert placed["a"] is arr  # unchanged: the user's own
    with pytest.raises(ValueError, match="z"):
        path.check(dataclasses.replace(st, rules=rules_mod.make_rules([("w", P("z"))])))
    assert path.label(st) == "mesh x=2 × y=4 · 1 rule"
