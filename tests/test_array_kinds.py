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
