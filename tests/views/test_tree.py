"""ShardView(tree): leaves, per_device, rules, tree and code checked against JAX's own
shardings (devices_indices_map, addressable_shards), on plain pytrees and ShapeDtypeStruct
trees. Flax NNX / optax trees: tests/views/test_tree_flax.py."""

from __future__ import annotations

import gc
import math
import re
from html import escape

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model import rules as rules_mod
from shardwidget.model import spec as spec_mod
from shardwidget.views.tree import TreeView


@pytest.fixture
def mesh():
    return jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)


@pytest.fixture
def params(mesh):
    """A small model: an embedding, two layers as a list, an int4 weight, static leaves."""
    put = jax.device_put
    return {
        "embed": put(jnp.arange(64 * 16, dtype=jnp.float32).reshape(64, 16)),
        "layers": [
            {
                "w": put(jnp.ones((16, 32)), NamedSharding(mesh, P("data", "model"))),
                "b": put(jnp.zeros(32)),
            },
            {"w": put(jnp.ones((32, 16), jnp.int4)), "b": put(jnp.zeros(6, jnp.bfloat16))},
        ],
        "step": 3,
        "name": "tiny",
        "nothing": None,
    }


def _jax_per_device(tree) -> dict[int, int]:
    """Bytes per device as JAX holds them: each addressable shard's elements, int4 packed."""
    total: dict[int, int] = {}
    for x in jax.tree.leaves(tree):
        if not isinstance(x, jax.Array):
            continue
        bits_of = getattr(jax.dtypes, "itemsize_bits", None)  # (jax 0.8+; below: int4 is 4)
        bits = bits_of(x.dtype) if bits_of else 4 if "int4" in x.dtype.name else x.itemsize * 8
        for s in x.addressable_shards:
            n = int(np.prod(s.data.shape))
            total[s.device.id] = total.get(s.device.id, 0) + -(-n * bits // 8)
    return dict(sorted(total.items()))


def _geometry(sharding, shape) -> dict[int, tuple]:
    return {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(idx, shape, strict=True))
        for d, idx in sharding.devices_indices_map(shape).items()
    }


def _layout_geometry(lay) -> dict[int, tuple]:
    return {d: blk.index for blk in lay.blocks for d in blk.devices}


def test_dict_tree_is_a_tree_view_with_leaves_in_flatten_order(params, mesh):
    view = ShardView(params, mesh=mesh)
    assert isinstance(view, TreeView)
    paths = [jax.tree_util.keystr(p) for p, x in jax.tree_util.tree_flatten_with_path(params)[0]]
    arrays = [p for p, x in zip(paths, jax.tree.leaves(params), strict=True) if hasattr(x, "shape")]
    assert [leaf.path for leaf in view.leaves] == arrays
    assert [s.path for s in view.static] == ["['name']", "['step']"]
    for leaf, x in zip(
        view.leaves, [x for x in jax.tree.leaves(params) if hasattr(x, "shape")], strict=True
    ):
        assert leaf.shape == x.shape and leaf.dtype == x.dtype
        assert _layout_geometry(leaf.layout) == _geometry(x.sharding, x.shape)
    w = view.leaf("['layers'][0]['w']")
    assert w.spec == P("data", "model")


def test_per_device_equals_jax_shards_int4_packed(params, mesh):
    view = ShardView(params, mesh=mesh)
    assert view.per_device == _jax_per_device(params)
    view.rules = [(r"embed", P("data")), (r"\['w'\]", P(None, "model"))]
    assert view.per_device == _jax_per_device(view.tree)


def test_rules_first_match_wins_unmatched_keep_layout_short_specs_padded(params, mesh):
    view = ShardView(params, mesh=mesh)
    view.rules = [(r"layers.*\['w'\]", P("model")), (r"\['w'\]", P("data")), ("embed", P())]
    by = {leaf.path: leaf for leaf in view.leaves}
    # the rule's spec as written, as JAX keeps it; its layout is the padded one's
    assert by["['layers'][0]['w']"].spec == P("model")
    assert by["['layers'][1]['w']"].spec == P("model")
    assert by["['embed']"].spec == P()
    for path in ("['layers'][0]['w']", "['layers'][1]['w']"):
        padded = NamedSharding(mesh, P("model", None))
        assert by[path].sharding.is_equivalent_to(padded, 2)
    assert by["['layers'][0]['b']"].sharding == params["layers"][0]["b"].sharding
    placed = view.tree
    for leaf, x in zip(
        view.leaves, [x for x in jax.tree.leaves(placed) if hasattr(x, "shape")], strict=True
    ):
        assert leaf.sharding.is_equivalent_to(x.sharding, x.ndim)
        assert _layout_geometry(leaf.layout) == _geometry(x.sharding, x.shape)
        if isinstance(x.sharding, NamedSharding):
            assert leaf.spec == x.sharding.spec, leaf.path
    np.testing.assert_array_equal(np.asarray(placed["embed"]), np.asarray(params["embed"]))
    assert placed["layers"][0]["b"] is params["layers"][0]["b"]  # unchanged: the user's own
    assert placed["step"] == 3 and placed["nothing"] is None


