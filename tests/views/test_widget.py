"""ShardView: traits both ways, errors that change nothing, bursts, released arrays, payload size."""

import gc
import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, wire
from shardwidget.model.layout import layout_of
from tests.helpers import Sent, request


def assert_matches_jax(view):
    a = view.array
    lay = view.layout
    assert lay == layout_of(a)
    for sh in a.addressable_shards:
        blk = lay.blocks[lay.device_block[sh.device.id]]
        assert blk.index == tuple(s.indices(n)[:2] for s, n in zip(sh.index, a.shape, strict=True))
    wire = view._layout
    assert [b["i"] for b in wire["blocks"]] == [[list(r) for r in b.index] for b in lay.blocks]
    assert wire["typeof"] == lay.typeof


def test_initial_state_mirrors_the_array(arr):
    v = ShardView(arr)
    assert v.array is arr
    assert (v.mesh_shape, v.axis_names, v.axis_types) == ([2, 4], ["x", "y"], ["explicit"] * 2)
    assert v.spec == ["x", "y"]
    assert v.memory_kind == "device"
    assert v.view_dims == [0, 1]
    assert v._layout["source"] == "original"
    assert v._stats["status"] == "ready"
    assert v._stats["key"] == v._layout["key"]
    assert v._options["factorizations"]["2"] == [[1, 8], [2, 4], [4, 2], [8, 1]]
    assert v._options["original"]["spec"] == ["x", "y"]
    assert_matches_jax(v)


def test_python_setters_relayout_and_keep_the_original(arr):
    before = np.asarray(arr).copy()
    v = ShardView(arr)
    v.spec = ["y", None]
    assert v.array.sharding.spec == P("y", None)
    assert v.layout.replication == 2
    assert_matches_jax(v)
    np.testing.assert_array_equal(np.asarray(v.array), before)
    v.set_layout(mesh_shape=[8], axis_names=["d"], axis_types=["auto"], spec=[None, "d"])
    assert v.array.sharding.mesh.shape == {"d": 8}
    assert v._layout["source"] == "resharded"
    assert_matches_jax(v)
    with v.hold_trait_notifications():
        v.mesh_shape = [4, 2]
        v.axis_names = ["a", "b"]
        v.spec = ["a", "b"]
    assert v.array.sharding.spec == P("a", "b")
    assert_matches_jax(v)
    v.memory_kind = "pinned_host"
    assert v.array.sharding.memory_kind == "pinned_host"
    # the user's array: same object, not deleted, same sharding and values
    assert not arr.is_deleted()
    assert arr.sharding.spec == P("x", "y")
    np.testing.assert_array_equal(np.asarray(arr), before)
    v.reset()
    assert v.array is arr
    assert v.spec == ["x", "y"]


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"spec": ["y", "y"]}, "'y' is used by dimensions 0 and 1"),
        ({"spec": [None, "z"]}, "axis 'z' is not in the mesh"),
        ({"spec": ["y", None, None]}, "3 entries but the array has 2 dimensions"),
        ({"mesh_shape": [3, 3]}, r"has 9 devices, but the kernel has 8"),
        ({"mesh_shape": [8, 1]}, r"dimension 0 has size 4, which 'x' \(x=8"),
        ({"memory_kind": "hbm"}, "memory kind 'hbm' is not offered.*pinned_host"),
        ({"axis_types": ["auto", "manual"]}, "'manual' is not one of"),
        ({"axis_names": ["x", "x"]}, "'x' is used twice"),
        ({"mesh_shape": [0, 8]}, r"mesh sizes must be positive integers; got \(0, 8\)"),
        ({"mesh_shape": [8, 0]}, r"mesh sizes must be positive integers"),
        ({"mesh_shape": [-2, -4]}, r"mesh sizes must be positive integers"),
    ],
)
def test_invalid_python_changes_raise_and_change_nothing(arr, changes, match):
    v = ShardView(arr)
    v.spec = ["x", None]
    shown, traits, key = v.array, {k: getattr(v, k) for k in changes}, v._layout["key"]
    with pytest.raises(ValueError, match=match):
        v.set_layout(**changes)
    ((name, value),) = changes.items()
    with pytest.raises(ValueError, match=match):
        setattr(v, name, value)
    assert v.array is shown
    assert {k: getattr(v, k) for k in changes} == traits
    assert v._layout["key"] == key
    assert not arr.is_deleted()


