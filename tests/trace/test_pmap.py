"""ShardView(jax.pmap(f), x): checked against calling jax.pmap itself (values, devices of every
shard, shardings), collectives against pmap's own compiled HLO, and the pmap layout in words."""

from __future__ import annotations

import gc
import json
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from shardwidget import ShardView, _jax, compare, wire
from shardwidget.model import free_memory
from shardwidget.trace import pmap as pmap_mod
from shardwidget.trace.pmap import FIXED, INTERNAL_AXIS, is_pmapped

JIT_OF_CPP_PMAP_REPLICATES = _jax.is_cpp_pmap(jax.pmap(lambda x: x))
"""jax 0.7: pmap is jaxlib's C++ PmapFunction, and jit of it returns replicated outputs."""


def _failed_pmap_breaks_jax_cache() -> bool:
    """Whether a pmap'd function traced again after a failed trace fails with JAX's own
    "Store empty" (jax 0.8.x: its cached shard_map keeps the failed call's output store)."""
    f = jax.pmap(lambda y: y)
    said = []
    for _ in range(2):
        try:
            f(np.ones((jax.device_count() * 2, 2), np.float32))
        except Exception as e:
            said.append(str(e))
    return "Store empty" in said[-1]


FAILED_PMAP_BREAKS_JAX_CACHE = _failed_pmap_breaks_jax_cache()

COLL = re.compile(
    r"=\s*\S.*?\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\("
)


def pmap_hlo_kinds(f: Any, *args: Any) -> list[str]:
    """Collective kinds in what jax.pmap itself compiles, found without shardwidget.hlo."""
    return [m.group(1) for m in COLL.finditer(f.lower(*args).compile().as_text())]


def shards(a: Any) -> list[tuple[int, Any]]:
    """(device id, index) of every shard, in device-id order."""
    return sorted(
        ((s.device.id, tuple((i.start, i.stop) for i in s.index)) for s in a.addressable_shards),
        key=lambda t: t[0],
    )


def check_against_pmap(v: Any, f: Any, *args: Any) -> None:
    """The view's outputs are pmap's: same values, same devices, same shard of each."""
    ref = jax.tree_util.tree_leaves(f(*args))
    outs = v.outputs
    assert outs is not None and len(outs) == len(ref)
    for o, r in zip(outs, ref, strict=True):
        np.testing.assert_allclose(np.asarray(o), np.asarray(r), rtol=1e-6)
    if JIT_OF_CPP_PMAP_REPLICATES and f is not pmap_mod.pmapped_of(f):
        # jax 0.7's jit(pmap(g)) gathers its outputs onto every device (GSPMD replicated);
        # the view shows pmap's own layout, one slice per device, as jax 0.8+ gives both.
        return
    for o, r in zip(outs, ref, strict=True):
        assert shards(o) == shards(r)
        if type(r.sharding).__name__ == "PmapSharding":  # jax 0.7: same blocks, pmap's own type
            assert [d.id for d in r.sharding.devices.flat] == [
                d.id for d in o.sharding.mesh.devices.flat
            ]
        else:
            assert o.sharding.is_equivalent_to(r.sharding, r.ndim)
    lay = [lf.layout for lf in v.trace.output_leaves]
    for lf, r in zip(lay, ref, strict=True):  # the geometry drawn is JAX's own
        want = {d.id: idx for d, idx in r.sharding.devices_indices_map(r.shape).items()}
        got = {d: lf.blocks[b].index for d, b in lf.device_block.items()}
        assert got == {
            d: tuple(s.indices(n)[:2] for s, n in zip(i, r.shape, strict=True))
            for d, i in want.items()
        }


X8 = np.arange(32, dtype=np.float32).reshape(8, 4)


def test_is_pmapped_tells_pmap_apart() -> None:
    f = jax.pmap(lambda x: x)
    assert is_pmapped(f)
    assert not is_pmapped(jax.jit(lambda x: x))
    assert not is_pmapped(jax.vmap(lambda x: x))
    assert not is_pmapped(lambda x: x)


