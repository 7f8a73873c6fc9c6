"""Notes on partition rules that lay out nothing: a regex no leaf's path matches, one whose every
match an earlier rule takes, a logical name no leaf carries, leaves without logical names that
the logical rules replicate. Said in words beside the layout (a warning, not a refusal: a rule
list written for a bigger model often has rules a smaller one does not use). Pure: no JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .paths import rule_matches

SHOWN = 8
"""The most notes given; the rest are counted."""


def _regex_notes(leaves: Sequence[Any], rules: Sequence[Any], sources: Sequence[str]) -> list[str]:
    used = set(sources)
    out = []
    for i, rule in enumerate(rules, start=1):
        if f"rule {i}" in used:
            continue
        what = f"{rule.name(i)} ({rule.text})"
        if any(rule_matches(rule.regex, leaf.path) for leaf in leaves):
            out.append(f"{what} lays out no leaf: an earlier rule takes every leaf it matches")
        else:
            out.append(f"{what} matches no leaf's path")
    return out


def _logical_notes(
    leaves: Sequence[Any], logical: Sequence[tuple[str, Any]], sources: Sequence[str]
) -> list[str]:
    if not logical:
        return []
    carried = {n for leaf in leaves for n in (leaf.names or ())}
    out = [
        f"logical rule {name!r}: no leaf has a dimension named {name!r}"
        for name, _axes in logical
        if name not in carried
    ]
    bare = [
        leaf.path
        for leaf, src in zip(leaves, sources, strict=True)
        if src == "logical" and leaf.names is None
    ]
    if bare:
        n = len(bare)
        out.append(
            f"{n} lea{'f' if n == 1 else 'ves'} without logical names (e.g. {bare[0]}) "
            "replicated on the mesh, P(), as flax's logical_to_mesh_sharding lays them out"
        )
    return out


def notes(
    leaves: Sequence[Any],
    rules: Sequence[Any],
    logical: Sequence[tuple[str, Any]],
    sources: Sequence[str],
) -> tuple[str, ...]:
    """The notes for these rules applied to these leaves (``sources``: what set each leaf's
    layout, "rule 2" / "logical" / "")."""
    out = [*_regex_notes(leaves, rules, sources), *_logical_notes(leaves, logical, sources)]
    if len(out) > SHOWN:
        out = [*out[: SHOWN - 1], f"… and {len(out) - SHOWN + 1} more notes"]
    return tuple(out)
