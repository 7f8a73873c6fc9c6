"""Array views of the arrays JAX's own tests make (array_test, memories_test, layout_test,
pjit_test): empty arrays, unreduced partial sums, sub-meshes, single devices, GSPMD layouts,
pmap outputs. Geometry is checked against ``devices_indices_map``, data against numpy."""

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, snapshot, text


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
    mesh = jax.make_mesh((8,), ("x",))
    a = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, spec))
    v = ShardView(a)
    lay = v.layout
    assert lay.empty and lay.size == 0 and lay.logical_bytes == 0
    assert _layout_map(lay) == _index_map(a.sharding, shape)
    assert text.EMPTY in repr(v)
    html = v._repr_mimebundle_()[0]["text/html"]
    assert text.EMPTY in html
    drawn = [d for d in range(min(2, len(shape)))]
    first = {d: min(b.index[d] for b in lay.blocks) for d in range(len(shape)) if d not in drawn}
    shown = [b for b in lay.blocks if all(b.index[d] == i for d, i in first.items())]
    assert html.count("<rect") == len(shown) >= 1
    # every view dim choice draws (no division by the size-0 extent)
    for dims in ([0, 1], [1, 0]) if len(shape) >= 2 else ([0],):
        assert "<svg" in snapshot.render(lay, tuple(dims), n_devices=8)
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

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    host = np.arange(64, dtype=np.float32).reshape(8, 8) ** 1.5
    x = jax.device_put(host, NamedSharding(mesh, P("x", "y")))

    def f(x):
        return jax.lax.reduce_sum(x, [0], out_sharding=P("y", unreduced={"x"}))

    with jax.set_mesh(mesh):
        y = f(x)
    return mesh, host, x, f, y


def test_unreduced_array_shows_partials_per_device():
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
    assert note in v._repr_mimebundle_()[0]["text/html"]
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
    assert not y.is_deleted() and y.sharding.spec.unreduced == {"x"}
    v.reset()
    assert v.layout.partial
    import gc

    gc.collect()
    assert {id(a) for a in jax.live_arrays()} <= before  # no copy kept between updates


def test_function_view_of_an_unreduced_output():
    _, _, x, f, y = _unreduced()
    v = ShardView(f, x)
    assert v.error == ""
    out = v.trace.output_leaves[0].layout
    assert out.unreduced == ("x",) and out.typeof == str(jax.typeof(y))
    assert "{U:x}" in repr(v)