def test_psum_over_the_users_axis() -> None:
    f = jax.pmap(lambda x: jax.lax.psum(x, "i") * x, axis_name="i")
    v = ShardView(f, X8)
    assert v.error == "" and v.mode == "pmap"
    assert v.trace is not None and v.trace.mode == "pmap"
    assert (v.mesh_shape, v.axis_names) == ([8], ["i"])
    check_against_pmap(v, f, X8)
    assert [c.kind for c in v.trace.collectives] == pmap_hlo_kinds(f, X8) == ["all-reduce"]
    assert [c.axes for c in v.trace.collectives] == [("i",)]
    assert v.trace.local_shapes == {"in": [(1, 4)], "out": [(1, 4)]}
    assert v.fn_name == "pmap(<lambda>)"
    assert "all-reduce         over i" in repr(v)


def test_several_collectives_match_pmaps_hlo() -> None:
    def body(x: Any) -> Any:
        g = jax.lax.all_gather(x, "d")
        s = jax.lax.ppermute(x, "d", [(k, (k + 1) % 8) for k in range(8)])
        return g.sum(0) + s + jax.lax.pmean(x, "d")

    f = jax.pmap(body, axis_name="d")
    v = ShardView(f, X8)
    assert v.error == ""
    check_against_pmap(v, f, X8)
    kinds = [c.kind for c in v.trace.collectives]
    assert sorted(kinds) == sorted(pmap_hlo_kinds(f, X8))
    assert {"all-gather", "collective-permute", "all-reduce"} <= set(kinds)
    assert all(c.axes == ("d",) for c in v.trace.collectives)


def test_fewer_devices_and_broadcast_arguments() -> None:
    """A mapped axis of 4 on 8 devices: pmap's first 4 devices; in_axes=None: whole copies."""
    f = jax.pmap(lambda x, w: x * w, in_axes=(0, None))
    x, w = np.ones((4, 3), np.float32), np.arange(3, dtype=np.float32)
    v = ShardView(f, x, w)
    assert v.error == ""
    check_against_pmap(v, f, x, w)
    ins = v.trace.input_leaves
    assert [lf.layout.n_devices for lf in ins] == [4, 4]
    assert ins[1].layout.replication == 4  # w: the whole value on each device
    assert v.trace.collectives == []


def test_devices_given_to_pmap_in_their_order() -> None:
    devs = jax.devices()[4:][::-1]
    f = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i", devices=devs)
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    v = ShardView(f, x)
    assert v.error == ""
    check_against_pmap(v, f, x)
    assert [s.device.id for s in v.outputs[0].addressable_shards] == [7, 6, 5, 4]
    assert v.trace.output_leaves[0].layout.mesh.device_ids == (7, 6, 5, 4)
    assert [(c.kind, c.axes) for c in v.trace.collectives] == [("all-reduce", ("i",))]
    assert [c.kind for c in v.trace.collectives] == pmap_hlo_kinds(f, x)


def test_in_axes_and_out_axes_other_than_zero() -> None:
    f = jax.pmap(lambda x: x * 2, in_axes=1, out_axes=1)
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    v = ShardView(f, x)
    assert v.error == ""
    check_against_pmap(v, f, x)
    assert v.trace.notes["in"] == [
        "pmap: dimension 1 mapped over 8 devices (pmap's unnamed axis), one slice per device; "
        "the body sees shape (3,)"
    ]
    assert v.trace.notes["out"] == [
        "pmap: dimension 1 stacks the 8 devices' results (pmap's unnamed axis), one per device; "
        "each body returns (3,)"
    ]


def test_pytree_arguments_and_outputs() -> None:
    f = jax.pmap(lambda p: {"sum": p["a"] + p["b"], "a": p["a"]}, axis_name="i")
    p = {"a": X8, "b": X8 * 2}
    v = ShardView(f, p)
    assert v.error == ""
    assert [lf.path for lf in v.trace.input_leaves] == ["p['a']", "p['b']"]
    check_against_pmap(v, f, p)


