"""Help out of an error: every suggestion is tried with JAX itself."""

import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget import ShardView, suggest_layouts
from shardwidget.model.help import explicit_fixes, sharding_type_hint
from shardwidget.model.spec import to_partition_spec

SHAPES = [(3, 5), (6, 4), (7,), (12, 10, 3), (1, 1)]


def _blocks(arr: Any) -> int:
    shape = arr.shape
    idx = {
        tuple(s.indices(n)[:2] for s, n in zip(i, shape, strict=True))
        for i in arr.sharding.devices_indices_map(shape).values()
    }
    return len(idx)


def _best_without_padding(shape: tuple[int, ...]) -> int:
    """The most blocks any 1- or 2-axis mesh and spec gives this shape, by trying device_put."""
    best = 1
    host = np.zeros(shape, np.float32)
    for ms in [(8,), (2, 4), (4, 2)]:
        names = ("x", "y")[: len(ms)]
        mesh = jax.make_mesh(ms, names, axis_types=(AxisType.Explicit,) * len(names))
        for placement in itertools.product(range(-1, len(shape)), repeat=len(ms)):
            spec = [
                tuple(n for n, d in zip(names, placement, strict=True) if d == dim)
                for dim in range(len(shape))
            ]
            try:
                arr = jax.device_put(host, NamedSharding(mesh, to_partition_spec(tuple(spec))))
            except ValueError:  # IndivisibleError is a ValueError
                continue
            best = max(best, _blocks(arr))
    return best


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_suggestion_works_with_device_put(shape: tuple[int, ...]) -> None:
    sugg = suggest_layouts(shape, 8)
    assert sugg
    host = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    for s in sugg:
        padded = np.pad(host, s.pad)
        mesh = jax.make_mesh(
            s.mesh_shape, s.axis_names, axis_types=(AxisType.Explicit,) * len(s.axis_names)
        )
        arr = jax.device_put(padded, NamedSharding(mesh, to_partition_spec(s.spec)))
        assert _blocks(arr) == s.shards
        np.testing.assert_array_equal(np.asarray(arr)[tuple(slice(0, n) for n in shape)], host)
        ns: dict[str, Any] = {"x": jnp.asarray(host)}
        exec(s.code, ns)
        assert ns["x"].shape == padded.shape and _blocks(ns["x"]) == s.shards
    fit = [s for s in sugg if not s.padded]
    # the first suggestion is the best that fits as is (checked by trying every spec)
    assert fit and fit[0].shards == _best_without_padding(shape)
    if fit[0].shards < 8:  # padding is offered, and it shards over every device
        padded = [s for s in sugg if s.padded]
        assert padded and all(s.shards == 8 for s in padded)


def test_three_by_five_on_eight_devices() -> None:
    sugg = suggest_layouts(jnp.ones((3, 5)))
    assert [s.shards for s in sugg if not s.padded] == [1]  # only replicated fits as is
    best = next(s for s in sugg if s.padded)
    assert np.prod([n + a for n, (_, a) in zip((3, 5), best.pad, strict=True)]) == 24  # 4×6 or 3×8
    assert "jnp.pad(x, " in str(best)


def test_a_refused_indivisible_layout_says_how_to_pad_and_padding_works() -> None:
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    view = ShardView(x)
    changes = {
        "mesh_shape": [2, 4],
        "axis_names": ["x", "y"],
        "axis_types": ["auto", "auto"],
        "spec": ["x", "y"],
    }
    with pytest.raises(ValueError, match="does not divide") as err:
        view.set_layout(**changes)
    msg = str(err.value)
    assert "jnp.pad(x, ((0, 1), (0, 3)))" in msg and "suggest_layouts" in msg
    assert len(msg) <= shardwidget.wire.MAX_MESSAGE
    padded = ShardView(jnp.pad(jnp.asarray(x), ((0, 1), (0, 3))))
    padded.set_layout(**changes)  # the hint's padding makes the same layout fit
    assert padded.layout.shape == (4, 8) and len(padded.layout.blocks) == 8
    # the front end sees the same words, and the view keeps its layout
    assert view.layout.shape == (3, 5) and view.spec == [None, None]


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"spec": ["q", None]}, "not in the mesh"),
        ({"spec": ["x", "x"]}, "used by dimensions 0 and 1"),
        ({"mesh_shape": [8], "spec": ["x", None], "memory_kind": "nope"}, "does not divide"),
    ],
)
def test_no_padding_hint_where_padding_would_not_help(changes: dict[str, Any], why: str) -> None:
    view = ShardView(np.ones((3, 5), np.float32))
    with pytest.raises(ValueError, match=why) as err:
        view.set_layout(**changes)
    assert "jnp.pad" not in str(err.value)


