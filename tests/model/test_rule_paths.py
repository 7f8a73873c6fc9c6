"""Regex rules ported from large-model codebases match as there (issue 30, item 11's "a rule that
matches nothing"): rules written against "/"-joined key paths (EasyLM's
``match_partition_rules``, t5x) lay out the same leaves, leaf by leaf, as that matching function
does, and the copied code reproduces the layout."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model.paths import slash_path

MESH = jax.make_mesh((4, 2), ("fsdp", "mp"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)

# GPT-J's rules as EasyLM writes them (EasyLM/models/gptj/gptj_model.py), on a tiny tree
RULES = [
    ("transformer/wte/embedding", P("mp", "fsdp")),
    ("attn/(k_proj|q_proj|v_proj)/kernel", P("fsdp", "mp")),
    ("attn/out_proj/kernel", P("mp", "fsdp")),
    ("mlp/fc_in/kernel", P("fsdp", "mp")),
    ("mlp/fc_out/kernel", P("mp", "fsdp")),
    ("ln_f/bias", P(None)),
    ("ln_[0-9]+/(bias|scale)", P(None)),
    ("lm_head/kernel", P("fsdp", "mp")),
    (".*", P(None)),
]


def _params():
    def dense(a, b):
        return {"kernel": jnp.ones((a, b))}

    block = {
        "attn": {k: dense(16, 16) for k in ("k_proj", "q_proj", "v_proj", "out_proj")},
        "mlp": {"fc_in": dense(16, 32), "fc_out": dense(32, 16)},
        "ln_1": {"bias": jnp.zeros(16), "scale": jnp.ones(16)},
    }
    return {
        "transformer": {
            "wte": {"embedding": jnp.ones((64, 16))},
            "h": {str(i): block for i in range(2)},
            "ln_f": {"bias": jnp.zeros(16), "scale": jnp.ones(16)},
        },
        "lm_head": dense(16, 64),
    }


def easylm_match(rules, params):
    """EasyLM's match_partition_rules: the first rule whose regex re.search-matches the
    "/"-joined path; scalars replicated."""

    def spec(path, leaf):
        name = "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
        if len(leaf.shape) == 0:
            return P()
        for rule, ps in rules:
            if re.search(rule, name) is not None:
                return ps
        raise ValueError(f"no rule for {name}")

    return jax.tree_util.tree_map_with_path(spec, params)


def test_rules_on_slash_paths_lay_out_as_easylm_matches_them():
    params = _params()
    view = ShardView(params, mesh=MESH, rules=RULES)
    assert view.notes == []
    want = jax.tree.leaves(easylm_match(RULES, params), is_leaf=lambda x: isinstance(x, P))
    assert len(want) == len(view.leaves)
    for leaf, spec in zip(view.leaves, want, strict=True):
        expected = NamedSharding(MESH, spec)
        assert leaf.sharding.is_equivalent_to(expected, len(leaf.shape)), leaf.path
    scope = {"params": params}
    exec(view.code, scope)
    for leaf, x in zip(view.leaves, jax.tree.leaves(scope["params"]), strict=True):
        assert leaf.sharding.is_equivalent_to(x.sharding, x.ndim), leaf.path


def test_slash_path_is_the_keys_joined():
    pairs, _ = jax.tree_util.tree_flatten_with_path({"a": [{"b c": 1}, {2: 3, 5: 6}], "d'e": 4})
    for path, _leaf in pairs:
        keys = "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
        assert slash_path(jax.tree_util.keystr(path)) == keys
