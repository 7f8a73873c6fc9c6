"""Array views of the arrays JAX's own tests make (array_test, memories_test, layout_test,
pjit_test): empty arrays, unreduced partial sums, sub-meshes, single devices, GSPMD layouts,
pmap outputs. Geometry is checked against ``devices_indices_map``, data against numpy."""

import base64
import re

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model import spec as spec_mod
from shardwidget.render import picture, text
from tests.helpers import require_unreduced


def _pictured(h: str) -> str:
    """The HTML with each embedded picture's SVG decoded after it (pictures are <img>s of their SVG,
    snapshot.embed)."""
    uris = re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", h)
    return h + "".join(base64.b64decode(u).decode() for u in uris)


def _index_map(sharding, shape):
    """device id -> ((start, stop), ...) as JAX says."""
    return {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(idx, shape, strict=True))
        for d, idx in sharding.devices_indices_map(shape).items()
    }


def _layout_map(lay):
    return {d: blk.index for blk in lay.blocks for d in blk.devices}


# ---------------------------------------------------------------------------- size 0
@pytest.mark.parametrize(
    ("shape", "spec"),
    [((0, 8), P(None, "x")), ((0, 8), P()), ((8, 0), P("x")), ((0,), P()), ((16, 0, 4), P("x"))],
)
def test_empty_arrays_show_their_layout_and_say_empty(tmp_path, shape, spec):
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    a = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, spec))
    v = ShardView(a)
    lay = v.layout
    assert lay.empty and lay.size == 0 and lay.logical_bytes == 0
    assert _layout_map(lay) == _index_map(a.sharding, shape)
    assert text.EMPTY in repr(v)
    html = _pictured(v._repr_mimebundle_()[0]["text/html"])
    assert text.EMPTY in html
    drawn = [d for d in range(min(2, len(shape)))]
    first = {d: min(b.index[d] for b in lay.blocks) for d in range(len(shape)) if d not in drawn}
    shown = [b for b in lay.blocks if all(b.index[d] == i for d, i in first.items())]
    assert html.count('<g class="block">') == len(shown) >= 1  # one drawn block each
    # every view dim choice draws (no division by the size-0 extent)
    for dims in ([0, 1], [1, 0]) if len(shape) >= 2 else ([0],):
        assert "<svg" in picture.array_svg(lay, None, tuple(dims), n_devices=8)
    assert v._layout["shape"] == list(shape) and v.error == ""
    assert v._stats["status"] == "unavailable" and "no elements" in v._stats["message"]
    report = v.save_html(tmp_path / "empty.html", variants=[{"spec": [None] * len(shape)}])
    page = (tmp_path / "empty.html").read_text()
    assert report is not None and "shardwidget" in page
    # re-layout of an empty array works and keeps it empty
    v.spec = [None] * len(shape)
    assert v.error == "" and v.layout.empty and v.array.shape == shape


# ---------------------------------------------------------------------------- unreduced
def _unreduced():
    """pjit_test's Explicit-mode reduce left unreduced: x (8, 8) on a 2x4 mesh, summed over
    dimension 0 with out_sharding P('y', unreduced={'x'})."""
    from jax.sharding import AxisType

    require_unreduced()

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    host = np.arange(64, dtype=np.float32).reshape(8, 8) ** 1.5
    x = jax.device_put(host, NamedSharding(mesh, P("x", "y")))

    def f(x):
        return jax.lax.reduce_sum(x, [0], out_sharding=P("y", unreduced={"x"}))

    with jax.set_mesh(mesh):
        y = f(x)
    return mesh, host, x, f, y


