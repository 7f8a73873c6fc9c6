"""A search from a view that donates: every candidate compiled with the view's donation, so
the top candidate applied shows the figures the search showed, and both equal plain
``jax.jit(..., donate_argnums=...)`` compiled directly."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget.layout_search import run


def step(p: dict[str, jax.Array], x: jax.Array) -> dict[str, jax.Array]:
    g = jax.grad(lambda q: jnp.tanh(x @ q["w1"] @ q["w2"]).sum())(p)
    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)


PARAMS = {"w1": jnp.ones((64, 128)), "w2": jnp.ones((128, 64))}
X = jnp.ones((16, 64))


def _direct(cand: Any, f: Any, args: tuple[Any, ...], donate: tuple[int, ...]) -> dict[str, int]:
    """jax.jit of f compiled directly for the candidate's layout: XLA's memory figures."""
    mesh = jax.make_mesh(
        cand.mesh_shape, cand.axis_names, axis_types=(AxisType.Auto,) * len(cand.mesh_shape)
    )
    shard = jax.tree.map(
        lambda s: NamedSharding(mesh, s), list(cand.in_specs), is_leaf=lambda s: isinstance(s, P)
    )
    compiled = jax.jit(f, in_shardings=tuple(shard), donate_argnums=donate).lower(*args).compile()
    m = compiled.memory_analysis()
    return {
        "arguments": m.argument_size_in_bytes,
        "outputs": m.output_size_in_bytes,
        "aliased": m.alias_size_in_bytes,
        "temporaries": m.temp_size_in_bytes,
    }


def _figures(memory: dict[str, int]) -> dict[str, int]:
    return {k: memory[k] for k in ("arguments", "outputs", "aliased", "temporaries")}


def test_a_donating_view_searches_with_its_donation() -> None:
    run.clear_cache()
    view = sw.ShardView(step, PARAMS, X)
    view.donate = [0, 1]  # the parameters: the whole first argument
    found = view.search(workers=2)
    assert found.donate == (0, 1) and not found.failed
    best = found.results[0]
    direct = _direct(best, step, (PARAMS, X), (0,))
    assert direct["aliased"] > 0  # the case means something: an output reuses a parameter
    assert _figures(best.plan.memory) == direct
    found.apply(0)
    assert view.donate == ["p['w1']", "p['w2']"]  # kept through the layout change
    shown = view.trace.memory
    assert (shown["argument"], shown["output"], shown["alias"], shown["temp"]) == (
        direct["arguments"],
        direct["outputs"],
        direct["aliased"],
        direct["temporaries"],
    )
    assert shown["peak"] == best.plan.memory["peak"]
    assert "donate_argnums=(0,)" in found.code(0)


def test_one_donated_leaf_is_compiled_as_the_view_compiles_it() -> None:
    """Only w1 donated: f on its leaves, donate_argnums=(0,) of the leaves."""
    run.clear_cache()
    view = sw.ShardView(step, PARAMS, X)
    view.donate = [0]
    found = view.search(workers=2)
    best = found.results[0]

    def on_leaves(w1: jax.Array, w2: jax.Array, x: jax.Array) -> Any:
        return step({"w1": w1, "w2": w2}, x)

    class Flat:  # the candidate's specs one per leaf, as _direct reads them
        mesh_shape, axis_names = best.mesh_shape, best.axis_names
        in_specs = (best.in_specs[0]["w1"], best.in_specs[0]["w2"], best.in_specs[1])

    direct = _direct(Flat, on_leaves, (PARAMS["w1"], PARAMS["w2"], X), (0,))
    assert _figures(best.plan.memory) == direct
    undonated = sw.search(step, PARAMS, X, mesh=found.target.mesh, workers=2)
    same = next(c for c in undonated.results if c.name == best.name)
    assert same.plan.memory["aliased"] == 0 < best.plan.memory["aliased"]  # not the cache's
    found.apply(0)
    assert view.trace.memory["alias"] == direct["aliased"]
    assert "flatten f to donate these alone" in found.code(0)
