"""Geometry checked against JAX itself: devices_indices_map and addressable_shards."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget._jax.record import indices_of, record_of
from shardwidget.model import mesh as mesh_mod
from shardwidget.model import spec as spec_mod
from shardwidget.model.layout import layout_of
from shardwidget.model.state import LayoutState, build_sharding, validate

N = 8


def _norm(idx, shape):
    return tuple(s.indices(n)[:2] for s, n in zip(idx, shape, strict=True))


def check_against_jax(arr):
    lay = layout_of(arr)
    shape = tuple(arr.shape)
    dim = arr.sharding.devices_indices_map(shape)
    # every device of the sharding is in exactly one block, with JAX's index
    seen = {}
    for b, blk in enumerate(lay.blocks):
        assert blk.shape == tuple(e - s for s, e in blk.index)
        for d in blk.devices:
            assert d not in seen
            seen[d] = b
    assert set(seen) == {d.id for d in dim}
    for dev, idx in dim.items():
        assert lay.blocks[seen[dev.id]].index == _norm(idx, shape)
    # blocks are distinct and tile the array exactly once
    assert len({b.index for b in lay.blocks}) == len(lay.blocks)
    assert sum(math.prod(b.shape) for b in lay.blocks) == math.prod(shape)
    # replica ids and data agree with addressable_shards
    for sh in arr.addressable_shards:
        blk = lay.blocks[lay.device_block[sh.device.id]]
        assert blk.index == _norm(sh.index, shape)
        assert blk.replica_ids[sh.device.id] == sh.replica_id
        assert tuple(sh.data.shape) == blk.shape
    assert lay.replication * len(lay.blocks) == lay.n_devices
    assert lay.bytes_per_device == math.prod(lay.shard_shape) * arr.dtype.itemsize
    assert lay.logical_bytes == arr.nbytes
    return lay


@st.composite
def layouts(draw):
    k = draw(st.integers(1, 3))
    mshape = draw(st.sampled_from(mesh_mod.factorizations(N, k)))
    names = mesh_mod.default_axis_names(k)
    types = draw(st.lists(st.sampled_from(["auto", "explicit"]), min_size=k, max_size=k))
    ndim = draw(st.integers(1, 4))
    free = list(names)
    entries = []
    for _ in range(ndim):
        n_axes = draw(st.integers(0, min(2, len(free))))
        axes = tuple(draw(st.permutations(free))[:n_axes]) if n_axes else ()
        free = [a for a in free if a not in axes]
        entries.append(axes)
    sizes = dict(zip(names, mshape, strict=True))
    shape = tuple(math.prod(sizes[a] for a in e) * draw(st.integers(1, 3)) for e in entries)
    return LayoutState(tuple(mshape), tuple(names), tuple(types), tuple(entries), "device"), shape


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts())
def test_generated_layouts_match_jax(case):
    st_, shape = case
    validate(st_, shape, N, ["device", "pinned_host", "unpinned_host"])
    mesh = mesh_mod.build_mesh(st_.mesh_shape, st_.axis_names, st_.axis_types)
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    arr = jax.device_put(x, build_sharding(st_, mesh))
    lay = check_against_jax(arr)
    assert lay.spec == st_.spec
    assert lay.mesh.axis_sizes == st_.mesh_shape
    assert lay.mesh.axis_types == st_.axis_types
    assert sorted(lay.mesh.device_ids) == list(range(N))


@settings(max_examples=150, deadline=None)
@given(layouts(), st.integers(0, 3), st.integers(1, 2))
def test_validation_agrees_with_device_put(case, dim, delta):
    """Our validate() refuses exactly what device_put refuses (indivisible dimensions)."""
    st_, shape = case
    shape = list(shape)
    dim = dim % len(shape)
    shape[dim] += delta
    mesh = mesh_mod.build_mesh(st_.mesh_shape, st_.axis_names, st_.axis_types)
    x = np.zeros(shape, np.float32)
    try:
        validate(st_, shape, N, ["device"])
        ours = None
    except ValueError as e:
        ours = e
    try:
        jax.device_put(x, build_sharding(st_, mesh)).block_until_ready()
        theirs = None
    except Exception as e:
        theirs = e
    assert (ours is None) == (theirs is None), (ours, theirs)


def test_single_device():
    lay = check_against_jax(jnp.arange(12.0).reshape(3, 4))
    assert lay.sharding_type == "SingleDeviceSharding" and lay.mesh is None
    assert len(lay.blocks) == 1 and lay.blocks[0].devices == (0,)


def test_partially_replicated_jit_output():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y")))
    out = jax.jit(lambda x: x.sum(axis=0))(a)
    lay = check_against_jax(out)
    assert lay.spec == (("y",),) and lay.replication == 2 and len(lay.blocks) == 4
    assert lay.typeof == "float32[8@y]"
    assert all(len(b.devices) == 2 for b in lay.blocks)


def test_explicit_axes_typeof_matches_jax():
    mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(np.arange(8).reshape(4, 2), NamedSharding(mesh, P("X", None)))
    lay = check_against_jax(a)
    assert lay.typeof == str(jax.typeof(a)) == "int32[4@X,2]"
    assert lay.mesh.axis_types == ("explicit", "explicit")


def test_pmap_output():
    out = jax.pmap(lambda x: x * 2)(jnp.arange(16.0).reshape(8, 2))
    lay = check_against_jax(out)
    assert len(lay.blocks) == 8 and lay.shard_shape == (1, 2)


def test_pinned_host_memory_kind():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.ones((4, 8)), NamedSharding(mesh, P("x"), memory_kind="pinned_host"))
    assert check_against_jax(a).memory_kind == "pinned_host"


@pytest.mark.parametrize(
    "dtype", [jnp.bool_, jnp.int8, jnp.int32, jnp.float16, jnp.bfloat16, jnp.float32, jnp.complex64]
)
def test_dtypes(dtype):
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    a = jax.device_put(jnp.zeros((16, 3), dtype), NamedSharding(mesh, P("x")))
    lay = check_against_jax(a)
    assert lay.itemsize == np.dtype(dtype).itemsize


def test_zero_d_and_prng_keys():
    lay = check_against_jax(jnp.float32(2.0) + 0)
    assert lay.shape == () and lay.blocks[0].index == ()
    keys = jax.random.split(jax.random.key(0), 8)
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    keys = jax.device_put(keys, NamedSharding(mesh, P("x")))
    lay = layout_of(keys)
    assert lay.dtype.startswith("key<") and len(lay.blocks) == 8 and lay.itemsize == 8


def test_spec_roundtrip_through_jax():
    mesh = jax.make_mesh((2, 2, 2), ("a", "b", "c"), axis_types=(AxisType.Explicit,) * 3)
    s = NamedSharding(mesh, P(("a", "b"), None, "c"))
    norm = spec_mod.normalize(tuple(s.spec), 3)
    assert spec_mod.to_partition_spec(norm) == s.spec


def _named(sharding, shape):
    """The numpy path: blocks from the record's mesh and spec alone."""
    from shardwidget.model import layout as L

    rec = record_of(sharding, shape)
    return L.named_geometry(L.info_of(rec.mesh), rec.spec, shape)


