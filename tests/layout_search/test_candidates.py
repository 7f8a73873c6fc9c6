"""Candidate layouts: the factorizations, each role's placement and the drops, against cases
worked out by hand; the roles and Megatron splits read from small functions' dataflow."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from shardwidget.layout_search import candidates as c
from shardwidget.layout_search import leaves as leaves_mod

W1 = c.Leaf(0, "[0]['w1']", (64, 256), "param", ("column", 1))
W2 = c.Leaf(0, "[0]['w2']", (256, 64), "param", ("row", 0))
B = c.Leaf(0, "[0]['b']", (256,), "param")
X = c.Leaf(1, "[1]", (32, 16), "batch")
MU1 = c.Leaf(2, "[2]['mu']['w1']", (64, 256), "opt", mirror=0)
STEP = c.Leaf(2, "[2]['count']", (), "opt")


def test_factorizations_are_every_ordered_product_of_factors_of_two_or_more() -> None:
    assert sorted(c.factorizations(8, 2)) == [(2, 4), (4, 2)]
    assert list(c.factorizations(8, 3)) == [(2, 2, 2)]
    assert list(c.factorizations(7, 2)) == []
    assert list(c.factorizations(12, 1)) == [(12,)]
    # 8 = 2^3 over four roles: 4 one-role meshes, 6 pairs × 2 orders, 4 triples × 1
    assert len(list(c.meshes(8))) == 4 + 12 + 4
    assert all(min(m.values()) >= 2 and len(m) <= 3 for m in c.meshes(64))


def test_data_parallel_replicates_parameters_and_splits_the_batch() -> None:
    p = c.place([W1, W2, B, X], {"data": 8})
    assert p.name == "DP 8" and p.mesh_shape == (8,) and p.axis_names == ("data",)
    assert p.specs == (((), ()), ((), ()), ((),), (("data",), ()))


def test_fsdp_takes_each_parameters_largest_divisible_dimension() -> None:
    p = c.place([W1, W2, B, X], {"fsdp": 8})
    assert p.specs == (((), ("fsdp",)), (("fsdp",), ()), (("fsdp",),), (("fsdp",), ()))
    # 128 divides only the 256s; the batch (32) is not divisible: dropped, the leaf named
    with pytest.raises(c.Indivisible, match=r"batch dimension of \[1\] \(32\).*fsdp 64"):
        c.place([W1, W2, B, X], {"fsdp": 64})
    odd = c.Leaf(0, "[0]['odd']", (3, 5), "param")
    p = c.place([W1, odd, X], {"fsdp": 2})
    assert p.specs[1] == ((), ()) and "[0]['odd']" in p.notes[0]
    with pytest.raises(c.Indivisible, match="divides no dimension"):
        c.place([odd, X], {"fsdp": 2})


def test_batch_over_data_and_fsdp_sequence_over_seq() -> None:
    p = c.place([W1, X], {"data": 2, "fsdp": 4, "seq": 4})
    assert p.axis_names == ("data", "fsdp", "seq") and p.name == "DP 2 × FSDP 4 × SP 4"
    assert p.specs[1] == (("data", "fsdp"), ("seq",))
    with pytest.raises(c.Indivisible, match=r"sequence dimension of \[1\] \(16\).*seq = 32"):
        c.place([W1, X], {"seq": 32})


def test_tensor_parallel_is_megatron_column_then_row() -> None:
    p = c.place([W1, W2, B, X], {"fsdp": 2, "tensor": 4})
    assert p.specs[0] == (("fsdp",), ("tensor",))  # column: output dim over tensor
    assert p.specs[1] == (("tensor",), ("fsdp",))  # row: contracting dim over tensor
    assert p.specs[2] == (("fsdp",),)  # a bias: FSDP only
    with pytest.raises(c.Indivisible, match=r"tensor = 3 does not divide \[0\]\['w1'\]"):
        c.place([W1, X], {"tensor": 3})
    with pytest.raises(ValueError, match="no weight"):
        c.place([B, X], {"tensor": 2})


def test_zero1_shards_the_optimizer_state_over_data_only() -> None:
    leaves = [W1, X, MU1, STEP]
    dp = c.place(leaves, {"data": 4})
    z1 = c.place(leaves, {"data": 4}, zero1=True)
    assert dp.specs[0] == z1.specs[0] == ((), ())  # parameters replicated in both
    assert dp.specs[2] == ((), ()) and z1.specs[2] == ((), ("data",))
    assert z1.specs[3] == () and z1.strategy == "zero-1" and z1.name == "ZeRO-1 · DP 4"
    fsdp = c.place(leaves, {"fsdp": 4})
    assert fsdp.specs[2] == fsdp.specs[0] == ((), ("fsdp",))  # the state follows its parameter


def test_propose_lists_every_factorization_and_drops_with_the_reason() -> None:
    props, dropped = c.propose(8, [W1, W2, B, X, MU1])
    names = [p.name for p in props]
    assert "FSDP 8" in names and "DP 2 × TP 4" in names and "ZeRO-1 · DP 8" in names
    assert "ZeRO-1 · DP 2 × FSDP 4" not in names  # FSDP already shards the state
    assert len({p.key for p in props}) == len(props)
    # X is (32, 16): seq 8 divides 16, so SP 8 stays; nothing here is indivisible at 8
    assert not dropped
    props, dropped = c.propose(64, [W1, W2, B, X])
    why = {d.name: d.reason for d in dropped}
    assert "not divisible by data 64" in why["DP 64"]
    assert "tensor = 64 does not divide [0]['w1']" not in why.get("TP 64", "")  # 256 % 64 == 0


def mlp(params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    h = jax.nn.relu(x @ params["w1"] + params["b"])
    return jnp.tanh(h @ params["w2"] @ params["w3"]).sum()


def test_roles_and_splits_from_the_dataflow_of_a_training_step() -> None:
    params = {
        "w1": jax.ShapeDtypeStruct((16, 32), jnp.float32),
        "b": jax.ShapeDtypeStruct((32,), jnp.float32),
        "w2": jax.ShapeDtypeStruct((32, 16), jnp.float32),
        "w3": jax.ShapeDtypeStruct((16, 8), jnp.float32),
    }
    x = jax.ShapeDtypeStruct((8, 16), jnp.float32)
    mu = jax.tree.map(lambda a: a, params)

    def step(params: dict[str, jax.Array], x: jax.Array, mu: dict[str, jax.Array]) -> object:
        g = jax.grad(mlp)(params, x)
        return jax.tree.map(lambda p, gi, m: p - gi * m, params, g, mu)

    got = {leaf.path: leaf for leaf in leaves_mod.leaves(step, (params, x, mu))}
    assert got["[0]['w1']"].tp == ("column", 1)
    assert got["[0]['w2']"].tp == ("row", 0)  # after relu(w1's column output): a row split
    assert got["[0]['w3']"].tp == ("column", 1)  # the chain starts again after the row
    assert got["[0]['b']"].tp is None and got["[0]['b']"].role == "param"
    assert got["[1]"].role == "batch"
    leaves = list(got.values())
    assert (
        got["[2]['w2']"].role == "opt" and leaves[got["[2]['w2']"].mirror or 0].path == "[0]['w2']"
    )


def test_a_transposed_weight_is_split_on_the_leafs_own_dimension() -> None:
    emb = jax.ShapeDtypeStruct((100, 8), jnp.float32)  # (vocab, width), used as x @ emb.T
    x = jax.ShapeDtypeStruct((4, 8), jnp.float32)
    got = leaves_mod.leaves(lambda e, x: (x @ e.T).sum(), (emb, x))
    assert got[0].tp == ("column", 0)  # the vocabulary: the product's output dimension


def test_scanned_layers_keep_the_stacked_dimension_out_of_the_split() -> None:
    ws = jax.ShapeDtypeStruct((3, 16, 16), jnp.float32)  # three layers stacked
    x = jax.ShapeDtypeStruct((4, 16), jnp.float32)

    def f(ws: jax.Array, x: jax.Array) -> jax.Array:
        return jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0].sum()

    got = leaves_mod.leaves(f, (ws, x))
    assert got[0].tp == ("column", 2)


def test_a_budget_sees_every_kind_of_layout_first() -> None:
    order = c.tried_first(c.meshes(256))
    assert len(order) == len(list(c.meshes(256)))
    kinds = len({tuple(m) for m in c.meshes(256)})  # 4 + 6 + 4 sets of roles
    first = order[:kinds]
    assert len({tuple(m) for m in first}) == kinds == 14
    fsdp_tp = next(m for m in first if tuple(m) == ("fsdp", "tensor"))
    assert fsdp_tp == {"fsdp": 128, "tensor": 2}  # the smallest tensor axis first
