"""The user's own strategies, and specs between their two forms: one per leaf (the search's)
and one tree per argument (what ``plan`` and ``jax.jit`` take).

A strategy is a list of rules (``[(regex, PartitionSpec), ...]``, matched against each leaf's
path inside its argument, as a tree view's rules are), tried on every factorized mesh whose
axes it names; a function ``mesh -> in_specs | rules | None`` (None: not on this mesh), called
with each factorized ``AbstractMesh``; or a fixed layout ``(AbstractMesh, in_specs | rules)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
from jax.sharding import AbstractMesh, AxisType, Mesh, PartitionSpec

from ..model import paths
from ..model import rules as rules_mod
from ..model import spec as spec_mod
from . import candidates as c

Strategy = Callable[[AbstractMesh], "Sequence[Any] | None"] | Sequence[Any]
"""A strategy: a function ``mesh -> in_specs | rules | None``, rules, or ``(mesh, layout)``."""


def to_trees(args: Sequence[Any], specs: Sequence[c.Spec]) -> list[Any]:
    """One tree of PartitionSpecs per argument (shaped like it) from one spec per leaf."""
    out, k = [], 0
    for a in args:
        treedef = jax.tree_util.tree_structure(a)
        n = len(jax.tree_util.tree_leaves(a))
        out.append(
            jax.tree_util.tree_unflatten(
                treedef, [spec_mod.to_partition_spec(s) for s in specs[k : k + n]]
            )
        )
        k += n
    return out


def _is_rules(x: object) -> bool:
    return (
        isinstance(x, list | tuple)
        and all(isinstance(r, tuple | list) and len(r) == 2 and isinstance(r[0], str) for r in x)
        and len(x) > 0
    )


def _per_arg(in_specs: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """One spec entry list per leaf from per-argument specs (None, one spec, or a tree)."""
    if len(in_specs) != len(args):
        raise ValueError(f"in_specs has {len(in_specs)} entries for {len(args)} arguments")
    out: list[Any] = []
    for a, s in zip(args, in_specs, strict=True):
        n = len(jax.tree_util.tree_leaves(a))
        if s is None or isinstance(s, PartitionSpec):
            out.extend([s] * n)
            continue
        flat = jax.tree_util.tree_leaves(
            s, is_leaf=lambda x: x is None or isinstance(x, PartitionSpec)
        )
        if len(flat) != n:
            raise ValueError(f"a spec tree has {len(flat)} specs for an argument of {n} arrays")
        out.extend(flat)
    return out


def _by_rules(rules: Sequence[Any], leaves: Sequence[c.Leaf]) -> list[Any]:
    made = rules_mod.make_rules(rules)
    out: list[Any] = []
    for leaf in leaves:
        inner = leaf.path[len(f"[{leaf.arg}]") :]
        rule = next((r for r in made if paths.rule_matches(r.regex, inner)), None)
        out.append(None if rule is None else list(rule.spec))
    return out


def per_leaf(
    given: Sequence[Any], args: Sequence[Any], leaves: Sequence[c.Leaf], axes: dict[str, int]
) -> tuple[c.Spec, ...]:
    """Each leaf's spec from rules or per-argument specs, checked against the mesh's axes and
    the leaf's shape (ValueError naming the leaf)."""
    raw = _by_rules(given, leaves) if _is_rules(given) else _per_arg(list(given), args)
    out = []
    for leaf, s in zip(leaves, raw, strict=True):
        try:
            norm = spec_mod.normalize(s, len(leaf.shape))
            spec_mod.validate(norm, leaf.shape, axes)
        except ValueError as e:
            raise c.Indivisible(f"{leaf.path} (shape {leaf.shape}): {e}") from None
        out.append(norm)
    return tuple(out)


def _rule_axes(rules: Sequence[Any]) -> set[str]:
    return {a for r in rules_mod.make_rules(rules) for e in r.spec for a in e}


def _proposal(
    label: str,
    name: str,
    given: Sequence[Any],
    args: Sequence[Any],
    leaves: Sequence[c.Leaf],
    axes: dict[str, int],
) -> c.Proposal | c.Dropped:
    """Strategy ``name``'s layout ``given`` on a mesh of ``axes`` as a proposal called
    ``label``, or dropped with the reason (a leaf it cannot divide)."""
    try:
        specs = per_leaf(given, args, leaves, axes)
    except ValueError as e:
        return c.Dropped(label, str(e))
    return c.Proposal(label, tuple(axes.values()), tuple(axes), specs, name)


def _one(
    name: str, strategy: Strategy, args: Sequence[Any], leaves: Sequence[c.Leaf], n: int
) -> Iterator[c.Proposal | c.Dropped]:
    if isinstance(strategy, tuple) and len(strategy) == 2 and hasattr(strategy[0], "axis_names"):
        yield _fixed(name, strategy[0], strategy[1], args, leaves, n)
        return
    for roles in c.meshes(n):
        label = f"{name} · {c.name_of(roles)}"
        if callable(strategy):
            mesh = jax.sharding.AbstractMesh(
                tuple(roles.values()), tuple(roles), axis_types=(AxisType.Auto,) * len(roles)
            )
            given = strategy(mesh)
            if given is None:
                continue
        elif _rule_axes(strategy) <= set(roles):
            given = strategy
        else:
            continue
        yield _proposal(label, name, given, args, leaves, roles)


def _fixed(
    name: str,
    mesh: Mesh | AbstractMesh,
    given: Sequence[Any],
    args: Sequence[Any],
    leaves: Sequence[c.Leaf],
    n: int,
) -> c.Proposal | c.Dropped:
    axes = dict(
        zip((str(a) for a in mesh.axis_names), (int(s) for s in mesh.axis_sizes), strict=True)
    )
    if math.prod(axes.values()) != n:
        return c.Dropped(
            name, f"its mesh has {math.prod(axes.values())} devices; the target has {n}"
        )
    return _proposal(name, name, given, args, leaves, axes)


def propose(
    strategies: dict[str, Any] | None,
    args: Sequence[Any],
    leaves: Sequence[c.Leaf],
    n: int,
) -> tuple[list[c.Proposal], list[c.Dropped]]:
    """The user's strategies' proposals on n chips, and those dropped with the reason."""
    props: list[c.Proposal] = []
    dropped: list[c.Dropped] = []
    for name, strategy in (strategies or {}).items():
        if not (callable(strategy) or _is_rules(strategy) or isinstance(strategy, tuple)):
            raise TypeError(
                f"strategy {name!r}: give rules [(regex, P), ...], a function mesh -> in_specs, "
                f"or (AbstractMesh, in_specs); got {type(strategy).__name__}"
            )
        for found in _one(name, strategy, args, leaves, n):
            if isinstance(found, c.Dropped):
                dropped.append(found)
            else:
                props.append(found)
    return props, dropped


def code_of(tree: object) -> str:
    """A spec tree as Python (dicts, lists, tuples of ``P(...)``)."""
    if isinstance(tree, PartitionSpec):
        return "P(" + ", ".join(_entry(e) for e in tree) + ")"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {code_of(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(code_of(v) for v in tree) + "]"
    if isinstance(tree, tuple):
        return "(" + ", ".join(code_of(v) for v in tree) + ("," if len(tree) == 1 else "") + ")"
    return repr(tree)


def _entry(e: str | Sequence[str] | None) -> str:
    if e is None or isinstance(e, str):
        return repr(e)
    return "(" + ", ".join(repr(a) for a in e) + ("," if len(e) == 1 else "") + ")"


IDENT = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")
