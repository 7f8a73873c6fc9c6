"""view.search on a tree view: the candidates as partition rules on the target's chips, their
bytes per device equal to what jax lays out (devices_indices_map on the kernel's devices,
NamedSharding.shard_shape on an AbstractMesh, the TPU compiler's argument bytes of an identity
compiled directly), their fit against the target's memory, apply as one change (undo
restores), code that lays the tree out so, and the panel's payload and click."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget.layout_search import tree as tree_search
from shardwidget.plan import compilers, machine, plan, tpu

PARAMS = {
    "emb": jnp.ones((64, 16)),
    "layers": [{"w": jnp.ones((16, 32)), "b": jnp.ones((32,), jnp.bfloat16)}],
    "scale": jnp.ones(()),
}


def _spec(cand: tree_search.TreeCandidate, k: int) -> P:
    return P(*[e if e else None for e in cand.specs[k]])


def _held_by_jax(
    tree: object, mesh: jax.sharding.Mesh, cand: tree_search.TreeCandidate
) -> set[int]:
    """Bytes each device holds, from jax's devices_indices_map of every leaf."""
    held = dict.fromkeys(mesh.devices.flat, 0)
    for k, x in enumerate(jax.tree.leaves(tree)):
        where = NamedSharding(mesh, _spec(cand, k)).devices_indices_map(x.shape)
        for dev, idx in where.items():
            n = math.prod(len(range(*s.indices(d))) for s, d in zip(idx, x.shape, strict=True))
            held[dev] += n * x.dtype.itemsize
    return set(held.values())


def test_every_candidate_holds_what_jax_lays_out_on_the_kernels_devices() -> None:
    view = sw.ShardView(PARAMS)
    found = view.search()
    assert found.target.n == 8 and found.results
    names = {c.name for c in found.results}
    assert {"DP 8 (replicated)", "FSDP 8", "TP 8", "FSDP 4 × TP 2"} <= names
    for cand in found.results:
        assert cand.step_time is None and "a tree has no step" in cand.step_time_words
        mesh = jax.make_mesh(
            cand.mesh_shape, cand.axis_names, axis_types=(AxisType.Auto,) * len(cand.mesh_shape)
        )
        assert _held_by_jax(PARAMS, mesh, cand) == {cand.peak}, cand.name
    peaks = [c.peak for c in found.results]
    assert peaks == sorted(peaks)  # all fit: the fewest bytes first
    replicated = next(c for c in found.results if c.name == "DP 8 (replicated)")
    assert replicated.peak == sum(x.nbytes for x in jax.tree.leaves(PARAMS))


def test_code_lays_the_tree_out_as_the_candidate() -> None:
    found = sw.ShardView(PARAMS, name="p").search()
    for i in range(len(found.results)):
        cand = found.results[i]
        scope: dict[str, object] = {"p": PARAMS}
        exec(found.code(i), scope)
        laid = jax.tree.leaves(scope["p"])
        for k, x in enumerate(laid):
            assert x.sharding.is_equivalent_to(
                NamedSharding(x.sharding.mesh, _spec(cand, k)), x.ndim
            ), (cand.name, k)
        each = [sum(x.addressable_data(d).nbytes for x in laid) for d in range(8)]
        assert set(each) == {cand.peak}, cand.name


def test_apply_sets_mesh_and_rules_in_one_change_and_undo_restores() -> None:
    view = sw.ShardView(PARAMS)
    before = (list(view.mesh_shape), list(view.axis_names), view.rules, dict(view.per_device))
    found = view.search()
    best = found.results[1]
    found.apply(1)
    assert tuple(view.mesh_shape) == best.mesh_shape
    assert tuple(view.axis_names) == best.axis_names
    for k, leaf in enumerate(view.leaves):
        assert leaf.sharding.is_equivalent_to(
            NamedSharding(leaf.sharding.mesh, _spec(best, k)), len(leaf.shape)
        )
    assert set(view.per_device.values()) == {best.peak}
    view.undo()  # one step back: mesh and rules as before
    assert (
        list(view.mesh_shape),
        list(view.axis_names),
        view.rules,
        dict(view.per_device),
    ) == before


