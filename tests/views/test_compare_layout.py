"""compare(): its text lines up whatever the names' lengths; its widget never cuts a view's
tables (issue 13 item 12)."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, compare


def _views():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))
    return ShardView(lambda a: a.sum(axis=0), x), ShardView(lambda a: a * 2, x)


def test_text_columns_line_up_with_long_names():
    long = "a rather long name for the row-sum version of this computation"
    c = compare(*_views(), names=[long, "double"])
    lines = repr(c).splitlines()
    assert len(lines) == 3 and lines[0].startswith("name ")
    assert lines[1].startswith(long) and lines[2].startswith("double ")
    # Every column starts at the same offset on every line: the header's column starts.
    head = lines[0]
    starts = [head.index(h) for h in ("mode", "outputs", "collectives", "sent", "peak")]
    for line in lines[1:]:
        for s in starts:
            assert line[s - 2 : s] == "  " and line[s] != " ", (s, line)
    assert lines[1][starts[0] :].startswith(c.rows[0]["mode"])
    assert lines[2][starts[0] :].startswith(c.rows[1]["mode"])


def test_widget_columns_wrap_and_scroll_instead_of_cutting():
    c = compare(*_views(), names=["sum", "double"])
    box = c.widget().children[1]
    assert box.layout.flex_flow == "row wrap"
    for col in box.children:
        assert col.layout.overflow == "auto" and col.layout.min_width == "0"


def test_layout_diff_text_lines_up():
    """compare() of two array views: the arrows and amounts of every device line line up,
    whatever the lengths of the boxes."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(16.0 * 128).reshape(16, 128), NamedSharding(mesh, P("x", "y")))
    a, b = ShardView(x), ShardView(x)
    b.spec = ["y", None]  # rows of 4 (boxes like [0:4, 0:128]) against [0:8, 0:32]
    lines = [ln for ln in repr(compare(a, b)).splitlines() if ln.startswith("  device")]
    assert len(lines) >= 2
    assert len({ln.index("→") for ln in lines}) == 1, lines
    assert len({ln.index("receives") for ln in lines}) == 1, lines