def test_unnamed_axis_is_labelled_in_words() -> None:
    f = jax.pmap(lambda x: x + 1)
    v = ShardView(f, X8)
    assert v.error == ""
    internal = v.trace.out_shardings[0].spec[0]  # JAX's own sharding: its name for the axis
    assert isinstance(internal, str) and _jax.is_unnamed_pmap_axis(internal)
    assert v.axis_names == ["pmap"]  # what the view calls it
    notes = v.trace.notes["in"] + v.trace.notes["out"]
    assert notes == [
        "pmap: dimension 0 mapped over 8 devices (pmap's unnamed axis), one slice per device; "
        "the body sees shape (4,)",
        "pmap: dimension 0 stacks the 8 devices' results (pmap's unnamed axis), one per device; "
        "each body returns (4,)",
    ]
    text = repr(v)
    assert internal not in text
    assert "float32[8@pmap,4]" in text
    for n in notes:
        assert n in text
    payload = dict(v._trace)
    assert [lf["note"] for lf in payload["inputs"] + payload["outputs"]] == notes
    del payload["jaxpr"]  # JAX's own text names JAX's own mesh
    assert internal not in json.dumps(wire.encode(payload))
    assert internal not in json.dumps(wire.encode(dict(v._trace_options)))
    # Copy as code: pmap fixes the layout, so the snippet says so and names no internal mesh.
    assert "jax.pmap'd" in v.code and INTERNAL_AXIS not in v.code
    check_against_pmap(v, f, X8)


def test_tutorial_003_jit_of_pmap_and_pmap_of_jit() -> None:
    """dot_pjo = jax.jit(jax.pmap(dot)) and dot_pji = jax.pmap(jax.jit(dot))."""

    def dot(v1: Any, v2: Any) -> Any:
        return jnp.vdot(v1, v2)

    vs = np.asarray(jax.random.normal(jax.random.key(42), (16, 3)))
    v1s, v2s = vs[:8], vs[8:]
    for f, name in (
        (jax.jit(jax.pmap(dot)), "jit(pmap(dot))"),
        (jax.pmap(jax.jit(dot)), "pmap(dot)"),
    ):
        v = ShardView(f, v1s, v2s)
        assert v.error == "" and v.mode == "pmap" and v.fn_name == name
        check_against_pmap(v, f, v1s, v2s)
        np.testing.assert_allclose(
            np.asarray(v.outputs[0]), np.einsum("ij,ij->i", v1s, v2s), rtol=1e-5
        )
        assert v.trace.collectives == []


def test_pmap_fixes_the_layout() -> None:
    f = jax.pmap(lambda x: x * 2, axis_name="i")
    v = ShardView(f, X8)
    before = (v.in_specs, v.mesh_shape, v.trace)
    with pytest.raises(ValueError, match="pmap fixes this layout"):
        v.set_layout(mesh_shape=[2, 4], axis_names=["a", "b"], in_specs=[[None, None]])
    with pytest.raises(ValueError, match="pmap fixes this layout"):
        v.set_layout(in_specs=[[None, None]])
    assert (v.in_specs, v.mesh_shape, v.trace) == before  # the last good view stays
    assert v._trace_options["static"] == FIXED  # the front end's controls say why they are off
    assert v._trace_options["mode"] == "pmap"


def test_other_modes_are_refused_in_words() -> None:
    f = jax.pmap(lambda x: x * 2, axis_name="i")
    with pytest.raises(ValueError, match=r"pmap'd function.*mode='shard_map'"):
        ShardView(f, X8, mode="shard_map")


def test_a_non_string_axis_name_is_refused_in_words() -> None:
    f = jax.pmap(lambda x: jax.lax.psum(x, 0), axis_name=0)
    with pytest.raises(ValueError, match=r"axis_name is 0, not a string.*axis_name='0'"):
        ShardView(f, X8)


