"""Each collective's leaves (``collective.leaves``), found by dataflow through the compiled HLO
(hlo/flow.py), on functions whose answer is known by construction: which input reaches
the collective and which output it reaches. Inputs of the same shape and dtype as the collective
that do not reach it must not be named (a match of shape would name them). The collectives are
compared with plain ``jax.jit(...).lower(...).compile()`` by kind and count."""

from __future__ import annotations

from collections import Counter

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget.hlo import collectives as hlo
from shardwidget.hlo import concat
from shardwidget.hlo import flow as hlo_flow


def mesh() -> jax.sharding.Mesh:
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def put(m: jax.sharding.Mesh, shape: tuple[int, ...], spec: P) -> jax.Array:
    return jax.device_put(jnp.ones(shape, jnp.float32), NamedSharding(m, spec))


def plain_kinds(f, *args) -> Counter:
    """The collectives of plain jax.jit(f), by kind."""
    txt = jax.jit(f).lower(*args).compile().as_text()
    coords = {i: (i // 4, i % 4) for i in range(8)}
    return Counter(c.kind for c in hlo.collectives(txt, list(range(8)), coords, "xy", (2, 4)))


def kinds(view) -> Counter:
    return Counter(c.kind for c in view.trace.collectives)


def test_only_the_input_that_is_reduced_is_named_not_its_twin_of_the_same_shape():
    m = mesh()

    def f(a, b):
        return a.sum(axis=0), b * 2.0

    a, b = put(m, (16, 8), P("x", None)), put(m, (16, 8), P("x", None))
    view = sw.ShardView(f, a, b)
    assert kinds(view) == plain_kinds(f, a, b) == Counter({"all-reduce": 1})
    (c,) = view.trace.collectives
    assert c.in_leaves == ("a",) and c.out_leaves == ("out[0]",)
    assert c.leaves == ("a", "out[0]") and c.leaves_note == ""


def test_an_unused_input_shifts_no_attribution():
    m = mesh()

    def f(skip, a, b):
        return (a @ b).sum()

    skip = put(m, (8, 8), P())
    a, b = put(m, (8, 16), P(None, "y")), put(m, (16, 8), P("y", None))
    view = sw.ShardView(f, skip, a, b)
    assert kinds(view) == plain_kinds(f, skip, a, b)
    assert view.trace.collectives
    for c in view.trace.collectives:
        assert c.in_leaves == ("a", "b") and c.out_leaves == ("out",)


def test_an_all_gather_names_the_gathered_input_and_the_outputs_it_reaches():
    m = mesh()

    def f(w, x, z):
        return x @ w, jnp.sin(z)  # w is split on the contraction: gathered (or reduced)

    w, x, z = put(m, (32, 8), P("y", None)), put(m, (8, 32), P()), put(m, (8, 8), P())
    view = sw.ShardView(f, w, x, z, out_specs=[P(), P()])
    assert kinds(view) == plain_kinds(f, w, x, z) and view.trace.collectives
    for c in view.trace.collectives:
        assert "w" in c.in_leaves and "z" not in c.in_leaves
        assert c.out_leaves == ("out[0]",)


def loss(p, batch):
    h = jax.nn.relu(batch["x"] @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - batch["y"]) ** 2)


def step(p, batch):
    value, grads = jax.value_and_grad(loss)(p, batch)
    return value, jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)


def dp_args(m):
    params = {"b1": put(m, (64,), P()), "w1": put(m, (64, 64), P()), "w2": put(m, (64, 64), P())}
    return params, {"x": put(m, (32, 64), P("x")), "y": put(m, (32, 64), P("x"))}


def test_the_combined_gradient_all_reduce_is_one_row_with_every_element():
    m = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    params, batch = dp_args(m)
    view = sw.ShardView(step, params, batch)
    txt = jax.jit(step).lower(params, batch).compile().as_text()
    direct = hlo.collectives(txt, list(range(8)), {i: (i,) for i in range(8)}, ("x",), (8,))
    assert Counter(c.kind for c in view.trace.collectives) == Counter(c.kind for c in direct)
    (c,) = [c for c in view.trace.collectives if len(c.elements) > 1]  # XLA combines them
    shapes = sorted(e.dims for e in c.elements)
    assert () in shapes  # the loss's scalar is carried too
    carried = sum(e.nbytes for e in c.elements)
    assert c.bytes == round(2 * 7 * carried / 8)  # ring bytes of every element, scalar too
    # each gradient element reaches its own updated parameter (and only that output)
    outs = [[p for p in el if p.startswith("out")] for el in c.element_leaves]
    assert sorted(map(tuple, outs)) == sorted(
        [("out[0]",), ("out[1]['b1']",), ("out[1]['w1']",), ("out[1]['w2']",)]
    )


def deep_step(p, x):
    def loss(p):
        h = x
        for i in range(len(p)):
            h = jnp.tanh(h @ p[f"w{i}"])
        return jnp.mean(h**2)

    value, grads = jax.value_and_grad(loss)(p)
    return jax.tree.map(lambda a, g: a - 0.1 * g, p, grads), value