def test_indivisible_message_names_sizes_and_alternatives():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P("x")))
    v = ShardView(a)
    with pytest.raises(
        ValueError,
        match=r"dimension 0 has size 6, which 'y' \(y=4, 4 shards\).*6 % 4 = 2.*Divisors of 6: 1, 2, 3, 6",
    ) as e:
        v.spec = ["y", "x"]
    assert "'x' (size 2, used by dimension 1) would divide it" in str(e.value)


def test_frontend_request_ok_and_error_keep_last_good_view(arr):
    v = ShardView(arr)
    sent = Sent(v)
    request(v, 1, spec=["y", "x"])
    assert sent.msgs[-1] == {"type": "result", "seq": 1, "ok": True, "error": ""}
    assert v.spec == ["y", "x"]
    assert v.error == ""
    good, key = v.array, v._layout["key"]
    request(v, 2, spec=["y", "y"])  # raises nothing into the kernel
    assert sent.msgs[-1]["ok"] is False
    assert "'y' is used by dimensions 0 and 1" in v.error
    assert v.array is good
    assert v._layout["key"] == key
    assert v.spec == ["y", "x"]
    assert v.busy is False
    request(v, 3, mesh_shape="nonsense")  # malformed payloads too
    assert "mesh sizes must be integers" in v.error
    v._on_custom_msg(v, {"type": "request", "seq": 4, "state": {"spec": []}}, [])
    assert "incomplete layout request" in v.error
    request(v, 5, spec=["x", None])
    assert v.error == ""
    assert v.array.sharding.spec == P("x", None)


def test_stale_requests_are_answered_not_applied(arr):
    v = ShardView(arr)
    sent = Sent(v)
    request(v, 10, spec=[None, "x"])
    shown = v.array
    request(v, 9, spec=["y", None])
    assert v.array is shown
    assert sent.msgs[-1] == {
        "type": "result",
        "seq": 9,
        "ok": False,
        "error": "superseded by a newer request",
    }


def test_burst_ends_on_final_state_and_releases_arrays(arr):
    v = ShardView(arr)
    Sent(v)
    # The first move off the original makes JAX cache per-shard views on it: warm up first.
    request(v, 1000, spec=[None, None])
    v.reset()
    v._last_seq = 0
    gc.collect()
    baseline = len(jax.live_arrays())
    specs = [["x", "y"], ["y", "x"], [None, "x"], ["y", None], [["x", "y"], None], [None, None]]
    for i in range(30):
        request(v, i + 1, spec=specs[i % len(specs)])
    assert v.spec == specs[29 % len(specs)]
    assert v.array.sharding.spec == P(*specs[29 % len(specs)])
    assert_matches_jax(v)
    gc.collect()
    # only the array now shown (+ the per-shard views JAX caches when its shards are read)
    assert len(jax.live_arrays()) <= baseline + 1 + 8
    v.reset()
    gc.collect()
    assert len(jax.live_arrays()) == baseline


def test_view_dims_for_nd_arrays():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.zeros((4, 6, 8)), NamedSharding(mesh, P(None, "x", "y")))
    v = ShardView(a)
    assert v.view_dims == [1, 2]  # the sharded dimensions first
    assert v._stats["thumbs_dims"] == [1, 2]
    v.view_dims = [2, 0]
    assert v._stats["thumbs_dims"] == [2, 0]
    with pytest.raises(ValueError, match="2 distinct dimension"):
        v.view_dims = [1, 1]
    with pytest.raises(ValueError, match="0 to 2"):
        v.view_dims = [0, 3]
    assert ShardView(jnp.zeros(5)).view_dims == [0]
    assert ShardView(jnp.float32(1) + 0).view_dims == []


