"""The arguments' array leaves with their roles (:class:`.candidates.Leaf`), read from the
function's dataflow: parameters (an argument with a weight in it), optimizer states (an
argument whose arrays all mirror parameters' shapes), and the batch (the rest)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax

from . import dataflow
from .candidates import Leaf


def _flat(args: Sequence[Any]) -> list[tuple[int, str, tuple[int, ...]]]:
    """(argument, path, shape) of every leaf of the arguments, flattened as JAX flattens them."""
    out = []
    for i, a in enumerate(args):
        for path, x in jax.tree_util.tree_flatten_with_path(a)[0]:
            out.append((i, f"[{i}]{jax.tree_util.keystr(path)}", tuple(int(s) for s in x.shape)))
    return out


def _mirror(
    path: str, shape: tuple[int, ...], params: list[tuple[int, str, tuple[int, ...]]]
) -> int | None:
    """The parameter an optimizer state leaf mirrors: the same shape and the longest shared
    path ending ("['layers'][0]['qkv']"), else the first of that shape."""
    same = [(k, p) for k, p, s in params if s == shape]
    if not same:
        return None

    def tail(p: str) -> int:
        inner = p.split("]", 1)[1] if "]" in p else p
        return len(inner) if path.endswith(inner) else 0

    return max(same, key=lambda kp: tail(kp[1]))[0]


def leaves(f: Callable[..., Any], args: Sequence[Any]) -> list[Leaf]:
    """Every array leaf of ``args`` with its role, its Megatron split (weights) and the
    parameter it mirrors (optimizer states)."""
    flat = _flat(args)
    weights = dataflow.weights(f, args)
    param_args = {flat[k][0] for k in weights}
    params = [(k, p, s) for k, (i, p, s) in enumerate(flat) if i in param_args]
    shapes = {s for _, _, s in params}
    opt_args = set()
    for i in range(len(args)):
        mine = [s for j, _, s in flat if j == i and s]
        if i not in param_args and mine and all(s in shapes for s in mine):
            opt_args.add(i)
    out = []
    for k, (i, p, s) in enumerate(flat):
        w = weights.get(k)
        if i in param_args:
            out.append(Leaf(i, p, s, "param", (w.split, w.dim) if w else None))
        elif i in opt_args:
            out.append(Leaf(i, p, s, "opt", mirror=_mirror(p, s, params) if s else None))
        else:
            out.append(Leaf(i, p, s, "batch"))
    return out
