"""shardwidget.memory_map(): per-device sums checked against an independent sum over
addressable_shards of the arrays a test makes."""

import gc
from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget import ShardView, memory_map
from shardwidget.model import memory_map as memory_map_mod


def _shard_sum(arrays: list[Any], kinds: tuple[Any, ...] = ("device",)) -> dict[int, int]:
    """Bytes per device of these arrays, from their shards' shapes and dtype alone."""
    out: dict[int, int] = {}
    for a in arrays:
        if a.sharding.memory_kind not in kinds:
            continue
        for s in a.addressable_shards:
            sizes = [len(range(*i.indices(d))) for i, d in zip(s.index, a.shape, strict=True)]
            n = int(np.prod(sizes, dtype=np.int64)) * a.dtype.itemsize
            out[s.device.id] = out.get(s.device.id, 0) + n
    return out


def _diff(after: dict[int, int], before: dict[int, int]) -> dict[int, int]:
    return {
        d: after.get(d, 0) - before.get(d, 0)
        for d in set(after) | set(before)
        if after.get(d, 0) != before.get(d, 0)
    }


@pytest.fixture
def mesh() -> Any:
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


def test_per_device_matches_the_shards(mesh: Any) -> None:
    gc.collect()
    before = memory_map().per_device
    arrays = [
        jax.device_put(np.ones((64, 32), np.float32), NamedSharding(mesh, P("x", "y"))),
        jax.device_put(
            np.ones((40, 8), np.int8), NamedSharding(mesh, P(None, "y"))
        ),  # replicated over x
        jax.device_put(np.ones(4096, np.float32), jax.devices()[3]),
        jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P())),  # on every device
    ]
    m = memory_map()
    want = _shard_sum(arrays)
    assert _diff(m.per_device, before) == want
    assert want[3] > want[0]  # the single-device array makes device 3 the fullest
    dev, ratio = m.imbalance or (None, 0.0)
    assert set(m.per_device) == {d.id for d in jax.devices()}
    assert m.per_device[dev] == max(m.per_device.values())
    assert ratio == pytest.approx(max(m.per_device.values()) / (sum(m.per_device.values()) / 8))
    # the largest arrays are listed with their spec and bytes per device
    big = next(e for e in m.arrays if e.shape == (64, 32))
    assert big.spec == "P('x', 'y')" and big.dtype == "float32"
    assert big.bytes_per_device == {d: 64 * 32 * 4 // 8 for d in range(8)}
    del arrays


def test_shared_buffers_are_counted_once(mesh: Any) -> None:
    gc.collect()
    before = memory_map()
    x = jax.device_put(np.ones((32, 32), np.float32), NamedSharding(mesh, P("x", "y")))
    shards = [s.data for s in x.addressable_shards]  # per-shard arrays sharing x's buffers
    view = ShardView(x)  # its array is x itself
    fview = ShardView(lambda a: a + 1, x)
    shown = view.array
    m = memory_map()
    assert _diff(m.per_device, before.per_device) == _shard_sum([x])
    assert m.n_arrays - before.n_arrays == 1
    # a re-laid-out copy held by the caller is new memory, counted once
    view.spec = [None, "y"]
    copy = view.array
    m2 = memory_map()
    assert _diff(m2.per_device, before.per_device) == {
        d: _shard_sum([x]).get(d, 0) + _shard_sum([copy]).get(d, 0) for d in range(8)
    }
    del shards, shown, copy, view, fview


def test_deleted_arrays_and_host_memory_are_apart(mesh: Any) -> None:
    gc.collect()
    before = memory_map()
    gone = jax.device_put(np.ones((64, 64), np.float32), NamedSharding(mesh, P("x")))
    gone.delete()
    pinned = jax.device_put(
        np.ones((16, 16), np.float32), NamedSharding(mesh, P("y"), memory_kind="pinned_host")
    )
    m = memory_map()
    assert _diff(m.per_device, before.per_device) == {}
    assert _diff(m.host, before.host) == _shard_sum([pinned], ("pinned_host",))
    assert any(e.memory_kind == "pinned_host" for e in m.arrays)
    del pinned


def test_capacity_where_memory_stats_reports_it(monkeypatch: Any, mesh: Any) -> None:
    limit = 1 << 20
    monkeypatch.setattr(
        memory_map_mod,
        "device_stats",
        lambda d: {"bytes_limit": limit, "bytes_in_use": 1000 + d.id},
    )
    x = jax.device_put(np.ones((64, 64), np.float32), NamedSharding(mesh, P("x", "y")))
    m = memory_map()
    assert m.capacity == {d: limit for d in range(8)}
    assert m.in_use[5] == 1005
    assert "of 1 MiB" in repr(m) and "of 1 MiB" in m._repr_html_()
    del x


def test_cpu_reports_no_capacity() -> None:
    assert memory_map().capacity == {}


def test_text_and_html_name_the_fullest_device(mesh: Any) -> None:
    gc.collect()
    # 64 MiB on device 6: the largest array and the fullest device whatever earlier tests of
    # the run still hold (views they left open keep a few MiB per device alive)
    x = jax.device_put(np.ones((4096, 4096), np.float32), jax.devices()[6])
    m = memory_map(top=3)
    assert len(m.arrays) <= 3 and m.arrays[0].shape == (4096, 4096)
    assert m.imbalance is not None and m.imbalance[0] == 6
    assert "most on device 6" in repr(m)
    assert "float32[4096, 4096] SingleDeviceSharding" in repr(m)
    page = m._repr_html_()
    assert page.count("<tr>") >= 8 + 1 and "#d55e00" in page  # a bar per device, 6 marked
    assert m.on_device(6)[0].shape == (4096, 4096)
    del x


def test_public_name() -> None:
    assert shardwidget.memory_map is memory_map
    assert "memory_map" in shardwidget.__all__