def test_unreduced_array_shows_partials_per_device():
    require_unreduced(partials=True)
    mesh, host, _, _, y = _unreduced()
    assert y.sharding.spec.unreduced == {"x"}
    v = ShardView(y)
    lay = v.layout
    assert lay.unreduced == ("x",) and lay.partial
    assert lay.spec_text == "P('y', unreduced={'x'})"
    assert lay.typeof == str(jax.typeof(y)) == "float32[8@y]{U:x}"
    # geometry: what each device's partial covers, as JAX lays out the partitions
    assert _layout_map(lay) == _index_map(NamedSharding(mesh, P("y")), (8,))
    assert lay.replication == 1  # the two holders of a block hold different partials
    # each device's partial: rows of its 'x' slice summed, over its 'y' columns (numpy)
    pos = {d.id: np.argwhere(mesh.devices == d)[0] for d in mesh.devices.flat}
    summ = v.summary
    assert all(s is None for s in summ.stats) and summ.partials is not None
    for dev, row in zip(lay.devices, summ.partials, strict=True):
        i, j = pos[dev.id]
        part = host[4 * i : 4 * i + 4, 2 * j : 2 * j + 2].sum(0)
        np.testing.assert_allclose(
            row[:4], [part.min(), part.max(), part.mean(), part.std()], rtol=1e-5
        )
    # the partials of each block add up to the array's value there
    for blk in lay.blocks:
        ((a, b),) = blk.index
        total = sum(host[4 * pos[d][0] : 4 * pos[d][0] + 4, a:b].sum(0) for d in blk.devices)
        np.testing.assert_allclose(total, host.sum(0)[a:b], rtol=1e-5)
    # the view says so: text, static picture, wire
    note = "each device holds a partial value"
    assert note in repr(v) and "unreduced over 'x'" in repr(v)
    html = _pictured(v._repr_mimebundle_()[0]["text/html"])
    assert note in html and ">Σ 0,4<" in html and "×2" not in html
    assert v._layout["unreduced"] == ["x"] and v._layout["spec_str"] == lay.spec_text
    assert len(v._stats["partials"]) == 8 and all(b is None for b in v._stats["blocks"])
    assert v._options["original"]["spec"] == ["y"]


def test_unreduced_array_relayout_sums_the_partials_and_leaves_the_original():
    _, host, _, _, y = _unreduced()
    v = ShardView(y)
    before = {id(a) for a in jax.live_arrays()}
    v.spec = [None]
    assert v.error == "" and not v.layout.partial and v.layout.replication == 8
    np.testing.assert_allclose(np.asarray(v.array), host.sum(0), rtol=1e-5)
    assert v.summary.partials is None and v.summary.stats[0] is not None
    assert (
        v._transfer["status"] == "unavailable" and "partial sums over 'x'" in v._transfer["message"]
    )
    with pytest.raises(ValueError, match="all-reduce"):
        _ = v.transfer
    assert not y.is_deleted() and y.sharding.spec.unreduced == {"x"}
    v.reset()
    assert v.layout.partial
    import gc

    gc.collect()
    assert {id(a) for a in jax.live_arrays()} <= before  # no copy kept between updates


def test_function_view_of_an_unreduced_output():
    require_unreduced(partials=True)
    _, _, x, f, y = _unreduced()
    v = ShardView(f, x)
    assert v.error == ""
    out = v.trace.output_leaves[0].layout
    assert out.unreduced == ("x",) and out.typeof == str(jax.typeof(y))
    assert "{U:x}" in repr(v) and "each device holds a partial value" in repr(v)
    out_stats = v._trace_stats["outputs"][0]
    assert len(out_stats["partials"]) == 8 and all(b is None for b in out_stats["blocks"])


# ---------------------------------------------------------------------------- sub-meshes
def _sub_array():
    """array_test's arrays on part of the devices: a (4, 4) on a 2-device mesh of devices 2, 3."""
    mesh = jax.make_mesh(
        (2,), ("x",), devices=jax.devices()[2:4], axis_types=(AxisType.Explicit,) * 1
    )
    host = np.arange(16, dtype=np.float32).reshape(4, 4)
    return host, jax.device_put(host, NamedSharding(mesh, P("x")))


def test_sub_mesh_spec_stays_on_the_arrays_devices():
    host, a = _sub_array()
    v = ShardView(a)
    assert v.devices == "array" and v._options["own_devices"] == [2, 3]
    assert v._options["own_factorizations"]["1"] == [[2]]
    v.spec = [None, "x"]
    assert v.error == ""
    want = jax.device_put(host, NamedSharding(a.sharding.mesh, P(None, "x")))
    assert _layout_map(v.layout) == _index_map(want.sharding, (4, 4))
    assert {d.id for d in v.layout.devices} == {2, 3}
    np.testing.assert_array_equal(np.asarray(v.array), host)
    # another mesh shape on the same two devices
    v.set_layout(mesh_shape=[1, 2], axis_names=["x", "y"], axis_types=["auto"] * 2, spec=["y"])
    assert [d.id for d in v.layout.devices] == [2, 3] and v.layout.mesh.axes == {"x": 1, "y": 2}
    assert _layout_map(v.layout) == _index_map(v.array.sharding, (4, 4))


