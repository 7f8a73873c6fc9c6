"""Causes of collectives in the classes of issue 35, on functions whose cause is known by
construction, two or more per class: jitted and nested functions (calls, not loops), a library's
inner jit (jnp.take), ops sharing one line (a scalar's broadcast, a Python loop's layers, two
matmuls), and collectives XLA combined into one. Each view's collectives are compared with
plain ``jax.jit(...).lower(...).compile()`` by kind and count, and each cause with the origin
built in (the op, its line, the input or constraint). jax 0.9 runs no Shardy: unknown, said."""

from __future__ import annotations

import math
from collections import Counter

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget import _jax
from shardwidget.hlo import collectives as hlo
from shardwidget.model import spec as spec_mod

MISSING = _jax.shardy_missing()
OLD_JAX = tuple(int(v) for v in jax.__version__.split(".")[:2]) < (0, 10)
"""jax 0.7-0.8: XLA names some ops apart from Shardy's module (a gradient's), and combines
collectives under one op's name; those causes are unknown there, said in words."""
M = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def put(shape: tuple[int, ...], spec: P) -> jax.Array:
    return jax.device_put(jnp.ones(shape, jnp.float32), NamedSharding(M, spec))


def plain_kinds(f, *args) -> Counter:
    txt = jax.jit(f).lower(*args).compile().as_text()
    coords = {i: (i // 4, i % 4) for i in range(8)}
    return Counter(c.kind for c in hlo.collectives(txt, list(range(8)), coords, "xy", (2, 4)))


def causes(f, *args, **kw):
    view = sw.ShardView(f, *args, **kw)
    res = view.trace
    assert res is not None and res.collectives, "the case must have collectives"
    assert Counter(c.kind for c in res.collectives) == plain_kinds(f, *args)
    cs = [c.cause for c in res.collectives]
    if MISSING:
        assert all(not c.known and MISSING in c.reason for c in cs)
        pytest.skip(f"cause unknown on this JAX, said in words: {MISSING}")
    return res.collectives, cs


def line_of(f, k: int) -> int:
    return f.__code__.co_firstlineno + k


def matmul(x, w):
    return x @ w


X_W = ((16, 32), P("x", "y")), ((32, 64), P(None, "y"))


@pytest.mark.parametrize("wrap", ["jit", "nested"])
def test_a_jitted_or_nested_function_is_a_call_not_a_loop(wrap):
    x, w = (put(*a) for a in X_W)
    f = jax.jit(matmul) if wrap == "jit" else (lambda x, w: jax.jit(matmul)(x, w) * 2.0)
    _, cs = causes(f, x, w)
    _, plain = causes(matmul, x, w)  # the same f unjitted: the same causes
    for c in cs:
        assert c.known, c.text
        assert "loop" not in c.text and "scan" not in c.text
        assert c.op is not None and c.op.label == "dot_general"
        assert c.op.line == line_of(matmul, 1) and c.layer is None
        assert {p.label for p in c.inputs} <= {"x", "w"}
    assert [c.text for c in cs] == [c.text for c in plain]


@pytest.mark.parametrize("axis", [0, 1])
def test_jnp_take_s_inner_jit_is_explained_at_the_gather(axis):
    x = put((16, 32), P("x", "y"))

    def f(x, idx):
        return jnp.take(x, idx, axis=axis)

    _, cs = causes(f, x, jnp.arange(4))
    for c in cs:
        assert c.known, c.text
        assert c.op is not None and c.op.label == "gather"
        assert "x" in {p.label for p in c.inputs}


@pytest.mark.parametrize("scalar", ["mul", "add"])
def test_a_scalar_s_broadcast_sharing_a_line_is_set_aside(scalar):
    def f(x):
        y = x * 2.0 if scalar == "mul" else x + 2.0
        return jax.lax.with_sharding_constraint(y, NamedSharding(M, P("y", None)))

    _, cs = causes(f, put((16, 32), P("x", None)))
    for c in cs:
        assert c.known, c.text
        assert c.constraints and c.constraints[0].line == line_of(f, 2)


def test_a_python_loop_s_layers_are_told_apart_by_dataflow_with_no_layer_number():
    def loss(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return (x**2).mean()

    ws = [put((256, 256), P("x", "y")), put((256, 256), P("x", "y"))]
    colls, cs = causes(jax.grad(loss), ws, put((64, 256), P("y", None)))
    forward = [(c, k) for c, k in zip(colls, cs, strict=True) if "transpose" not in c.op_name]
    assert len(forward) >= 2
    if OLD_JAX and not all(k.known for _, k in forward):
        assert all("no op of Shardy's module" in k.text for _, k in forward if not k.known)
        pytest.skip(f"jax {jax.__version__} names these ops apart from Shardy's module")
    for c, k in forward:
        assert k.known and k.layer is None and "layer" not in k.text, k.text
        reached = sorted(p for p in c.in_leaves if p.startswith("ws"))
        # the layer's matmul: a gathered activation has passed len(reached) layers; a partial
        # sum is the product with the last weight that reaches it
        layer = len(reached) if c.kind == "all-gather" else len(reached) - 1
        assert f"ws[{layer}] over" in k.text, (k.text, reached)  # the matmul's own weight
        assert f"ws[{1 - layer}] over" not in k.text, (k.text, reached)


def test_two_matmuls_on_one_line_are_told_apart_by_their_inputs():
    def f(x, a, b):
        return (x @ a) + (x @ b)

    x, a, b = put((16, 32), P()), put((32, 64), P("y", None)), put((32, 64), P())
    _, cs = causes(f, x, a, b)
    for k in cs:
        assert k.known, k.text
        assert "b" not in {p.label for p in k.inputs}  # only x @ a meets a split contraction


def loss(p, batch):
    h = jax.nn.relu(batch["x"] @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - batch["y"]) ** 2)


def step(p, batch):
    value, grads = jax.value_and_grad(loss)(p, batch)
    return value, jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)


SHAPES = {"b1": (32,), "w1": (64, 32), "w2": (32, 48)}
"""Each parameter's own size: its gradient is told apart by construction (XLA may carry a
gradient transposed: f32[32, 64] for w1's)."""


def dp_step(update: str, n: int = 1, fsdp: bool = False):
    """A data-parallel training step: params replicated (fsdp: split over d on dim 0), the
    batch split over d; SGD or AdamW."""
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    params = {
        k: jax.device_put(jnp.ones(s), NamedSharding(mesh, P("d") if fsdp else P()))
        for k, s in SHAPES.items()
    }
    rows = NamedSharding(mesh, P("d"))
    batch = {
        "x": jax.device_put(jnp.ones((32 * n, 64)), rows),
        "y": jax.device_put(jnp.ones((32 * n, 48)), rows),
    }
    if update == "sgd":
        return step, (params, batch)
    optax = pytest.importorskip("optax")
    opt = optax.adamw(1e-3)

    def adamw(p, o, batch):
        value, grads = jax.value_and_grad(loss)(p, batch)
        up, o = opt.update(grads, o, p)
        return value, optax.apply_updates(p, up), o

    return adamw, (params, opt.init(params), batch)


def element_texts(c, k) -> list[str]:
    """A combined collective's cause, split into its elements' (in order)."""
    body = k.text.split(" XLA combined into one: ", 1)[1]
    grads = [f" (gradient of {g})" if g else "" for g in c.element_gradients]
    heads = [f"{e.dtype}{list(e.dims)}{g}: " for e, g in zip(c.elements, grads, strict=True)]
    out = []
    for i, h in enumerate(heads):
        assert body.startswith(h), (body, h)
        end = body.find("; " + heads[i + 1]) if i + 1 < len(heads) else len(body)
        out.append(body[len(h) : end])
        body = body[end + 2 :]
    return out


@pytest.mark.parametrize(("update", "n"), [("sgd", 1), ("sgd", 2), ("adamw", 1)])
def test_a_combined_gradient_all_reduce_explains_each_element(update, n):
    f, args = dp_step(update, n)
    view = sw.ShardView(f, *args)
    assert Counter(c.kind for c in view.trace.collectives) == plain_kinds(f, *args)
    (c,) = [c for c in view.trace.collectives if len(c.elements) > 1]
    if MISSING:
        pytest.skip(MISSING)
    k = c.cause
    assert k.text.startswith(f"all-reduce of {len(c.elements)} arrays XLA combined into one")
    assert k.known and {p.label for p in k.inputs} & {"batch['x']", "batch['y']"}
    # each element at the line its parameter is used on (by construction: w1 and b1 on the
    # first line of loss, w2 and the loss's sum on the second), known on every JAX with Shardy
    used = {"['b1']": line_of(loss, 1), "['w1']": line_of(loss, 1), "['w2']": line_of(loss, 2)}
    texts = element_texts(c, k)
    assert len(texts) == len(c.elements) == 4  # the loss's scalar and three gradients
    for e, outs, text in zip(c.elements, c.element_out_leaves, texts, strict=True):
        assert "cause unknown" not in text, text
        keys = {key for key in used for o in outs if o.endswith(key)}
        want = used[keys.pop()] if len(keys) == 1 else line_of(loss, 2)  # (the loss: its sum)
        assert f"on line {want}:" in text, (e, outs, text)


@pytest.mark.parametrize("update", ["sgd", "adamw"])
def test_each_gradient_is_named_by_its_parameter(update):
    f, args = dp_step(update)
    view = sw.ShardView(f, *args)
    (c,) = [c for c in view.trace.collectives if len(c.elements) > 1]
    # by construction each parameter has its own size, and params are replicated: an element
    # of that size is its gradient; the loss's scalar is none
    for e, g in zip(c.elements, c.element_gradients, strict=True):
        size = math.prod(e.dims) if e.dims else 0
        want = [f"p['{k}']" for k, s in SHAPES.items() if math.prod(s) == size]
        assert g == (want[0] if want else ""), (e, g)
    assert sorted(c.gradients) == sorted(f"p['{k}']" for k in SHAPES)
    if not MISSING:
        for g in c.gradients:
            assert f"(gradient of {g})" in c.cause.text


def test_gradients_of_positional_parameters_are_not_told_and_forward_ones_are_none():
    def positional(w1, w2, x, y):
        grads = jax.grad(lambda a, b: jnp.mean((jnp.tanh(x @ a) @ b - y) ** 2), (0, 1))(w1, w2)
        return w1 - 0.1 * grads[0], w2 - 0.1 * grads[1]

    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("d"))
    w1, w2 = (jax.device_put(jnp.ones(SHAPES[k]), rep) for k in ("w1", "w2"))
    x, y = (jax.device_put(jnp.ones((32, s)), rows) for s in (64, 48))
    view = sw.ShardView(positional, w1, w2, x, y)
    colls = view.trace.collectives
    assert colls and all(not c.gradients for c in colls)  # "w1" names no place in a tree
    if not MISSING and not OLD_JAX:
        assert any("whose is not told" in c.cause.text for c in colls)
    # a forward all-reduce (a contraction split over y) is no gradient
    fwd = sw.ShardView(matmul, put((16, 32), P(None, "y")), put((32, 64), P("y", None)))
    assert [c.kind for c in fwd.trace.collectives] == ["all-reduce"]
    assert fwd.trace.collectives[0].element_gradients == ("",)


