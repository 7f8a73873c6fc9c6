"""Hostile cases in the manner of JAX's own tests (array_test, debugging_primitives_test's
visualize_array_sharding cases, memories_test, layout_test, pjit_test, shard_map_test), run
through ShardView(arr) and ShardView(f, *args) end to end: the view builds without an error,
repr / static HTML / snapshot / SVG render, the geometry is JAX's own (devices_indices_map),
a spec change lands where JAX puts it with the values unchanged, view.code runs and reproduces
the layout, outputs equal calling jax.jit / shard_map / pmap directly and the collectives are
those in JAX's own compiled HLO (counted by a regex independent of shardwidget)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import AxisType, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from tests.helpers import require_unreduced

COLL = re.compile(
    r"=\s*\S.*?\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\("
)
AUTO = AxisType.Auto


def _meshes() -> dict[str, Any]:
    devs = jax.devices()
    return {
        "x8": jax.make_mesh((8,), ("x",), axis_types=(AUTO,)),
        "xy": jax.make_mesh((4, 2), ("x", "y"), axis_types=(AUTO, AUTO)),
        "xyz": jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AUTO,) * 3),
        "abcd": jax.sharding.Mesh(np.array(devs).reshape(2, 2, 2, 1), ("a", "b", "c", "d")),
        "one": jax.sharding.Mesh(np.array(devs[:1]), ("x",)),
        "sub2": jax.sharding.Mesh(np.array(devs[2:4]), ("x",)),
        "perm": jax.sharding.Mesh(
            np.array(devs)[[3, 1, 7, 5, 0, 2, 6, 4]].reshape(4, 2), ("x", "y")
        ),
        "explicit": jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2),
        "mixed": jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit, AUTO)),
    }


def ar(*shape: int) -> Any:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 7


def put(value: Any, mesh: str, spec: Any, memory_kind: str | None = None) -> Any:
    return jax.device_put(value, NamedSharding(_meshes()[mesh], spec, memory_kind=memory_kind))


def _index_map(sharding: Any, shape: tuple[int, ...]) -> dict[int, tuple[tuple[int, int], ...]]:
    return {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(idx, shape, strict=True))
        for d, idx in sharding.devices_indices_map(shape).items()
    }


def _is_key(a: Any) -> bool:
    return bool(jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key))


def _host(a: Any) -> np.ndarray:
    if _is_key(a):
        a = jax.random.key_data(a)
    return np.asarray(a)


def _wsc(mesh: str, spec: Any) -> Callable[[Any], Any]:
    return jax.jit(
        lambda x: lax.with_sharding_constraint(x * 2, NamedSharding(_meshes()[mesh], spec))
    )


def _format_layout() -> Any:
    from jax.experimental.layout import Format, Layout

    sh = NamedSharding(_meshes()["xy"], P("x", "y"))
    return jax.device_put(ar(8, 8), Format(Layout(major_to_minor=(0, 1)), sh))


# ----------------------------------------------------------------------------- arrays
# name -> (maker, a spec to change to or None)
ARRAYS: dict[str, tuple[Callable[[], Any], Any]] = {
    "0d-replicated": (lambda: put(np.float32(3), "x8", P()), []),
    "0d-default-device": (lambda: jnp.float32(2.5), None),
    "bool": (lambda: put(ar(8, 4) > 1, "xy", P("x", "y")), ["y", None]),
    "complex64": (lambda: put((ar(8, 4) + 1j).astype(np.complex64), "xy", P("x")), [None, "y"]),
    "bfloat16": (lambda: put(ar(8, 8).astype(jnp.bfloat16), "xy", P("x", "y")), ["y", "x"]),
    "float8_e4m3fn": (lambda: put(ar(8, 8).astype(jnp.float8_e4m3fn), "xy", P("x")), [None, "x"]),
    "float8_e5m2": (lambda: put(ar(8, 8).astype(jnp.float8_e5m2), "x8", P("x")), [None, "x"]),
    "float16": (lambda: put(ar(8, 8).astype(np.float16), "xy", P("x", "y")), ["y", None]),
    "int4": (
        lambda: put(jnp.arange(16).astype(jnp.int4).reshape(8, 2), "x8", P("x")),
        [None, None],
    ),
    "uint4": (lambda: put(jnp.arange(16).astype(jnp.uint4).reshape(8, 2), "x8", P("x")), None),
    "int8": (
        lambda: put(np.arange(64, dtype=np.int8).reshape(8, 8), "xy", P("x", "y")),
        ["y", None],
    ),
    "uint32": (lambda: put(np.arange(64, dtype=np.uint32).reshape(8, 8), "xy", P("y")), ["x", "y"]),
    "key-new": (lambda: jax.random.split(jax.random.key(0), 8), None),
    "key-new-sharded": (lambda: put(jax.random.split(jax.random.key(0), 8), "x8", P("x")), [None]),
    "key-raw-uint32": (
        lambda: put(jax.random.split(jax.random.PRNGKey(0), 8), "x8", P("x")),
        [None, None],
    ),
    "key-0d": (lambda: jax.random.key(1), None),
    "key-rbg": (
        lambda: put(jax.random.split(jax.random.key(0, impl="rbg"), 8), "x8", P("x")),
        [None],
    ),
    "pinned_host": (lambda: put(ar(8, 8), "xy", P("x", "y"), "pinned_host"), ["y", None]),
    "unpinned_host": (lambda: put(ar(8, 8), "xy", P("x"), "unpinned_host"), [None, "y"]),
    "explicit": (lambda: put(ar(8, 8), "explicit", P("x", "y")), ["y", "x"]),
    "explicit-auto-mix": (lambda: put(ar(8, 8), "mixed", P("x", "y")), ["y", None]),
    "shuffled-devices": (lambda: put(ar(8, 8), "perm", P("x", "y")), ["y", "x"]),
    "one-device-mesh": (lambda: put(ar(4, 4), "one", P("x")), [None, "x"]),
    "sub-mesh-2-of-8": (lambda: put(ar(4, 4), "sub2", P("x")), [None, "x"]),
    "3-axis": (lambda: put(ar(8, 8, 2), "xyz", P(("x", "y"), "z")), ["z", None, "x"]),
    "4-axis": (lambda: put(ar(8, 8), "abcd", P(("a", "b"), ("c", "d"))), ["a", "b"]),
    "rank-5": (
        lambda: put(ar(2, 2, 2, 2, 2), "xyz", P("x", "y", "z")),
        [None, "x", None, "y", "z"],
    ),
    "uneven-1d-padded": (lambda: _wsc("x8", P("x"))(ar(13)), [None]),
    "uneven-2d-padded": (lambda: _wsc("xy", P("x", "y"))(ar(7, 5)), [None, None]),
    "partially-replicated": (lambda: put(ar(8, 8), "xy", P("y")), [None, "x"]),
    "tuple-axes": (lambda: put(ar(16, 4), "xy", P(("y", "x"))), [("x", "y"), None]),
    "numpy-array": (lambda: ar(4, 4), None),
    "numpy-scalar": (lambda: np.float32(3.0), None),
    "python-int": (lambda: 5, None),
    "python-float": (lambda: 2.5, None),
    "single-device-3": (lambda: jax.device_put(ar(4, 4), jax.devices()[3]), None),
    "single-device-sharding": (
        lambda: jax.device_put(ar(4, 4), SingleDeviceSharding(jax.devices()[5])),
        None,
    ),
    "pmap-output": (lambda: jax.pmap(lambda x: x * 2)(ar(8, 3)), None),
    "pmap-output-3d": (lambda: jax.pmap(lambda x: x * 2)(ar(8, 4, 2)), None),
    "jit-output": (
        lambda: jax.jit(lambda x: x @ x.T)(put(ar(8, 8), "xy", P("x", "y"))),
        ["x", None],
    ),
    "make_array_from_callback": (
        lambda: jax.make_array_from_callback(
            (8, 8), NamedSharding(_meshes()["xy"], P("x", "y")), lambda i: ar(8, 8)[i]
        ),
        ["y", "x"],
    ),
    "size-0": (lambda: put(np.zeros((0, 8), np.float32), "x8", P(None, "x")), [None, None]),
    "size-0-3d": (lambda: put(np.zeros((8, 0, 2), np.float32), "xy", P("x")), [None, None, None]),
    "format-layout": (_format_layout, ["y", None]),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_array_case(name: str) -> None:
    make, new_spec = ARRAYS[name]
    a = make()
    v = ShardView(a)
    assert v.error == "", v.error
    if not isinstance(a, jax.Array):
        a = v.array  # placed on the default device, as the view says
    # the text names as many distinct blocks as JAX's devices_indices_map has
    distinct = len(set(_index_map(a.sharding, a.shape).values()))
    text = repr(v)
    assert text.startswith("ShardView "), text
    assert f"{distinct} block{'s' if distinct != 1 else ''} of shape" in text, text
    assert "<svg" in v.to_svg()
    # the picture without script (snapshot, notebook picture): one image area per block it
    # draws, all of them up to 2 dimensions (a higher rank draws the blocks of one 2-d slice)
    areas = v._static_html().count("<area")
    assert areas == distinct if np.ndim(a) <= 2 else 1 <= areas <= distinct
    assert v.snapshot()._repr_html_().count("<area") == areas
    got = {d: b.index for b in v.layout.blocks for d in b.devices}
    assert got == _index_map(a.sharding, a.shape)
    assert v.transfer.total == 0  # the array's own layout is shown: nothing moves
    ns: dict[str, Any] = {"x": _host(a) if not _is_key(a) else a}
    exec(v.code, ns)  # the snippet reproduces the layout shown
    assert _index_map(ns["x"].sharding, a.shape) == _index_map(v.array.sharding, a.shape)
    if new_spec is None:
        return
    before = _host(a).copy()
    v.spec = new_spec
    assert v.error == "", v.error
    assert "<svg" in v.to_svg() and repr(v)
    got = {d: b.index for b in v.layout.blocks for d in b.devices}
    assert got == _index_map(v.array.sharding, a.shape)
    want = NamedSharding(v.array.sharding.mesh, P(*new_spec))
    assert _index_map(v.array.sharding, a.shape) == _index_map(want, a.shape)
    np.testing.assert_array_equal(_host(v.array), before)  # same values, new layout
    np.testing.assert_array_equal(_host(a), before)  # the user's array untouched
    if isinstance(a.sharding, NamedSharding):
        assert v.array.sharding.mesh.axis_types == a.sharding.mesh.axis_types


def test_explicit_relayout_keeps_jax_typeof() -> None:
    a = put(ar(8, 8), "explicit", P("x", "y"))
    v = ShardView(a)
    v.spec = ["y", "x"]
    assert jax.typeof(v.array).sharding.spec == P("y", "x")


def test_bad_specs_leave_the_last_good_view() -> None:
    a = put(ar(7, 8), "x8", P(None, "x"))
    v = ShardView(a)
    before = v.layout
    with pytest.raises(ValueError, match="does not divide"):
        v.spec = ["x", None]
    assert v.layout == before and a.sharding.spec == P(None, "x")
    z = ShardView(put(np.float32(1), "x8", P()))
    with pytest.raises(ValueError, match="0 dimensions"):
        z.spec = ["x"]
    assert float(z.array) == 1.0


@pytest.mark.parametrize("how", ["deleted", "donated"])
def test_deleted_and_donated_arrays_are_refused_in_words(how: str) -> None:
    a = put(ar(8, 8), "xy", P("x"))
    if how == "deleted":
        a.delete()
    else:
        jax.jit(lambda x: x + 1, donate_argnums=0)(a)
    if not a.is_deleted():  # a backend that did not donate the buffer: nothing to refuse
        assert how == "donated" and ShardView(a).error == ""
        return
    with pytest.raises(ValueError, match="deleted"):
        ShardView(a)


@pytest.mark.parametrize("how", ["deleted", "donated"])
def test_a_function_views_input_deleted_or_donated_later_is_never_run(how: str) -> None:
    """The user's own step donates (or deletes) an input after the function view was made:
    the view never runs f on it (JAX's compiled call on a donated buffer aborted the process),
    says so in words, and still compiles and shows new layouts."""
    a = put(ar(8, 8), "xy", P("x", "y"))
    v = ShardView(lambda x: x + 1, a)
    assert v.trace.ran
    if how == "deleted":
        a.delete()
    else:
        jax.jit(lambda x: x * 2, donate_argnums=0)(a)
    if not a.is_deleted():  # donation is the backend's choice: one that kept the buffer
        pytest.skip(f"the {jax.default_backend()} backend did not donate the input")
    for read in (lambda: v.outputs, lambda: v.trace.inputs):
        with pytest.raises(ValueError, match=r"input x \(8, 8\) float32 was deleted or donated"):
            read()
    v.set_layout(in_specs=[["y", "x"]])
    assert v.error == "" and not v.trace.ran
    assert "deleted or donated" in v.trace.run_error and "deleted or donated" in v._trace["message"]
    assert v.trace.out_shardings[0].spec == P("y", "x")
    assert "<svg" in v.to_svg() and repr(v)
    v.close()


def test_relayouts_hold_no_device_memory() -> None:
    import gc

    v = ShardView(put(ar(8, 8), "xy", P("x", "y")))
    gc.collect()
    n = len(jax.live_arrays())
    v.spec = [None, "x"]
    v.spec = ["x", "y"]
    gc.collect()
    assert len(jax.live_arrays()) <= n


# -------------------------------------------------------------------------- functions
@dataclass
class Fn:
    f: Any
    args: Callable[[], tuple[Any, ...]]
    kwargs: dict[str, Any] = field(default_factory=dict)  # view kwargs and f's own
    ref: Callable[..., Any] | None = None  # what calling JAX directly gives (default jit(f))
    coll: bool = True  # compare collectives with ref's compiled HLO
    f_kwargs: dict[str, Any] = field(default_factory=dict)  # kwargs of f alone (for ref)


def _x42() -> Any:
    return put(ar(8, 8), "xy", P("x", "y"))


def _w() -> Any:
    return put(ar(8, 4), "xy", P("y", None))


def _sm(body: Any, in_specs: Any, out_specs: Any) -> Any:
    return jax.jit(
        jax.shard_map(body, mesh=_meshes()["xy"], in_specs=in_specs, out_specs=out_specs)
    )


def _dbg(a: Any) -> Any:
    jax.debug.print("sum {}", a.sum())
    return a * 2


def _inspect(a: Any) -> Any:
    jax.debug.inspect_array_sharding(a, callback=lambda s: None)
    return a + 1


@jax.custom_vjp
def _cv(a: Any) -> Any:
    return a * 2


_cv.defvjp(lambda a: (a * 2, None), lambda _, g: (g * 2,))


def _ring(a: Any) -> Any:
    return lax.ppermute(a, "x", [(j, (j + 1) % 4) for j in range(4)])


def _explicit(*specs: Any) -> Callable[[], tuple[Any, ...]]:
    return lambda: tuple(
        put(ar(8, 8) if i == 0 else ar(8, 4), "explicit", s) for i, s in enumerate(specs)
    )


FUNCS: dict[str, Fn] = {
    "matmul": Fn(lambda a, b: a @ b, lambda: (_x42(), _w())),
    "reduce-all": Fn(lambda a: jnp.tanh(a).sum(), lambda: (_x42(),)),
    "f-kwarg": Fn(lambda a, scale=1.0: a * scale, lambda: (_x42(),), f_kwargs={"scale": 3.0}),
    "array-kwarg": Fn(lambda a, b=None: a + b, lambda: (_x42(),), f_kwargs={"b": ar(8, 8)}),
    "pytree-with-None": Fn(lambda d: d["a"] + 1, lambda: ({"a": _x42(), "b": None},)),
    "outputs-with-None": Fn(lambda a: (a, None, {"k": a * 2}), lambda: (_x42(),)),
    "returns-constant": Fn(lambda a: jnp.ones((4,)), lambda: (_x42(),)),
    "returns-None": Fn(lambda a: None, lambda: (_x42(),), coll=False),
    "returns-python-int": Fn(lambda a: a.shape[0], lambda: (_x42(),), coll=False),
    "unused-array-arg": Fn(lambda a, b: a * 2, lambda: (_x42(), _w())),
    "python-int-arg": Fn(lambda a, n: a * n, lambda: (_x42(), 3)),
    "numpy-scalar-arg": Fn(lambda a, n: a * n, lambda: (_x42(), np.float32(3))),
    "0d-arg": Fn(lambda a, s: a * s, lambda: (_x42(), jnp.float32(2))),
    "bool-arg": Fn(lambda a, m: jnp.where(m, a, 0), lambda: (_x42(), _x42() > 1)),
    "complex64": Fn(
        lambda a: a * (1 + 2j), lambda: (put(ar(8, 8).astype(np.complex64), "xy", P("x")),)
    ),
    "bfloat16": Fn(
        lambda a: (a * 2).astype(jnp.float32),
        lambda: (put(ar(8, 8).astype(jnp.bfloat16), "xy", P("x", "y")),),
    ),
    "float8": Fn(
        lambda a: a.astype(jnp.float32) * 2,
        lambda: (put(ar(8, 8).astype(jnp.float8_e4m3fn), "xy", P("x", "y")),),
    ),
    "int32": Fn(
        lambda a: a // 2, lambda: (put(np.arange(64, dtype=np.int32).reshape(8, 8), "xy", P("x")),)
    ),
    "key-new": Fn(lambda k: jax.random.normal(k, (8,)), lambda: (jax.random.key(0),)),
    "key-raw-uint32": Fn(lambda k: jax.random.normal(k, (8,)), lambda: (jax.random.PRNGKey(0),)),
    "key-split-out": Fn(lambda k: jax.random.split(k, 8), lambda: (jax.random.key(0),)),
    "keys-sharded-in": Fn(
        lambda ks: jax.vmap(lambda k: jax.random.uniform(k, (4,)))(ks),
        lambda: (put(jax.random.split(jax.random.key(0), 8), "x8", P("x")),),
    ),
    "key-and-array": Fn(
        lambda k, a: a + jax.random.uniform(k, a.shape), lambda: (jax.random.key(0), _x42())
    ),
    "shuffled-mesh": Fn(lambda a: a * 2 + 1, lambda: (put(ar(8, 8), "perm", P("x", "y")),)),
    "one-device-mesh": Fn(lambda a: a @ a.T, lambda: (put(ar(4, 4), "one", P("x")),)),
    "sub-mesh": Fn(lambda a: a.sum(0), lambda: (put(ar(8, 4), "sub2", P("x")),)),
    "3-axis": Fn(lambda a: a.sum(1), lambda: (put(ar(8, 8), "xyz", P(("x", "y"), "z")),)),
    "explicit-matmul": Fn(lambda a, b: a @ b, _explicit(P("x", None), P(None, "y"))),
    "explicit-sin": Fn(jnp.sin, _explicit(P("x", "y"))),
    "uneven-constraint": Fn(
        lambda a: lax.with_sharding_constraint(a * 2, NamedSharding(_meshes()["x8"], P("x"))),
        lambda: (ar(13),),
    ),
    "constraint-unconstrained": Fn(_wsc("xy", P(P.UNCONSTRAINED, "y")), lambda: (_x42(),)),
    "constraint-unconstrained-tuple": Fn(
        _wsc("xy", P(("x", "y"), P.UNCONSTRAINED)), lambda: (_x42(),)
    ),
    "pinned_host-in": Fn(
        lambda a: a * 2, lambda: (put(ar(8, 8), "xy", P("x", "y"), "pinned_host"),)
    ),
    "jit-static_argnums": Fn(jax.jit(lambda a, n: a * n, static_argnums=1), lambda: (_x42(), 4)),
    "jit-static_argnames": Fn(
        jax.jit(lambda a, how: a * 2 if how == "d" else a, static_argnames="how"),
        lambda: (_x42(),),
        f_kwargs={"how": "d"},
    ),
    "jit-wrapped": Fn(jax.jit(lambda a: a + 1), lambda: (_x42(),)),
    "jit-in-out-shardings": Fn(
        jax.jit(
            lambda a: a * 2,
            in_shardings=NamedSharding(_meshes()["xy"], P("x")),
            out_shardings=NamedSharding(_meshes()["xy"], P(None, "y")),
        ),
        lambda: (put(ar(8, 8), "xy", P("x")),),
    ),
    "jit-donate": Fn(
        jax.jit(lambda a: a + 1, donate_argnums=0), lambda: (_x42(),), ref=lambda a: ar(8, 8) + 1
    ),
    "partial-static": Fn(
        partial(lambda a, shape: a + jnp.ones(shape), shape=(8, 8)), lambda: (_x42(),)
    ),
    "numpy-in": Fn(lambda a: a * 2, lambda: (ar(8, 8),)),
    "no-args": Fn(lambda: jnp.arange(8.0), lambda: ()),
    "scan": Fn(
        lambda a: lax.scan(lambda c, _: (c * 0.5, c.sum()), a, None, length=3), lambda: (_x42(),)
    ),
    "cond": Fn(lambda a, p: lax.cond(p, lambda: a * 2, lambda: a), lambda: (_x42(), True)),
    "fori_loop": Fn(lambda a: lax.fori_loop(0, 3, lambda i, c: c * 2, a), lambda: (_x42(),)),
    "grad": Fn(jax.grad(lambda a: (a**2).sum()), lambda: (_x42(),)),
    "custom_vjp-grad": Fn(jax.grad(lambda a: _cv(a).sum()), lambda: (_x42(),)),
    "remat": Fn(jax.checkpoint(lambda a: jnp.sin(a).sum()), lambda: (_x42(),)),
    "vmap": Fn(jax.vmap(lambda r: r.sum()), lambda: (_x42(),)),
    "vmap-spmd_axis_name": Fn(jax.vmap(lambda r: r * 2, spmd_axis_name="x"), lambda: (_x42(),)),
    "size-0-in": Fn(
        lambda a: a.sum(0), lambda: (put(np.zeros((0, 8), np.float32), "x8", P(None, "x")),)
    ),
    "debug-print": Fn(_dbg, lambda: (_x42(),)),
    "inspect_array_sharding": Fn(_inspect, lambda: (_x42(),)),
    "shard_map-inside-jit": Fn(
        lambda a: (
            jax.shard_map(
                lambda b: lax.psum(b, "x"), mesh=_meshes()["xy"], in_specs=P("x"), out_specs=P()
            )(a)
            * 2
        ),
        lambda: (_x42(),),
    ),
    "partial-manual-shard_map": Fn(
        jax.jit(
            jax.shard_map(
                lambda a: lax.psum(a, "x"),
                mesh=_meshes()["xy"],
                in_specs=P("x"),
                out_specs=P(),
                axis_names={"x"},
            )
        ),
        lambda: (_x42(),),
    ),
    "grad-of-shard_map": Fn(
        jax.grad(
            lambda a: jax.shard_map(
                lambda b: lax.psum((b**2).sum(), ("x", "y")),
                mesh=_meshes()["xy"],
                in_specs=P("x", "y"),
                out_specs=P(),
            )(a)
        ),
        lambda: (_x42(),),
    ),
    "returns-key": Fn(lambda a: jax.random.key(0), lambda: (_x42(),), coll=False),
    # shard_map mode: inputs as laid out by in_specs, so no resharding before the body
    "sm-psum": Fn(
        lambda a: lax.psum(a, "x"),
        lambda: (put(ar(8, 8), "xy", P("x", None)),),
        {"mode": "shard_map", "in_specs": [P("x", None)], "out_specs": [P(None, None)]},
        ref=_sm(lambda a: lax.psum(a, "x"), (P("x", None),), P(None, None)),
    ),
    "sm-ppermute-ring": Fn(
        _ring,
        lambda: (_x42(),),
        {"mode": "shard_map", "in_specs": P("x", "y"), "out_specs": P("x", "y")},
        ref=_sm(_ring, P("x", "y"), P("x", "y")),
    ),
    "sm-psum_scatter": Fn(
        lambda a: lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True),
        lambda: (put(ar(8, 8), "xy", P("x", None)),),
        {"mode": "shard_map", "in_specs": P("x", None), "out_specs": P(("x", "y"), None)},
        ref=_sm(
            lambda a: lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True),
            P("x", None),
            P(("x", "y"), None),
        ),
    ),
    "sm-all_to_all": Fn(
        lambda a: lax.all_to_all(a, "x", 1, 0, tiled=True),
        lambda: (put(ar(8, 8), "xy", P("x", None)),),
        {"mode": "shard_map", "in_specs": P("x", None), "out_specs": P(None, "x")},
        ref=_sm(lambda a: lax.all_to_all(a, "x", 1, 0, tiled=True), P("x", None), P(None, "x")),
    ),
    "sm-axis_index": Fn(
        lambda a: a + lax.axis_index("x"),
        lambda: (_x42(),),
        {"mode": "shard_map", "in_specs": P("x", "y"), "out_specs": P("x", "y")},
        ref=_sm(lambda a: a + lax.axis_index("x"), P("x", "y"), P("x", "y")),
    ),
    "sm-pmean-two-axes": Fn(
        lambda a: lax.pmean(a, ("x", "y")),
        lambda: (_x42(),),
        {"mode": "shard_map", "in_specs": P("x", "y"), "out_specs": P()},
        ref=_sm(lambda a: lax.pmean(a, ("x", "y")), P("x", "y"), P()),
    ),
    "sm-default-out_specs": Fn(
        lambda a: a * 2,
        lambda: (_x42(),),
        {"mode": "shard_map", "in_specs": P("x", "y")},
        ref=_sm(lambda a: a * 2, P("x", "y"), P("x", "y")),
    ),
    "pmap-psum": Fn(jax.pmap(lambda a: lax.psum(a, "i"), axis_name="i"), lambda: (ar(8, 3),)),
    "pmap-in_axes-None": Fn(
        jax.pmap(lambda a, b: a * b, in_axes=(0, None)), lambda: (ar(8, 3), np.float32(2))
    ),
    "pmap-all_gather": Fn(
        jax.pmap(lambda a: lax.all_gather(a, "i"), axis_name="i"), lambda: (ar(8, 2),)
    ),
    "pmap-4-devices": Fn(jax.pmap(lambda a: a * 2, devices=jax.devices()[:4]), lambda: (ar(4, 2),)),
    "pmap-of-pmap-output": Fn(
        jax.pmap(lambda a: a + 1), lambda: (jax.pmap(lambda a: a * 2)(ar(8, 2)),)
    ),
    "pmap-static_broadcasted": Fn(
        jax.pmap(lambda a, n: a * n, static_broadcasted_argnums=1), lambda: (ar(8, 2), 3)
    ),
    "pmap-out_axes-1": Fn(jax.pmap(lambda a: a * 2, out_axes=1), lambda: (ar(8, 2),)),
    "pmap-pmean": Fn(jax.pmap(lambda a: a - lax.pmean(a, "i"), axis_name="i"), lambda: (ar(8, 4),)),
}


def _same(o: Any, e: Any) -> None:
    if hasattr(e, "dtype") and _is_key(e):
        e, o = jax.random.key_data(e), jax.random.key_data(o)
    o, e = np.asarray(o), np.asarray(e)
    assert o.shape == e.shape, (o.shape, e.shape)
    np.testing.assert_allclose(
        o.astype(np.complex128), e.astype(np.complex128), rtol=1e-5, atol=1e-5
    )


def _run_function_code(v: Any, c: Fn, args: tuple[Any, ...]) -> None:
    """view.code run: it defines <name>_sharded, which called as its last comment says gives
    the view's outputs (pmap: the snippet says pmap lays out the arguments itself)."""
    code = v.code
    assert code
    if v.mode == "pmap" or "no snippet is written" in code:
        return
    ns: dict[str, Any] = {"f": c.f, v.fn_name: c.f, **c.f_kwargs}
    exec(code, ns)
    (name,) = [k for k in ns if k.endswith("_sharded")]
    flat = "(args, kwargs) of the view" in code
    with jax.set_mesh(ns["mesh"]):
        out = ns[name](args, c.f_kwargs) if flat else ns[name](*args)
    for o, w in zip(jax.tree.leaves(out), v.outputs, strict=True):
        _same(o, w)


@pytest.mark.parametrize("name", list(FUNCS))
def test_function_case(name: str) -> None:
    c = FUNCS[name]
    args = c.args()
    v = ShardView(c.f, *args, **c.kwargs, **c.f_kwargs)
    assert v.error == "", v.error
    is_pmap = name.startswith("pmap")
    ref = (
        c.ref if c.ref is not None else (c.f if is_pmap or hasattr(c.f, "lower") else jax.jit(c.f))
    )
    ref_args = (
        args
        if not name.startswith("sm-")
        else tuple(
            jax.device_put(a, NamedSharding(_meshes()["xy"], s))
            for a, s in zip(
                args,
                jax.tree.leaves(c.kwargs["in_specs"], is_leaf=lambda s: isinstance(s, P)),
                strict=False,
            )
        )
    )
    want = jax.tree.leaves(ref(*ref_args, **c.f_kwargs))
    outs = v.outputs
    assert outs is not None and len(outs) == len(want)
    for o, e in zip(outs, want, strict=True):
        _same(o, e)
    assert isinstance(v.trace.jaxpr, str) and v.trace.jaxpr
    assert "<svg" in v.to_svg() and repr(v) and v._static_html()
    assert v.snapshot() is not None
    _run_function_code(v, c, args)
    if c.coll and hasattr(ref, "lower") and not is_pmap:
        hlo = ref.lower(*ref_args, **c.f_kwargs).compile().as_text()
        assert sorted(COLL.findall(hlo)) == sorted(k.kind for k in v.trace.collectives)
    if is_pmap and c.coll:
        hlo = ref.lower(*ref_args).compile().as_text()
        assert sorted(COLL.findall(hlo)) == sorted(k.kind for k in v.trace.collectives)


def test_function_returning_a_string_names_the_users_function() -> None:
    def fwd(a: Any) -> Any:
        return a, "s"

    v = ShardView(fwd, ar(8, 8))
    assert "fwd at " in v.error and "trace.py" not in v.error, v.error


def test_unreduced_output_and_array_against_jax() -> None:
    require_unreduced()
    mesh = _meshes()["explicit"]
    with jax.set_mesh(mesh):
        xe = put(ar(8, 8), "explicit", P("x", "y"))
        fu = jax.jit(lambda a: lax.reduce_sum(a, [0], out_sharding=P("y", unreduced={"x"})))
        v = ShardView(fu, xe)
        assert v.error == "", v.error
        (o,) = v.outputs
        want = fu(xe)
        assert o.sharding == want.sharding
        av = ShardView(want)
        assert av.error == "" and av.layout.unreduced
        np.testing.assert_allclose(
            np.asarray(jax.sharding.reshard(want, P("y"))), ar(8, 8).sum(0), rtol=1e-5
        )


def test_int4_function_compiles_without_running() -> None:
    a = put(jnp.arange(16).astype(jnp.int4).reshape(8, 2), "x8", P("x"))
    v = ShardView(lambda b: b.astype(jnp.int32) * 2, a)
    assert v.error == "" and v.trace is not None
    assert v.trace.out_shapes == [(8, 2)]


@pytest.mark.parametrize("mesh", ["reversed", "explicit", "x8", "x8-reversed"])
def test_input_on_another_mesh(mesh: str) -> None:
    """An input on another mesh than the first input's: the same blocks on the same devices
    where a spec on the view's mesh gives them (as jax.jit(f) runs it), else its own spec on
    the view's mesh when the axes agree (jax.jit(f) refuses), else replicated; a note says
    which."""
    devs = jax.devices()
    meshes = _meshes()
    meshes["reversed"] = jax.sharding.Mesh(
        np.array(devs)[::-1].reshape(4, 2), ("x", "y"), axis_types=(AUTO, AUTO)
    )
    meshes["x8-reversed"] = jax.sharding.Mesh(np.array(devs)[::-1], ("x",), axis_types=(AUTO,))
    a = put(ar(8, 8), "xy", P("x", "y"))
    b = jax.device_put(ar(8, 8), NamedSharding(meshes[mesh], P("x")))
    f = jax.jit(lambda u, w: u + w)
    try:
        jf = f.lower(a, b).compile()
    except ValueError:
        jf = None  # JAX itself refuses inputs on these meshes
    v = ShardView(lambda u, w: u + w, a, b)
    assert v.error == "", v.error
    in_sh = v.trace.in_shardings
    assert in_sh[0].mesh == a.sharding.mesh  # the first input's mesh is the view's
    note = v.trace.notes["in"][1]
    assert note and note in repr(v)
    if mesh == "x8":  # P('x') over 8 devices in order: P(('x', 'y')) on the 4x2 mesh
        assert jf is not None and "same blocks on the same devices" in note
        assert _index_map(in_sh[1], (8, 8)) == _index_map(b.sharding, (8, 8))
        hlo = jf.as_text()
        assert sorted(COLL.findall(hlo)) == sorted(k.kind for k in v.trace.collectives)
    elif mesh in ("reversed", "explicit"):
        assert jf is None and "refuses" in note
        want = NamedSharding(in_sh[0].mesh, P("x", None))
        assert _index_map(in_sh[1], (8, 8)) == _index_map(want, (8, 8))
    else:  # 8 devices in reverse order: no spec on the 4x2 mesh gives those blocks
        assert "replicated" in note
        assert in_sh[1].is_fully_replicated
    np.testing.assert_allclose(np.asarray(v.outputs[0]), 2 * ar(8, 8), rtol=1e-6)


@pytest.mark.parametrize("types", [AUTO, AxisType.Explicit])
def test_non_ascii_axis_names_do_not_abort_the_process(types: Any) -> None:
    """XLA aborts the process (a failed CUnescape check) compiling any program over a mesh axis
    named outside ASCII, so the array view computes over the same devices with the axes
    renamed, and the function view refuses in words. (Run in a subprocess: a regression
    would kill the test runner.)"""
    import subprocess
    import sys

    code = f"""
import jax, numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from shardwidget import ShardView
t = AxisType.{types.name}
m = jax.make_mesh((4, 2), ("l\\u00e9", "z"), axis_types=(t, t))
a = jax.device_put(np.arange(64, dtype=np.float32).reshape(8, 8), NamedSharding(m, P(*m.axis_names)))
v = ShardView(a)
assert v.error == "" and v._stats["status"] == "ready", (v.error, v._stats)
mins = sorted(float(s[0]) for s in v.summary.stats)
want = sorted(float(a.addressable_data(i).min()) for i in range(8))
assert mins == want, (mins, want)
v.transfer
v.spec = ["z", "l\\u00e9"]
assert v.error == "" and v.array.sharding.spec == P("z", "l\\u00e9")
np.testing.assert_array_equal(np.asarray(v.array), np.asarray(a))
f = ShardView(lambda x: x * 2, a)
assert "not plain ASCII" in f.error, f.error
f.axis_names = ["a", "b"]
assert f.error == "" and f.outputs is not None
print("alive")
"""
    import os

    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert r.returncode == 0 and "alive" in r.stdout, r.stderr[-2000:]


def test_array_spec_takes_a_partition_spec() -> None:
    a = put(ar(8, 8), "xy", P())
    v = ShardView(a)
    for spec in (P("x"), P(("x", "y"), None), P(None, "y")):
        v.spec = spec
        want = NamedSharding(_meshes()["xy"], spec)
        assert _index_map(v.array.sharding, (8, 8)) == _index_map(want, (8, 8))
    with pytest.raises(ValueError, match="not in the mesh"):
        v.spec = P("q")
    assert v.array.sharding.spec == P(None, "y")  # the last good layout


@pytest.mark.parametrize("mode", ["jit", "shard_map"])
def test_out_specs_as_a_dict_prefix_of_dict_outputs(mode: str) -> None:
    """jax.jit's out_shardings and jax.shard_map's out_specs take a pytree prefix of the
    outputs: a dict for a dict of outputs."""
    mesh = _meshes()["xy"]
    x = put(ar(8, 8), "xy", P("x", "y"))

    def f(a: Any) -> Any:
        return {"p": a * 2, "q": (a + 1, a)}

    specs = {"p": P("x"), "q": (P("x", "y"), P(None, "y"))}
    if mode == "jit":
        shardings = jax.tree.map(
            lambda s: NamedSharding(mesh, s), specs, is_leaf=lambda s: isinstance(s, P)
        )
        ref = jax.jit(f, out_shardings=shardings)
        v = ShardView(f, x, out_specs=specs)
    else:
        specs = {"p": P("x", "y"), "q": P("x", "y")}  # (vma: no replication to infer)
        ref = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=specs))
        v = ShardView(f, x, mode="shard_map", in_specs=P("x", "y"), out_specs=specs)
    assert v.error == "", v.error
    want = jax.tree.leaves(ref(x))
    for o, w, s in zip(v.outputs, want, v.trace.out_shardings, strict=True):
        np.testing.assert_allclose(np.asarray(o), np.asarray(w))
        assert _index_map(s, w.shape) == _index_map(w.sharding, w.shape)
    if mode == "jit":
        v.out_specs = {"p": P(None, "x"), "q": P()}
        assert v.error == "" and v.trace.out_shardings[0].spec == P(None, "x")
    with pytest.raises(ValueError, match="pytree prefix"):
        v.out_specs = {"z": P()}