def test_sub_mesh_relayout_onto_all_devices_and_back():
    host, a = _sub_array()
    v = ShardView(a)
    v.set_layout(devices="all", mesh_shape=[4, 2], axis_names=["x", "y"], spec=["x", "y"])
    assert v.devices == "all" and v.layout.n_devices == 8
    want = NamedSharding(
        jax.make_mesh(
            (4, 2), ("x", "y"), devices=jax.devices(), axis_types=(AxisType.Explicit,) * 2
        ),
        P("x", "y"),
    )
    assert _layout_map(v.layout) == _index_map(want, (4, 4))
    np.testing.assert_array_equal(np.asarray(v.array), host)
    # a mesh shape only one device set fits picks it: 2 devices -> the array's own
    v.set_layout(mesh_shape=[2], axis_names=["x"], axis_types=["auto"], spec=["x"])
    assert v.devices == "array" and {d.id for d in v.layout.devices} == {2, 3}
    # the device set alone: a mesh that no longer fits becomes one axis over the new set
    v.devices = "all"
    assert (v.mesh_shape, v.spec, v.layout.n_devices) == ([8], [None, None], 8)
    w = ShardView(a, devices="all")
    assert w.devices == "all" and w.layout.n_devices == 8 and w.error == ""
    v.devices = "array"
    assert v.mesh_shape == [2] and {d.id for d in v.layout.devices} == {2, 3}
    with pytest.raises(ValueError, match="has 8 devices, but the array has 2"):
        v.set_layout(devices="array", mesh_shape=[8], spec=["x"])
    assert v.devices == "array" and v.error == ""  # refused: nothing changed
    shown = v.layout
    with pytest.raises(ValueError, match="devices must be one of 'array', 'all'"):
        v.devices = "some"
    assert v.devices == "array" and v.layout == shown


def test_five_axis_mesh_spec_and_relayout_within_it():
    mesh = jax.make_mesh(
        (1, 2, 1, 2, 2), ("a", "b", "c", "d", "e"), axis_types=(AxisType.Explicit,) * 5
    )
    host = np.arange(64, dtype=np.float32).reshape(8, 8)
    a = jax.device_put(host, NamedSharding(mesh, P("b")))
    v = ShardView(a)
    assert v.axis_names == ["a", "b", "c", "d", "e"] and v.spec == ["b", None]
    assert len(v._options["factorizations"]) >= 5  # the controls can offer 5 axes
    v.spec = [("b", "d"), "e"]
    assert v.error == ""
    want = NamedSharding(mesh, P(("b", "d"), "e"))
    assert _layout_map(v.layout) == _index_map(want, (8, 8))
    assert v.array.sharding.mesh == mesh  # the array's own mesh, its device order
    np.testing.assert_array_equal(np.asarray(v.array), host)