@pytest.mark.parametrize(
    ("rules", "words"),
    [
        ([(r"embed", P("data", None, "model"))], ["rule 1", "['embed']", "3 entries"]),
        ([(r"\['b'\]", P("model"))], []),  # both biases divide by 2: fits
        ([(r"layers", P("data"))], ["rule 1", "['layers'][1]['b']", "size 6", "6 % 4"]),
        ([(r"(", P())], ["rule 1", "bad regex"]),
        ([(r"embed", P("nope"))], ["rule 1", "'nope'", "not in the mesh"]),
        (5, ["rules must be [(regex, PartitionSpec), ...]", "got 5"]),  # not a TypeError
    ],
)
def test_bad_rules_refused_in_words_nothing_changed(params, mesh, rules, words):
    view = ShardView(params, mesh=mesh)
    view.rules = [(r"embed", P("model"))]
    before = (view.rules, view.per_device, [leaf.sharding for leaf in view.leaves])
    if not words:
        view.rules = rules
        return
    with pytest.raises(ValueError, match=re.escape(words[0])) as e:
        view.rules = rules
    for w in words:
        assert w in str(e.value)
    assert (view.rules, view.per_device, [leaf.sharding for leaf in view.leaves]) == before


def test_layers_rule_refuses_indivisible_leaf(params, mesh):
    with pytest.raises(ValueError, match=r"rule 1 .*layers"):
        ShardView(params, mesh=mesh, rules=[("layers", P("data", "model"))])


def test_code_rebinds_params_to_the_layout_shown(params, mesh):
    view = ShardView(params, mesh=mesh, rules=[(r"embed", P("model")), (r"\['w'\]", P("data"))])
    ns = {"params": params}
    exec(view.code, ns)
    got = ns["params"]
    assert jax.tree.structure(got) == jax.tree.structure(params)
    for leaf, x in zip(
        view.leaves, [x for x in jax.tree.leaves(got) if hasattr(x, "shape")], strict=True
    ):
        assert leaf.sharding.is_equivalent_to(x.sharding, x.ndim), leaf.path
    named = ShardView(params, mesh=mesh, rules=[(r"embed", P("model"))], name="weights")
    ns = {"weights": params}
    exec(named.code, ns)
    assert ns["weights"]["embed"].sharding.spec == P("model")
    assert set(re.findall(r"^import (\w+)", named.code, re.M)) <= {"re", "jax", "numpy"}


def test_shape_dtype_struct_tree_allocates_nothing(mesh):
    def init():
        return {"w": jnp.ones((1024, 256)), "b": jnp.zeros(256), "n": jnp.int32(0)}

    def live() -> set[int]:
        gc.collect()
        return {id(a) for a in jax.live_arrays()}

    before = live()
    abstract = jax.eval_shape(init)
    view = ShardView(abstract, mesh=mesh, rules=[("w", P("data", "model"))])
    assert live() <= before
    assert all(leaf.abstract for leaf in view.leaves)
    assert view._stats["status"] == "unavailable"
    w = view.leaf("['w']")
    assert w.layout.bytes_per_device == 1024 * 256 * 4 // 8
    sharded = view.tree
    assert live() <= before
    assert isinstance(sharded["w"], jax.ShapeDtypeStruct)
    assert sharded["w"].sharding.spec == P("data", "model")
    # the same shardings JAX's own jit gives the laid-out abstract tree
    out = jax.jit(init, out_shardings=jax.tree.map(lambda s: s.sharding, sharded)).lower()
    assert out.compile().output_shardings["w"].is_equivalent_to(sharded["w"].sharding, 2)
    ns = {"params": abstract}
    exec(view.code, ns)
    assert ns["params"]["w"].sharding.spec == P("data", "model")
    assert live() <= before