def test_pinned_host_input_keeps_its_memory_kind_as_jit_does() -> None:
    """jax.jit(f)(x) on a pinned_host array takes it (and returns) in pinned_host memory; the
    view compiles the same, and its snippet runs on that array."""
    x = put(ar(8, 8), "xy", P("x", "y"), "pinned_host")

    def f(a: Any) -> Any:
        return a * 2

    c = jax.jit(f).lower(x).compile()
    v = ShardView(f, x)
    assert v.error == "", v.error
    assert [s.memory_kind for s in v.trace.in_shardings] == [c.input_shardings[0][0].memory_kind]
    assert [s.memory_kind for s in v.trace.out_shardings] == [c.output_shardings.memory_kind]
    assert v.outputs[0].sharding.memory_kind == jax.jit(f)(x).sharding.memory_kind
    ns: dict[str, Any] = {"f": f}
    exec(v.code, ns)
    with jax.set_mesh(ns["mesh"]):
        out = ns["f_sharded"](x)
    np.testing.assert_allclose(np.asarray(out), ar(8, 8) * 2)
    v.in_specs = [["y", None]]  # a re-layout keeps the memory kind
    assert v.error == "" and v.trace.in_shardings[0].memory_kind == "pinned_host"


def _memory_kinds() -> set[str]:
    return {m.kind for m in jax.devices()[0].addressable_memories()}


