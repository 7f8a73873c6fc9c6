"""The user's strategies as proposals (no compile): rules, a function of the mesh and a fixed
(mesh, specs) go through one path, so the same layout given three ways is the same proposal,
and a strategy dropped keeps its whole name (one with ": " in it too) beside the reason."""

from __future__ import annotations

from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

from shardwidget.layout_search import leaves as leaves_mod
from shardwidget.layout_search import strategies as strat
from tests.layout_search.test_search import PARAMS, X, step

LEAVES = leaves_mod.leaves(step, (PARAMS, X))
ARGS = (PARAMS, X)
SPECS = [{"w1": P(None, "tensor"), "w2": P("tensor", None)}, P()]


def _tp(n: int) -> AbstractMesh:
    return AbstractMesh((n,), ("tensor",), axis_types=(AxisType.Auto,))


def test_the_same_layout_three_ways_is_the_same_proposal() -> None:
    rules = [("w1", P(None, "tensor")), ("w2", P("tensor", None))]

    def fn(mesh: AbstractMesh) -> list[object] | None:
        return SPECS if tuple(mesh.axis_names) == ("tensor",) else None

    given = {"rules": rules, "fn": fn, "fixed": (_tp(8), SPECS)}
    props, dropped = strat.propose(given, ARGS, LEAVES, 8)
    assert not dropped
    by = {p.name: p for p in props}
    one = by["rules · TP 8"]
    assert by["fn · TP 8"].key == one.key == by["fixed"].key
    assert one.specs[0] == ((), ("tensor",)), one.specs  # w1 (16, 32): columns over tensor
    assert [p.strategy for p in (by["rules · TP 8"], by["fn · TP 8"], by["fixed"])] == [
        "rules",
        "fn",
        "fixed",
    ]
    assert {p.name for p in props if p.strategy == "fn"} == {"fn · TP 8"}


def test_a_dropped_strategy_keeps_its_whole_name_and_the_reason() -> None:
    too_many = [{"w1": P(None, "tensor"), "w2": P("tensor", None)}, P("tensor")]  # batch 8 / 16
    given = {
        "tp: rows": (_tp(16), [{"w1": P(None, None, "tensor"), "w2": P()}, P()]),
        "tp: small": (_tp(4), SPECS),
        "fn: batch": lambda mesh: too_many if mesh.axis_names == ("tensor",) else None,
    }
    props, dropped = strat.propose(given, ARGS, LEAVES, 16)
    assert not props
    why = {d.name: d.reason for d in dropped}
    assert set(why) == {"tp: rows", "tp: small", "fn: batch · TP 16"}, why
    assert why["tp: small"] == "its mesh has 4 devices; the target has 16"
    assert (
        why["tp: rows"].startswith("[0]['w1'] (shape (16, 32)):") and "3 entries" in why["tp: rows"]
    )
    assert why["fn: batch · TP 16"].startswith("[1] (shape (8, 16)):"), why