@pytest.mark.parametrize("where", ["jit", "view"])
def test_collectives_that_exist_for_a_given_output_layout_name_that_output(where):
    x, w = (put(*a) for a in X_W)
    rep = NamedSharding(M, P())
    if where == "jit":  # jax.jit's out_shardings, f viewed as given
        f, kw = jax.jit(matmul, out_shardings=rep), {}
    else:  # the view's out_specs on a plain f
        f, kw = matmul, {"out_specs": [P()]}
    view = sw.ShardView(f, x, w, **kw)
    plain = plain_kinds(jax.jit(matmul, out_shardings=rep), x, w)
    assert Counter(c.kind for c in view.trace.collectives) == plain
    if MISSING:
        pytest.skip(MISSING)
    ks = [c.cause for c in view.trace.collectives]
    assert all(k.known for k in ks), [k.text for k in ks]
    named = [k for k in ks if [p.label for p in k.outputs] == ["out"]]
    assert named, [k.text for k in ks]  # what the given layout gathers names it
    assert all("layout given to out" in k.text or "out" in k.text for k in named)
    if where == "view":  # dropping the out_spec is offered, and plain JAX agrees it removes one
        i = next(i for i, k in enumerate(ks) if k.outputs)
        drop = [fx for fx in view.fixes(i) if "drop its out_sharding" in fx.what]
        assert drop and drop[0].removes
        assert sum(plain_kinds(matmul, x, w).values()) < sum(plain.values())


