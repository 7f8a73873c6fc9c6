"""Logical rules as flax applies them (issue 30, item 12; skipped without the ``models``
extra): a leaf without logical names is replicated on the mesh, as
``flax.linen.logical_to_mesh_sharding`` lays out ``nnx.get_partition_spec``'s ``P()``, on the
kernel's devices and in a plan alike; a repeated logical name is refused as flax refuses it."""

from __future__ import annotations

import jax
import pytest
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

nnx = pytest.importorskip("flax.nnx", reason="flax is an optional extra (pip install .[models])")

from flax.linen import spmd as linen_spmd  # noqa: E402

from shardwidget import ShardView  # noqa: E402

LOGICAL = [("vocab", "model"), ("embed", "data"), ("mlp", "model")]


def _model(names=("embed", "mlp")):
    import flax

    flax.config.update("flax_always_shard_variable", False)

    class Tiny(nnx.Module):
        def __init__(self, rngs):
            init = nnx.with_partitioning(nnx.initializers.lecun_normal(), names)
            self.up = nnx.Linear(16, 32, rngs=rngs, kernel_init=init)
            self.down = nnx.Linear(32, 16, rngs=rngs)  # no logical names

    return Tiny(nnx.Rngs(0))


def test_leaves_without_names_are_laid_out_as_flax_does():
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    state = nnx.state(_model())
    view = ShardView(state, mesh=mesh, logical_rules=LOGICAL)
    want = linen_spmd.logical_to_mesh_sharding(nnx.get_partition_spec(state), mesh, LOGICAL)
    wanted = jax.tree.leaves(want)
    assert len(wanted) == len(view.leaves)
    for leaf, w in zip(view.leaves, wanted, strict=True):
        assert leaf.sharding.is_equivalent_to(w, len(leaf.shape)), leaf.path
    bare = view.leaf("['down']['kernel'].value")
    assert bare.names is None and bare.spec == P()
    assert any("without logical names" in n and "P()" in n for n in view.notes)
    plan = ShardView(
        state,
        mesh=AbstractMesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2),
        logical_rules=LOGICAL,
    )
    for a, b in zip(view.leaves, plan.leaves, strict=True):
        assert a.spec == b.spec, a.path


def test_a_repeated_logical_name_is_refused_as_flax_refuses_it():
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    state = nnx.state(_model(names=("embed", "embed")))
    with pytest.raises(ValueError, match="more than once"):
        linen_spmd.logical_to_mesh_axes(("embed", "embed"), LOGICAL)
    view = ShardView(state, mesh=mesh)  # no logical rules: nothing to resolve yet
    with pytest.raises(
        ValueError, match=r"leaf \['up'\]\['kernel'\]\.value .* 'embed' more than once"
    ):
        view.logical_rules = LOGICAL
    assert view.logical_rules == [] and view.error == ""