def test_view_holds_no_device_memory(params, mesh):
    gc.collect()
    before = {id(a) for a in jax.live_arrays()}
    view = ShardView(params, mesh=mesh, rules=[(r"embed", P("data", "model"))])
    view.selected = 0
    t = view.tree
    del t
    gc.collect()
    assert {id(a) for a in jax.live_arrays()} - before == set()
    assert view.per_device  # the view is alive


def test_logical_rules_as_flax_linen_resolves_them():
    rules = rules_mod.make_logical_rules(
        [("batch", "data"), ("embed", "data"), ("mlp", "model"), ("vocab", ("data", "model"))]
    )
    # "embed" comes first and takes "data": "vocab" may not use it again (flax: the same)
    assert rules_mod.logical_spec(("vocab", "embed"), rules) == ((), ("data",))
    assert rules_mod.logical_spec(("vocab", "mlp"), rules) == ((), ("model",))
    assert rules_mod.logical_spec(("vocab", "heads"), rules) == (("data", "model"), ())
    assert rules_mod.logical_spec(("embed", "mlp"), rules) == (("data",), ("model",))
    assert rules_mod.logical_spec((None, "heads"), rules) == ((), ())
    flax_spmd = pytest.importorskip("flax.linen.spmd")
    for names in [("vocab", "embed"), ("embed", "mlp"), ("mlp", "embed"), ("batch", "vocab")]:
        want = flax_spmd.logical_to_mesh_axes(names, [(n, a) for n, a in rules_mod_pairs(rules)])
        got = spec_mod.to_partition_spec(rules_mod.logical_spec(names, rules))
        assert got == want, names


def rules_mod_pairs(rules):
    return [(n, None if a is None else a[0] if len(a) == 1 else a) for n, a in rules]


def test_logical_rules_that_are_no_list_refused_in_words():
    with pytest.raises(ValueError, match=re.escape("logical rules must be [(name, mesh axis)")):
        rules_mod.make_logical_rules(7)
    assert rules_mod.make_logical_rules(None) == ()


def test_rules_text_round_trip_and_line_errors():
    text = "embed  P('data', None)\n# a comment\nlayers.*w: P(None, ('data', 'model'))\n"
    rules = rules_mod.parse_text(text)
    assert [r.pattern for r in rules] == ["embed", "layers.*w"]
    assert rules_mod.parse_text(rules_mod.to_text(rules)) == rules
    errors = dict(rules_mod.line_errors("embed\n(  P()\nx  P(data)\nok  P('x')"))
    assert set(errors) == {1, 2, 3}
    assert "bad regex" in errors[2]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("(up|down)  P('model'", "parenthesis is not closed: add ) at the end"),
        ("w  P(('a', 'b', None", "parenthesis is not closed: add )) at the end"),
        ("w  P('model'))", "a ')' too many"),
        ("w  P('mod)", "a quote is not closed: add '"),
        ("w  P('a') x", "text after the spec's ')': 'x'"),
    ],
)
def test_a_spec_whose_brackets_do_not_pair_is_said_so(params, mesh, line, words):
    """The rules editor says which bracket or quote is missing (issue 38 item 6: an unclosed
    spec was quoted back as 'write a regex, then its spec')."""
    assert words in dict(rules_mod.line_errors(line))[1]
    view = ShardView(params, mesh=mesh, rules=[("embed", P("data"))])
    with pytest.raises(ValueError, match=re.escape(words)):
        view.rules_text = f"embed  P('model')\n{line}"
    assert view.rules == [("embed", P("data"))]


def test_lone_function_and_array_still_dispatch(arr):
    from shardwidget import ArrayView, FunctionView

    assert isinstance(ShardView(arr), ArrayView)
    assert isinstance(ShardView(lambda x: x * 2, arr), FunctionView)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ShardView({"a": arr}, rulez=[])


def test_front_end_request_with_bad_rules_shows_error_keeps_layout(params, mesh):
    view = ShardView(params, mesh=mesh, rules=[("embed", P("data"))])
    state = {**view._shown.to_wire(), "rules_text": "embed  P('data', 'model', 'x')"}
    view._on_custom_msg(view, {"type": "tree_request", "seq": 5, "state": state}, [])
    assert "rule 1" in view.error and "['embed']" in view.error
    assert view.rules == [("embed", P("data"))]
    state["rules_text"] = "embed  P('model')\n# keep"
    view._on_custom_msg(view, {"type": "tree_request", "seq": 6, "state": state}, [])
    assert view.error == "" and view.leaf("['embed']").spec == P("model")
    assert view.rules_text == "embed  P('model')\n# keep"
    view.undo()
    assert view.leaf("['embed']").spec == P("data")


