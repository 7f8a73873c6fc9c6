"""compare(view_a, view_b) for array views, checked against devices_indices_map."""

from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, compare
from shardwidget.model.layout_diff import LayoutDiff

SHAPE = (8, 12)


def _mask(sharding: Any, device: Any, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    m = np.zeros(shape, bool)
    idx = sharding.devices_indices_map(shape).get(device)
    if idx is not None:
        m[idx] = True
    return m


def _expected(
    sa: Any, sb: Any, shape: tuple[int, ...] = SHAPE
) -> tuple[dict[int, int], dict[int, int], list[int]]:
    """(bytes to receive, bytes held in B minus A, devices holding another part), from JAX."""
    item = 4
    recv, delta, moved = {}, {}, []
    for d in jax.devices():
        ma, mb = _mask(sa, d, shape), _mask(sb, d, shape)
        if (mb & ~ma).sum():
            recv[d.id] = int((mb & ~ma).sum()) * item
        if mb.sum() != ma.sum():
            delta[d.id] = int(mb.sum() - ma.sum()) * item
        if not np.array_equal(ma, mb):
            moved.append(d.id)
    return recv, delta, moved


def _mesh(shape: tuple[int, ...], names: tuple[str, ...], reverse: bool = False) -> Mesh:
    devs = jax.devices()[::-1] if reverse else jax.devices()
    return Mesh(np.array(devs).reshape(shape), names)


PAIRS = [
    (
        "same",
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P("x", "y")),
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P("x", "y")),
    ),
    (
        "swap axes",
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P("x", "y")),
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P("y", "x")),
    ),
    (
        "gather dim 1",
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P("x", "y")),
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P("x", None)),
    ),
    (
        "reversed devices",
        lambda: NamedSharding(_mesh((8,), ("d",)), P("d")),
        lambda: NamedSharding(_mesh((8,), ("d",), True), P("d")),
    ),
    (
        "replicated to sharded",
        lambda: NamedSharding(_mesh((8,), ("d",)), P()),
        lambda: NamedSharding(_mesh((2, 4), ("x", "y")), P(("x", "y"), None)),
    ),
    (
        "one device to all",
        lambda: SingleDeviceSharding(jax.devices()[2]),
        lambda: NamedSharding(_mesh((4, 2), ("x", "y")), P("x", "y")),
    ),
]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0])
def test_compare_array_views_against_jax(pair: Any) -> None:
    _, make_a, make_b = pair
    host = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    sa, sb = make_a(), make_b()
    va, vb = ShardView(jax.device_put(host, sa)), ShardView(jax.device_put(host, sb))
    d = compare(va, vb, names=["before", "after"])
    assert isinstance(d, LayoutDiff)
    recv, delta, moved = _expected(sa, sb)
    assert d.bytes_in == recv
    assert d.bytes_delta == delta
    assert d.moved_devices == moved
    assert d.same == (not moved)
    # every device that newly holds a block of B is named in that block's move
    newly = sorted(x for m in d.moves for x in m.to_devices)
    in_b = {dev.id for dev in sb.devices_indices_map(SHAPE)}
    assert newly == [x for x in moved if x in in_b]
    for m in d.moves:  # sources really overlap the block in A
        box = tuple(slice(a, b) for a, b in m.index)
        for src in m.from_devices:
            dev = next(x for x in jax.devices() if x.id == src)
            assert _mask(sa, dev)[box].any()
    text = repr(d)
    assert text.startswith("before: ")
    assert ("nothing moves" in text) == (not moved)


def test_compare_follows_the_views_controls(arr: Any) -> None:
    a, b = ShardView(arr), ShardView(arr)
    assert compare(a, b).same
    b.spec = [None, "x"]
    d = compare(a, b)
    recv, delta, moved = _expected(a.array.sharding, b.array.sharding, tuple(arr.shape))
    assert (d.bytes_in, d.bytes_delta, d.moved_devices) == (recv, delta, moved)
    assert "devices hold another block" in repr(d)


def test_compare_refuses_what_it_cannot_compare(arr: Any) -> None:
    other = ShardView(np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="two layouts of one array"):
        compare(ShardView(arr), other)
    with pytest.raises(TypeError, match="exactly two array views"):
        compare(ShardView(arr), ShardView(arr), ShardView(arr))
    with pytest.raises(TypeError, match="exactly two array views"):
        compare(ShardView(arr), ShardView(lambda x: x, arr))


@pytest.mark.parametrize("dtype", ["int4", "uint4"])
def test_compare_int4_views_counts_packed_bytes(dtype: str) -> None:
    """int4 / uint4 are stored two elements a byte: bytes are ceil(elements * 4 / 8) per
    device (a (8, 3) array: 3-element rows, 2 B), from devices_indices_map."""
    import math

    import jax.numpy as jnp

    shape = (8, 3)
    host = jnp.arange(24).astype(getattr(jnp, dtype)).reshape(shape)
    sa = NamedSharding(_mesh((2, 4), ("x", "y")), P("x"))
    sb = NamedSharding(_mesh((8,), ("d",), reverse=True), P("d"))
    d = compare(ShardView(jax.device_put(host, sa)), ShardView(jax.device_put(host, sb)))
    recv, delta = {}, {}
    for dev in jax.devices():
        ma, mb = _mask(sa, dev, shape), _mask(sb, dev, shape)
        if (mb & ~ma).sum():
            recv[dev.id] = math.ceil(int((mb & ~ma).sum()) * 4 / 8)
        held_a, held_b = math.ceil(int(ma.sum()) * 4 / 8), math.ceil(int(mb.sum()) * 4 / 8)
        if held_a != held_b:
            delta[dev.id] = held_b - held_a
    assert d.bytes_in == recv
    assert d.bytes_delta == delta
    assert set(recv.values()) == {2}  # 3 new elements each: 2 B packed, not 3
