"""The adapter's one record of a sharding (shardwidget._jax.record, issue 34 item 3), for every
kind of JAX sharding, checked against JAX itself: the mesh against ``mesh.devices``, the
devices against the sharding's own device order and processes, and the blocks the model lays
out from the record against ``devices_indices_map`` (of the partitions, for an unreduced spec).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget._jax import record as record_mod
from shardwidget._jax.record import ShardingRecord, record_of
from shardwidget.model.layout import Layout, layout_of, layout_of_record

JAX_VERSION = tuple(int(v) for v in jax.__version__.split(".")[:2])


def _jax_map(sharding: Any, shape: tuple[int, ...]) -> dict[int, tuple[tuple[int, int], ...]]:
    """Device id -> block, as JAX's own devices_indices_map says (ints: a pmap's unstacked
    dimension)."""
    out = {}
    for d, idx in sharding.devices_indices_map(shape).items():
        out[int(d.id)] = tuple(
            (s, s + 1) if isinstance(s, int) else s.indices(n)[:2]
            for s, n in zip(idx, shape, strict=True)
        )
    return out


def _model_map(lay: Layout) -> dict[int, tuple[tuple[int, int], ...]]:
    return {d: lay.blocks[b].index for d, b in lay.device_block.items()}


def _check(sharding: Any, shape: tuple[int, ...], geometry: Any = None) -> ShardingRecord:
    """The record of sharding, its layout's blocks against JAX's (of `geometry`, where the
    blocks are another sharding's: an unreduced spec's partitions), its devices against the
    sharding's device order; the record holds no JAX object."""
    rec = record_of(sharding, shape)
    lay = layout_of_record(rec, np.float32)
    assert _model_map(lay) == _jax_map(geometry or sharding, shape)
    order = list(sharding._device_assignment)  # (JAX's device order; private, read in a test)
    assert [d.id for d in rec.devices] == [int(d.id) for d in order]
    assert rec.processes == tuple(int(d.process_index) for d in order)
    assert rec.memory_kind == str(sharding.memory_kind or "device")
    assert rec.sharding_type == type(sharding).__name__
    _assert_plain(rec)
    return rec


def _assert_plain(value: Any) -> None:
    """Only plain data inside: dataclasses of str, int, bool, None and tuples of them."""
    if dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            _assert_plain(getattr(value, f.name))
    elif isinstance(value, tuple):
        for v in value:
            _assert_plain(v)
    else:
        assert value is None or type(value) in (str, int, bool), (type(value), value)


def _mesh(types: Any = AxisType.Auto) -> Any:
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(types,) * 2)


@pytest.mark.parametrize("types", [AxisType.Auto, AxisType.Explicit])
@pytest.mark.parametrize(
    ("spec", "shape"),
    [(P("x", "y"), (8, 8)), (P(("y", "x")), (16,)), (P(None, "x"), (3, 4)), (P(), (2, 2))],
)
def test_a_named_sharding(types: Any, spec: Any, shape: tuple[int, ...]) -> None:
    mesh = _mesh(types)
    rec = _check(NamedSharding(mesh, spec), shape)
    assert rec.mesh is not None and rec.spec is not None and rec.indices is None  # numpy's
    assert rec.mesh.axis_names == ("x", "y") and rec.mesh.axis_sizes == (2, 4)
    assert rec.mesh.device_ids == tuple(int(d.id) for d in mesh.devices.flat)
    want = "explicit" if types == AxisType.Explicit else "auto"
    assert rec.mesh.axis_types == (want, want)
    entries = [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in spec]
    assert rec.spec == tuple(entries)


def test_a_mesh_in_another_device_order_and_an_uneven_cut_refused_as_jax_does() -> None:
    devs = np.array(jax.devices())[[3, 1, 7, 5, 0, 2, 6, 4]].reshape(2, 4)
    mesh = jax.sharding.Mesh(devs, ("x", "y"))
    rec = _check(NamedSharding(mesh, P("y", "x")), (8, 6))
    assert rec.mesh is not None and rec.mesh.device_ids == (3, 1, 7, 5, 0, 2, 6, 4)
    with pytest.raises(
        ValueError, match="evenly divide"
    ):  # 6 rows on 4 devices: refused, in JAX's own words
        NamedSharding(mesh, P("y")).devices_indices_map((6, 2))
    with pytest.raises(ValueError, match="evenly divide"):
        _check(NamedSharding(mesh, P("y")), (6, 2))


def test_unreduced_and_reduced_axes() -> None:
    if JAX_VERSION < (0, 8):
        pytest.skip("jax 0.7 has no unreduced PartitionSpec")
    mesh = _mesh(AxisType.Explicit)
    try:
        spec = P("y", unreduced={"x"})
    except TypeError:
        pytest.skip("this jax's PartitionSpec takes no unreduced=")
    rec = _check(NamedSharding(mesh, spec), (8, 4), geometry=NamedSharding(mesh, P("y")))
    assert rec.unreduced == ("x",) and rec.reduced == () and rec.spec == (("y",),)
    try:
        spec_r = P("x", reduced={"y"})
    except TypeError:
        return
    rec_r = _check(NamedSharding(mesh, spec_r), (8, 4), geometry=NamedSharding(mesh, P("x")))
    assert rec_r.reduced == ("y",) and rec_r.unreduced == ()