def test_donated_arguments_are_never_deleted() -> None:
    x = jax.pmap(lambda a: a)(X8)  # already laid out as pmap wants it
    f = jax.pmap(lambda a: a + 1, donate_argnums=0)
    v = ShardView(f, x)
    assert v.error == ""
    assert not x.is_deleted()
    np.testing.assert_allclose(np.asarray(v.outputs[0]), X8 + 1)
    assert not x.is_deleted()


def test_the_same_array_mapped_and_broadcast() -> None:
    """f(x, x) with in_axes=(0, None): one argument split, the other whole, though one object."""
    f = jax.pmap(lambda a, b: a + b.sum(0), in_axes=(0, None))
    v = ShardView(f, X8, X8)
    assert v.error == ""
    check_against_pmap(v, f, X8, X8)
    assert [lf.layout.replication for lf in v.trace.input_leaves] == [1, 8]


def test_out_axes_none_static_and_keyword_arguments() -> None:
    h = jax.pmap(lambda a: jax.lax.psum(a, "i"), axis_name="i", out_axes=None)
    v = ShardView(h, X8)
    check_against_pmap(v, h, X8)
    assert v.trace.notes["out"] == [
        "pmap: one value, the same on each of the 8 devices (out_axes=None); each body returns (4,)"
    ]
    s = jax.pmap(lambda a, n: a * n, static_broadcasted_argnums=1)
    v = ShardView(s, X8, 3)
    check_against_pmap(v, s, X8, 3)
    assert v._trace_options["static_args"] == ["n=3"]
    k = jax.pmap(lambda a, b: a - b)
    v = ShardView(k, X8, b=X8 * 2)
    assert [lf.path for lf in v.trace.input_leaves] == ["a", "b"]
    np.testing.assert_allclose(np.asarray(v.outputs[0]), -X8)


def test_pmaps_own_refusal_in_its_words() -> None:
    """16 rows for 8 devices: the view says what pmap itself says, and stays alive."""
    f = jax.pmap(lambda x: x)
    x = np.ones((16, 2), np.float32)
    # (jax 0.8+: a squeeze of the size-2 per-device slices; 0.7: too few devices)
    with pytest.raises(ValueError, match=r"squeeze|16 logical devices") as direct:
        f(x)
    v = ShardView(f, x)
    assert v.trace is None
    with pytest.raises(
        Exception, match=r"."
    ) as again:  # what pmap says to the same call a second time
        f(x)
    # (the same words, but on jax 0.8, where a failed pmap call leaves JAX's own cache so that
    # every later call says "StoreException: Store empty")
    said = {str(e.value).split("\n")[0] for e in (direct, again)}
    said |= {f"StoreException: {s}" for s in said if s == "Store empty"}
    assert v.error in said, (v.error, said)


def live_bytes() -> int:
    gc.collect()
    return sum(free_memory.buffers(jax.live_arrays()).values())


def test_a_pmap_view_keeps_no_device_memory() -> None:
    """Compile and run hold nothing (statistics off: they have their own cache, shared with
    every function view); a closed view, statistics on, leaves nothing behind. (At most what
    was alive before: a bounded cache of an earlier test may let an array go meanwhile.)"""
    f = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    before = live_bytes()
    v = ShardView(f, X8, stats=False)
    assert v.error == "" and v.trace is not None and v.trace.ran
    assert live_bytes() <= before
    assert not any(isinstance(x, jax.Array) for x in vars(v.trace).values())
    v.close()
    v = ShardView(f, X8)
    assert v.error == ""
    v.close()
    del v
    assert live_bytes() <= before


# ------------------------------------------------------------------ jaxprs
def test_jaxpr_is_jaxs_own_text() -> None:
    f = lambda x, y: jnp.sin(x) @ y  # noqa: E731
    x, y = np.ones((8, 4), np.float32), np.ones((4, 2), np.float32)
    v = ShardView(f, x, y)
    assert v.trace.jaxpr == str(jax.make_jaxpr(f)(x, y))
    assert v._trace["jaxpr"] == v.trace.jaxpr and v._trace["jaxpr_cut"] == 0


