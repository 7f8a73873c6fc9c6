"""A function view's leaf statistics (tiles.LeafStats: inputs from their arguments' tiles,
outputs by numpy where the shards sit in host memory) equal the compiled per-leaf path and numpy,
and a new layout compiles no statistics."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model import summary as S
from shardwidget.model import tiles as T
from shardwidget.model.layout import layout_of
from tests.model.test_summary import assert_same_summary

N = 8
PIXELS, VALUES = 8192, 4096


def mesh_of(shape: tuple[int, ...], names: tuple[str, ...] = ("x", "y")) -> Any:
    devs = np.array(jax.devices()[: int(np.prod(shape))]).reshape(shape)
    return jax.sharding.Mesh(devs, names)


# layouts of one argument, in turn: the mesh, its spec, and whether the argument's tiles serve it
LAYOUTS = [
    ((2, 4), ("x", "y"), True),
    ((2, 4), ("y", None), True),
    ((2, 4), (None, "x"), True),
    ((8, 1), ("x", None), True),
    ((3, 2), ("x", "y"), False),  # 6 of 8 devices: a cut by 3 is no tile edge
]


@pytest.mark.parametrize(
    ("dtype", "nonfinite"),
    [(np.float32, False), (np.float32, True), (np.int32, False), (ml_dtypes.bfloat16, False)],
)
def test_inputs_from_tiles_and_outputs_on_host_equal_the_compiled_path(dtype, nonfinite):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((768, 96)) * 50).astype(dtype)
    if nonfinite:
        x[0, 0], x[5, 90], x[700, 3] = np.nan, np.inf, -np.inf
    leaf = T.LeafStats(N, VALUES)
    for mshape, spec, aligned in LAYOUTS:
        arr = jax.device_put(x, NamedSharding(mesh_of(mshape), P(*spec)))
        lay = layout_of(arr)
        plan = S.plan_for(lay, (0, 1), PIXELS, VALUES)
        want = S.summarize(arr, lay, plan)  # the compiled per-leaf path
        as_input = leaf.summarize(arr, lay, plan, PIXELS, argument=0)
        as_output = leaf.summarize(arr, lay, plan, PIXELS, argument=None)
        assert_same_summary(as_input, want, lay, np.asarray(x))
        assert_same_summary(as_output, want, lay, np.asarray(x))
        tiles = leaf._tiles[0]
        assert tiles is not None and tiles.aligned(lay) == aligned
        assert tiles.finite == (not nonfinite)  # NaN/Inf: never from tiles (see Tiles.finite)


def test_small_arguments_send_values_from_the_tiles():
    x = np.arange(32, dtype=np.int8).reshape(4, 8)
    leaf = T.LeafStats(N, VALUES)
    for spec in [("x", "y"), (None, "y"), ("y", "x")]:
        arr = jax.device_put(x, NamedSharding(mesh_of((2, 4)), P(*spec)))
        lay = layout_of(arr)
        plan = S.plan_for(lay, (0, 1), PIXELS, VALUES)
        assert plan.values
        assert_same_summary(
            leaf.summarize(arr, lay, plan, PIXELS, 0), S.summarize(arr, lay, plan), lay, x
        )


def test_tiles_are_computed_once_per_argument(monkeypatch):
    calls: list[int] = []
    real = T.tile_summary

    def counting(arr: Any, *a: Any) -> Any:
        calls.append(1)
        return real(arr, *a)

    monkeypatch.setattr(T, "tile_summary", counting)
    x = np.ones((64, 64), np.float32)
    leaf = T.LeafStats(N, VALUES)
    for spec in [("x", "y"), ("y", "x"), (None, None)]:
        arr = jax.device_put(x, NamedSharding(mesh_of((2, 4)), P(*spec)))
        lay = layout_of(arr)
        plan = S.plan_for(lay, (0, 1), PIXELS, VALUES)
        leaf.summarize(arr, lay, plan, PIXELS, 0)
        leaf.summarize(arr, lay, plan, PIXELS, 1)
    assert len(calls) == 2


def test_tiles_refuse_a_source_whose_blocks_are_not_on_tile_edges():
    x = np.ones((768, 96), np.float32)
    arr = jax.device_put(x, NamedSharding(mesh_of((3, 2)), P("x", "y")))
    assert T.tile_summary(arr, N, 0) is None


def test_host_path_only_for_host_memory_within_budget(monkeypatch):
    arr = jax.device_put(np.ones((64, 64), np.float32), NamedSharding(mesh_of((2, 4)), P("x")))
    assert S.in_host_memory(arr)  # CPU devices: device memory is host memory
    monkeypatch.setattr(S, "HOST_STATS_BYTES", 64 * 64 * 4 - 1)
    assert not S.in_host_memory(arr)
    S.clear_caches()
    lay = layout_of(arr)
    S.summarize(arr, lay, S.plan_for(lay, (0, 1), PIXELS, VALUES), prefer_host=True)
    assert S.shard_program._program.cache_info().misses == 1  # too big for the host path: compiled


def test_a_new_layout_compiles_no_statistics():
    """Switching a function view between layouts compiles f, never the statistics; every
    leaf's statistics are numpy's on its blocks."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    rng = np.random.default_rng(1)
    a = jax.device_put(rng.standard_normal((64, 64)).astype(np.float32), NamedSharding(mesh, P()))
    b = rng.standard_normal((64, 32)).astype(np.float32)  # a numpy argument
    kw = {"mesh_shape": [2, 4], "axis_names": ["x", "y"], "out_specs": [None]}
    v = ShardView(lambda a, b: a @ b, a, b, **kw)
    S.clear_caches()
    for specs in (
        [["x", None], [None, "y"]],
        [["y", None], [None, "x"]],
        [[None, "x"], ["x", "y"]],
    ):
        v.in_specs = specs
        res = v.trace
        st = v._trace_stats
        leaves = list(zip(res.inputs + res.outputs, st["inputs"] + st["outputs"], strict=True))
        assert len(leaves) == 3
        for arr, s in leaves:
            host = np.asarray(arr)
            assert s["status"] == "ready" and s["key"] == st["key"]
            for blk, row in zip(layout_of(arr).blocks, s["blocks"], strict=True):
                part = host[blk.slices]
                np.testing.assert_allclose(
                    row[:4], [part.min(), part.max(), part.mean(), part.std()], rtol=1e-4
                )
    assert S.shard_program._program.cache_info().misses == 0  # neither tiles nor statistics
