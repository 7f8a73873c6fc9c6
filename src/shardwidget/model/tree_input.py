"""What ``ShardView(tree)`` takes, decided before JAX flattens it. Imports JAX, never widget code.

JAX's own flatten fails on some trees in words that do not say what is wrong (a dict that holds
itself: "Comparator raised exception while sorting pytree dictionary keys"; a list that holds
itself, or 1,500 nested dicts: ``SystemError``), and a dict of numbers reached the array view
("unexpected keyword argument 'mesh'"). Here a tree is walked first, its containers only: a
cycle, nesting past :data:`MAX_DEPTH`, or dict keys JAX cannot sort are a ValueError naming the
path; any container (a dict, list, tuple or registered pytree node) is a tree, so that one with
no array leaf is refused as a tree, naming what its leaves are.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import jax
import numpy as np

MAX_DEPTH = 500
"""The deepest nesting a tree may have: JAX's flatten recurses in C++ and Python, and fails
near 1,000 levels; a model's tree is a few dozen deep."""


def is_array_leaf(x: object) -> bool:
    """What a tree view lays out: a jax.Array, a ShapeDtypeStruct, or a numpy array of numbers
    (laid out as ``jax.device_put`` would place it, as a function view lays numpy inputs out)."""
    if isinstance(x, jax.Array | jax.ShapeDtypeStruct):
        return True
    return isinstance(x, np.ndarray) and x.dtype != object


def is_container(obj: object) -> bool:
    """Whether obj is a pytree node (a dict, list, tuple, flax State, …), not a leaf: flattened
    one level only, so a cyclic or deep tree is still recognised as a tree."""
    if obj is None:
        return False
    asked: list[Any] = []

    def below_root(x: object) -> bool:  # the root is asked first; everything under it is a leaf
        asked.append(x)
        return len(asked) > 1

    try:
        leaves = jax.tree_util.tree_leaves(obj, is_leaf=below_root)
    except Exception:  # a node JAX cannot take apart at all: let the tree view say why
        return isinstance(obj, dict | list | tuple)
    return not (len(leaves) == 1 and leaves[0] is obj)


def _children(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield f"[{k!r}]", v
    else:
        for i, v in enumerate(node):
            yield f"[{i}]", v


def check(tree: object, what: str = "the tree") -> None:
    """ValueError naming the path when the tree's dicts, lists and tuples hold a cycle, nest
    deeper than MAX_DEPTH, or a dict's keys cannot be sorted (JAX sorts them); ``what``
    names the tree in messages ("argument 1" of a function view)."""
    stack: list[tuple[Any, str, int, bool]] = [(tree, "", 0, False)]
    on_path: dict[int, str] = {}
    while stack:
        node, path, depth, leaving = stack.pop()
        if leaving:
            on_path.pop(id(node), None)
            continue
        if not isinstance(node, dict | list | tuple):
            continue
        if id(node) in on_path:
            where = on_path[id(node)] or f"{what} itself"
            raise ValueError(
                f"{what} holds itself: {path or 'its root'} is {where} (a cycle); "
                "ShardView takes a tree without cycles"
            )
        if depth > MAX_DEPTH:
            raise ValueError(
                f"{what} nests more than {MAX_DEPTH} levels deep (at {path[:120]}…); "
                "JAX cannot flatten a tree that deep"
            )
        if isinstance(node, dict) and not isinstance(node, OrderedDict):  # (kept in order)
            _check_keys(node, f"{what}{path}" if path else what)
        on_path[id(node)] = path
        stack.append((node, path, depth, True))
        stack.extend((child, path + key, depth + 1, False) for key, child in _children(node))


def check_arguments(args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    """:func:`check` for a function view's arguments, each named ("argument 1", "keyword x")."""
    for i, a in enumerate(args):
        check(a, f"argument {i}")
    for k, v in kwargs.items():
        check(v, f"keyword {k}")


def _check_keys(d: dict[Any, Any], path: str) -> None:
    try:
        sorted(d)
    except TypeError:
        kinds = sorted({type(k).__name__ for k in d})
        raise ValueError(
            f"{path} is a dict whose keys JAX cannot sort ({', '.join(kinds)} mixed): a "
            "pytree dict needs keys of one comparable type"
        ) from None


def no_array_leaf(tree: object, static: Sequence[Any]) -> str:
    """Why ``ShardView(tree)`` has nothing to lay out, naming the tree's kind and its leaves
    (``static``: its StaticLeafs)."""
    kind = type(tree).__name__
    if not static:
        return (
            f"ShardView got an empty {kind}: a tree view lays out a tree's array leaves "
            "(jax.Array, ShapeDtypeStruct, numpy array), and this one has no leaves"
        )
    shown = ", ".join(f"{s.path} {s.kind} {s.text}" for s in static[:4])
    more = f" and {len(static) - 4} more" if len(static) > 4 else ""
    return (
        f"ShardView got a {kind} with no array leaf (jax.Array, ShapeDtypeStruct or numpy "
        f"array) to lay out: its leaves are {shown}{more}. ShardView shows a tree of arrays, "
        "one array or scalar (ShardView(x)), or a function (ShardView(f, *args))"
    )