def test_operands_past_the_fifth_are_followed_through_xlas_index_marks():
    # XLA writes "/*index=5*/" before every fifth operand and tuple element; 7 gradients and the
    # loss make an 8-element all-reduce and an output tuple of 8: the 6th is read as any other.
    m = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    params = {f"w{i}": put(m, (64, 64), P()) for i in range(7)}
    x = put(m, (64, 64), P("x"))
    txt = jax.jit(deep_step).lower(params, x).compile().as_text()
    assert "/*index=5*/" in txt  # the case this test is about
    direct = hlo.collectives(txt, list(range(8)), {i: (i,) for i in range(8)}, ("x",), (8,))
    (d,) = [c for c in direct if len(c.elements) > 1]
    assert len(d.elements) == 8  # 7 gradients and the loss, as plain jit's all-reduce
    view = sw.ShardView(deep_step, params, x)
    (c,) = [c for c in view.trace.collectives if len(c.elements) > 1]
    # every gradient element reaches its own updated parameter, the 6th (w5) too
    outs = sorted(tuple(p for p in el if p.startswith("out[0]")) for el in c.element_leaves)
    assert [o for o in outs if o] == [(f"out[0]['w{i}']",) for i in range(7)]
    assert sorted(c.gradients) == [f"p['w{i}']" for i in range(7)]


def test_an_activation_partial_sum_names_what_computes_it_and_not_the_labels():
    m = mesh()
    params, batch = dp_args(m)
    specs = [{"b1": P("y"), "w1": P(None, "y"), "w2": P("y", None)}, {"x": P("x"), "y": P("x")}]
    view = sw.ShardView(step, params, batch, in_specs=specs)
    assert kinds(view) == plain_kinds(
        step,
        *jax.tree.map(
            lambda a, s: jax.device_put(a, NamedSharding(m, s)),
            [params, batch],
            specs,
            is_leaf=lambda v: isinstance(v, P),
        ),
    )
    over_y = [c for c in view.trace.collectives if c.kind == "all-reduce" and c.axes == ("y",)]
    assert over_y
    forward = [c for c in over_y if "out[0]" in (c.out_leaves or ())]
    assert forward
    for c in forward:  # the forward partial sum of h @ w2 is made from x, w1, b1 and w2
        assert {"batch['x']", "p['w1']", "p['w2']"} <= set(c.in_leaves)


def test_a_collective_in_a_scan_body_names_the_scanned_weight():
    m = mesh()

    def f(ws, x):
        def layer(h, w):
            return jnp.tanh(h @ w), None

        return jax.lax.scan(layer, x, ws)[0]

    ws, x = put(m, (3, 16, 16), P(None, "y", None)), put(m, (8, 16), P())
    view = sw.ShardView(f, ws, x)
    assert kinds(view) == plain_kinds(f, ws, x) and view.trace.collectives
    for c in view.trace.collectives:
        assert "ws" in c.in_leaves and c.out_leaves == ("out",)


def test_a_plan_attributes_by_the_same_dataflow():
    am = AbstractMesh((2, 4), ("x", "y"), (AxisType.Auto,) * 2)

    def f(a, b):
        return a.sum(axis=0), b * 2.0

    sds = jax.ShapeDtypeStruct((16, 8), jnp.float32)
    view = sw.ShardView(f, sds, sds, mesh=am, in_specs=[P("x", None), P("x", None)])
    (c,) = view.trace.collectives
    assert c.in_leaves == ("a",) and c.out_leaves == ("out[0]",)


def test_a_program_whose_parameters_do_not_line_up_says_unknown():
    txt = jax.jit(lambda a, b: (a + b).sum()).lower(jnp.ones(4), jnp.ones(4)).compile().as_text()
    assert hlo_flow.touches(txt, ["x"], [True], 1) == {}  # two parameters, one leaf: not guessed
    c = hlo.Collective("all-reduce", ("x",), (4,), "f32", 16, 2, 1, ((0, 1),), name="x")
    (got,) = hlo_flow.attribute([c], txt, [True], ["a"], ["out"])
    assert got.leaves is None and "unknown" in got.leaves_note


