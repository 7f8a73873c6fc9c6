"""Thumbnails follow their block's aspect and orientation (issue 13 item 13): a tall block gets
a tall thumbnail whose pixels are the block's pooled means, checked against numpy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model.summary import MAX_THUMB_SIDE, thumb_rows


def _thumb(v, k=0):
    st = v._stats_now()
    r, c = st["thumb_shapes"][k]
    off = st["thumb_offsets"][k]
    raw = np.frombuffer(bytes(st["thumbs"]), np.uint8)[off : off + r * c].reshape(r, c)
    return raw, st["vmin"], st["vmax"]


@pytest.mark.parametrize(
    ("shape", "spec", "tall"),
    [((8192, 2048), P("x", "y"), True), ((2048, 8192), P("x", "y"), False)],
)
def test_thumbnail_shape_follows_the_block(shape, spec, tall):
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    v = ShardView(jax.device_put(jnp.asarray(x), NamedSharding(mesh, spec)))
    t, vmin, vmax = _thumb(v)
    r, c = t.shape
    assert (r > c) == tall and (r < c) == (not tall), t.shape
    # The pixels are pooled means of block 0, rows down and columns across.
    (i0, i1), (j0, j1) = v.layout.blocks[0].index
    block = x[i0:i1, j0:j1]
    want = block.reshape(r, block.shape[0] // r, c, block.shape[1] // c).mean(axis=(1, 3))
    got = vmin + t.astype(np.float64) / 255 * (vmax - vmin)
    assert np.abs(got - want).max() <= (vmax - vmin) / 255 + 1e-6


def test_thumb_rows_keeps_square_blocks_square():
    assert thumb_rows(1024, 512, 512) == 32 == MAX_THUMB_SIDE
    assert thumb_rows(256, 512, 512) == 16
    assert thumb_rows(256, 2048, 1024) == 22  # isqrt(512): taller than wide
    assert thumb_rows(256, 1024, 2048) == 11