@pytest.mark.parametrize(
    ("given", "in_kind", "out_kind"),
    [
        ("device", None, "pinned_host"),
        ("device", None, "unpinned_host"),
        ("pinned_host", "pinned_host", "pinned_host"),
        ("numpy", "pinned_host", "pinned_host"),
        ("numpy", "pinned_host", None),
    ],
)
def test_jit_memory_kinds_are_the_views_as_jax_runs_them(
    given: str, in_kind: str | None, out_kind: str | None
) -> None:
    """memories_test's form: jax.jit(g, in_shardings=…, out_shardings=…) with memory kinds.
    The view compiles and runs f as ``f(x)`` does: its trace's shardings, its outputs and their
    layout are in the memory kinds of JAX's own compile and call, view.code writes them (and
    reproduces them when run), and a re-layout from the controls keeps the memory kind f's jit
    asks for on each output."""
    missing = {given, in_kind, out_kind} - {None, "numpy"} - _memory_kinds()
    if missing:
        pytest.skip(f"this backend has no memory kind {sorted(missing)}")
    mesh = _meshes()["xy"]
    kw = {}
    if in_kind:
        kw["in_shardings"] = NamedSharding(mesh, P("x", "y"), memory_kind=in_kind)
    if out_kind:
        kw["out_shardings"] = NamedSharding(mesh, P("x", "y"), memory_kind=out_kind)
    f = jax.jit(lambda a: a * 2, **kw)
    x = ar(8, 8) if given == "numpy" else put(ar(8, 8), "xy", P("x", "y"), given)
    try:
        c = f.lower(x).compile()
        want = f(x)
    except Exception as e:  # jax before 0.10 on CPU: "Side-effect ops cannot be replicated"
        pytest.skip(f"jax {jax.__version__} cannot compile f itself: {str(e)[:120]}")
    kind = want.sharding.memory_kind
    assert c.output_shardings.memory_kind == kind
    v = ShardView(f, x)
    assert v.error == "", v.error
    assert v.trace.in_shardings[0].memory_kind == c.input_shardings[0][0].memory_kind
    assert v.trace.out_shardings[0].memory_kind == kind
    assert v.trace.output_leaves[0].layout.memory_kind == kind
    assert v.outputs[0].sharding.memory_kind == kind
    assert _index_map(v.outputs[0].sharding, (8, 8)) == _index_map(want.sharding, (8, 8))
    np.testing.assert_allclose(np.asarray(v.outputs[0]), np.asarray(want))
    if kind != "device":
        assert f"memory_kind={kind!r}" in v.code
    ns: dict[str, Any] = {"f": f}
    exec(v.code, ns)
    with jax.set_mesh(ns["mesh"]):
        out = ns["f_sharded"](x)
    assert out.sharding.memory_kind == kind
    assert _index_map(out.sharding, (8, 8)) == _index_map(want.sharding, (8, 8))
    # re-layouts from the controls: each output stays in the memory kind f's jit gives it
    try:
        ref = jax.jit(f, out_shardings=NamedSharding(mesh, P("y", None), memory_kind=kind))(x)
    except Exception as e:  # JAX itself cannot compile it here: the view says so in words
        with pytest.raises(ValueError, match=re.escape(str(e).split(":")[0])):
            v.set_layout(out_specs=[["y", None]])
        return
    v.set_layout(out_specs=[["y", None]])
    assert v.error == "", v.error
    assert v.trace.out_shardings[0].memory_kind == ref.sharding.memory_kind == kind
    assert v.outputs[0].sharding.memory_kind == kind
    assert _index_map(v.outputs[0].sharding, (8, 8)) == _index_map(ref.sharding, (8, 8))
    assert f"memory_kind={kind!r}" in v.code or kind == "device"
    if in_kind is None:  # (f's own in_shardings refuse any other layout of x)
        v.set_layout(in_specs=[["y", "x"]])
        assert v.error == "", v.error
        assert v.trace.in_shardings[0].memory_kind == x.sharding.memory_kind
        assert v.outputs[0].sharding.memory_kind == kind
        v.set_layout(mesh_shape=[2, 4])
        assert v.error == "", v.error
        assert v.trace.out_shardings[0].spec == P("y", None)
        assert v.outputs[0].sharding.memory_kind == kind