def test_a_megascale_send_recv_pair_is_followed_in_either_order() -> None:
    """Pure text: a recv written before its send still gets what the send carries (as the
    collective's operand) and passes its value on."""
    text = """HloModule m

ENTRY %main (p0: f32[8], p1: f32[8]) -> (f32[8], f32[8]) {
  %p0 = f32[8]{0} parameter(0)
  %p1 = f32[8]{0} parameter(1)
  %after-all = token[] after-all()
  %recv = (f32[8]{0}, u32[], token[]) recv(%after-all), channel_id=1, is_host_transfer=true, frontend_attributes={_xla_host_transfer_rendezvous="all-reduce_0",_xla_megascale_transfer_type="ALL_REDUCE"}
  %send = (f32[8]{0}, u32[], token[]) send(%p1, %after-all), channel_id=2, is_host_transfer=true, frontend_attributes={_xla_host_transfer_rendezvous="all-reduce_0",_xla_megascale_transfer_type="ALL_REDUCE"}
  %recv-done = (f32[8]{0}, token[]) recv-done(%recv), channel_id=1
  %gte = f32[8]{0} get-tuple-element(%recv-done), index=0
  ROOT %t = (f32[8]{0}, f32[8]{0}) tuple(%p0, %gte)
}
"""
    t = hlo_flow.touches(text, ["recv"], None, 2)["recv"]
    assert (t.all_inputs, t.all_outputs) == ((1,), (1,))


FLAT = """HloModule m

%cat (q0: f32[1024], q1: f32[1]) -> f32[1025] {
  %q0 = f32[1024]{0} parameter(0)
  %q1 = f32[1]{0} parameter(1)
  ROOT %concatenate.1 = f32[1025]{0} concatenate(%q0, %q1), dimensions={0}
}

%lo (s0: f32[1025]) -> f32[1024] {
  %s0 = f32[1025]{0} parameter(0)
  ROOT %slice.1 = f32[1024]{0} slice(%s0), slice={[0:1024]}
}

%hi (s1: f32[1025]) -> f32[1] {
  %s1 = f32[1025]{0} parameter(0)
  ROOT %slice.2 = f32[1]{0} slice(%s1), slice={[1024:1025]}
}

ENTRY %main (p0: f32[16,64], p1: f32[8,16], p2: f32[]) -> (f32[16,64], f32[]) {
  %p0 = f32[16,64]{1,0} parameter(0)
  %p1 = f32[8,16]{1,0} parameter(1)
  %p2 = f32[] parameter(2)
  %dot.1 = f32[16,64]{1,0} dot(%p1, %p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/transpose(jvp())/dot_general" source_file="/x/f.py" source_line=7}
  %sum.1 = f32[] add(%p2, %p2), metadata={op_name="jit(f)/jvp()/reduce_sum" source_file="/x/f.py" source_line=8}
  %bitcast.1 = f32[1024]{0} bitcast(%dot.1)
  %bitcast.2 = f32[1]{0} bitcast(%sum.1)
  %fused = f32[1025]{0} fusion(%bitcast.1, %bitcast.2), kind=kLoop, calls=%cat
  %all-reduce-start = f32[1025]{0} all-reduce-start(%fused), channel_id=1, replica_groups={}, to_apply=%add
  %all-reduce-done = f32[1025]{0} all-reduce-done(%all-reduce-start)
  %a = f32[1024]{0} fusion(%all-reduce-done), kind=kLoop, calls=%lo
  %b = f32[1]{0} fusion(%all-reduce-done), kind=kLoop, calls=%hi
  %g = f32[16,64]{1,0} bitcast(%a)
  %new = f32[16,64]{1,0} subtract(%p0, %g)
  %l = f32[] bitcast(%b)
  ROOT %t = (f32[16,64]{1,0}, f32[]) tuple(%new, %l)
}
"""
"""A flat all-reduce as XLA's GPU compiler writes one (trimmed): a [16,64] gradient made from p1
and a loss made from p2, concatenated; each slice of the result reaches one output."""


def test_a_flat_all_reduce_of_a_concatenate_is_followed_part_by_part() -> None:
    parts = concat.concatenated(FLAT, "all-reduce-start")
    assert [(p.shape.dims, p.start, p.stop) for p in parts] == [
        ((16, 64), 0, 1024),
        ((), 1024, 1025),
    ]
    assert [(p.op_name.rsplit("/", 1)[1], p.source) for p in parts] == [
        ("dot_general", "f.py:7"),
        ("reduce_sum", "f.py:8"),
    ]
    t = hlo_flow.touches(FLAT, ["all-reduce-start"], None, 2)["all-reduce-start"]
    assert (t.inputs, t.outputs) == (((1,), (2,)), ((0,), (1,)))
    coll = hlo.Collective(
        "all-reduce",
        ("d",),
        (1025,),
        "f32",
        0,
        8,
        1,
        ((0,),),
        name="all-reduce-start",
        elements=(hlo.HloShape("f32", (1025,)),),
    )
    (c,) = hlo_flow.attribute([coll], FLAT, None, ["w", "x", "b"], ["out[0]", "out[1]"])
    assert c.elements == (hlo.HloShape("f32", (16, 64)), hlo.HloShape("f32", ()))
    assert c.element_in_leaves == (("x",), ("b",)) and c.element_out_leaves == (
        ("out[0]",),
        ("out[1]",),
    )
    # a part made elsewhere than the elements add up to is not a part: no split, said whole
    assert (
        concat.concatenated(
            FLAT.replace("f32[1025]{0} all-reduce-start", "f32[1026]{0} all-reduce-start"),
            "all-reduce-start",
        )
        == []
    )
