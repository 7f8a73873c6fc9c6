"""A representative set of jit and shard_map programs in the manner of JAX's own pjit_test and
shard_map_test (issue 10), each viewed with ShardView and checked against calling jax.jit /
jax.shard_map directly: output values and devices_indices_map, input shardings, and the
collectives in JAX's own compiled HLO (counted here by a regex independent of shardwidget)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

COLL = re.compile(
    r"=\s*\S.*?\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\("
)
MESHES = {
    "zxy": ((2, 2, 2), ("z", "x", "y")),
    "xy": ((4, 2), ("x", "y")),
    "x": ((8,), ("x",)),
}


@dataclass
class Program:
    name: str
    f: Any
    mesh: str
    arrays: list[tuple[Any, Any]]  # (numpy value, the spec it is laid out with)
    in_specs: Any = None  # shard_map only: as given to jax.shard_map
    out_specs: Any = None  # shard_map: as given; jit: out_shardings as PartitionSpecs (or None)
    mode: str = "shard_map"
    kwargs: dict[str, Any] = field(default_factory=dict)  # static arguments


def arange(*shape: int) -> Any:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 7


def ring(a: Any, axis: str) -> Any:
    n = lax.axis_size(axis)
    return lax.ppermute(a, axis, [(j, (j + 1) % n) for j in range(n)])


def gathers(a: Any) -> Any:
    return lax.all_gather(a, "z", axis=0, tiled=True), lax.all_gather(
        a, ("x", "y"), axis=1, tiled=True
    )


def matmul_scatter(a: Any, b: Any) -> Any:
    c = a @ b
    return lax.psum_scatter(c, "y", scatter_dimension=0, tiled=True)


def with_static(a: Any, shape: tuple[int, ...]) -> Any:
    return a + jnp.ones(shape, a.dtype)


def loop(a: Any) -> Any:
    def body(c: Any, _: Any) -> Any:
        return c * 0.5 + jnp.roll(c, 1, axis=0), c.sum()

    return lax.scan(body, a, None, length=3)


def constrained(a: Any, b: Any) -> Any:
    h = jnp.tanh(a @ b)
    return lax.with_sharding_constraint(h, P(None, "x")) * 2


PROGRAMS = [
    # shard_map_test-like
    Program(
        "identity",
        lambda a: a,
        "zxy",
        [(arange(8, 8), P("z", ("x", "y")))],
        P("z", ("x", "y")),
        P("z", ("x", "y")),
    ),
    Program(
        "all_gather",
        gathers,
        "zxy",
        [(arange(8, 8), P("z", ("x", "y")))],
        (P("z", ("x", "y")),),
        P("z", ("x", "y")),
    ),
    Program(
        "psum",
        lambda a: lax.psum(a, "x"),
        "xy",
        [(arange(8, 4), P("x", "y"))],
        P("x", "y"),
        P(None, "y"),
    ),
    Program(
        "psum_scatter",
        matmul_scatter,
        "zxy",
        [(arange(8, 8), P("z", "y")), (arange(8, 8), P("y", None))],
        (P("z", "y"), P("y", None)),
        P(("z", "y"), None),
    ),
    Program("ppermute", partial(ring, axis="x"), "x", [(arange(8, 8), P("x"))], P("x"), P("x")),
    Program(
        "all_to_all",
        lambda a: lax.all_to_all(a, "x", 0, 1, tiled=True),
        "x",
        [(arange(64, 8), P("x"))],
        P("x"),
        P("x"),
    ),
    Program(
        "axis_index",
        lambda a: a + lax.axis_index("y"),
        "xy",
        [(arange(4, 8), P("x", "y"))],
        P("x", "y"),
        P("x", "y"),
    ),
    Program(
        "pmax_pmin",
        lambda a: (lax.pmax(a, "z"), lax.pmin(a, ("x", "y"))),
        "zxy",
        [(arange(8, 8), P("z", ("x", "y")))],
        P("z", ("x", "y")),
        (P(None, ("x", "y")), P("z")),
    ),
    Program(
        "static_arg",
        with_static,
        "xy",
        [(arange(8, 8), P("x", "y"))],
        P("x", "y"),
        P("x", "y"),
        kwargs={"shape": (2, 4)},
    ),
    Program(
        "nested_jit",
        jax.jit(lambda a, b: jnp.sin(a) * b),
        "xy",
        [(arange(8, 8), P("x", "y")), (arange(8, 8), P("x", "y"))],
        P("x", "y"),
        P("x", "y"),
    ),
    # pjit_test-like (jit: the inputs' layouts as given, out_shardings as given or XLA's)
    Program(
        "jit_matmul",
        lambda a, b: a @ b,
        "xy",
        [(arange(8, 16), P("x", "y")), (arange(16, 8), P("y", None))],
        mode="jit",
    ),
    Program(
        "jit_out_shardings",
        lambda a: (a * 2, a.T),
        "xy",
        [(arange(8, 8), P("x", "y"))],
        out_specs=(P("y", "x"), P()),
        mode="jit",
    ),
    Program("jit_reduce", lambda a: a.sum(0), "x", [(arange(16, 4), P("x"))], mode="jit"),
    Program(
        "jit_roll", lambda a: jnp.roll(a, 1, axis=0), "x", [(arange(16, 4), P("x"))], mode="jit"
    ),
    Program(
        "jit_constraint",
        constrained,
        "xy",
        [(arange(8, 8), P("x", None)), (arange(8, 8), P(None, "y"))],
        mode="jit",
    ),
    Program(
        "jit_pytree",
        lambda d: {"s": d["a"] + d["b"], "p": d["a"] * d["b"]},
        "xy",
        [(arange(8, 8), P("x", "y")), (arange(8, 8), P("x", "y"))],
        mode="jit",
    ),
    Program("jit_scan", loop, "x", [(arange(16, 4), P("x"))], mode="jit"),
    Program(
        "jit_reshape", lambda a: a.reshape(4, 32), "xy", [(arange(16, 8), P("x", "y"))], mode="jit"
    ),
    Program(
        "jit_vmap",
        jax.vmap(lambda r: jnp.outer(r, r).sum(1)),
        "xy",
        [(arange(8, 4), P("x", "y"))],
        mode="jit",
    ),
]


def mesh_of(p: Program) -> Any:
    shape, names = MESHES[p.mesh]
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))


def placed(p: Program, mesh: Any) -> list[Any]:
    return [jax.device_put(v, NamedSharding(mesh, s)) for v, s in p.arrays]


def call_args(p: Program, arrays: list[Any]) -> tuple[Any, ...]:
    if p.name == "jit_pytree":
        return ({"a": arrays[0], "b": arrays[1]},)
    return tuple(arrays)


def jax_itself(p: Program, mesh: Any, args: tuple[Any, ...]) -> tuple[Any, Any]:
    """(outputs, compiled) of the program as JAX runs it."""
    if p.mode == "shard_map":
        g = jax.jit(
            jax.shard_map(
                partial(p.f, **p.kwargs), mesh=mesh, in_specs=p.in_specs, out_specs=p.out_specs
            )
        )
        return g(*args), g.lower(*args).compile()
    with jax.set_mesh(mesh):
        kw = {} if p.out_specs is None else {"out_shardings": p.out_specs}
        g = jax.jit(p.f, **kw)
        return g(*args), g.lower(*args).compile()


def index_map(sharding: Any, shape: Any) -> Any:
    return sharding.devices_indices_map(tuple(shape))


@pytest.mark.parametrize("p", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_program_matches_jax(p: Program) -> None:
    mesh = mesh_of(p)
    args = call_args(p, placed(p, mesh))
    want, compiled = jax_itself(p, mesh, args)
    extra: dict[str, Any] = {"mode": p.mode}
    if p.mode == "shard_map":
        extra.update(in_specs=p.in_specs, out_specs=p.out_specs)
    elif p.out_specs is not None:
        extra["out_specs"] = p.out_specs
    v = ShardView(p.f, *args, **extra, **p.kwargs)
    assert v.error == "", v.error
    assert v.trace is not None and v.trace.ran
    assert v.mesh_shape == list(mesh.devices.shape)
    # inputs: laid out as JAX's executable takes them
    jax_in = jax.tree_util.tree_leaves(compiled.input_shardings[0])
    for lf, sh in zip(v.trace.input_leaves, jax_in, strict=True):
        assert index_map(lf.sharding, lf.shape) == index_map(sh, lf.shape)
    # outputs: values and devices
    wants = jax.tree_util.tree_leaves(want)
    gots = v.outputs or []
    assert len(gots) == len(wants)
    for got, w in zip(gots, wants, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(w), rtol=1e-5, atol=1e-5)
        assert index_map(got.sharding, got.shape) == index_map(w.sharding, w.shape)
    for lf, w in zip(v.trace.output_leaves, wants, strict=True):
        assert lf.shape == w.shape
        assert index_map(lf.sharding, lf.shape) == index_map(w.sharding, w.shape)
    # collectives: the kinds and counts in JAX's own compiled HLO
    hlo_counts = Counter(m.group(1) for m in COLL.finditer(compiled.as_text()))
    assert Counter(c.kind for c in v.trace.collectives) == hlo_counts
    # and the view's statistics of the outputs come from those arrays
    stats = v._trace_stats["outputs"]
    assert [s["status"] for s in stats] == ["ready"] * len(gots)


def test_the_set_covers_every_collective_kind() -> None:
    """The programs above exercise every collective XLA emits on CPU."""
    kinds: Counter[str] = Counter()
    for p in PROGRAMS:
        mesh = mesh_of(p)
        _, compiled = jax_itself(p, mesh, call_args(p, placed(p, mesh)))
        kinds.update(m.group(1) for m in COLL.finditer(compiled.as_text()))
    assert set(kinds) == {
        "all-reduce",
        "all-gather",
        "reduce-scatter",
        "all-to-all",
        "collective-permute",
    }


def _kinds(compiled_text: str) -> Counter[str]:
    kinds = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
    return Counter(k for line in compiled_text.splitlines() for k in kinds if f" {k}(" in line)


@pytest.mark.parametrize("donate", [False, True])
def test_a_constraint_on_a_sub_mesh_inside_a_jit_with_its_own_shardings(donate: bool) -> None:
    """JAX's testShardingConstraintWithArray: a (2, 1) mesh of 2 of 8 devices, jit with
    in_shardings and out_shardings P(None), a constraint P('x', 'y') inside, a numpy input. The
    view reports what jax.jit(...).lower(...).compile() does: the user's out_shardings (P(None),
    not the constraint's P('x')), the all-gather that implies, and JAX's values; a donating jit
    does not consume the user's input."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]).reshape(2, 1), ("x", "y"))
    s = NamedSharding(mesh, P(None))

    @partial(jax.jit, in_shardings=s, out_shardings=s, donate_argnums=(0,) if donate else ())
    def f(x):
        y = x + 1
        y = lax.with_sharding_constraint(y, NamedSharding(mesh, P("x", "y")))
        return y * 2

    x = np.arange(64).reshape(8, 8)
    compiled = f.lower(x).compile()
    v = ShardView(f, x)
    assert v.error == ""
    (want,) = jax.tree_util.tree_leaves(compiled.output_shardings)
    (got,) = [lf.sharding for lf in v.trace.output_leaves]
    assert got.is_equivalent_to(want, 2) and got.spec[0] is None
    assert Counter(c.kind for c in v.trace.collectives) == _kinds(compiled.as_text())
    assert _kinds(compiled.as_text())["all-gather"] >= 1
    (out,) = v.outputs
    np.testing.assert_array_equal(np.asarray(out), (x + 1) * 2)
    assert out.sharding.is_equivalent_to(s, 2)
    np.testing.assert_array_equal(x, np.arange(64).reshape(8, 8))  # the input is untouched