def test_jitted_f_refusing_an_input_in_another_memory_kind_shows_jax_error() -> None:
    """jax.jit(g, in_shardings=… pinned_host) called on an array in device memory: JAX refuses
    the call (it does not move an argument between memory kinds), and so does the view."""
    mesh = _meshes()["xy"]
    pinned = NamedSharding(mesh, P("x", "y"), memory_kind="pinned_host")
    g = jax.jit(lambda a: a * 2, in_shardings=pinned, out_shardings=pinned)
    x = put(ar(8, 8), "xy", P("x", "y"))
    with pytest.raises(ValueError, match="memory kind on the respective arg") as e:
        g(x)
    v = ShardView(g, x)
    assert v.trace is None and v.outputs is None
    assert v.error.startswith(str(e.value).split("for arg type")[0]), (v.error, str(e.value))
    assert x.sharding.memory_kind == "device"


def test_errors_in_f_and_pmap_relayouts_are_said_in_words() -> None:
    def boom(a: Any) -> Any:
        raise RuntimeError("user bug")

    v = ShardView(boom, _x42())
    assert "user bug" in v.error and v.outputs is None
    pv = ShardView(jax.pmap(lambda a: a * 2), np.ones((8, 2), np.float32))
    with pytest.raises(ValueError, match="pmap fixes this layout"):
        pv.in_specs = [[None, None]]
    assert pv.error == "" and pv.outputs is not None  # the last good view stays


