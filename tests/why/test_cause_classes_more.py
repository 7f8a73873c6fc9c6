"""The second case of issue 35's classes that had one (item 6: "every class has at least
two"): out_shardings given to jax.jit, out_specs given to the view, scan operands (with the loop's
layer count, said only where there is a loop), two matmuls on one line, and backward transposes
sharing a line. Each compares the view's collectives with plain ``jax.jit(...).lower(...)
.compile()`` by kind and count, and its cause with the origin built in; where the cause is a
layout, plain JAX is run without it too. jax 0.9 runs no Shardy: unknown, said (as in
tests/why/test_cause_classes.py, whose helpers these use)."""

from __future__ import annotations

from collections import Counter

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from tests.why.test_cause_classes import MISSING, M, causes, line_of, plain_kinds, put

REP = NamedSharding(M, P())


def tanh3(x):
    return jnp.tanh(x) * 3.0


def row_sums(x):
    return x.sum(axis=1)


def test_an_out_sharding_given_to_jit_names_that_output_at_the_elementwise_op():
    x = put((16, 32), P("x", None))
    f = jax.jit(tanh3, out_shardings=REP)
    assert not plain_kinds(tanh3, x)  # by construction: only the given layout gathers
    colls, cs = causes(f, x)
    assert [c.kind for c in colls] == ["all-gather"] and colls[0].axes == ("x",)
    (k,) = cs
    assert k.known and [p.label for p in k.outputs] == ["out"], k.text
    assert "as the layout given to out" in k.text
    assert k.op is not None and k.op.line == line_of(tanh3, 1)


def test_an_out_spec_given_to_the_view_names_that_output_beside_a_sums_own_all_reduce():
    x = put((16, 32), P("x", "y"))
    plain = plain_kinds(jax.jit(row_sums, out_shardings=REP), x)
    assert plain_kinds(row_sums, x) == Counter({"all-reduce": 1}) != plain  # (the sum's own)
    view = sw.ShardView(row_sums, x, out_specs=[P()])
    colls = view.trace.collectives
    assert Counter(c.kind for c in colls) == plain
    if MISSING:
        pytest.skip(MISSING)
    cs = [c.cause for c in colls]
    by_kind = {c.kind: k for c, k in zip(colls, cs, strict=True)}
    assert [p.label for p in by_kind["all-gather"].outputs] == ["out"]  # the given layout's
    reduce = by_kind["all-reduce"]  # the sum over dim 1, split over y: partial sums
    assert reduce.known and "reduces a dim split over y" in reduce.text, reduce.text
    assert reduce.op is not None and reduce.op.line == line_of(row_sums, 1)


def scanned(ws, x):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    return jax.lax.scan(layer, x, ws)[0]


def test_a_scan_s_gathered_weight_is_named_not_only_the_carry():
    """Replicating the stacked weight leaves no collective, replicating the carry still one:
    the weight is what is gathered, and the cause names it (before: the carry only)."""
    ws, x = put((3, 32, 32), P(None, None, "y")), put((16, 32), P("x", None))
    assert not plain_kinds(scanned, put((3, 32, 32), P()), x)
    assert plain_kinds(scanned, ws, put((16, 32), P())) == Counter({"all-gather": 1})
    _colls, cs = causes(scanned, ws, x)
    (k,) = cs
    assert k.known and "ws" in [p.label for p in k.inputs], k.text
    assert "(shaped as one layer of ws)" in k.text
    assert k.op is not None and k.op.line == line_of(scanned, 2)
    assert "every layer of the scan: 3 iterations" in k.text  # a loop: its layer count


def test_a_scan_s_weight_split_on_the_contracted_dim_is_the_whole_cause():
    ws, x = put((3, 32, 32), P(None, "y", None)), put((16, 32), P())
    assert not plain_kinds(scanned, put((3, 32, 32), P()), x)
    colls, cs = causes(scanned, ws, x)
    (k,) = cs
    assert colls[0].kind == "all-reduce" and colls[0].axes == ("y",)
    assert k.known and [p.label for p in k.inputs] == ["ws"], k.text
    assert "contracted dim is split over y on both sides" in k.text
    assert "every layer of the scan: 3 iterations" in k.text and k.layer is None


def two_on_a_line(x, a, b):
    return jnp.tanh(x @ a) + jnp.tanh(x @ b)


def test_two_matmuls_on_one_line_name_the_split_weight_of_the_one_that_gathers():
    x, a, b = put((16, 32), P()), put((32, 64), P()), put((32, 64), P("y", None))
    assert not plain_kinds(two_on_a_line, x, a, put((32, 64), P()))
    _colls, cs = causes(two_on_a_line, x, a, b)
    for k in cs:
        assert k.known, k.text
        assert k.operand is not None and k.operand.label == "b"
        assert "a" not in {p.label for p in k.inputs}
        assert k.op is not None and k.op.line == line_of(two_on_a_line, 1)


def both(x, a, b):
    return jnp.sum((x @ a) * (x @ b))


def test_backward_transposes_sharing_a_line_are_each_explained_there():
    x, a, b = put((16, 32), P("x", "y")), put((32, 64), P()), put((32, 64), P())
    colls, cs = causes(jax.grad(both, argnums=(1, 2)), x, a, b)
    back = [(c, k) for c, k in zip(colls, cs, strict=True) if "transpose(" in c.op_name]
    assert back
    for _c, k in back:
        assert k.known and k.op is not None and k.op.line == line_of(both, 1), k.text
        assert "cause unknown" not in k.text


def test_backward_transposes_of_one_shape_on_one_line_carry_each_its_own_gradient():
    """w['a'] and w['b'] have one shape and meet on one line: their gradients are told apart
    by the outputs they reach (dataflow), never by shape."""

    def loss(w, x):
        return jnp.sum((x @ w["a"]) * (x @ w["b"]))

    w = {"a": put((32, 64), P()), "b": put((32, 64), P())}
    x = put((16, 32), P("x", "y"))
    colls, cs = causes(jax.grad(loss), w, x)
    grads = [g for c in colls for g in c.element_gradients if g]
    assert sorted(grads) == ["w['a']", "w['b']"]
    for c, k in zip(colls, cs, strict=True):
        if c.gradients:
            assert k.known and k.op is not None and k.op.line == line_of(loss, 1), k.text
            assert all(f"gradient of {g}" in k.text or len(c.elements) == 1 for g in c.gradients)


def test_a_split_out_sharding_given_to_jit_is_named_as_that_output_not_a_constraint():
    """JAX writes jit's out_shardings as a constraint with no line, returned by the jitted
    function: read as the output's given layout (before: "by a constraint", no output)."""
    x = put((16, 32), P("x", None))
    f = jax.jit(tanh3, out_shardings=NamedSharding(M, P(None, "y")))
    assert not plain_kinds(tanh3, x)  # by construction: only the given layout moves data
    _colls, cs = causes(f, x)
    for k in cs:
        assert k.known and [p.label for p in k.outputs] == ["out"], k.text
        assert not k.constraints and "by the out_shardings of out" in k.text, k.text


def test_a_users_constraint_returned_by_a_jitted_function_stays_the_users():
    def g(x):
        return jax.lax.with_sharding_constraint(tanh3(x), NamedSharding(M, P(None, "y")))

    x = put((16, 32), P("x", None))
    _colls, cs = causes(jax.jit(g), x)
    for k in cs:
        assert k.known and [p.line for p in k.constraints] == [line_of(g, 1)], k.text
        assert not k.outputs and "out_shardings" not in k.text, k.text