def _generic(sharding, shape):
    """The other path: blocks from JAX's devices_indices_map, as the record carries it."""
    from shardwidget.model import layout as L

    return L.generic_geometry(indices_of(sharding, shape))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts())
def test_named_geometry_equals_devices_indices_map(case):
    """The NamedSharding fast path (numpy over mesh coordinates) gives exactly the blocks,
    holders (in replica order) and device map that devices_indices_map gives."""

    st_, shape = case
    mesh = mesh_mod.build_mesh(st_.mesh_shape, st_.axis_names, st_.axis_types)
    sharding = build_sharding(st_, mesh)
    fast = _named(sharding, shape)
    assert fast is not None
    assert fast == _generic(sharding, shape)


def test_named_geometry_in_another_device_order_and_0d():

    devs = np.array(jax.devices())[[3, 1, 7, 5, 0, 2, 6, 4]].reshape(2, 4)
    mesh = jax.sharding.Mesh(devs, ("x", "y"))
    for spec, shape in [
        (P("y", "x"), (8, 6)),
        (P(("y", "x")), (16,)),
        (P(), ()),
        (P(None, "x"), (3, 4)),
    ]:
        sharding = jax.sharding.NamedSharding(mesh, spec)
        assert _named(sharding, shape) == _generic(sharding, shape)


def _jax_blocks_in_replica_order(arr):
    """index -> holders, ordered by replica id, as JAX's addressable_shards say."""
    out: dict = {}
    for s in sorted(arr.addressable_shards, key=lambda s: (s.replica_id, s.device.id)):
        key = tuple(sl.indices(n)[:2] for sl, n in zip(s.index, arr.shape, strict=True))
        out.setdefault(key, []).append(s.device.id)
    return {k: tuple(v) for k, v in out.items()}