def test_jitted_f_with_in_and_out_shardings_on_numpy_inputs_lays_them_out_as_jax() -> None:
    """pjit_test's usual form: jax.jit(f, in_shardings=…, out_shardings=…) called on numpy
    inputs. The view starts on that jit's mesh and in_shardings, as ``g(x)`` lays x out.
    (Collectives: the view compiles jit(g) inside its own jit, which XLA compiles as
    jax.jit(lambda a: g(a)) does, a collective-permute more than g alone here.)"""
    mesh = _meshes()["xy"]
    g = jax.jit(
        lambda a: a @ a.T,
        in_shardings=NamedSharding(mesh, P("x")),
        out_shardings=NamedSharding(mesh, P(None, "y")),
    )
    xn = ar(8, 8)
    c = g.lower(xn).compile()
    v = ShardView(g, xn)
    assert v.error == "", v.error
    assert v.trace.in_shardings[0].mesh == mesh
    assert _index_map(v.trace.in_shardings[0], (8, 8)) == _index_map(
        c.input_shardings[0][0], (8, 8)
    )
    assert _index_map(v.trace.out_shardings[0], (8, 8)) == _index_map(c.output_shardings, (8, 8))
    np.testing.assert_allclose(np.asarray(v.outputs[0]), np.asarray(g(xn)), rtol=1e-5)
    nested = jax.jit(lambda a: g(a), in_shardings=NamedSharding(mesh, P("x")))
    hlo = nested.lower(xn).compile().as_text()
    assert sorted(COLL.findall(hlo)) == sorted(k.kind for k in v.trace.collectives)