def test_relayout_within_a_permuted_mesh_keeps_its_device_order():
    devs = np.array(jax.devices())[[3, 1, 7, 5, 0, 2, 4, 6]].reshape(2, 4)
    mesh = jax.sharding.Mesh(devs, ("x", "y"))
    a = jax.device_put(np.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y")))
    v = ShardView(a)
    v.spec = ["y", "x"]
    assert _layout_map(v.layout) == _index_map(NamedSharding(mesh, P("y", "x")), (4, 8))
    v.set_layout(mesh_shape=[8], axis_names=["x"], axis_types=["auto"], spec=[None, "x"])
    # the array's devices in its own order (devices="array")
    own = jax.sharding.Mesh(devs.reshape(8), ("x",))
    assert _layout_map(v.layout) == _index_map(NamedSharding(own, P(None, "x")), (4, 8))
    v.set_layout(devices="all")
    dflt = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    assert _layout_map(v.layout) == _index_map(NamedSharding(dflt, P(None, "x")), (4, 8))


# ---------------------------------------------------------------------------- own layouts
def test_single_device_array_controls_describe_one_device():
    host = np.arange(16, dtype=np.float32).reshape(4, 4)
    a = jax.device_put(host, jax.devices()[3])
    v = ShardView(a)
    assert (v.mesh_shape, v.spec, v.devices) == ([1], [None, None], "array")
    assert v._options["original"]["mesh_shape"] == [1] and v._options["own_devices"] == [3]
    assert "one device: cpu 3" in repr(v)
    assert v.array is a  # its own layout: the array itself, no copy
    v.spec = ["x", None]  # x has size 1: still device 3, still the original data
    assert [d.id for d in v.layout.devices] == [3]
    v.set_layout(mesh_shape=[8], spec=[None, None])  # only all devices fit: onto them
    assert v.devices == "all" and v.layout.n_devices == 8
    np.testing.assert_array_equal(np.asarray(v.array), host)


def _gspmd(spec, shape, mesh_shape=(2, 4)):
    from jax._src.sharding_impls import GSPMDSharding

    mesh = jax.make_mesh(mesh_shape, ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    named = NamedSharding(mesh, spec)
    hs = named._to_xla_hlo_sharding(len(shape))
    host = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return host, jax.device_put(host, GSPMDSharding(tuple(mesh.devices.flat), hs))


@pytest.mark.parametrize(
    ("spec", "shape"),
    [
        (P("x", "y"), (8, 8)),
        (P("y", None), (8, 4)),
        (P(None, "x"), (4, 4)),
        (P(("y", "x")), (16,)),
        (P(), (4, 2)),
    ],
)
def test_gspmd_layout_as_mesh_and_spec_with_statistics(spec, shape):
    from shardwidget.model.summary import plan_for, summarize

    host, a = _gspmd(spec, shape)
    assert type(a.sharding).__name__ == "GSPMDSharding"
    v = ShardView(a)
    lay = v.layout
    assert lay.sharding_type == "GSPMDSharding" and lay.mesh is not None and not lay.custom
    # the mesh and spec read from the tile assignment put the same blocks on the same devices
    mesh = jax.sharding.Mesh(
        np.array(jax.devices())[list(lay.mesh.device_ids)].reshape(lay.mesh.axis_sizes),
        lay.mesh.axis_names,
    )
    rebuilt = NamedSharding(mesh, spec_mod.to_partition_spec(lay.spec))
    assert _index_map(rebuilt, shape) == _index_map(a.sharding, shape)
    assert _layout_map(lay) == _index_map(a.sharding, shape)
    assert v._options["original"] is not None and v.devices == "array"
    assert "(its tile assignment)" in repr(v)
    # statistics (no longer skipped): per block, against numpy
    summ = summarize(a, lay, plan_for(lay, (0, 1)[: len(shape)], 64, 64))
    assert summ.status == "ready"
    for blk, row in zip(lay.blocks, summ.stats, strict=True):
        part = host[blk.slices]
        np.testing.assert_allclose(
            row[:4], [part.min(), part.max(), part.mean(), part.std()], rtol=1e-5
        )
    assert v._stats["status"] == "ready"
    # re-layout from it works, the original untouched
    v.set_layout(
        devices="all",
        mesh_shape=[8],
        axis_names=["x"],
        axis_types=["auto"],
        spec=[None] * len(shape),
    )
    assert v.error == "" and v.layout.replication == 8
    np.testing.assert_array_equal(np.asarray(v.array), host)
    assert type(a.sharding).__name__ == "GSPMDSharding"


def test_gspmd_custom_layout_is_said_in_words_with_statistics():
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    from shardwidget.model.gspmd import CUSTOM

    op = xc.OpSharding()
    op.type = xc.OpSharding.Type.MAXIMAL
    op.tile_assignment_devices = [2]
    op.tile_assignment_dimensions = [1]
    host = np.arange(16, dtype=np.float32).reshape(4, 4)
    a = jax.device_put(host, GSPMDSharding(tuple(jax.devices()[:4]), op))
    v = ShardView(a)
    assert v.layout.custom and v.layout.mesh is None
    assert _layout_map(v.layout) == _index_map(a.sharding, (4, 4))
    assert CUSTOM in repr(v) and CUSTOM in _pictured(v._repr_mimebundle_()[0]["text/html"])
    assert v._options["original"] is None  # no mesh and spec: the controls offer targets
    assert v._stats["status"] == "ready"
    np.testing.assert_allclose(v._stats["blocks"][0][:2], [host.min(), host.max()])
    v.spec = ["x", None]
    assert v.error == "" and v.layout.n_devices == 4
    np.testing.assert_array_equal(np.asarray(v.array), host)


def test_pmap_output_is_labelled_in_words_and_relayout_works():
    from shardwidget.model.pmap_axis import LABEL
    from shardwidget.trace.pmap import INTERNAL_AXIS

    host = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    out = jax.pmap(lambda x: x * 2)(host)
    v = ShardView(out)
    assert v.axis_names == [LABEL] and v.spec == [LABEL, None]
    assert (
        v.layout.spec_text == f"P('{LABEL}', None)" and v.layout.typeof == f"float32[8@{LABEL},2]"
    )
    assert INTERNAL_AXIS not in repr(v) and INTERNAL_AXIS not in v._layout["typeof"]
    assert "a jax.pmap output" in repr(v) and "a jax.pmap output" in v._layout["note"]
    assert INTERNAL_AXIS not in str(v._options)
    assert _layout_map(v.layout) == _index_map(out.sharding, (8, 2))
    assert v.array is out
    v.spec = [None, None]
    assert v.error == "" and v.layout.replication == 8
    v.spec = [LABEL, None]  # back on pmap's mesh, under the label
    assert _layout_map(v.layout) == _index_map(out.sharding, (8, 2))
    np.testing.assert_array_equal(np.asarray(v.array), host * 2)


# ---------------------------------------------------------------------------- JAX's cases
def _case(mesh_shape, names, spec, shape, dtype=np.float32, memory_kind=None, order=None):
    devs = np.array(jax.devices())
    if order is not None:
        devs = devs[list(order)]
    mesh = jax.sharding.Mesh(devs.reshape(mesh_shape), names)
    host = (np.arange(int(np.prod(shape))) % 23 - 7).reshape(shape).astype(dtype)
    return host, jax.device_put(host, NamedSharding(mesh, spec, memory_kind=memory_kind))


def _buffers():
    """The device buffers live arrays hold (JAX caches shard views of an array: same buffers)."""
    return {
        (s.device.id, s.data.unsafe_buffer_pointer())
        for x in jax.live_arrays()
        for s in x.addressable_shards
    }


CASES = {
    # array_test: the mesh shapes and specs its sharding tests sweep
    "2d-xy": ((2, 4), ("x", "y"), P("x", "y"), (8, 8)),
    "2d-yx": ((2, 4), ("x", "y"), P("y", "x"), (8, 8)),
    "2d-x-replicated": ((2, 4), ("x", "y"), P("x"), (8, 2)),
    "2d-none-y": ((2, 4), ("x", "y"), P(None, "y"), (2, 8)),
    "2d-both-axes-one-dim": ((2, 4), ("x", "y"), P(("x", "y")), (16, 3)),
    "2d-both-axes-reversed": ((2, 4), ("x", "y"), P(("y", "x"), None), (8, 3)),
    "fully-replicated": ((4, 2), ("x", "y"), P(), (5, 3)),
    "3d-mesh": ((2, 2, 2), ("x", "y", "z"), P("z", ("x", "y")), (4, 8)),
    "1d-mesh-1d": ((8,), ("x",), P("x"), (32,)),
    "mesh-1x8": ((1, 8), ("x", "y"), P("x", "y"), (2, 8)),
    "rank-3": ((2, 4), ("x", "y"), P("x", None, "y"), (2, 3, 8)),
    "scalar": ((8,), ("x",), P(), ()),
    # array_test's non-default device orders
    "permuted-order": (
        (2, 4),
        ("x", "y"),
        P("x", "y"),
        (4, 8),
        np.float32,
        None,
        (7, 6, 5, 4, 3, 2, 1, 0),
    ),
    # memories_test: host memory kinds
    "pinned-host": ((2, 4), ("x", "y"), P("x", "y"), (8, 8), np.float32, "pinned_host"),
    "unpinned-host": ((8,), ("x",), P(None, "x"), (2, 8), np.float32, "unpinned_host"),
    # dtypes
    "int8": ((2, 4), ("x", "y"), P("x"), (4, 4), np.int8),
    "bool": ((2, 4), ("x", "y"), P(None, "y"), (4, 4), np.bool_),
    "complex64": ((2, 4), ("x", "y"), P("y"), (8, 2), np.complex64),
}


@pytest.mark.parametrize("name", list(CASES))
def test_representative_shardings_against_jax_and_numpy(name):
    from shardwidget.model.summary import plan_for, summarize

    host, a = _case(*CASES[name])
    shape = tuple(a.shape)
    before = _buffers()
    v = ShardView(a)
    assert "<svg" in _pictured(v._repr_mimebundle_()[0]["text/html"])
    assert _buffers() <= before  # the view holds no device memory of its own
    lay = v.layout
    assert _layout_map(lay) == _index_map(a.sharding, shape)
    for s in a.addressable_shards:  # every shard's data is what numpy's slice says
        blk = lay.blocks[lay.device_block[s.device.id]]
        np.testing.assert_array_equal(np.asarray(s.data), host[blk.slices])
    assert lay.typeof.startswith(f"{a.dtype}[") and lay.shape == shape
    assert lay.memory_kind == (a.sharding.memory_kind or "device")
    summ = summarize(a, lay, plan_for(lay, tuple(range(min(2, len(shape)))), 64, 4096))
    for blk, row in zip(lay.blocks, summ.stats, strict=True):
        part = (
            np.abs(host[blk.slices]).astype(np.float64)
            if host.dtype.kind == "c"
            else host[blk.slices].astype(np.float64)
        )
        np.testing.assert_allclose(
            row[:4], [part.min(), part.max(), part.mean(), part.std()], rtol=1e-5, atol=1e-6
        )
    assert lay.typeof in repr(v) and "<svg" in _pictured(v._repr_mimebundle_()[0]["text/html"])
    assert v._layout["typeof"] == lay.typeof and v.error == ""


def test_device_local_layout_format_is_shown_and_relaid_out():
    """layout_test: an array with a custom device-local layout (Format(Layout(...), sharding))."""
    from jax.experimental.layout import Format, Layout

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    s = NamedSharding(mesh, P("x", "y"))
    host = np.arange(64, dtype=np.float32).reshape(8, 8)
    a = jax.device_put(host, Format(Layout(major_to_minor=(0, 1)), s))
    v = ShardView(a)
    assert _layout_map(v.layout) == _index_map(s, (8, 8)) and v._stats["status"] == "ready"
    v.spec = ["y", None]
    assert v.error == ""
    np.testing.assert_array_equal(np.asarray(v.array), host)


def test_make_array_from_callback_and_single_device_arrays():
    """array_test: arrays assembled per device from host data."""
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    s = NamedSharding(mesh, P("x", "y"))
    host = np.arange(32, dtype=np.float32).reshape(8, 4)
    a = jax.make_array_from_callback(host.shape, s, lambda idx: host[idx])
    shards = [
        jax.device_put(host[i], d) for d, i in s.addressable_devices_indices_map((8, 4)).items()
    ]
    b = jax.make_array_from_single_device_arrays((8, 4), s, shards)
    for arr in (a, b):
        v = ShardView(arr)
        assert _layout_map(v.layout) == _index_map(s, (8, 4))
        np.testing.assert_allclose(v.summary.stats[0][:2], [host[:2, :2].min(), host[:2, :2].max()])


def _same_marks(ours: str, jaxs: str) -> bool:
    """The same typeof, the axes inside a {U:(...)} / {R:(...)} mark compared as sets."""

    def norm(t: str) -> str:
        return re.sub(r"\(([^()]*)\)", lambda m: ",".join(sorted(m.group(1).split(","))), t)

    return ours == jaxs or (norm(ours) == norm(jaxs) and "{" in jaxs)


def test_unreduced_over_two_axes_and_reduced_sets_read_as_jax_writes_them():
    from jax.sharding import AxisType

    require_unreduced(partials=True)

    mesh = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AxisType.Explicit,) * 3)
    host = np.arange(64, dtype=np.float32).reshape(8, 8)
    x = jax.device_put(host, NamedSharding(mesh, P(("x", "y"), "z")))
    with jax.set_mesh(mesh):
        y = jax.lax.reduce_sum(x, [0], out_sharding=P("z", unreduced={"y", "x"}))
    v = ShardView(y)
    # (before jax 0.10, JAX writes the set in its own iteration order, which depends on the
    # process's string hashes: the same axes, in the order this set gives, or mesh order)
    assert v.layout.unreduced == ("x", "y") and _same_marks(v.layout.typeof, str(jax.typeof(y)))
    assert v.layout.spec_text == "P('z', unreduced={'x', 'y'})"
    assert v.layout.replication == 1 and len(v.summary.partials) == 8
    v.spec = [None]
    np.testing.assert_allclose(np.asarray(v.array), host.sum(0))
    r = jax.device_put(host, NamedSharding(mesh, P("x", reduced={"y"})))
    w = ShardView(r)
    assert w.layout.reduced == ("y",) and not w.layout.partial
    assert (
        w.layout.typeof == str(jax.typeof(r))
        and w.layout.spec_text == "P('x', None, reduced={'y'})"
    )
    assert _layout_map(w.layout) == _index_map(NamedSharding(mesh, P("x")), (8, 8))