def test_inputs_accepted_and_rejected(arr):
    v = ShardView(np.arange(6.0).reshape(2, 3))
    assert "numpy array placed on" in v._layout["note"]
    assert v.array.shape == (2, 3)
    assert "int scalar" in ShardView(3)._layout["note"]
    assert ShardView(jax.random.split(jax.random.key(0), 8))._stats["status"] == "unavailable"
    gone = jnp.ones(4)
    gone.delete()
    with pytest.raises(ValueError, match=r"deleted jax\.Array"):
        ShardView(gone)
    with pytest.raises(TypeError, match=r"got str; expected a jax\.Array"):
        ShardView("hello")
    fv = ShardView(jnp.sin)  # a function view (tests/trace/test_trace.py); here: no arguments given
    assert type(fv).__name__ == "FunctionView"
    assert "argument" in fv.error and fv.trace is None
    with pytest.raises(TypeError, match="takes one array"):
        ShardView(arr, arr)
    with pytest.raises(TypeError, match="'spce'; did you mean 'spec'"):
        ShardView(arr, spce=["x"])

    @jax.jit
    def inside(x):
        ShardView(x)
        return x

    with pytest.raises(TypeError, match="got a tracer"):
        inside(arr)


def test_constructor_layout_kwargs(arr):
    v = ShardView(arr, spec=[None, "x"], stats=False)
    assert v.array.sharding.spec == P(None, "x")
    assert v._stats["status"] == "unavailable"
    with pytest.raises(ValueError, match="not in the mesh"):
        ShardView(arr, spec=["q"])


def test_stats_payload_values_and_thumbs(arr):
    v = ShardView(arr)
    s = v._stats
    vals = np.frombuffer(s["values"], "<f8")
    host = np.asarray(arr)
    for b, off in zip(v.layout.blocks, s["values_offsets"], strict=True):
        n = int(np.prod(b.shape))
        np.testing.assert_array_equal(vals[off : off + n].reshape(b.shape), host[b.slices])
    assert s["blocks"][0] == [0.0, 9.0, 4.5, pytest.approx(4.031129), 0.0, 0.0]
    thumbs = np.frombuffer(s["thumbs"], np.uint8)
    assert thumbs.min() == 0
    assert thumbs.max() == 255


def test_payload_size_is_bounded_and_independent_of_element_count():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    sizes = []
    for n in (16, 4096):
        a = jax.device_put(jnp.ones((n, n), jnp.float32), NamedSharding(mesh, P("x", "y")))
        v = ShardView(a)
        sizes.append(
            wire.wire_size(v._layout, v._stats, v._options, v.spec, v.mesh_shape, v.axis_names)
        )
    assert max(sizes) <= wire.size_budget(8)
    assert abs(sizes[0] - sizes[1]) < 4096, sizes


SCRIPT = textwrap.dedent("""
    import jax, numpy as np
    jax.config.update("jax_num_cpu_devices", {n})
    from jax.sharding import NamedSharding, PartitionSpec as P
    from shardwidget import ShardView
    from shardwidget import wire
    mesh = jax.make_mesh({mesh}, ("x", "y"))
    a = jax.device_put(np.ones(({size}, {size}), np.float32), NamedSharding(mesh, P("x", "y")))
    v = ShardView(a)
    print("SIZE", wire.wire_size(v._layout, v._stats, v._options), wire.size_budget({n}))
    v.spec = ["x", None]
    print(repr(v))
""")