def test_jaxpr_shows_explicit_shardings_in_types() -> None:
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    # Explicit axes: shardings are part of the types
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    x = jax.device_put(X8, NamedSharding(mesh, P("x")))
    f = lambda a: (a * 2).sum(1)  # noqa: E731
    v = ShardView(f, x)
    with jax.set_mesh(mesh):
        want = str(jax.make_jaxpr(f)(x))
    assert v.trace.jaxpr == want
    assert "f32[8@x,4]" in v.trace.jaxpr


def test_jaxpr_of_shard_map_and_pmap() -> None:
    from jax.sharding import PartitionSpec as P

    def body(a: Any) -> Any:
        return jax.lax.psum(a, "x")

    v = ShardView(body, X8, mode="shard_map", in_specs=[P("x")], out_specs=[P()])
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    # The view passes normalized specs (one entry per dimension): so does this reference.
    sm = jax.shard_map(
        lambda a: (body(a),), mesh=mesh, in_specs=(P("x", None),), out_specs=(P(None, None),)
    )
    want = jax.make_jaxpr(sm)(X8)
    assert v.trace.jaxpr == str(want)
    assert "psum_invariant[axes=('x',)" in v.trace.jaxpr and "shard_map[" in v.trace.jaxpr

    f = jax.pmap(body, axis_name="x")
    pv = ShardView(f, X8)
    assert pv.trace.jaxpr == str(jax.make_jaxpr(f)(X8))
    assert "psum[axes=('x',)" in pv.trace.jaxpr


def test_long_jaxpr_is_cut_on_the_wire_and_says_so() -> None:
    def long(x: Any) -> Any:
        for k in range(600):
            x = jnp.sin(x) + k
        return x

    v = ShardView(long, X8)
    full = v.trace.jaxpr
    assert full == str(jax.make_jaxpr(long)(X8))
    assert len(full) > wire.MAX_JAXPR
    sent = v._trace["jaxpr"]
    assert wire.MAX_JAXPR - 200 < len(sent) <= wire.MAX_JAXPR
    assert full.startswith(sent + "\n")  # whole lines only
    assert v._trace["jaxpr_cut"] == len(full) - len(sent)


# ------------------------------------------------------------------ vmap vs pmap (tutorial 003)
def test_vmap_and_pmap_side_by_side() -> None:
    def dot(v1: Any, v2: Any) -> Any:
        return jnp.vdot(v1, v2)

    vs = np.asarray(jax.random.normal(jax.random.key(42), (16, 3)))
    v1s, v2s = vs[:8], vs[8:]
    vm, pm = ShardView(jax.vmap(dot), v1s, v2s), ShardView(jax.pmap(dot), v1s, v2s)
    c = compare(vm, pm, names=["vmap", "pmap"])
    assert c.agree
    assert [r["mode"] for r in c.rows] == ["jit", "pmap"]
    # (0 on jax 0.8+; a last-bit rounding on 0.7, whose pmap the view compiles as a shard_map)
    assert [r["agreement"] for r in c.rows] in (
        ["agrees (max |diff| 0)"] * 2,
        ["agrees (max |diff| 0)", "agrees (max |diff| 6e-08)"],
    )
    # vmap (jit, inputs replicated): every device computes all 8 dots; pmap: one each.
    assert [r["out_types"] for r in c.rows] == [["float32[8]"], ["float32[8@pmap]"]]
    assert [
        vm.trace.output_leaves[0].layout.replication,
        pm.trace.output_leaves[0].layout.n_devices,
    ] == [8, 8]
    assert len(pm.trace.output_leaves[0].layout.blocks) == 8
    want_pm = jax.pmap(dot).lower(v1s, v2s).compile().memory_analysis()
    assert c.rows[1]["peak"] == (
        want_pm.argument_size_in_bytes
        + want_pm.output_size_in_bytes
        - want_pm.alias_size_in_bytes
        + want_pm.temp_size_in_bytes
    )
    assert c.rows[1]["peak"] < c.rows[0]["peak"]
    assert "float32[8@pmap]" in repr(c) and "float32[8@pmap]" in c._table_html()
    np.testing.assert_allclose(
        np.asarray(pm.outputs[0]), np.asarray(jax.vmap(dot)(v1s, v2s)), rtol=1e-6
    )