def test_pictures_text_and_page(params, mesh, tmp_path):
    view = ShardView(params, mesh=mesh, rules=[(r"\['w'\]", P("data"))], hardware="tpu-v5e")
    view.selected = [leaf.path for leaf in view.leaves].index("['layers'][0]['w']")
    text = repr(view)
    assert text.startswith("ShardView(tree): 5 array leaves, 2 static · mesh data=4 × model=2")
    assert "['layers'][0]['w']" in text and "P('data', None)" in text
    svg = view.to_svg()
    assert svg.startswith("<svg") and svg.count("<svg") == 2  # the chart, then the leaf's picture
    assert "Memory per device" in svg and "float32[16@data,32]" in svg
    page_html = view.snapshot()._repr_html_()
    assert escape("['layers'][0]['w']") in page_html and "per device: max" in page_html
    report = view.save_html(tmp_path / "tree.html")
    page = (tmp_path / "tree.html").read_text()
    assert report.bytes == len(page.encode()) and '"_kind": "tree"' in page.replace('":"', '": "')


def test_large_replicated_leaf_flagged_in_text(mesh):
    big = jax.device_put(jnp.ones((1024, 512)), NamedSharding(mesh, P()))  # 2 MiB everywhere
    view = ShardView({"embed": big, "w": jnp.ones(8)}, mesh=mesh)
    assert "⚠ large replicated" in repr(view)
    view.rules = [("embed", P(("data", "model")))]
    assert "⚠" not in repr(view)


def test_eval_shape_under_a_mesh_abstract_shardings_placed_on_it(mesh):
    with jax.set_mesh(mesh):
        abstract = jax.eval_shape(
            lambda: {"w": jax.device_put(jnp.ones((8, 4)), P("data")), "b": jnp.zeros(4)}
        )
    if abstract["w"].sharding is None:  # nothing to place: the case does not exist there
        pytest.skip(f"jax {jax.__version__}'s eval_shape gives no sharding under a mesh (0.9 does)")
    assert not isinstance(abstract["w"].sharding.mesh, jax.sharding.Mesh)  # an AbstractMesh
    view = ShardView(abstract)
    assert tuple(view.mesh.axis_names) == ("data", "model")
    w = view.leaf("['w']")
    assert w.spec == abstract["w"].sharding.spec
    concrete = NamedSharding(mesh, abstract["w"].sharding.spec)
    assert _layout_geometry(w.layout) == _geometry(concrete, (8, 4))
    # each device's bytes as JAX lays the leaves out: eval_shape's own shardings (from jax 0.9,
    # w a (2, 4) block per device and b replicated; jax 0.7 gives w P(None, None) and b none),
    # a leaf it gives none staying on the default device, as the view says
    expected = dict.fromkeys(range(8), 0)
    for leaf in (abstract["w"], abstract["b"]):
        item = jnp.dtype(leaf.dtype).itemsize
        if leaf.sharding is None:
            expected[0] += math.prod(leaf.shape) * item
            continue
        placed = NamedSharding(mesh, leaf.sharding.spec).devices_indices_map(leaf.shape)
        for d, idx in placed.items():
            sizes = [len(range(*s.indices(n))) for s, n in zip(idx, leaf.shape, strict=True)]
            expected[d.id] += math.prod(sizes) * item
    assert view.per_device == expected


def test_prng_key_leaves_counted_by_their_key_data():
    keys = jax.random.split(jax.random.key(0), 8)
    view = ShardView({"key": jax.random.key(1), "keys": keys, "x": jnp.ones(8)})
    view.rules = [("keys", P("x"))]
    placed = view.tree
    total: dict[int, int] = {}
    for x in jax.tree.leaves(placed):
        for s in x.addressable_shards:
            data = s.data
            if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
                data = jax.random.key_data(data)
            total[s.device.id] = total.get(s.device.id, 0) + data.nbytes
    assert view.per_device == dict(sorted(total.items()))
    view.selected = 1
    assert "PRNG key" in view._stats["message"]