@pytest.mark.slow
@pytest.mark.parametrize(("n", "mesh"), [(256, (16, 16)), (1024, (32, 32))])
def test_many_devices_payload_and_text(n, mesh):
    src = str(pathlib.Path(__file__).parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(n=n, mesh=mesh, size=2048)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    ).stdout
    size, budget = (int(x) for x in out.split("SIZE ")[1].split()[:2])
    assert size <= budget, (size, budget)
    assert f"on {n} cpu devices" in out
    # replicated blocks: ranges of holders, never a cut-off number
    rows = mesh[0]
    assert f"{rows} blocks of shape" in out
    for i in range(rows):  # row block i is held by mesh row i: ids i*cols .. i*cols+cols-1
        lo, hi = i * mesh[1], i * mesh[1] + mesh[1] - 1
        assert f" {lo}-{hi}" in out


def test_set_layout_back_to_original_is_the_original(arr):
    v = ShardView(arr)
    v.set_layout(spec=["y", "x"])
    assert v._layout["source"] == "resharded"
    v.set_layout(spec=["x", "y"])
    assert v.array is arr
    assert v._layout["source"] == "original"
    assert "re-laid out" not in repr(v)


def test_repr_draws_the_view_dims():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.zeros((4, 6, 8)), NamedSharding(mesh, P("x", None, "y")))
    v = ShardView(a)
    assert v.view_dims == [0, 2]
    lines = repr(v).splitlines()
    assert any(line.lstrip().startswith("d0 \\d2 0:2") for line in lines)
    assert "[d1=0:6]" in lines
    v.view_dims = [1, 2]
    text = repr(v)
    assert "d1 \\d2" in text
    assert "[d0=0:2]" in text
    assert "[d0=2:4]" in text


@pytest.mark.parametrize("bad", [[0, 8], [8, 0], [-1, -8]])
def test_a_mesh_axis_of_size_0_is_refused_in_words_everywhere(arr, bad):
    """A mesh axis of size 0 (or less) is refused with the mesh's own message in every view
    and from every side: Python, the constructor and the front end, whose value is put back
    (no ZeroDivisionError from the padding hint, no trait left at the bad value)."""
    with pytest.raises(ValueError, match="mesh sizes must be positive integers"):
        ShardView(arr, mesh_shape=bad)
    for v in (ShardView(arr), ShardView(lambda a: a * 2, arr)):
        shown = v._layout["key"] if "_layout" in v.keys else v._trace["key"]
        with pytest.raises(ValueError, match="mesh sizes must be positive integers"):
            v.mesh_shape = bad
        v.set_state({"mesh_shape": bad})  # what the front end sends
        assert v.mesh_shape == [2, 4] and "mesh sizes must be positive integers" in v.error
        assert (v._layout["key"] if "_layout" in v.keys else v._trace["key"]) == shown
        v.set_state({"mesh_shape": [4, 2]})  # the next request goes through, the error clears
        assert v.mesh_shape == [4, 2] and v.error == ""
        v.close()
    assert not arr.is_deleted()


@pytest.mark.parametrize(
    ("seq", "state", "answered"),
    [(5, "x", True), (5, None, True), (5, [1, 2], True), ("5", {}, False), (None, {}, False)],
)
def test_a_malformed_request_is_said_and_answered_when_it_can_be(arr, seq, state, answered):
    """A request of the view's type without an integer seq or a state object: said in
    ``error``, answered with a failed result where its seq is an integer (the front end waits
    on it), nothing else changed; the next request goes through."""
    v = ShardView(arr)
    sent = Sent(v)
    key, shown = v._layout["key"], v.array
    v._on_custom_msg(v, {"type": "request", "seq": seq, "state": state}, [])
    assert "a malformed request was ignored" in v.error
    results = [m for m in sent.msgs if m.get("type") == "result"]
    assert results == (
        [{"type": "result", "seq": 5, "ok": False, "error": v.error}] if answered else []
    )
    assert v._layout["key"] == key and v.array is shown
    request(v, 6, spec=["y", "x"])
    assert v.error == "" and v.spec == ["y", "x"]