def test_a_pod_on_an_abstract_mesh_fits_by_its_memory() -> None:
    """40 GiB of bf16 on 256 chips of 16 GiB (the tpu-v5e preset, a CPU target): replicated
    does not fit, FSDP 256 does; each figure from NamedSharding.shard_shape."""
    tree = {
        "w1": jax.ShapeDtypeStruct((32768, 327680), jnp.bfloat16),
        "w2": jax.ShapeDtypeStruct((327680, 32768), jnp.bfloat16),
        "norm": jax.ShapeDtypeStruct((16384,), jnp.float32),
    }
    view = sw.ShardView(tree)
    pod = AbstractMesh((256,), ("x",), axis_types=(AxisType.Auto,))
    found = view.search(pod, hardware="tpu-v5e")
    hbm = sw.hardware("tpu-v5e").hbm_bytes
    leaves = jax.tree.leaves(tree)
    for cand in found.results:
        mesh = AbstractMesh(
            cand.mesh_shape, cand.axis_names, axis_types=(AxisType.Auto,) * len(cand.mesh_shape)
        )
        want = sum(
            math.prod(NamedSharding(mesh, _spec(cand, k)).shard_shape(x.shape)) * x.dtype.itemsize
            for k, x in enumerate(leaves)
        )
        assert cand.peak == want, cand.name
        assert cand.fits == (want <= hbm), cand.name
    fits = [c.fits for c in found.results]
    assert fits == sorted(fits, reverse=True) and True in fits and False in fits
    assert not next(c for c in found.results if c.name == "DP 256 (replicated)").fits
    assert next(c for c in found.results if c.name == "FSDP 256").fits
    with pytest.raises(ValueError, match="spans 256 devices; this view has 8"):
        found.apply(0)


def test_a_layout_that_cannot_divide_is_dropped_with_the_reason() -> None:
    view = sw.ShardView({"w": jnp.ones((3, 5)), "v": jnp.ones((6, 10))})
    found = view.search()
    dropped = {d.name: d.reason for d in found.dropped}
    assert "tensor = 8 does not divide" in dropped["TP 8"]
    assert "fsdp = 8 divides no dimension" in dropped["FSDP 8"]
    assert all(c.name not in dropped for c in found.results)


def test_the_users_rules_are_candidates() -> None:
    mine = [("emb", P(None, "tensor")), ("w", P("fsdp", "tensor"))]
    found = sw.ShardView(PARAMS).search(strategies={"mine": mine})
    ours = [c for c in found.results if c.strategy == "mine"]
    assert {c.name for c in ours} == {
        "mine · FSDP 4 × TP 2",
        "mine · FSDP 2 × TP 4",
        "mine · DP 2 × FSDP 2 × TP 2",
    }
    for cand in ours:
        mesh = jax.make_mesh(
            cand.mesh_shape, cand.axis_names, axis_types=(AxisType.Auto,) * len(cand.mesh_shape)
        )
        assert _held_by_jax(PARAMS, mesh, cand) == {cand.peak}, cand.name


def test_the_panel_shows_the_table_and_a_click_applies() -> None:
    view = sw.ShardView(PARAMS)
    found = view.search()
    payload = view._search
    assert payload["kind"] == "tree" and payload["state"] == "done"
    assert [r["name"] for r in payload["rows"]] == [c.name for c in found.results]
    assert all(r["step_s"] is None and r["moved"] == 0 for r in payload["rows"])
    assert payload["hbm"] == sw.hardware(view.hardware).hbm_bytes
    row = payload["rows"][2]
    view._on_custom_msg(view, {"type": "search_apply", "id": row["id"]}, [])
    assert view.error == ""
    assert set(view.per_device.values()) == {row["peak"]}
    view._on_custom_msg(view, {"type": "search_apply", "id": 999}, [])
    assert "no candidate 999" in view.error


@pytest.mark.skipif(bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or "")
def test_a_gpu_target_fits_by_the_memory_a_program_gets() -> None:
    target = sw.gpu_mesh("h100", (16,), ("x",), hosts=2)
    tree = {"w": jax.ShapeDtypeStruct((131072, 262144), jnp.float32)}  # 128 GiB
    found = sw.ShardView(tree).search(target)
    m = machine.machine_of(target)
    assert m is not None and m.memory_bytes is not None
    assert found.hardware.name == "h100"
    for cand in found.results:
        assert cand.fits == (cand.peak <= m.memory_bytes), cand.name
    rep = next(c for c in found.results if c.name == "DP 16 (replicated)")
    assert rep.peak == 131072 * 262144 * 4 and not rep.fits  # > an H100 program's memory
    assert next(c for c in found.results if c.name == "FSDP 16").peak == rep.peak // 16


@pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")
def test_a_tpu_target_holds_what_the_tpu_compiler_counts() -> None:
    """Each candidate's bytes per device equal libtpu's argument bytes for an identity of the
    tree laid out so, compiled for the topology, where every block fills the TPU's tiles (a
    block of 64 f32 is padded to 128 lanes there: libtpu counts more, as the source says)."""
    tree = {
        "w1": jax.ShapeDtypeStruct((256, 1024), jnp.bfloat16),
        "b": jax.ShapeDtypeStruct((1024,), jnp.float32),
    }
    target = sw.tpu_mesh("v5e:2x2", (4,), ("x",))
    found = sw.ShardView(tree).search(target)
    assert found.hardware.name == "tpu-v5e"
    m = machine.machine_of(target)
    assert m is not None and m.memory_bytes is not None
    for cand in found.results:
        types = (AxisType.Auto,) * len(cand.mesh_shape)
        mesh = sw.tpu_mesh("v5e:2x2", cand.mesh_shape, cand.axis_names, axis_types=types)
        specs = {"b": _spec(cand, 0), "w1": _spec(cand, 1)}  # (leaves in key order)
        direct = plan(lambda t: jax.tree.map(lambda x: x + 1, t), tree, mesh=mesh, in_specs=[specs])
        assert direct.memory["arguments"] == cand.peak, cand.name
        assert cand.fits == (cand.peak <= m.memory_bytes)


@pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")
def test_a_tpu_pads_small_blocks_beyond_the_data() -> None:
    tree = {"b": jax.ShapeDtypeStruct((256,), jnp.float32)}
    target = sw.tpu_mesh("v5e:2x2", (4,), ("x",))
    fsdp = next(c for c in sw.ShardView(tree).search(target).results if c.name == "FSDP 4")
    assert fsdp.peak == 256  # 64 f32 per chip
    mesh = sw.tpu_mesh("v5e:2x2", (4,), ("fsdp",), axis_types=(AxisType.Auto,))
    direct = plan(
        lambda t: jax.tree.map(lambda x: x + 1, t), tree, mesh=mesh, in_specs=[{"b": P("fsdp")}]
    )
    assert direct.memory["arguments"] > fsdp.peak
    assert "pad" in fsdp.sources["peak"]


def test_compile_asks_the_cpu_compiler_for_the_bytes_per_device() -> None:
    """compile=True: each layout's bytes per device are XLA's argument bytes of an identity of
    the tree laid out so; on the CPU compiler the data's, as plain jax.jit compiles them."""
    found = sw.ShardView(PARAMS).search(compile=True)
    leaves = jax.tree.leaves(PARAMS)
    for cand in found.results:
        mesh = jax.make_mesh(
            cand.mesh_shape, cand.axis_names, axis_types=(AxisType.Auto,) * len(cand.mesh_shape)
        )
        shard = tuple(NamedSharding(mesh, _spec(cand, k)) for k in range(len(leaves)))
        direct = jax.jit(lambda *xs: xs, in_shardings=shard).lower(*leaves).compile()
        assert cand.peak == direct.memory_analysis().argument_size_in_bytes, cand.name
        assert cand.peak == cand.data_bytes and "CPU compiler" in cand.compiler


@pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")
def test_compile_on_a_tpu_counts_the_padding() -> None:
    tree = {"b": jax.ShapeDtypeStruct((256,), jnp.float32)}
    target = sw.tpu_mesh("v5e:2x2", (4,), ("x",))
    found = sw.ShardView(tree).search(target, compile=True)
    fsdp = next(c for c in found.results if c.name == "FSDP 4")
    mesh = sw.tpu_mesh("v5e:2x2", (4,), ("fsdp",), axis_types=(AxisType.Auto,))
    direct = plan(lambda t: t, tree, mesh=mesh, in_specs=[{"b": P("fsdp")}])
    assert fsdp.peak == direct.memory["arguments"] > fsdp.data_bytes == 256
    assert "libtpu" in fsdp.compiler and "identity" in fsdp.sources["peak"]