def test_mesh_and_rules_text_from_python(params, mesh):
    view = ShardView(params, mesh=mesh, rules=[("embed", P("data"))])
    flat = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,) * 1)
    view.mesh = flat
    assert view.mesh is flat and view.mesh_shape == [8]
    assert view.leaf("['embed']").sharding.is_equivalent_to(NamedSharding(flat, P("data")), 2)
    with pytest.raises(ValueError, match="'data' is not in the mesh"):
        view.mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    assert view.mesh is flat and view.rules == [("embed", P("data"))]
    view.rules_text = "embed  P(None, 'data')\n# the columns"
    assert view.leaf("['embed']").spec == P(None, "data")
    with pytest.raises(ValueError, match="line 1"):
        view.rules_text = "embed  P('data', 'data')"
    assert view.rules_text == "embed  P(None, 'data')\n# the columns"
    assert view.leaf("['embed']").spec == P(None, "data")


def test_tree_select_message(params, mesh):
    view = ShardView(params, mesh=mesh)
    w = [leaf.path for leaf in view.leaves].index("['layers'][0]['w']")
    view._on_custom_msg(view, {"type": "tree_select", "leaf": w}, [])
    assert view.selected == w and view.error == ""
    assert view._layout["spec_str"] == "P('data', 'model')"
    assert len(view._layout["blocks"]) == 8 and view._stats["status"] == "ready"
    view._on_custom_msg(view, {"type": "tree_select", "leaf": 99}, [])
    assert "leaf index" in view.error and view.selected == w


def test_a_rules_edit_that_leaves_the_selected_leaf_alone_does_no_device_work(params, mesh):
    view = ShardView(params, mesh=mesh, rules=[("embed", P("data"))])
    view.selected = [leaf.path for leaf in view.leaves].index("['layers'][0]['w']")
    stats_before = view._stats
    view.rules = [("embed", P("model"))]  # w keeps its layout: its grid and statistics stay
    assert view._stats is stats_before
    view.rules = [("embed", P("model")), (r"\['w'\]", P("model"))]
    assert view._stats is not stats_before and view._stats["key"] == view._layout["key"]
    assert view._layout["spec_str"] == "P('model', None)"


def test_logical_rules_in_the_editor_text():
    from shardwidget.model import rules_text

    text = "embed  P('model')\n# logical\nvocab -> model\nbatch -> data, model\nheads -> None"
    rules, logical = rules_text.parse(text)
    assert [r.pattern for r in rules] == ["embed"]
    assert logical == (("vocab", ("model",)), ("batch", ("data", "model")), ("heads", None))
    assert rules_text.parse(rules_text.to_text(rules, logical)) == (rules, logical)
    errors = dict(rules_text.line_errors("vocab -> (data, 'x y')\nw  P('x')\n(  P()"))
    assert set(errors) == {1, 3} and "logical rule 'vocab'" in errors[1]


def test_explicitly_typed_leaves_move_onto_a_mesh_without_their_axes():
    """Leaves typed on Explicit axes, re-laid out by rules on a mesh without those axes: the
    selected leaf's statistics and view.tree place them (jax 0.7's device_put refused this)."""
    explicit = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    w = jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(explicit, P("x", "y")))
    view = ShardView({"w": w, "b": w * 2})
    view.set_layout(
        mesh_shape=[8], axis_names=["d"], axis_types=["auto"], rules_text="w  P(None, 'd')"
    )
    assert not view.error, view.error
    assert view._stats["status"] == "ready"
    tree = view.tree
    assert tree["w"].sharding.spec == P(None, "d") and tree["w"].sharding.mesh.shape == {"d": 8}
    np.testing.assert_array_equal(np.asarray(tree["w"]), np.asarray(w))
    assert not w.is_deleted()


