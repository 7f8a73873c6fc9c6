"""The tree view's wire format (twin of js/wire/tree.ts): one columnar payload for every leaf
(a tree of 10,000 leaves is a few lists, not 10,000 objects), per-device bytes by top-level
group, and the messages of the rules editor and the leaf table. The selected leaf travels as an
array view's ``_layout`` / ``_stats`` / ``_options`` (:mod:`.array`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, TypedDict

from ..model import spec as spec_mod
from ..model.copies import on_every_device, replication
from ..model.layout import Layout
from ..model.rules import Applied, bytes_by_group, leaf_bytes
from ..model.summary import Summary
from ..model.tree import StaticLeaf, TreeLeaf
from .array import LayoutWire, Options, Stats, layout, options, stats


class StaticWire(TypedDict):
    """A static (non-array) leaf: its path, type name and short text."""

    path: str
    kind: str
    text: str


class TreeMemory(TypedDict):
    """Bytes per device, split by top-level group: ``by_group[g][i]`` is what group g puts on
    device ``ids[i]``."""

    ids: list[int]
    by_group: list[list[int]]


class TreeWire(TypedDict):
    """``_tree`` of a tree view: the leaves as columns (index i of each list is leaf i, in
    ``tree_flatten_with_path`` order), the static leaves, and memory per device."""

    key: int
    paths: list[str]
    groups: list[int]  # index into group_names
    group_names: list[str]
    shapes: list[list[int]]
    dtypes: list[str]
    specs: list[str]  # the spec as Python writes it; "" without a mesh
    names: list[str]  # logical axis names ("vocab, embed"), "" when none
    bytes: list[int]  # per device (the most any device holds of it)
    logical_bytes: list[int]
    replication: list[int]  # devices holding each element (copies)
    everywhere: list[bool]  # every device of the mesh holds the whole leaf (model.copies)
    sources: list[str]  # "rule 2", "logical" or "" (its own layout)
    notes: list[str]  # rules that lay out nothing, in words (warnings: the layout stands)
    abstract: list[bool]
    static: list[StaticWire]
    memory: TreeMemory
    mesh: str  # "data=4 × model=2"
    code: str
    planned: str  # "planned on AbstractMesh (32, 8) · no devices"; "" on the kernel's devices


class TreeRequestMsg(TypedDict):
    """A tree view's request: lay the tree out with these rules on this mesh (``state``: the
    traits mesh_shape, axis_names, axis_types, rules_text)."""

    type: Literal["tree_request"]
    seq: int
    state: dict[str, object]


class TreeSelectMsg(TypedDict):
    """The leaf table's selection: draw leaf ``leaf`` in the device grid."""

    type: Literal["tree_select"]
    leaf: int


_GROUP = re.compile(r"^(\[[^\]]*\]|\.[^.\[]+)")


def group_of(path: str) -> str:
    """The top-level group of a path: its first key (``['params']``, ``.opt_state``, ``[0]``)."""
    m = _GROUP.match(path)
    return m.group(1) if m else path or "(root)"


class _Row(NamedTuple):
    """The columns of one leaf that follow from its sharding, shape and dtype alone."""

    dtype: str
    spec: str
    held: tuple[tuple[int, ...], int]  # leaf_bytes: (device ids, bytes each)
    bytes: int
    replication: int
    everywhere: bool


def _row_of(leaf: TreeLeaf, mesh_ids: frozenset[int], rows: dict[tuple[Any, ...], _Row]) -> _Row:
    """Leaf's sharding-derived columns, worked out once per (sharding, shape, dtype) in
    ``rows``: a model's thousands of leaves share a few of each (a rules edit at 5,000 leaves
    spent ~2/3 of its kernel time on these columns leaf by leaf)."""
    key = (leaf.sharding, leaf.shape, leaf.dtype, leaf.itemsize_bits)
    row = rows.get(key)
    if row is None:
        spec = leaf.spec
        nd = len(leaf.shape)
        held = leaf_bytes(leaf)
        row = rows[key] = _Row(
            dtype=str(leaf.dtype),
            spec=spec_mod.to_text(spec_mod.normalize(spec, nd)) if spec is not None else "",
            held=held,
            bytes=held[1],
            replication=replication(leaf),
            everywhere=bool(mesh_ids) and on_every_device(leaf, mesh_ids),
        )
    return row


def tree_payload(
    applied: Applied,
    static: Sequence[StaticLeaf],
    *,
    key: int,
    mesh_text: str,
    code: str,
    planned: str = "",
    devices: Sequence[int] = (),
) -> TreeWire:
    """``_tree`` for these laid-out leaves; ``devices``: the mesh's device ids (each has a
    column in ``memory``, 0 where it holds nothing)."""
    leaves = applied.leaves
    mesh_ids = frozenset(devices)
    group_names: list[str] = []
    group_at: dict[str, int] = {}
    groups: list[int] = []
    rows: dict[tuple[Any, ...], _Row] = {}
    cols: list[_Row] = []
    for leaf in leaves:
        g = group_of(leaf.path)
        if g not in group_at:
            group_at[g] = len(group_names)
            group_names.append(g)
        groups.append(group_at[g])
        cols.append(_row_of(leaf, mesh_ids, rows))
    held = [r.held for r in cols]
    ids_all, table = bytes_by_group(leaves, groups, len(group_names), devices, held)
    return {
        "key": key,
        "paths": [leaf.path for leaf in leaves],
        "groups": groups,
        "group_names": group_names,
        "shapes": [list(leaf.shape) for leaf in leaves],
        "dtypes": [r.dtype for r in cols],
        "specs": [r.spec for r in cols],
        "names": [", ".join(str(n) for n in leaf.names) if leaf.names else "" for leaf in leaves],
        "bytes": [r.bytes for r in cols],
        "logical_bytes": [leaf.logical_bytes for leaf in leaves],
        "replication": [r.replication for r in cols],
        "everywhere": [r.everywhere for r in cols],
        "sources": list(applied.sources),
        "notes": list(applied.notes),
        "abstract": [leaf.abstract for leaf in leaves],
        "static": [{"path": s.path, "kind": s.kind, "text": s.text} for s in static],
        "memory": {"ids": ids_all, "by_group": table.tolist()},
        "mesh": mesh_text,
        "code": code,
        "planned": planned,
    }


class LeafGrid(TypedDict):
    """A leaf's grid as the tree view's embedded array view reads it (a saved page's answer to a
    click on that leaf)."""

    _layout: LayoutWire
    _options: Options
    _stats: Stats


def leaf_grid(
    lay: Layout,
    *,
    key: int,
    source: str,
    n_devices: int,
    platform: str,
    local_process: int,
    why_no_stats: str,
) -> LeafGrid:
    """Leaf ``lay``'s ``_layout`` and ``_options`` as the tree view publishes them for its
    selected leaf, with ``_stats`` saying ``why_no_stats`` (no device work)."""
    return {
        "_layout": layout(lay, key=key, source=source, note="", local_process=local_process),
        "_options": options(
            n_devices=n_devices,
            platform=platform,
            shape=list(lay.shape),
            dtype=lay.dtype,
            memory_kinds=["device"],
            original=None,
            reshard_disabled="the tree view's rules set this layout",
        ),
        "_stats": stats(Summary.unavailable(len(lay.blocks), why_no_stats), key=key),
    }
