"""The function view's picture names each leaf as the widget does."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.hlo import collectives as hlo_mod
from shardwidget.render.legend import legend_of
from shardwidget.render.text import holder_candidates
from tests.helpers import svgs_in


def test_function_picture_names_each_leaf_once() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("y", None)))
    one = ShardView(lambda a, b: a @ b, x, w).to_svg()
    assert "in a: float32[16@x,8@y]" in one and "in b: " in one
    assert "out: float32[16@x,4]" in one and "out out" not in one
    two = ShardView(lambda a, b: (a @ b, a), x, w).to_svg()
    assert "out[0]: " in two and "out[1]: " in two and "out out" not in two


def _multi_axis_array() -> jax.Array:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(("x", "y"), None)))


def test_a_dimension_over_two_axes_is_spelled_as_the_widget_spells_it() -> None:
    # The widget's axis title (js/array/grid/geometry.ts dimTitle) joins the axes with "+".
    v = ShardView(_multi_axis_array())
    picture, snap = v.to_svg(), "".join(svgs_in(v.snapshot().html))
    legend = legend_of(v.layout).replication
    assert "dim 0 (16) · sharded over x+y" in picture
    assert "sharded over x+y" in snap
    assert "dimension 0 split 8 ways over x+y" in legend
    for text in (picture, snap, *legend):
        assert "x × y" not in text and "x, y" not in text


def test_a_dimension_over_a_size_one_axis_is_not_split_in_the_picture_too() -> None:
    """On a 1 x 8 mesh, P('x', 'y'): x has size 1, so every device holds all of dim 0 (JAX's
    devices_indices_map says so); the saved picture says "not split (x has size 1)" as the live
    grid's title does (js/array/grid/geometry.ts dimTitle), not "sharded over x" (issue 38
    item 7)."""
    mesh = jax.make_mesh((1, 8), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    arr = jax.device_put(jnp.ones((16, 16)), NamedSharding(mesh, P("x", "y")))
    rows = {idx[0].indices(16) for idx in arr.sharding.devices_indices_map(arr.shape).values()}
    assert rows == {(0, 16, 1)}  # JAX: dim 0 whole on every device
    v = ShardView(arr)
    for text in (v.to_svg(), "".join(svgs_in(v.snapshot().html))):
        assert "dim 0 (16) · not split (x has size 1)" in text
        assert "sharded over x" not in text and "dim 1 (16) · sharded over y" in text


def test_the_picture_labels_holders_as_the_widget_does() -> None:
    # The widget (js/array/labels.ts deviceLabelCandidates) writes a run of holders "0–3 ×4".
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", None)))
    held: dict[tuple[int, ...], list[int]] = {}
    for d, idx in a.sharding.devices_indices_map(a.shape).items():
        held.setdefault(tuple(s.start or 0 for s in idx), []).append(d.id)
    assert all(len(ids) == 4 for ids in held.values())
    pic = ShardView(a).to_svg()
    for ids in held.values():
        lo, hi = min(ids), max(ids)
        assert sorted(ids) == list(range(lo, hi + 1))  # runs on this mesh
        assert f">{lo}–{hi} ×4<" in pic
        assert f">{lo}-{hi}<" not in pic


def test_holder_candidates_match_the_widget() -> None:
    # The same cases as js/tests (deviceLabelCandidates): runs of 3+ compress, pairs do not.
    assert holder_candidates([0, 1, 2, 3, 8]) == ["0–3,8 ×5", "0,1,2,3,8", "×5"]
    assert holder_candidates([0, 4]) == ["0,4", "×2"]
    assert holder_candidates(list(range(16)), badge=True) == ["0–15", ",".join(map(str, range(16)))]
    assert holder_candidates([5]) == ["5"]
    assert holder_candidates([0, 1, 2, 3]) == ["0–3 ×4", "0,1,2,3", "×4"]
    assert holder_candidates(list(range(32)), badge=True) == ["0–31"]


def test_the_picture_counts_collective_groups_as_the_widget_does() -> None:
    # The widget (js/function/collectives.ts groupsLabel): "2 devices × 4 groups".
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", "y")))
    f = lambda a: a.sum(0)  # noqa: E731 - summing dim 0 (over x, size 2) is an all-reduce over x
    hlo = jax.jit(f).lower(x).compile().as_text()
    assert "all-reduce" in hlo
    pic = ShardView(f, x).to_svg()
    assert "all-reduce over x" in pic and "2 devices × 4 groups" in pic
    assert "groups of" not in pic


def test_an_unreduced_picture_claims_no_heatmap_scale() -> None:
    # No device holds a block's values (only partial sums): no heatmap, so no colour bar and no
    # "statistics unavailable" (they are available: the partials' own).
    from tests.views.test_array_kinds import _unreduced

    *_, y = _unreduced()
    assert y.sharding.spec.unreduced  # really unreduced, as JAX says
    pic = ShardView(y).to_svg()
    assert "none: no device holds a block&#x27;s values, only partial sums of them" in pic
    assert "sw-ramp" not in pic and "statistics unavailable" not in pic
    assert ">heatmap<" not in pic


def test_the_snapshot_labels_holders_as_the_widget_does() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x", None)))
    b = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(None, "y")))
    snap_a = "".join(svgs_in(ShardView(a).snapshot().html))
    snap_b = "".join(svgs_in(ShardView(b).snapshot().html))
    for arr, snap in ((a, snap_a), (b, snap_b)):
        held: dict[tuple[int, ...], list[int]] = {}
        for d, idx in arr.sharding.devices_indices_map(arr.shape).items():
            held.setdefault(tuple(s.start or 0 for s in idx), []).append(d.id)
        for ids in held.values():
            assert f">{holder_candidates(ids)[0]}<" in snap
    assert ">0–3 ×4<" in snap_a and ">0-3 ×4<" not in snap_a
    assert ">0,4<" in snap_b and ">0,4 ×2<" not in snap_b  # a pair is a list, no count


def test_a_collective_over_two_axes_is_spelled_as_the_widget_spells_it() -> None:
    # The widget's table (js/function/collectives.ts axesLabel) joins the axes with ", ".
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(("x", "y"), None)))
    f = lambda a: a.sum(0)  # noqa: E731 - dim 0 split over x and y: one all-reduce over both
    hlo = jax.jit(f).lower(x).compile().as_text()
    # one all-reduce, one group of all 8 devices, however this JAX's XLA writes it (jax 0.10:
    # mesh['axis_0'=8,'axis_1'=1] {'axis_0'}; 0.8-0.9: [1,8]<=[8]; 0.11: mesh['x'=2,'y'=4]
    # {'x','y'}): read by the parser every fixture of tests/hlo/fixtures checks
    coords = {i: divmod(i, 4) for i in range(8)}
    (reduce,) = hlo_mod.collectives(hlo, list(range(8)), coords, ("x", "y"), (2, 4))
    assert reduce.kind == "all-reduce" and reduce.n_groups == 1 and reduce.group_size == 8
    v = ShardView(f, x)
    res = v.trace
    assert res is not None and any(tuple(c.axes) == ("x", "y") for c in res.collectives)
    pic = v.to_svg()
    assert "all-reduce over x, y" in pic
    assert "x × y" not in pic


def test_a_combined_all_reduce_shows_every_array_it_carries() -> None:
    """A data-parallel step's gradients, combined by XLA into one tuple all-reduce: the text view
    and the picture name every element the compiled HLO gives it (read from plain
    jax.jit(...).lower(...).compile()), not only the first array."""
    import re

    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    rep = NamedSharding(mesh, P())
    params = {"w1": jax.device_put(jnp.ones((16, 32)), rep),
              "w2": jax.device_put(jnp.ones((32, 16)), rep)}  # fmt: skip
    x = jax.device_put(jnp.ones((64, 16)), NamedSharding(mesh, P("data", None)))

    def step(p, x):
        def loss(p):
            return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"]) ** 2)

        g = jax.grad(loss)(p)
        return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

    hlo = jax.jit(step).lower(params, x).compile().as_text()
    tuples = re.findall(r"= \(([^)]*)\) all-reduce\(", hlo)
    assert tuples, "XLA combined no gradients here: the case is not built as meant"
    want = max(tuples, key=len)
    carried = [re.sub(r"\{[^}]*\}", "", s).strip() for s in want.split(", ")]
    assert len(carried) >= 2
    v = ShardView(step, params, x)
    shown = f"({', '.join(carried)})"
    assert shown in repr(v), (shown, repr(v))
    assert shown in v.to_svg().replace("&#x27;", "'")