def test_jitted_f_refusing_a_committed_input_shows_jax_error_and_leaves_it_alone() -> None:
    """jax.jit(g, in_shardings=...) called on a committed array laid out otherwise: JAX
    refuses the call, and so does the view (JAX's words, nothing run); the array keeps its
    layout and values; laid out as g's in_shardings it compiles and runs as JAX does."""
    mesh = _meshes()["xy"]
    g = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x")))
    x = put(ar(8, 8), "xy", P(None, "y"))
    before = (x.sharding, np.asarray(x).copy())
    with pytest.raises(ValueError, match="does not match the sharding on the respective arg") as e:
        g(x)
    jax_msg = str(e.value)
    v = ShardView(g, x)
    assert v.trace is None and v.outputs is None
    # JAX's message up to the argument's sharding (the view writes that spec in full)
    head = jax_msg.split("arg sharding:")[0]
    assert v.error.startswith(head), (v.error, jax_msg)
    assert str(P(None, "y")) in v.error and "float32[8,8]" in v.error  # (JAX's own repr)
    assert v._trace["message"] == v.error
    assert x.sharding == before[0]
    np.testing.assert_array_equal(np.asarray(x), before[1])
    v.set_layout(in_specs=[["x", None]])  # as g's in_shardings: JAX accepts it
    assert v.error == "", v.error
    fixed = jax.device_put(x, NamedSharding(mesh, P("x")))
    np.testing.assert_array_equal(np.asarray(v.outputs[0]), np.asarray(g(fixed)))
    assert v.trace.in_shardings[0].is_equivalent_to(fixed.sharding, 2)
    with pytest.raises(ValueError, match="does not match the sharding"):
        v.in_specs = [[None, "y"]]  # back to x's own layout: refused again, the view kept
    assert v.trace is not None and v.in_specs == [["x", None]]
    assert x.sharding == before[0]