def test_jaxpr_has_no_colour_codes_in_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    """In Jupyter JAX colours str(jaxpr); the view's text (and its panel) stays plain."""
    from jax._src import pretty_printer

    monkeypatch.setattr(pretty_printer, "CAN_USE_COLOR", True)
    f = lambda x: jnp.cos(x) * 2  # noqa: E731
    coloured = str(jax.make_jaxpr(f)(X8))
    assert "\x1b[" in coloured  # what a notebook prints
    v = ShardView(f, X8)
    assert "\x1b[" not in v.trace.jaxpr
    assert v.trace.jaxpr == re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    pv = ShardView(jax.pmap(f), X8)
    pmapped = "xla_pmap[" if JIT_OF_CPP_PMAP_REPLICATES else "shard_map["  # (jax 0.7: xla_pmap)
    assert "\x1b[" not in pv.trace.jaxpr and pmapped in pv.trace.jaxpr


# ------------------------------------------------------------------ a pmap inside a function
def test_a_function_calling_pmap_says_how_to_view_it() -> None:
    inner = jax.pmap(lambda y: jax.lax.psum(y, "i") * 2, axis_name="i")

    def step(x: Any) -> Any:
        return inner(x) + 1

    if JIT_OF_CPP_PMAP_REPLICATES:  # jax 0.7: a pmap inside jit has no mesh to clash with
        for v in (
            ShardView(step, X8),
            ShardView(step, X8, mesh_shape=[2, 4], axis_names=["a", "b"]),
        ):
            assert v.error == ""
            np.testing.assert_allclose(np.asarray(v.outputs[0]), np.asarray(step(X8)))
        return
    # The view starts on the mesh of the shard_map inside (pmap's): it runs as step(X8) does.
    auto = ShardView(step, X8)
    assert auto.error == "" and auto.mesh_shape == [8] and auto.axis_names == ["i"]
    np.testing.assert_allclose(np.asarray(auto.outputs[0]), np.asarray(step(X8)))
    # Another mesh: JAX refuses it, and the message says which mesh to give the view.
    v = ShardView(step, X8, mesh_shape=[2, 4], axis_names=["a", "b"])
    assert v.trace is None
    assert "should match the mesh passed to shard_map" in v.error  # JAX's own words, then ours
    assert "mesh_shape=[8], axis_names=['i'], axis_types=['auto']" in v.error
    # Following the advice works, and gives what calling step gives.
    ok = ShardView(step, X8, mesh_shape=[8], axis_names=["i"], axis_types=["auto"])
    assert ok.error == ""
    np.testing.assert_allclose(np.asarray(ok.outputs[0]), np.asarray(step(X8)))
    assert [c.kind for c in ok.trace.collectives] == ["all-reduce"]
    assert [c.axes for c in ok.trace.collectives] == [("i",)]

    unnamed = jax.pmap(lambda y: y * 2)
    v = ShardView(lambda x: unnamed(x) - 1, X8)
    if v.error == "StoreException: Store empty":  # jax 0.8: a pmap traced again after a
        assert FAILED_PMAP_BREAKS_JAX_CACHE  # failed trace fails so (JAX's own cache)
        return
    named = re.search(r"axis_names=\['([^']*)'\] \(pmap's name for an unnamed axis\)", v.error)
    assert named and _jax.is_unnamed_pmap_axis(named.group(1)), v.error