@pytest.mark.parametrize("shape", [(4, 2), (16, 16)])  # on the kernel's devices; a plan
def test_abstract_leaves_keep_their_memory_kind(shape):
    """A ShapeDtypeStruct on an AbstractMesh in pinned_host memory keeps that memory kind
    when the tree view places it on the kernel's mesh (and on a plan bigger than the kernel),
    as jax.device_put / jax.jit place it; view.tree puts it there."""
    am = jax.sharding.AbstractMesh(shape, ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    sh = NamedSharding(am, P("x", "y"), memory_kind="pinned_host")
    sds = jax.ShapeDtypeStruct((32, 32), np.float32, sharding=sh)
    view = ShardView({"w": sds, "b": jax.ShapeDtypeStruct((4,), np.float32)})
    w = view.leaf("['w']")
    assert w.sharding.memory_kind == "pinned_host" and w.spec == P("x", "y")
    assert view.leaf("['b']").sharding.memory_kind in (None, "device")  # None: a plan
    assert w.layout.memory_kind == "pinned_host"
    if shape == (4, 2):
        concrete = NamedSharding(
            jax.make_mesh(shape, ("x", "y"), axis_types=(AxisType.Explicit,) * 2),
            P("x", "y"),
            memory_kind="pinned_host",
        )
        assert _layout_geometry(w.layout) == _geometry(concrete, (32, 32))


def test_front_end_values_a_tree_view_refuses_are_put_back():
    """A ``selected`` leaf that does not exist, or an unknown hardware preset, from the front
    end: said in ``error``, the value put back, and every picture still draws."""
    view = ShardView({"w": jnp.ones((16, 8)), "b": jnp.ones((8,))})
    shown = view.selected
    for bad in (7, -1, 10**30):
        view.set_state({"selected": bad})
        assert view.selected == shown and f"got {bad}" in view.error
    view.set_state({"hardware": "zzz"})
    assert view.hardware != "zzz" and "unknown hardware 'zzz'" in view.error
    bundle, _ = view._repr_mimebundle_()  # the widget, with its picture for viewers without one
    assert "application/vnd.jupyter.widget-view+json" in bundle

    def same(html: str) -> str:  # (each picture names its image map anew)
        return re.sub(r"shardwidget-map-[0-9a-f]+", "map", html)

    assert "<svg" in view.to_svg() and same(bundle["text/html"]) == same(view._static_html())
    assert same(view.snapshot()._repr_html_()) == same(view._static_html())
    view.set_state({"selected": 1 - shown})
    assert view.selected == 1 - shown
    with pytest.raises(TypeError, match="selected must be a leaf index"):
        ShardView({"w": jnp.ones(8)}, selected="a")
    with pytest.raises(ValueError, match="selected=99 is not a leaf index 0…0"):
        ShardView({"w": jnp.ones(8)}, selected=99)
    with pytest.raises(TypeError, match=r"mesh must be a jax\.sharding\.Mesh"):
        ShardView({"w": jnp.ones(8)}, mesh="x")
    with pytest.raises(TypeError, match="or an AbstractMesh"):
        ShardView(jax.ShapeDtypeStruct((8,), jnp.float32), mesh=(8,), spec=P())


@pytest.mark.parametrize("k", [17, 200, 2000])
def test_many_mesh_axes_are_refused_at_once(k):
    """A mesh of more axes than any mesh here may have (HARD_MAX_AXES), from the front end or
    Python, on the kernel or a plan: refused in words at once (it listed every factorization
    of the device count first: 1.3 GB at 80 axes, the kernel killed at 200)."""
    view = ShardView({"w": jnp.ones((16, 8))})
    state = {"mesh_shape": [1] * (k - 1) + [3], "axis_names": [f"a{i}" for i in range(k)]}
    view._on_custom_msg(
        view,
        {
            "type": "tree_request",
            "seq": 1,
            "state": {**state, "axis_types": ["auto"] * k, "rules_text": ""},
        },
        [],
    )
    assert "a mesh has 1 to 16 axes" in view.error and view.mesh_shape == [8]
    plan = ShardView(
        {"w": jax.ShapeDtypeStruct((16, 16), jnp.float32)},
        mesh=jax.sharding.AbstractMesh((16, 16), ("x", "y"), axis_types=(AxisType.Auto,) * 2),
    )
    with pytest.raises(ValueError, match="a mesh has 1 to 16 axes"):
        plan.mesh_shape = [1] * (k - 1) + [3]
    # 16 axes whose product is wrong: the suggestions come without listing every shape
    with pytest.raises(
        ValueError,
        match=r"shapes with 16 axes that fit: \(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 256\)",
    ):
        plan.mesh_shape = [1] * 15 + [3]


@pytest.mark.parametrize("pattern", ["#x", " w", "w ", "a:", "b->", "x", r"P\(", "a -> b"])
def test_rules_text_round_trips_every_regex(pattern):
    """The editor's text of a rule reads back as a rule that matches the same leaves: a regex
    that starts with '#' is not lost as a comment, nor are spaces at its ends or a trailing
    separator."""
    names = {"#x": 16, " w": 8, "w ": 8, "a:": 8, "b->": 8, "x": 8, "P(": 8, "a -> b": 8}
    tree = {k: jnp.ones(n) for k, n in names.items()}
    view = ShardView(tree, rules=[(pattern, P("x"))])
    sharded = [lf.path for lf in view.leaves if lf.spec == P("x")]
    assert sharded
    view.set_state({"rules_text": view.rules_text + "\n"})  # what the editor sends back
    assert view.error == ""
    assert [lf.path for lf in view.leaves if lf.spec == P("x")] == sharded