def _plain_with(f, args, state, mesh=M) -> Counter:
    """The collectives of plain jax.jit(f) with the inputs laid out as a fix's state says."""
    laid = [
        jax.device_put(a, NamedSharding(mesh, spec_mod.to_partition_spec(s)))
        for a, s in zip(args, state.in_specs, strict=True)
    ]
    return plain_kinds(f, *laid)


@pytest.mark.parametrize("case", ["contraction", "two-layer"])
def test_a_fix_exists_for_each_input_that_reaches_the_collective_and_plain_jax_agrees(case):
    if case == "contraction":

        def f(x, w):
            return x @ w

        args = [put((16, 32), P(None, "y")), put((32, 64), P("y", None))]
    else:

        def f(x, w1, w2):
            return jnp.tanh(x @ w1) @ w2

        args = [put((16, 32), P("x", "y")), put((32, 64), P("y", None)), put((64, 8), P())]
    view = sw.ShardView(f, *args)
    before = plain_kinds(f, *args)
    assert Counter(c.kind for c in view.trace.collectives) == before
    (i,) = [i for i, c in enumerate(view.trace.collectives) if c.kind == "all-reduce"]
    fixes = [fx for fx in view.fixes(i) if fx.removes and not fx.error]
    assert fixes, [str(fx) for fx in view.fixes(i)]
    for fx in fixes:  # each fix that says it removes the all-reduce: plain JAX agrees
        assert _plain_with(f, args, fx.state)["all-reduce"] < before["all-reduce"], fx.what
        assert "peak" in fx.memory  # what it costs in memory


