"""The search lowers every layout of a step from one trace (plan.compile.lower_shared): the
same module as lowering each layout on its own (but for the source locations of the calls),
and without keeping a trace per layout alive
(the kernel's full garbage collections walk every object JAX's caches keep: ~6,000 per layout
of the 06 step, lowered one trace per layout; a search's ``1 + 1`` waited 2 s on one)."""

from __future__ import annotations

import gc
import re
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType

from shardwidget import _jax
from shardwidget.layout_search import candidates as c
from shardwidget.layout_search import leaves as leaves_mod
from shardwidget.layout_search import strategies as strat
from shardwidget.plan import compile as compile_mod


def step(p: dict[str, Any], x: jax.Array) -> Any:
    def loss(q: dict[str, Any]) -> jax.Array:
        h = jax.nn.relu(x @ q["w1"])
        h = jax.nn.gelu(h @ q["w2"]) + jnp.tanh(h @ q["w2"])
        return jnp.mean((h @ q["w3"]) ** 2)

    g = jax.grad(loss)(p)
    return jax.tree.map(lambda a, b: a - 0.01 * b, p, g)


PARAMS = {
    "w1": jax.ShapeDtypeStruct((64, 128), jnp.float32),
    "w2": jax.ShapeDtypeStruct((128, 128), jnp.float32),
    "w3": jax.ShapeDtypeStruct((128, 64), jnp.float32),
}
X = jax.ShapeDtypeStruct((32, 64), jnp.float32)
ARGS = (PARAMS, X)


def _layouts(n: int) -> list[tuple[AbstractMesh, list[Any]]]:
    props, _ = c.propose(n, leaves_mod.leaves(step, ARGS))
    out = []
    for p in props:
        types = (AxisType.Auto,) * len(p.mesh_shape)
        out.append((AbstractMesh(p.mesh_shape, p.axis_names, axis_types=types), p))
    return [(m, strat.to_trees(ARGS, p.specs)) for m, p in out]


def _module(text: str) -> list[str]:
    """The module without its source locations."""
    text = re.sub(r" loc\([^()]*(\([^()]*\))?[^()]*\)", "", text)
    return [line for line in text.splitlines() if not line.startswith("#loc")]


def test_one_trace_lowers_the_same_module_for_every_layout() -> None:
    layouts = _layouts(8)
    assert len(layouts) >= 8
    for mesh, trees in layouts:
        shared = compile_mod.lower_shared(step, ARGS, mesh, trees)
        alone = compile_mod.lower(step, ARGS, mesh, trees, None)
        assert _module(shared) == _module(alone), mesh


def _kept(lower: Any, layouts: list[tuple[AbstractMesh, list[Any]]]) -> int:
    """Objects the garbage collector tracks after lowering every layout (one lowered first:
    JAX's first-use caches), less those before."""
    lower(*layouts[0])
    gc.collect()
    before = len(gc.get_objects())
    for mesh, trees in layouts[1:]:
        lower(mesh, trees)
    gc.collect()
    return len(gc.get_objects()) - before


@pytest.mark.skipif(
    not _jax.one_trace_for_layouts(), reason="jax 0.7 lowers each layout from a trace of its own"
)
def test_layouts_lowered_from_one_trace_keep_no_trace_each() -> None:
    jax.clear_caches()
    layouts = _layouts(8)[:7]
    shared = _kept(lambda m, t: compile_mod.lower_shared(step, ARGS, m, t), layouts)
    jax.clear_caches()
    alone = _kept(lambda m, t: compile_mod.lower(step, ARGS, m, t, None), layouts)
    per_layout = (shared / 6, alone / 6)
    # measured: ~115 objects per layout kept from one trace, ~2,600 (this small step; 6,300 for
    # the 06 step) when each layout is traced
    assert per_layout[0] * 4 < per_layout[1], per_layout


@pytest.mark.skipif(
    not _jax.one_trace_for_layouts(), reason="jax 0.7: lower_shared is lower for every mesh"
)
@pytest.mark.parametrize("types", [(AxisType.Explicit,)])
def test_an_explicit_mesh_is_lowered_as_alone(types: tuple[AxisType, ...]) -> None:
    mesh = AbstractMesh((8,), ("data",), axis_types=types)
    trees = [{"w1": None, "w2": None, "w3": None}, jax.sharding.PartitionSpec("data")]
    shared = compile_mod.lower_shared(step, ARGS, mesh, trees)
    assert _module(shared) == _module(compile_mod.lower(step, ARGS, mesh, trees, None))