@pytest.mark.parametrize("shape", [(0, 8), (8, 0), (0, 0), (0,), (0, 8, 4), (16, 0, 4), (8, 0, 0)])
@pytest.mark.parametrize(
    "spec",
    [P("x", "y"), P(("x", "y")), P("y", "x"), P(("y", "x"), None), P(None, ("x", "y")), P()],
)
def test_empty_dimensions_cut_into_one_block_as_jax_has_them(shape, spec):
    """A cut dimension of size 0 gives every piece the same (empty) index: JAX sees one block
    on those devices (the view listed one block per device)."""
    if len(spec) > len(shape):
        pytest.skip("spec longer than the array")
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, spec))
    lay = layout_of(a)
    got = {b.index: b.devices for b in lay.blocks}
    assert got == _jax_blocks_in_replica_order(a)
    assert len(lay.blocks) == len(got)  # no duplicate block
    assert {d: lay.blocks[b].index for d, b in lay.device_block.items()} == {
        d.id: tuple(sl.indices(n)[:2] for sl, n in zip(idx, shape, strict=True))
        for d, idx in a.sharding.devices_indices_map(shape).items()
    }


@st.composite
def empty_layouts(draw):
    """layouts() with one or more dimensions of size 0, sharded or not."""
    st_, shape = draw(layouts())
    zero = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    if not any(zero):
        zero[draw(st.integers(0, len(shape) - 1))] = True
    return st_, tuple(0 if z else n for z, n in zip(zero, shape, strict=True))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(empty_layouts(), st.booleans())
def test_size_0_geometry_equals_jax(case, shuffled):
    """A size-0 dimension is one block along it (JAX gives every device the same empty
    index there): blocks, holders in replica-id order and the device map equal
    devices_indices_map and addressable_shards, on both geometry paths and in any device
    order (issue 23, defect 2: the view listed one block per device)."""

    st_, shape = case
    mesh = mesh_mod.build_mesh(st_.mesh_shape, st_.axis_names, st_.axis_types)
    if shuffled:
        devs = np.array(jax.devices())[[3, 1, 7, 5, 0, 2, 6, 4]].reshape(mesh.devices.shape)
        mesh = jax.sharding.Mesh(devs, mesh.axis_names, axis_types=mesh.axis_types)
    sharding = build_sharding(st_, mesh)
    arr = jax.device_put(np.zeros(shape, np.float32), sharding)
    lay = check_against_jax(arr)
    distinct = {_norm(i, shape) for i in sharding.devices_indices_map(shape).values()}
    assert len(lay.blocks) == len(distinct)
    assert _named(sharding, shape) == _generic(sharding, shape)


@pytest.mark.parametrize(
    ("shape", "spec", "blocks"),
    [
        ((0, 8), P("x", "y"), 4),
        ((0,), P(("x", "y")), 1),
        ((0, 8), P(("y", "x")), 1),
        ((4, 0), P("x", "y"), 2),
        ((0, 0), P("y", "x"), 1),
    ],
)
def test_size_0_named_cases(shape, spec, blocks):
    """The cases of issue 23 by hand: (0, 8) on P('x', 'y') is 4 blocks of 2 devices."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    arr = jax.device_put(jnp.ones(shape), NamedSharding(mesh, spec))
    lay = check_against_jax(arr)
    assert len(lay.blocks) == blocks
    assert lay.replication == 8 // blocks


def test_a_layouts_payload_lists_are_made_once_and_equal_fresh_ones():
    """wire.layout keeps a layout's per-block and per-device lists with the Layout
    (Layout.derived): a layout shown again sends the same lists, equal to ones made from a
    fresh copy of the layout with nothing kept; a view that goes B → A → B sends B's
    geometry unchanged."""
    import dataclasses

    from shardwidget import ShardView, wire

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
    x = jax.device_put(jnp.arange(128.0).reshape(8, 16), NamedSharding(mesh, P("x", "y")))
    lay = layout_of(x)
    calls = []
    assert lay.derived("test.n", lambda v: calls.append(v) or len(v.blocks)) == 8
    assert lay.derived("test.n", lambda v: calls.append(v) or -1) == 8 and calls == [lay]
    kw = {"source": "x", "note": "", "local_process": 0}
    one, two = wire.layout(lay, key=1, **kw), wire.layout(lay, key=2, **kw)
    assert one["blocks"] is two["blocks"] and one["devices"]["ids"] is two["devices"]["ids"]
    fresh = dataclasses.replace(lay)
    assert "_derived" not in fresh.__dict__ and fresh == lay
    assert wire.layout(fresh, key=1, **kw) == one
    assert one["devices"]["local_process"] == 0
    assert wire.layout(lay, key=3, **{**kw, "local_process": 1})["devices"]["local_process"] == 1
    assert one["devices"]["local_process"] == 0  # the kept lists, not the dict around them

    view = ShardView(x, stats=False)
    try:
        view.spec = ["y", "x"]
        first = {k: v for k, v in view._layout.items() if k != "key"}
        view.spec = ["x", "y"]
        view.spec = ["y", "x"]
        assert {k: v for k, v in view._layout.items() if k != "key"} == first
        assert [b["i"] for b in first["blocks"]] == [
            [list(r) for r in b.index] for b in layout_of(view.array).blocks
        ]
    finally:
        view.close()
