"""ShardView of flax NNX state and optax optimizer state (skipped without the ``models``
extra): logical axis names from ``nnx.with_partitioning``, logical rules as flax resolves them,
and leaves / per_device / tree / code against JAX's own shardings."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

nnx = pytest.importorskip("flax.nnx", reason="flax is an optional extra (pip install .[models])")
optax = pytest.importorskip("optax", reason="optax is an optional extra (pip install .[models])")

from flax.linen import spmd as linen_spmd  # noqa: E402

from shardwidget import ShardView  # noqa: E402

LOGICAL = [("vocab", "model"), ("embed", "data"), ("mlp", "model")]


@pytest.fixture(scope="module")
def model():
    import flax

    flax.config.update("flax_always_shard_variable", False)  # lay out by rules, not at init

    class Tiny(nnx.Module):
        def __init__(self, rngs):
            part = nnx.with_partitioning
            self.embed = nnx.Embed(
                64,
                16,
                rngs=rngs,
                embedding_init=part(nnx.initializers.normal(), ("vocab", "embed")),
            )
            self.up = nnx.Linear(
                16,
                32,
                rngs=rngs,
                kernel_init=part(nnx.initializers.lecun_normal(), ("embed", "mlp")),
            )
            self.down = nnx.Linear(32, 16, rngs=rngs)

    return Tiny(nnx.Rngs(0))


@pytest.fixture
def mesh():
    return jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)


def _arrays(tree):
    return [x for x in jax.tree.leaves(tree) if isinstance(x, jax.Array | jax.ShapeDtypeStruct)]


def _per_device(tree) -> dict[int, int]:
    total: dict[int, int] = {}
    for x in _arrays(tree):
        for s in x.addressable_shards:
            total[s.device.id] = total.get(s.device.id, 0) + s.data.nbytes
    return dict(sorted(total.items()))


def test_nnx_state_logical_names_and_logical_rules(model, mesh):
    state = nnx.state(model)
    view = ShardView(state, mesh=mesh)
    by = {leaf.path: leaf for leaf in view.leaves}
    assert by["['embed']['embedding'].value"].names == ("vocab", "embed")
    assert by["['up']['kernel'].value"].names == ("embed", "mlp")
    assert by["['down']['kernel'].value"].names is None
    view.logical_rules = LOGICAL
    for leaf in view.leaves:
        if leaf.names is None:
            continue
        want = linen_spmd.logical_to_mesh_sharding(P(*leaf.names), mesh, LOGICAL)
        assert leaf.sharding.is_equivalent_to(want, len(leaf.shape)), leaf.path
    placed = view.tree
    assert type(placed) is type(state)
    for leaf, x in zip(view.leaves, _arrays(placed), strict=True):
        assert leaf.sharding.is_equivalent_to(x.sharding, x.ndim)
    assert view.per_device == _per_device(placed)
    ns = {"params": state}
    exec(view.code, ns)
    for leaf, x in zip(view.leaves, _arrays(ns["params"]), strict=True):
        assert leaf.sharding.is_equivalent_to(x.sharding, x.ndim), leaf.path


def test_regex_rules_win_over_logical_rules(model, mesh):
    view = ShardView(nnx.state(model), mesh=mesh, logical_rules=LOGICAL)
    view.rules = [(r"embedding", P("data", "model"))]
    assert view.leaf("['embed']['embedding'].value").spec == P("data", "model")
    assert view.leaf("['up']['kernel'].value").spec == P("data", "model")  # logical


def test_optax_adamw_state_counts_twice_the_params(model, mesh):
    params = nnx.state(model, nnx.Param)
    opt = optax.adamw(1e-3)
    opt_state = opt.init(params)
    both = {"params": params, "opt_state": opt_state}
    view = ShardView(both, mesh=mesh, rules=[(r"kernel|embedding", P("data"))])
    assert any(leaf.path.startswith("['opt_state']") for leaf in view.leaves)
    placed = view.tree
    assert view.per_device == _per_device(placed)
    p_only = ShardView(params, mesh=mesh, rules=[(r"kernel|embedding", P("data"))]).per_device
    # mu and nu are shaped as the params; count is one int32 scalar on one device
    for d, b in view.per_device.items():
        assert b - 3 * p_only[d] in (0, 4)
    np.testing.assert_array_equal(
        np.asarray(placed["params"]["embed"]["embedding"][...]),
        np.asarray(params["embed"]["embedding"][...]),
    )


def test_abstract_nnx_model_is_viewed_without_allocating(mesh):
    import gc

    def live():
        gc.collect()
        return {id(a) for a in jax.live_arrays()}

    before = live()
    abstract = nnx.eval_shape(lambda: nnx.Linear(4096, 1024, rngs=nnx.Rngs(0)))
    view = ShardView(nnx.state(abstract), mesh=mesh, rules=[("kernel", P("data", "model"))])
    assert view.leaf("['kernel'].value").layout.bytes_per_device == 4096 * 1024 * 4 // 8
    assert live() <= before
    assert isinstance(NamedSharding(mesh, P()), NamedSharding)


def test_logical_rules_edited_as_text(model, mesh):
    view = ShardView(nnx.state(model), mesh=mesh, logical_rules=LOGICAL)
    assert view.rules_text == "vocab -> model\nembed -> data\nmlp -> model"
    state = {**view._shown.to_wire(), "rules_text": "embed -> model\nvocab -> data"}
    view._on_custom_msg(view, {"type": "tree_request", "seq": 3, "state": state}, [])
    assert view.error == ""
    assert view.logical_rules == [("embed", "model"), ("vocab", "data")]
    emb = view.leaf("['embed']['embedding'].value")
    want = linen_spmd.logical_to_mesh_sharding(P("vocab", "embed"), mesh, view.logical_rules)
    assert emb.sharding.is_equivalent_to(want, 2) and emb.spec == P("data", "model")


def test_the_readme_s_flax_setting_is_what_making_an_annotated_model_needs():
    """The README's note (issue 38 item 10): on this flax, an ``nnx.with_partitioning`` model made
    without a mesh in context is refused unless ``flax_always_shard_variable`` is False; with the
    README's line it is made, and the view lays it out by rules."""
    import pathlib

    import flax

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert 'flax.config.update("flax_always_shard_variable", False)' in readme

    def make():
        init = nnx.with_partitioning(nnx.initializers.lecun_normal(), ("embed", "mlp"))
        return nnx.Linear(16, 32, kernel_init=init, rngs=nnx.Rngs(0))

    before = flax.config.flax_always_shard_variable
    try:
        flax.config.update("flax_always_shard_variable", True)
        if tuple(int(v) for v in flax.__version__.split(".")[:2]) >= (0, 12):
            with pytest.raises(ValueError, match="auto mesh context"):  # flax's own words
                make()
        flax.config.update("flax_always_shard_variable", False)
        lin = make()
    finally:
        flax.config.update("flax_always_shard_variable", before)
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    view = ShardView(nnx.state(lin), mesh=mesh, logical_rules=[("embed", "data"), ("mlp", "model")])
    leaf = next(lf for lf in view.leaves if "kernel" in lf.path)
    assert leaf.spec == P("data", "model")