def test_a_memory_kind() -> None:
    mesh = _mesh(AxisType.Explicit)
    a = jax.device_put(jnp.ones((4, 8)), NamedSharding(mesh, P("x"), memory_kind="pinned_host"))
    assert _check(a.sharding, (4, 8)).memory_kind == "pinned_host"


def test_a_single_device_sharding() -> None:
    dev = jax.devices()[5]
    rec = _check(SingleDeviceSharding(dev), (3, 5))
    assert rec.mesh is None and rec.spec is None and rec.tile is None
    assert rec.indices == ((5, ((0, 3), (0, 5))),)


def _gspmd(spec: Any, shape: tuple[int, ...]) -> Any:
    from jax._src.sharding_impls import GSPMDSharding  # (a test builds JAX's private kind)

    mesh = _mesh()
    hs = NamedSharding(mesh, spec)._to_xla_hlo_sharding(len(shape))
    return GSPMDSharding(tuple(mesh.devices.flat), hs)


@pytest.mark.parametrize(
    ("spec", "shape"), [(P("x", "y"), (8, 8)), (P("y", None), (8, 4)), (P(), (4, 2))]
)
def test_a_gspmd_sharding_reads_as_its_tile_assignment(spec: Any, shape: tuple[int, ...]) -> None:
    sharding = _gspmd(spec, shape)
    rec = _check(sharding, shape)
    assert rec.tile is not None and rec.tile.replicas_only and rec.indices is not None
    hs = sharding._hlo_sharding  # (JAX's own tile assignment, read in a test)
    if not hs.is_replicated():
        assert rec.tile.dims == tuple(int(d) for d in hs.tile_assignment_dimensions())
        assert rec.tile.order == tuple(int(i) for i in hs.tile_assignment_devices())
    lay = layout_of_record(rec, np.float32)
    assert lay.mesh is not None  # a mesh and spec describe it: the same blocks as JAX's
    rebuilt = jax.sharding.Mesh(
        np.array(jax.devices())[list(lay.mesh.device_ids)].reshape(lay.mesh.axis_sizes),
        lay.mesh.axis_names,
    )
    from shardwidget.model import spec as spec_mod

    named = NamedSharding(rebuilt, spec_mod.to_partition_spec(lay.spec))
    assert _jax_map(named, shape) == _jax_map(sharding, shape)


def test_a_maximal_gspmd_sharding_is_a_custom_layout() -> None:
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    op = xc.OpSharding()
    op.type = xc.OpSharding.Type.MAXIMAL
    op.tile_assignment_devices = [2]
    op.tile_assignment_dimensions = [1]
    sharding = GSPMDSharding(tuple(jax.devices()[:4]), op)
    rec = _check(sharding, (4, 4))
    assert rec.tile is None and layout_of_record(rec, np.float32).mesh is None


def test_pmaps_outputs() -> None:
    out = jax.pmap(lambda x: x * 2)(jnp.arange(16.0).reshape(8, 2))
    rec = _check(out.sharding, (8, 2))
    assert rec.mesh is not None and rec.mesh.axis_sizes == (8,)
    assert rec.mesh.pmap_axis == rec.mesh.axis_names[0]  # pmap's unnamed axis, by JAX's name
    lay = layout_of(out)
    assert lay.mesh is not None and len(lay.blocks) == 8 and lay.shard_shape == (1, 2)


def test_an_abstract_mesh() -> None:
    mesh = jax.sharding.AbstractMesh((2, 4), ("x", "y"), (AxisType.Explicit,) * 2)
    sharding = NamedSharding(mesh, P("y", "x"))
    rec = record_of(sharding, (8, 6))
    _assert_plain(rec)
    assert rec.mesh is not None and rec.mesh.planned and rec.mesh.device_ids == tuple(range(8))
    assert [d.id for d in rec.devices] == list(range(8)) and rec.indices is None
    # positions laid out as a concrete mesh of the same shape lays out its devices' ids
    concrete = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    lay = layout_of_record(rec, np.float32)
    assert _model_map(lay) == _jax_map(NamedSharding(concrete, P("y", "x")), (8, 6))
    with pytest.raises(ValueError, match="cannot lay out shape"):
        layout_of_record(record_of(sharding, (6, 6)), np.float32)  # 6 rows on 4 positions


def test_a_topology_mesh() -> None:
    from shardwidget import tpu_mesh
    from shardwidget.plan import tpu

    if tpu.unavailable():
        pytest.skip(tpu.unavailable())
    mesh = tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    rec = record_of(NamedSharding(mesh, P("data", "model")), (8, 8))
    _assert_plain(rec)
    where = mesh.abstract_device.positions  # (chip coordinates, core, slice) per position
    assert [d.coords for d in rec.devices] == [tuple(c) for c, _, _ in where]
    assert {d.platform for d in rec.devices} == {"tpu"}


def test_one_record_per_sharding_and_shape() -> None:
    sharding = NamedSharding(_mesh(), P("x"))
    assert record_of(sharding, (8, 2)) is record_of(sharding, (8, 2))
    assert record_mod.mesh_record(sharding.mesh) is record_mod.mesh_record(sharding.mesh)