def _sub_mesh() -> Any:
    return jax.sharding.Mesh(np.array(jax.devices()[:2]).reshape(2, 1), ("x", "y"))


def _constrained(x: Any) -> Any:
    mesh = _sub_mesh()
    return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x", "y")))


def _user_jits() -> list[tuple[str, Any, tuple[Any, ...]]]:
    """jax.jit wrappers the way users write them: their own in/out shardings (JAX's
    testShardingConstraintWithArray), donation, static arguments, unused inputs."""
    mesh = _sub_mesh()
    rep = NamedSharding(mesh, P(None))
    rows = NamedSharding(mesh, P("x"))
    x = np.arange(16.0).reshape(8, 2)
    return [
        (
            "constraint_out_replicated",
            jax.jit(_constrained, in_shardings=rep, out_shardings=rep),
            (x,),
        ),
        ("out_rows", jax.jit(lambda a: a + 1, in_shardings=rep, out_shardings=rows), (x,)),
        (
            "out_tuple",
            jax.jit(lambda a: (a, a.sum(0)), in_shardings=rep, out_shardings=(rows, rep)),
            (x,),
        ),
        ("donate", jax.jit(lambda a: a * 3, out_shardings=rows, donate_argnums=0), (x,)),
        (
            "static_argnums",
            jax.jit(lambda a, k: a * k, static_argnums=1, out_shardings=rep),
            (x, 3),
        ),
        (
            "keep_unused",
            jax.jit(lambda a, b: a * 2, keep_unused=True, out_shardings=rows),
            (x, np.ones(4)),
        ),
    ]


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
@pytest.mark.parametrize(("name", "f", "args"), _user_jits(), ids=[c[0] for c in _user_jits()])
def test_user_jit_keywords_reported_as_jax_compiles_them(name: str, f: Any, args: Any) -> None:
    """A jax.jit with its own out_shardings and other keywords: the view's outputs, their
    layout and the collectives are those of ``f.lower(*args).compile()`` (issue 23, defect 3:
    the view reported P('x',) and no all-gather where JAX gives P(None,) and an all-gather)."""
    compiled = f.lower(*args).compile()
    want = f(*args)
    v = ShardView(f, *args)
    assert v.error == "", v.error
    for lf, sh, w in zip(
        v.trace.output_leaves,
        jax.tree_util.tree_leaves(compiled.output_shardings),
        jax.tree_util.tree_leaves(want),
        strict=True,
    ):
        assert index_map(lf.sharding, lf.shape) == index_map(sh, w.shape)
    for got, w in zip(v.outputs or [], jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(w))
        assert index_map(got.sharding, got.shape) == index_map(w.sharding, w.shape)
    hlo_counts = Counter(m.group(1) for m in COLL.finditer(compiled.as_text()))
    assert Counter(c.kind for c in v.trace.collectives) == hlo_counts