def test_pmap_output_on_half_the_devices_relays_out_within_them_or_onto_all():
    host = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    out = jax.pmap(lambda x: x * 2)(host)
    v = ShardView(out)
    # pmap's mesh: a NamedSharding's (jax 0.8+), or the devices of jax 0.7's PmapSharding
    own = getattr(out.sharding, "mesh", None)
    own = own if own is not None else jax.sharding.Mesh(out.sharding.devices, ("pmap",))
    assert v._options["own_devices"] == [d.id for d in own.devices.flat]
    assert v.mesh_shape == [4] and v.devices == "array"
    v.spec = [None, "pmap"]
    assert [d.id for d in v.layout.devices] == v._options["own_devices"]
    want = NamedSharding(own, P(None, own.axis_names[0]))
    assert _layout_map(v.layout) == _index_map(want, (4, 4))
    v.set_layout(mesh_shape=[2, 2], axis_names=["a", "b"], spec=["a", "b"])
    assert {d.id for d in v.layout.devices} == set(v._options["own_devices"])
    v.set_layout(mesh_shape=[8], axis_names=["x"], spec=[None, None])
    assert v.devices == "all" and v.layout.n_devices == 8
    np.testing.assert_array_equal(np.asarray(v.array), host * 2)


def test_legend_of_an_unreduced_layout_speaks_of_partials_not_copies():
    from shardwidget.render.legend import legend_of

    _, _, _, _, y = _unreduced()
    lg = legend_of(ShardView(y).layout)
    assert "partial sums over x: 2 partials per block, added up" in lg.replication
    assert not any("replicated over x" in line for line in lg.replication)
    assert "no copies: each element on one device" in lg.replication
    marks = dict(lg.marks)
    assert "partial sum, not a copy" in marks["stripes"] and marks["labels"].startswith("Σ")


def test_svg_pictures_say_empty_partial_and_custom():
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    from shardwidget.model.gspmd import CUSTOM

    _, _, _, _, y = _unreduced()
    pic = ShardView(y).to_svg()
    assert ">Σ 0,4<" in pic and "each device holds a partial value" in pic
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    e = jax.device_put(np.zeros((0, 8), np.float32), NamedSharding(mesh, P(None, "x")))
    assert text.EMPTY in ShardView(e).to_svg()
    op = xc.OpSharding()
    op.type = xc.OpSharding.Type.MAXIMAL
    op.tile_assignment_devices = [2]
    op.tile_assignment_dimensions = [1]
    g = jax.device_put(np.ones((4, 4), np.float32), GSPMDSharding(tuple(jax.devices()[:4]), op))
    assert CUSTOM in ShardView(g).to_svg()
