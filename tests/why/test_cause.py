"""Each collective's cause (why/cause.py), on functions whose cause is known: mismatched
inputs, a constraint, out_shardings, a contraction over a sharded dimension, a gradient through
a scanned model, a reshard under Explicit axes. Every cause is checked against XLA's own
Shardy dump of the same compile (``cause.checked``), the inputs it names against the shardings
JAX compiled, and every fix against the collectives of its own compile."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget import _jax
from shardwidget.why import cause as cause_mod
from shardwidget.why import sdy

MISSING = _jax.shardy_missing()


def mesh(explicit: bool = False) -> jax.sharding.Mesh:
    t = AxisType.Explicit if explicit else AxisType.Auto
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(t, t))


def put(m: jax.sharding.Mesh, shape: tuple[int, ...], spec: P) -> jax.Array:
    return jax.device_put(jnp.ones(shape, jnp.float32), NamedSharding(m, spec))


def causes(view: sw.FunctionView) -> list[cause_mod.Cause]:
    res = view.trace
    assert res is not None and res.collectives, "the case must have collectives"
    out = [c.cause for c in res.collectives]
    assert all(isinstance(c, cause_mod.Cause) for c in out)
    for c in out:  # known and checked, or unknown with a reason in words: never silent
        assert (c.known and c.checked) or (not c.known and c.reason and "cause unknown" in c.text)
    return out


def spec_words(view: sw.FunctionView, i: int) -> str:
    """Input i's sharding in the cause's words, from the sharding JAX compiled."""
    res = view.trace
    assert res is not None
    sh = res.in_shardings[i]
    entries = _jax.spec_entries(sh.spec)
    dims = tuple((e,) if isinstance(e, str) else tuple(e or ()) for e in entries) + ((),) * (
        len(res.in_shapes[i]) - len(entries)
    )
    return sdy.Sharding(dims).words()


def known(cs: list[cause_mod.Cause]) -> list[cause_mod.Cause]:
    if MISSING:
        assert all(not c.known and MISSING in c.reason for c in cs)
        pytest.skip(f"cause unknown on this JAX, said in words: {MISSING}")
    k = [c for c in cs if c.known]
    assert k, [c.text for c in cs]
    assert all(c.checked in (cause_mod.CHECKED, cause_mod.FROM_DUMP) for c in k), [
        c.checked for c in k
    ]
    return k


def test_constraint_and_mismatched_inputs() -> None:
    m = mesh()

    def f(x, w):
        y = x @ w
        return jax.lax.with_sharding_constraint(y, NamedSharding(m, P("y", None)))

    x, w = put(m, (16, 32), P("x", None)), put(m, (32, 64), P(None, "x"))
    view = sw.ShardView(f, x, w)
    cs = known(causes(view))
    kinds = {c.kind for c in view.trace.collectives}
    assert kinds >= {"all-gather", "collective-permute"}
    for c in cs:
        assert c.op is not None and c.op.label == "dot_general"
        assert c.op.line == f.__code__.co_firstlineno + 1
        assert [p.label for p in c.inputs] == ["x", "w"]
        assert [p.spec for p in c.inputs] == [spec_words(view, 0), spec_words(view, 1)]
        assert len(c.constraints) == 1 and c.constraints[0].line == c.op.line + 1
        assert "P('y', None)" in c.constraints[0].spec
        assert f"the constraint on line {c.op.line + 1}" in c.text
    moved = {c.kind: c.cause.operand.label for c in view.trace.collectives if c.cause.operand}
    assert moved == {"all-gather": "w", "collective-permute": "x"}


def test_out_shardings() -> None:
    m = mesh()

    def f(x):
        return x * 2.0

    view = sw.ShardView(f, put(m, (16, 32), P("x", None)), out_specs=[P(None, "x")])
    cs = known(causes(view))
    assert any(c.outputs and c.outputs[0].label == "out" for c in cs), [c.text for c in cs]
    assert any("out_shardings of out" in c.text for c in cs)
    made = [c.outputs[0] for c in cs if c.outputs]  # where the output is made: f's line
    assert all(p.line == f.__code__.co_firstlineno + 1 and p.file == __file__ for p in made)


def test_contraction_over_a_sharded_dimension() -> None:
    m = mesh()

    def f(x, w):
        return x @ w

    view = sw.ShardView(f, put(m, (16, 32), P(None, "x")), put(m, (32, 64), P("x", None)))
    cs = known(causes(view))
    reduce = [c for c in view.trace.collectives if c.kind in ("all-reduce", "reduce-scatter")]
    assert reduce, [c.kind for c in view.trace.collectives]
    assert all("split over x on both sides" in c.cause.text for c in reduce)
    assert all(c.op is not None and c.op.label == "dot_general" for c in cs)
    i = view.trace.collectives.index(reduce[0])
    fix = view.fixes(i)[0]  # no single input can give way: both, together
    assert fix.removes and "together" in fix.what
    assert not any(c.kind == "all-reduce" for c in fix.collectives)


def test_reshard_under_explicit_axes() -> None:
    m = mesh(explicit=True)

    def f(x):
        return jax.sharding.reshard(x, P(None, "x"))

    view = sw.ShardView(f, put(m, (16, 32), P("x", None)))
    cs = known(causes(view))
    assert all(c.constraints or "reshard" in c.text or "constraint" in c.text for c in cs)
    assert all(c.op is not None and c.op.line == f.__code__.co_firstlineno + 1 for c in cs)


def scan_loss(ws, x):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    h, _ = jax.lax.scan(layer, x, ws)
    return (h**2).mean()


SCAN_LINE = scan_loss.__code__.co_firstlineno + 2  # the layer's matmul


def scanned_gradient() -> tuple[sw.FunctionView, jax.Array]:
    """A function view of a gradient through a 3-layer scan, and its stacked weights."""
    m = mesh()
    ws, x = put(m, (3, 32, 32), P(None, None, "x")), put(m, (16, 32), P("y", None))
    return sw.ShardView(jax.grad(scan_loss), ws, x), ws


def test_gradient_through_a_scanned_model() -> None:
    view, _ = scanned_gradient()
    cs = causes(view)
    missing = _jax.shardy_missing(view.trace.collectives[0].explainer.module_text)
    if missing:  # (jax 0.9: its Shardy passes would crash the process on the scan)
        assert all(not c.known and c.reason == missing for c in cs)
        pytest.skip(missing)
    for c in cs:  # known and checked against XLA's dump, or unknown with the reason
        if c.known:
            assert c.checked in (cause_mod.CHECKED, cause_mod.FROM_DUMP, cause_mod.IN_BODY)
            assert c.op is not None and c.op.file.endswith("test_cause.py")
        else:  # (jax 0.10: "sits in a function a loop calls (a scan's body)"; 0.8: no line)
            assert c.reason and c.text == f"cause unknown: {c.reason}"


def test_every_layer_of_a_scanned_gradient() -> None:
    """The loop-body collectives of a gradient through a scan: each read from XLA's dump (one
    op is every layer: "every layer of the scan: n iterations", n the scanned leading dim),
    told apart by the compiled dot each is for, the all-reduces of partial sums over the very
    axes the compiled HLO reduces over."""
    if jax.__version_info__ < (0, 10):
        pytest.skip("the layers of a scan explained as measured on jax 0.10 (older: see above)")
    view, ws = scanned_gradient()
    cs = causes(view)
    missing = _jax.shardy_missing(view.trace.collectives[0].explainer.module_text)
    if missing:
        pytest.skip(missing)
    colls = view.trace.collectives
    assert all("/while/body/" in c.op_name for c in colls), [c.op_name for c in colls]
    assert all(c.known and c.checked == cause_mod.IN_BODY for c in cs), [c.text for c in cs]
    assert all(cause_mod.SCAN.format(ws.shape[0]) in c.text for c in cs)
    assert all(c.op is not None and c.op.line == SCAN_LINE for c in cs)
    reduces = [(c, k) for c, k in zip(colls, cs, strict=True) if c.kind == "all-reduce"]
    assert reduces
    for c, k in reduces:  # the contracted dim is split over the axes XLA sums over
        (axis,) = c.axes
        assert f"contracted dim is split over {axis} on both sides" in k.text, (c.axes, k.text)
    assert len({k.op.index for _, k in reduces}) == len({c.axes for c, _ in reduces})
    # the layer's weight is named by the stacked leaf it is shaped as one layer of, split as
    # that leaf's spec splits it one dim further in (ws: P(None, None, 'x'): a layer's dim 1)
    (dim,) = [d - 1 for d, e in enumerate(ws.sharding.spec) if e is not None]
    axis = ws.sharding.spec[dim + 1]
    named = f"(shaped as one layer of ws) over {axis} on dim {dim}"
    assert any(named in k.text for k in cs), [k.text for k in cs]
    assert not any("layer of x" in k.text for k in cs)  # x is no stack


def test_fix_removes_the_collective_and_undo_restores() -> None:
    m = mesh()

    def f(x, w):
        return x @ w

    view = sw.ShardView(f, put(m, (16, 32), P("x", None)), put(m, (32, 64), P(None, "x")))
    before = view.trace
    if MISSING:
        pytest.skip(MISSING)
    i = next(i for i, c in enumerate(before.collectives) if c.cause.known)
    fixes = view.fixes(i)
    assert fixes and fixes[0].removes, [str(f) for f in fixes]
    target = before.collectives[i]
    view.apply_fix(i, 0)
    after = view.trace
    assert after.state == fixes[0].state
    key = (target.kind, target.op_name, target.shape)
    count = lambda res: sum((c.kind, c.op_name, c.shape) == key for c in res.collectives)  # noqa: E731
    assert count(after) < count(before)
    assert after.memory["peak"] == fixes[0].memory["peak"]
    view.undo()
    assert view.trace.state == before.state


def test_fixes_refuse_in_words() -> None:
    m = mesh()
    view = sw.ShardView(lambda x: x + 1, put(m, (16, 32), P("x", None)))
    with pytest.raises(ValueError, match="no collectives"):
        view.fixes(0)


def test_plan_causes_checked_by_the_helpers_dump() -> None:
    am = jax.sharding.AbstractMesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def f(x, w):
        return x @ w

    sds = [jax.ShapeDtypeStruct((16, 32), jnp.float32), jax.ShapeDtypeStruct((32, 64), jnp.float32)]
    view = sw.ShardView(f, *sds, mesh=am, in_specs=[P(None, "x"), P("x", None)])
    cs = causes(view)
    if MISSING:
        pytest.skip(MISSING)
    assert all(c.checked in (cause_mod.CHECKED, cause_mod.FROM_DUMP) for c in cs if c.known)
    assert any("partial sum" in c.text for c in cs), [c.text for c in cs]
    i = next(i for i, c in enumerate(cs) if "partial sum" in c.text)
    fix = view.fixes(i)[0]  # compiled in the planning helper, as the plan itself
    assert fix.removes and not any(c.kind == "all-reduce" for c in fix.collectives)


def test_gspmd_module_says_why() -> None:
    from shardwidget.why import explain as why

    ctx = why.context("module @m { func.func @main() { return } }", None, "", [], [])
    assert ctx.module is None and "GSPMD" in ctx.missing


def test_a_scanned_layer_read_from_xlas_dump() -> None:
    m = mesh()

    def fwd(ws, x):
        def layer(h, w):
            return jnp.tanh(h @ w), None

        return jax.lax.scan(layer, x, ws)[0]

    view = sw.ShardView(
        fwd, put(m, (3, 32, 32), P(None, None, "x")), put(m, (16, 32), P("y", None))
    )
    cs = causes(view)
    missing = _jax.shardy_missing(view.trace.collectives[0].explainer.module_text)
    if missing:
        pytest.skip(missing)
    body = [c for c in cs if c.known and c.checked == cause_mod.IN_BODY]
    assert body, [c.text for c in cs]
    assert all(c.op.line == fwd.__code__.co_firstlineno + 2 for c in body)
    assert all("matmul" in c.text for c in body)


def test_a_collective_the_function_writes_itself() -> None:
    view = sw.ShardView(
        lambda x: jax.lax.psum(x, "x"),
        jnp.arange(32.0),
        mode="shard_map",
        mesh_shape=[8],
        axis_names=["x"],
        in_specs=[P("x")],
        out_specs=[P()],
    )
    cs = causes(view)
    if MISSING:
        pytest.skip(MISSING)
    assert all(c.known and "psum" in c.op.label for c in cs), [c.text for c in cs]
    assert all(c.text.startswith("all-reduce asked for by the function") for c in cs)
    assert all(
        c.op.line == test_a_collective_the_function_writes_itself.__code__.co_firstlineno + 2
        for c in cs
    )
