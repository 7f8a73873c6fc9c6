"""view.search on a function view: the view's own target and preset, apply shows a candidate
(its mesh and specs), undo restores the layout before."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import shardwidget as sw
from shardwidget.layout_search import run
from shardwidget.plan import compilers


def loss(p: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    return jnp.tanh(jax.nn.relu(x @ p["w1"]) @ p["w2"]).sum()


def test_search_from_a_view_applies_and_undoes() -> None:
    run.clear_cache()
    params = {"w1": jnp.ones((16, 32)), "w2": jnp.ones((32, 16))}
    x = jnp.ones((8, 16))
    view = sw.ShardView(loss, params, x, hardware="h100")
    before = (list(view.mesh_shape), list(view.axis_names), list(view.in_specs))
    s = view.search(workers=2, budget_s=None)
    assert s.hardware.name == "h100" and s.target.n == len(jax.devices())
    best = s.results[1]
    s.apply(1)
    assert tuple(view.mesh_shape) == best.mesh_shape
    assert tuple(view.axis_names) == best.axis_names
    assert view.trace is not None
    got = [tuple(sh.spec) for sh in view.trace.in_shardings]
    want = [
        tuple(p)
        for p in jax.tree.leaves(
            best.in_specs, is_leaf=lambda t: isinstance(t, jax.sharding.PartitionSpec)
        )
    ]
    assert [tuple(e for e in g if e is not None) for g in got] == [
        tuple(e for e in w if e is not None) for w in want
    ]
    view.undo()
    assert (list(view.mesh_shape), list(view.axis_names), list(view.in_specs)) == before


def test_a_candidate_of_another_size_is_refused_in_words() -> None:
    params = {"w1": jnp.ones((16, 32)), "w2": jnp.ones((32, 16))}
    view = sw.ShardView(loss, params, jnp.ones((8, 16)))
    mesh = jax.sharding.AbstractMesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    s = view.search(mesh, workers=1, budget_s=None)
    with pytest.raises(ValueError, match="spans 4 devices; this view has 8"):
        s.apply(0)
    with pytest.raises(ValueError, match="no view to apply to"):
        run.search(loss, params, jnp.ones((8, 16)), mesh=mesh, workers=1).apply(0)


@pytest.mark.skipif(bool(compilers.unavailable("tpu")), reason=compilers.unavailable("tpu") or "")
def test_a_search_on_another_target_is_timed_on_that_targets_own_chip() -> None:
    """A view on the kernel's devices times its own layouts on its preset (tpu-v5p by default);
    a search on a v5e topology is compiled by libtpu for a v5e, so it is timed on a v5e (it was
    timed on the view's v5p)."""
    params = {"w1": jnp.ones((16, 32)), "w2": jnp.ones((32, 16))}
    view = sw.ShardView(loss, params, jnp.ones((8, 16)))
    assert view.hardware == "tpu-v5p"
    pod = sw.tpu_mesh("v5e:2x2", (4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    s = view.search(pod, workers=1, wait=False)
    s.cancel()
    s.wait(120)
    assert s.hardware.name == sw.hardware("tpu-v5e").name
    assert view.search(workers=1, budget_s=None).hardware.name == "tpu-v5p"  # its own chips