def matmul_t(a: Any, b: Any) -> Any:
    return a @ b.T


def test_sharding_type_error_names_the_axis_switch_that_compiles() -> None:
    mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P(None, "a")))
    view = ShardView(matmul_t, x, x)  # explicit axes: the contraction over 'a' is ambiguous
    assert view.error.startswith("ShardingTypeError")
    assert "switch 'a' to Auto" in view.error
    assert "axis_types=['auto', 'explicit'] compiles" in view.error
    assert "out_sharding" in view.error
    assert len(view.error) <= shardwidget.wire.MAX_MESSAGE
    view.axis_types = ["auto", "explicit"]  # what the message says
    assert view.error == "" and view.trace is not None
    np.testing.assert_allclose(np.asarray(view.outputs[0]), np.full((8, 8), 8.0))


def test_sharding_type_error_from_a_python_setter(arr: Any) -> None:
    view = ShardView(
        matmul_t, arr, arr, axis_types=["auto", "auto"], in_specs=[[None, "x"], [None, "x"]]
    )
    assert view.error == ""
    with pytest.raises(ValueError, match=r"switch 'x' to Auto .*axis_types=\['auto', 'explicit'\]"):
        view.axis_types = ["explicit", "explicit"]
    assert view.axis_types == ["auto", "auto"]  # nothing changed


def test_explicit_fixes_are_tried_not_guessed() -> None:
    from shardwidget.trace.result import TraceState

    st = TraceState((2, 4), ("a", "b"), ("explicit", "explicit"), (), ())
    tried: list[tuple[str, ...]] = []

    def compiles(c: Any) -> bool:
        tried.append(c.axis_types)
        return c.axis_types == ("auto", "auto")

    fixes = explicit_fixes(st, compiles)
    assert tried == [("auto", "explicit"), ("explicit", "auto"), ("auto", "auto")]
    assert [f[0] for f in fixes] == [("a", "b")]
    assert "switch 'a', 'b' to Auto" in sharding_type_hint(fixes, "jit")
    none = sharding_type_hint(explicit_fixes(st, lambda c: False), "jit")
    assert "switch" not in none and "out_sharding" in none


def two_outputs(a: Any, b: Any) -> Any:
    return a * 2, b.sum()


def test_a_function_input_that_needs_padding_is_named() -> None:
    a, b = np.ones((8, 8), np.float32), np.ones((3, 5), np.float32)
    view = ShardView(two_outputs, a, b)
    specs = [["x", None], ["x", None]]
    with pytest.raises(ValueError, match="input b") as err:
        view.in_specs = specs
    assert "Or pad b to 8×5 first: jnp.pad(b, ((0, 5), (0, 0)))" in str(err.value)
    padded = ShardView(two_outputs, a, jnp.pad(jnp.asarray(b), ((0, 5), (0, 0))))
    padded.in_specs = specs  # the hint's padding makes the same layout fit
    assert padded.error == "" and padded.trace is not None
    assert float(padded.outputs[1]) == 15.0  # zeros padded: the sum is unchanged
    with pytest.raises(ValueError, match="input a") as err:  # both need it: both counted
        ShardView(two_outputs, np.ones((4, 8), np.float32), b).in_specs = specs
    assert "jnp.pad(a, ((0, 4), (0, 0)))" in str(err.value)
    assert str(err.value).endswith("; 1 more input needs padding too")