def test_a_keyword_of_f_named_mode_is_pointed_to_partial() -> None:
    def f(a: Any, mode: str = "eval") -> Any:
        return a * 2 if mode == "train" else a

    with pytest.raises(ValueError, match=r"functools.partial\(f, mode=...\)"):
        ShardView(f, _x42(), mode="train")
    v = ShardView(partial(f, mode="train"), _x42())
    assert v.error == ""
    np.testing.assert_allclose(np.asarray(v.outputs[0]), ar(8, 8) * 2, rtol=1e-6)


def test_an_unconstrained_constraint_is_shown_as_jax_writes_it() -> None:
    """with_sharding_constraint with P.UNCONSTRAINED dimensions (XLA chooses them): the view
    compiles f as JAX does, names those dimensions P.UNCONSTRAINED, and follows a new input
    layout as JAX's own jit does."""
    f = _wsc("xy", P(P.UNCONSTRAINED, "y"))
    x = _x42()
    v = ShardView(f, x)
    assert v.error == ""
    assert [c.spec_text for c in v.trace.constraints] == ["P(P.UNCONSTRAINED, 'y')"]
    assert v.trace.out_shardings[0].spec == jax.jit(f)(x).sharding.spec
    v.set_layout(in_specs=[["y", "x"]])
    moved = jax.device_put(x, NamedSharding(_meshes()["xy"], P("y", "x")))
    assert v.error == "" and v.trace.out_shardings[0].spec == jax.jit(f)(moved).sharding.spec
    g = _wsc("xy", P(P.UNCONSTRAINED))  # shorter than the rank: the rest replicated
    assert [c.spec_text for c in ShardView(g, x).trace.constraints] == ["P(P.UNCONSTRAINED, None)"]
