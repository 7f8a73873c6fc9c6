"""Partition rules for a tree: regex rules and logical axis rules, applied to TreeLeafs from
shardings alone (no device work), and bytes per device summed over a tree. Imports JAX, never
widget code.

Regex rules are ``[(regex, PartitionSpec), ...]`` matched with ``re.search`` against each leaf's
path, as ``keystr`` writes it or with its keys joined by "/" (:mod:`.paths`); the first match
wins, as in the regex partition rules of large-model codebases (e.g. EasyLM's
``match_partition_rules``). Unmatched leaves keep their layout. Logical rules are
``[(logical name, mesh axes), ...]`` resolved as ``flax.linen.logical_to_mesh_axes`` does
(flax's ``logical_to_mesh_sharding``): in order of precedence, each mesh axis used once per
leaf, unresolved names replicated.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from jax.sharding import AbstractMesh, Mesh, NamedSharding

from .._jax import spec_entries
from . import mesh as mesh_mod
from . import rules_notes
from . import spec as spec_mod
from .paths import rule_matches
from .tree import Names, TreeLeaf


@dataclass(frozen=True)
class Rule:
    """One regex rule: leaves whose path ``re.search``-matches ``pattern`` get ``spec``.

    Attributes:
        pattern: the regex, as given; spec: its normalized spec (one axis tuple per dimension,
        shorter than a leaf's rank: padded with None, as JAX pads a PartitionSpec).
    """

    pattern: str
    spec: spec_mod.NormSpec
    regex: Any = field(repr=False, compare=False)
    line: int = field(default=0, compare=False)  # its line in the editor's text (0: not from text)

    def name(self, number: int) -> str:
        """ "rule 2 (line 3)": how messages name it (its line, when it came from the editor)."""
        at = f" (line {self.line})" if self.line else ""
        return f"rule {number}{at}"

    @property
    def partition_spec(self) -> Any:
        """The rule's jax PartitionSpec."""
        return spec_mod.to_partition_spec(self.spec)

    @functools.cached_property
    def text(self) -> str:
        """The rule as one line of the rules editor: ``regex  P(...)``. A regex that the line
        would read back otherwise (a leading ``#`` reads as a comment, spaces at either end
        are stripped, a trailing ``:`` or ``->`` reads as the separator) is written as the
        equal ``(?:regex)``. Made once per rule (it parses the line back): rules name
        themselves in the message of every leaf they are checked against."""
        spec = spec_mod.to_text(self.spec)
        line = f"{self.pattern}  {spec}"
        try:
            back = parse_line(line, 1)
        except ValueError:
            back = None
        return (
            line
            if back is not None and back.pattern == self.pattern
            else f"(?:{self.pattern})  {spec}"
        )


def _spec_entries(spec: Any) -> list[Any]:
    if spec is None:
        return []
    if isinstance(spec, str):
        return [spec]  # P('x') written as 'x'
    try:
        return list(spec)
    except TypeError:
        raise ValueError(f"spec must be a PartitionSpec, got {type(spec).__name__}") from None


def make_rule(pattern: object, spec: object, number: int, line: int = 0) -> Rule:
    """A Rule; ValueError naming rule ``number`` (from 1; and its editor ``line``) when the regex
    or spec is malformed."""
    what = Rule("", (), None, line).name(number)
    if not isinstance(pattern, str):
        raise ValueError(f"{what}: the pattern must be a regex string, got {pattern!r}")
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise ValueError(f"{what} ({pattern!r}): bad regex: {e}") from None
    entries = _spec_entries(spec)
    try:
        norm = spec_mod.normalize(entries, len(entries))
    except ValueError as e:
        raise ValueError(f"{what} ({pattern!r}): {e}") from None
    return Rule(pattern, norm, regex, line)


def make_rules(rules: object) -> tuple[Rule, ...]:
    """Rules from ``[(regex, PartitionSpec), ...]`` (or rules text, one per line); ValueError."""
    if isinstance(rules, str):
        return parse_text(rules)
    if rules is None:
        return ()
    if not isinstance(rules, Iterable):
        raise ValueError(f"rules must be [(regex, PartitionSpec), ...], got {rules!r}")
    out = []
    for i, item in enumerate(rules, start=1):
        if isinstance(item, Rule):
            out.append(item)
            continue
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise ValueError(f"rule {i} must be a pair (regex, PartitionSpec), got {item!r}")
        out.append(make_rule(item[0], item[1], i))
    return tuple(out)


_SPEC_AT = re.compile(r"(?:^|\s)(?:->|:)?\s*(?:P|PartitionSpec)\((.*)\)\s*$")
_SPEC_OPEN = re.compile(r"(?:^|\s)(?:->|:)?\s*((?:P|PartitionSpec)\()")


def bracket_problem(spec: str) -> str:
    """What is wrong with the brackets and quotes of ``spec`` (from its ``P(`` to the end of
    the line) in words, or "" when they pair up: the editor says which one is missing."""
    depth, quote = 0, ""
    for k, ch in enumerate(spec):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            rest = spec[k + 1 :].strip()
            if depth == 0 and rest:
                extra = rest.strip(")\t ") == ""
                return "a ')' too many" if extra else f"text after the spec's ')': {rest!r}"
    if quote:
        return f"a quote is not closed: add {quote} after the axis name"
    if depth > 0:
        return f"the spec's parenthesis is not closed: add {')' * depth} at the end"
    return ""


def parse_line(line: str, number: int, rule_number: int = 0) -> Rule | None:
    """One editor line ``regex  P('x', None)`` (also ``regex: P(...)`` / ``regex -> P(...)``);
    None for a blank line or a ``#`` comment; ValueError naming the line."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    m = _SPEC_AT.search(text)
    opened = _SPEC_OPEN.search(text)
    problem = bracket_problem(text[opened.start(1) :]) if opened else ""
    if problem:
        raise ValueError(f"line {number}: {problem}: {text!r}")
    if m is None:
        raise ValueError(f"line {number}: write a regex, then its spec: {text!r}  P('x', None)")
    pattern = text[: m.start()].strip().rstrip(":").rstrip("->").strip()
    if not pattern:
        raise ValueError(f"line {number}: the regex is missing before the spec")
    try:
        inner = ast.literal_eval(f"({m.group(1)},)") if m.group(1).strip() else ()
    except (ValueError, SyntaxError):
        raise ValueError(
            f"line {number}: cannot read the spec P({m.group(1)}): write axis names in quotes, "
            "None, or tuples of names"
        ) from None
    return make_rule(pattern, list(inner), rule_number or number, number)


def parse_text(text: str) -> tuple[Rule, ...]:
    """Rules from the editor's text, one per line; ValueError naming the first bad line."""
    out: list[Rule] = []
    for i, line in enumerate(text.splitlines(), start=1):
        rule = parse_line(line, i, len(out) + 1)
        if rule is not None:
            out.append(rule)
    return tuple(out)


def line_errors(text: str) -> list[tuple[int, str]]:
    """(line number, message) for every line the editor should mark."""
    errors = []
    n = 0
    for i, line in enumerate(text.splitlines(), start=1):
        try:
            n += parse_line(line, i, n + 1) is not None
        except ValueError as e:
            errors.append((i, str(e)))
            n += 1
    return errors


def to_text(rules: Sequence[Rule]) -> str:
    """Rules as the editor shows them, one per line."""
    return "\n".join(r.text for r in rules)


LogicalRules = tuple[tuple[str, tuple[str, ...] | None], ...]


def make_logical_rules(rules: object) -> LogicalRules:
    """Logical rules ``[(name, mesh axis | (axes…) | None), ...]`` as data; ValueError."""
    if not isinstance(rules, Iterable | None):
        raise ValueError(f"logical rules must be [(name, mesh axis), ...], got {rules!r}")
    out: list[tuple[str, tuple[str, ...] | None]] = []
    for i, item in enumerate(rules or (), start=1):
        if not isinstance(item, tuple | list) or len(item) != 2 or not isinstance(item[0], str):
            raise ValueError(f"logical rule {i} must be a pair (name, mesh axis), got {item!r}")
        name, axes = item
        if axes is None:
            out.append((name, None))
        elif isinstance(axes, str):
            out.append((name, (axes,)))
        elif isinstance(axes, tuple | list) and all(isinstance(a, str) for a in axes):
            out.append((name, tuple(axes)))
        else:
            raise ValueError(f"logical rule {i} ({name!r}): mesh axes must be names, got {axes!r}")
    return tuple(out)


def logical_spec(names: Names, rules: LogicalRules) -> spec_mod.NormSpec:
    """The spec of a leaf with these logical names, as ``flax.linen.logical_to_mesh_axes``
    resolves them: rules in order of precedence; a rule applies to a dimension still unassigned
    when none of its mesh axes is used yet by this leaf."""
    result: list[tuple[str, ...] | None] = [None] * len(names)
    assigned = [False] * len(names)
    used: set[str] = set()
    for name, axes in rules:
        if name not in names:
            continue
        pos = names.index(name)
        new = set(axes or ())
        if assigned[pos] or used & new:
            continue
        result[pos] = axes
        assigned[pos] = True
        used |= new
    return tuple(tuple(a) if a else () for a in result)


def with_spec(leaf: TreeLeaf, mesh: Mesh | AbstractMesh, spec: object) -> TreeLeaf:
    """leaf laid out by spec on mesh (``ShardView(x, mesh=…, spec=…)``: its own layout);
    ValueError in words when spec cannot lay it out."""
    entries = _spec_entries(spec)
    norm = spec_mod.normalize(entries, len(entries))
    axes = dict(zip((str(a) for a in mesh.axis_names), mesh_mod.mesh_sizes(mesh), strict=True))
    _fit(leaf, norm, axes, f"spec {spec_mod.to_text(norm)}")
    return leaf.with_sharding(NamedSharding(mesh, spec_mod.to_partition_spec(norm)))


@dataclass(frozen=True)
class Applied:
    """Leaves laid out by rules: the leaves, per leaf what set its layout ("rule 2",
    "logical", or "" for its own layout), and notes in words on rules that lay out nothing
    (warnings, not refusals: the layout stands)."""

    leaves: tuple[TreeLeaf, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _fit(leaf: TreeLeaf, spec: spec_mod.NormSpec, axes: dict[str, int], what: str) -> None:
    """ValueError naming leaf and rule when spec (padded to the leaf's rank) cannot lay it out."""
    ndim = len(leaf.shape)
    if len(spec) > ndim:
        raise ValueError(
            f"{what} does not fit leaf {leaf.path} (shape {leaf.shape}): its spec has "
            f"{len(spec)} entries but the leaf has {ndim} dimension{'' if ndim == 1 else 's'}"
        )
    full = spec + ((),) * (ndim - len(spec))
    try:
        spec_mod.validate(full, leaf.shape, axes)
    except ValueError as e:
        raise ValueError(
            f"{what} does not fit leaf {leaf.path} (shape {leaf.shape}): {e}"
        ) from None


def apply(
    leaves: Sequence[TreeLeaf],
    mesh: Mesh | AbstractMesh,
    rules: Sequence[Rule] = (),
    logical: LogicalRules = (),
) -> Applied:
    """Each leaf laid out by the first regex rule whose pattern its path matches, else by the
    logical rules when they are given (a leaf without logical names is replicated, ``P()`` on
    the mesh, as flax's ``logical_to_mesh_sharding`` gives it), else as it is. ValueError
    naming the leaf and the rule when one cannot apply (nothing is applied then), or when a
    leaf repeats a logical name (as flax refuses it). A rule that lays out no leaf is said in
    :attr:`Applied.notes`.

    A rule's spec is kept as written (``P('data')`` on a 2-d leaf stays ``P('data')``, which
    JAX reads as ``P('data', None)``), so a leaf's spec is what ``jax.device_put`` to it
    reports; a logical spec has one entry per dimension, as flax writes it."""
    sizes = mesh_mod.mesh_sizes(mesh)
    axes = {str(n): s for n, s in zip(mesh.axis_names, sizes, strict=True)}
    shardings: dict[spec_mod.NormSpec, Any] = {}
    fits: set[tuple[Any, ...]] = set()  # (spec, shape) pairs checked: a model repeats a few
    out: list[TreeLeaf] = []
    sources: list[str] = []
    for leaf in leaves:
        spec: spec_mod.NormSpec | None = None
        source = ""
        for i, rule in enumerate(rules, start=1):
            if rule_matches(rule.regex, leaf.path):
                source, spec = f"rule {i}", rule.spec
                if (spec, leaf.shape) not in fits:
                    _fit(leaf, spec, axes, f"{rule.name(i)} ({rule.text})")
                    fits.add((spec, leaf.shape))
                break
        if spec is None and logical and leaf.names is not None:
            _no_repeats(leaf)
            source, spec = "logical", logical_spec(leaf.names, logical)
            names = ", ".join(repr(n) for n in leaf.names)
            _fit(leaf, spec, axes, f"logical rules ({names})")
        elif spec is None and logical:
            source, spec = "logical", ()  # no names: replicated, as flax lays it out
        if spec is None:
            out.append(leaf)
            sources.append("")
            continue
        if spec not in shardings:
            shardings[spec] = NamedSharding(mesh, spec_mod.to_partition_spec(spec))
        out.append(leaf.with_sharding(shardings[spec]))
        sources.append(source)
    notes = rules_notes.notes(leaves, rules, logical, sources)
    return Applied(tuple(out), tuple(sources), notes)


def _no_repeats(leaf: TreeLeaf) -> None:
    """ValueError naming the leaf when a logical name repeats (flax's own refusal)."""
    names = [n for n in leaf.names or () if n is not None]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ValueError(
            f"leaf {leaf.path} (shape {leaf.shape}) names the logical axis "
            f"{', '.join(repr(d) for d in dups)} more than once ({leaf.names}): a dimension "
            "each, as flax's logical_to_mesh_axes requires"
        )


def leaf_bytes(leaf: TreeLeaf) -> tuple[tuple[int, ...], int]:
    """(device ids, bytes each holds) of a leaf: from the mesh and spec alone for an even
    NamedSharding (no geometry), else from its Layout."""
    s = leaf.sharding
    if isinstance(s, NamedSharding):
        found = _named_bytes(s, leaf.shape, leaf.itemsize_bits)
        if found is not None:
            return found
    lay = leaf.layout
    return tuple(d.id for d in lay.devices), lay.bytes_per_device


@functools.lru_cache(maxsize=4096)
def _named_bytes(
    s: NamedSharding, shape: tuple[int, ...], bits: int
) -> tuple[tuple[int, ...], int] | None:
    """leaf_bytes of an even NamedSharding from its mesh and spec (None for an unreduced one),
    once per sharding, shape and dtype width: a model's leaves share a few of each."""
    if spec_mod.unreduced_of(s.spec):
        return None
    sizes = dict(zip(s.mesh.axis_names, mesh_mod.mesh_sizes(s.mesh), strict=True))
    n = 1
    for dim, entry in zip(shape, spec_mod.normalize(spec_entries(s.spec), len(shape)), strict=True):
        n *= dim // math.prod(sizes[a] for a in entry)
    return mesh_mod.mesh_ids(s.mesh), -(-n * bits // 8)


def per_device(leaves: Sequence[TreeLeaf], devices: Sequence[int] = ()) -> dict[int, int]:
    """Device id -> bytes it holds of these leaves (each shard counted on each holder; int4
    packed as XLA stores it); every id of ``devices`` (the mesh's) is there, 0 when it holds
    nothing."""
    ids, table = bytes_by_group(leaves, [0] * len(leaves), 1, devices)
    return dict(zip(ids, table[0].tolist(), strict=True))


def bytes_by_group(
    leaves: Sequence[TreeLeaf],
    groups: Sequence[int],
    n_groups: int,
    devices: Sequence[int] = (),
    held: Sequence[tuple[tuple[int, ...], int]] | None = None,
) -> tuple[list[int], np.ndarray]:
    """(every holder's device id and every id of ``devices``, sorted; ``table[g, i]``: the
    bytes the leaves of group g put on device ``ids[i]``, 0 on a device that holds none).
    Leaves on one mesh share its ids tuple (cached per mesh), so the sums are taken per mesh
    and spread over its devices once: 1,000 leaves at 4,096 devices cost 4,096 additions per
    group, not 4 million. ``held``: each leaf's :func:`leaf_bytes`, when the caller has them."""
    holders: dict[int, tuple[int, ...]] = {}  # id() of an ids tuple -> the tuple (kept alive)
    sums: dict[int, dict[int, int]] = {}
    if held is None:
        held = [leaf_bytes(leaf) for leaf in leaves]
    for (ids, b), g in zip(held, groups, strict=True):
        holders[id(ids)] = ids
        row = sums.setdefault(id(ids), {})
        row[g] = row.get(g, 0) + b
    all_ids = np.array(sorted(set(devices).union(*holders.values())), np.int64)
    table = np.zeros((n_groups, len(all_ids)), np.int64)
    for k, row in sums.items():
        cols = np.searchsorted(all_ids, np.array(holders[k], np.int64))
        for g, b in row.items():
            table[g, cols] += b
    return all_ids.tolist(), table