EXPLICIT = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


@pytest.mark.parametrize("case", ["sum of squares", "mean"])
def test_explicit_axes_result_types_are_named_as_jax_s_with_the_input_and_a_fix(case):
    def f(x):
        return jnp.sum(x * x, axis=0) if case == "sum of squares" else jnp.mean(x, axis=0)

    x = jax.device_put(jnp.ones((16, 32)), NamedSharding(EXPLICIT, P("x", "y")))
    view = sw.ShardView(f, x)
    before = plain_kinds(f, x)
    assert Counter(c.kind for c in view.trace.collectives) == before
    assert view.trace.collectives
    if MISSING:
        pytest.skip(MISSING)
    for i, c in enumerate(view.trace.collectives):
        k = c.cause
        assert k.known, k.text
        assert "by the constraint on" not in k.text  # the user wrote no constraint
        assert all(p.label.startswith("JAX's type for the result of") for p in k.constraints)
        assert "x" in {p.label for p in k.inputs}
        fixes = [fx for fx in view.fixes(i) if fx.removes and not fx.error]
        assert fixes
        for fx in fixes:
            assert _plain_with(f, [x], fx.state, EXPLICIT)[c.kind] < before[c.kind], fx.what


@pytest.mark.parametrize(
    ("case", "kind"),
    [("elementwise", "other operand"), ("constrained result", "result"), ("split", "result")],
)
def test_fixes_split_as_the_other_operand_or_over_the_result_s_axes(case, kind):
    if case == "elementwise":  # a * b split alike is local (by construction): b split as a is

        def f(a, b):
            return a * b

        args = [put((16, 32), P("x", "y")), put((16, 32), P("y", "x"))]
    elif case == "constrained result":  # x's rows whole, as the result is asked: no gather

        def f(a, b):
            return jax.lax.with_sharding_constraint(a @ b, NamedSharding(M, P(None, "y")))

        args = [put((16, 32), P("x", None)), put((32, 64), P())]
    else:  # the result laid out as the view's out_specs ask: a split as it is, nothing moves

        def f(a, b):
            return jnp.tanh(a) * b

        args = [put((16, 32), P("x", None)), put((16, 32), P("y", None))]
    kw = {"out_specs": [P("y", None)]} if case == "split" else {}
    view = sw.ShardView(f, *args, **kw)

    def plain(st):  # f as plain jax.jit compiles it with the fix's layout (its out_specs too)
        outs = st.out_specs[0] if st.out_specs else None
        g = (
            f
            if outs is None
            else jax.jit(f, out_shardings=NamedSharding(M, spec_mod.to_partition_spec(outs)))
        )
        return _plain_with(g, args, st)

    before = plain(view.trace.state)
    assert Counter(c.kind for c in view.trace.collectives) == before
    if MISSING:
        pytest.skip(MISSING)
    offered = []
    for i, c in enumerate(view.trace.collectives):
        if not c.cause.known:
            continue
        fixes = [fx for fx in view.fixes(i) if fx.removes and not fx.error]
        for fx in fixes:  # each claimed removal: plain JAX agrees
            assert plain(fx.state)[c.kind] < before[c.kind], fx.what
        offered += [fx.what for fx in fixes if kind in fx.what]
    assert offered, "a fix of this kind exists by construction and is offered"
