"""ShardView(tree) refuses bad input in words, naming the leaf, input or rule, and nothing changes
(issue 30, items 11 and 12): trees without array leaves, cycles, deep nesting, repeated logical
names; numpy leaves are laid out as the function view lays numpy inputs out; a rule that lays
out nothing is a note, not a refusal; leaves without logical names follow flax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget._jax import CompileCount

MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)


@pytest.mark.parametrize(
    ("tree", "words"),
    [
        ({"a": "x", "b": 1}, r"a dict with no array leaf .*\['a'\] str 'x', \['b'\] int 1"),
        ({}, r"an empty dict"),
        ([1, 2, 3], r"a list with no array leaf .*\[0\] int 1"),
    ],
)
def test_a_tree_without_arrays_is_refused_as_a_tree(tree, words):
    for kw in ({"mesh": MESH}, {}):
        with pytest.raises(TypeError, match=words) as e:
            ShardView(tree, **kw)
        assert "unexpected keyword" not in str(e.value)


def _cyclic_dict():
    d = {"w": jnp.ones(8)}
    d["self"] = d
    return d


def _cyclic_list():
    lst = [jnp.ones(8)]
    lst.append(lst)
    return lst


def _deep():
    t = jnp.ones(8)
    for _ in range(1500):
        t = {"k": t}
    return t


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_cyclic_dict, r"holds itself: \['self'\] is the tree itself"),
        (_cyclic_list, r"holds itself: \[1\] is the tree itself"),
        (_deep, r"nests more than 500 levels"),
        (lambda: {1: jnp.ones(2), "a": jnp.ones(2)}, r"keys JAX cannot sort \(int, str mixed\)"),
    ],
)
def test_trees_jax_cannot_flatten_are_refused_in_words(make, words):
    tree = make()
    with CompileCount() as c, pytest.raises(ValueError, match=words):
        ShardView(tree, mesh=MESH)
    assert c.n == 0  # refused before any work (counted: a time bound fails on a busy machine)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_cyclic_list, r"argument 0 holds itself: \[1\] is argument 0 itself"),
        (_deep, r"argument 0 nests more than 500 levels"),
        (lambda: {1: jnp.ones(2), "a": jnp.ones(2)}, r"argument 0 is a dict whose keys JAX"),
    ],
)
def test_function_arguments_jax_cannot_flatten_are_refused_in_words(make, words):
    with pytest.raises(ValueError, match=words):
        ShardView(lambda t: t, make())


def test_numpy_leaves_are_laid_out_where_device_put_puts_them():
    a = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    view = ShardView({"a": a, "b": jnp.ones(8), "n": 3}, mesh=MESH)
    assert [leaf.path for leaf in view.leaves] == ["['a']", "['b']"]
    assert [s.path for s in view.static] == ["['n']"]
    put = jax.device_put(a)
    d0 = next(iter(put.devices())).id
    assert view.per_device[d0] == a.nbytes + 32
    assert view._stats["status"] == "ready"
    view.rules = [("a", P("data", "model"))]
    placed = view.tree["a"]
    assert isinstance(placed, jax.Array)
    assert placed.sharding.is_equivalent_to(NamedSharding(MESH, P("data", "model")), 2)
    np.testing.assert_array_equal(np.asarray(placed), a)
    scope = {"params": {"a": a, "b": jnp.ones(8), "n": 3}}
    exec(view.code, scope)
    assert scope["params"]["a"].sharding.is_equivalent_to(placed.sharding, 2)


def test_a_rule_that_lays_out_nothing_is_a_note_not_a_refusal():
    tree = {"w": jnp.ones((8, 4)), "b": jnp.ones(4)}
    view = ShardView(tree, mesh=MESH, rules=[("zzz", P("data")), ("w", P("data")), ("w", P())])
    assert view.error == ""
    assert view.leaf("['w']").spec == P("data")
    assert view.notes == [
        "rule 1 (zzz  P('data')) matches no leaf's path",
        "rule 3 (w  P()) lays out no leaf: an earlier rule takes every leaf it matches",
    ]
    assert view._tree["notes"] == view.notes
    assert "note: rule 1 (zzz  P('data')) matches no leaf's path" in repr(view)
    view.rules = [("w", P("data"))]
    assert view.notes == [] and view._tree["notes"] == []


def test_a_bad_rule_changes_nothing():
    view = ShardView({"w": jnp.ones((8, 4))}, mesh=MESH, rules=[("w", P("data"))])
    before = (view.rules_text, view._tree["key"], view.leaf("['w']").spec)
    for bad in ([("w", P("data", "data"))], [("w", P(None, None, "data"))], [("(", P())]):
        with pytest.raises(ValueError, match=r"rule 1"):
            view.rules = bad
        assert (view.rules_text, view._tree["key"], view.leaf("['w']").spec) == before
