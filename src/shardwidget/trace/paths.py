"""The names a traced function's argument and output leaves go by ("params['w1']",
"batch['x']", "out[0]"): one rule for the views, the traces and the plans."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import jax


def param_names(f: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return [f"args[{i}]" for i in range(n)]
    names: list[str] = []
    for i in range(n):
        if i < len(params) and params[i].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            names.append(params[i].name)
        else:
            names.append(f"args[{i}]")
    return names


def path_text(path: tuple[Any, ...], arg_names: Sequence[str]) -> str:
    head, rest = path[0], path[1:]
    if getattr(head, "idx", None) == 0 and rest:  # positional args
        i = rest[0].idx
        return str(arg_names[i]) + jax.tree_util.keystr(rest[1:])
    if rest:  # keyword args
        return str(getattr(rest[0], "key", rest[0])) + jax.tree_util.keystr(rest[1:])
    return jax.tree_util.keystr(path)


def arg_paths(f: Callable[..., Any], args: Sequence[Any]) -> list[str]:
    """The path of every leaf of ``args`` (positional arguments of ``f``), in JAX's flatten
    order, named as the views name them."""
    names = param_names(getattr(f, "__wrapped__", f), len(args))
    flat = jax.tree_util.tree_flatten_with_path((tuple(args), {}))[0]
    return [path_text(p, names) for p, _ in flat]


def out_paths(out_tree: Any) -> list[str]:
    """The path of every output leaf of a program whose outputs have this PyTreeDef ("out",
    "out[0]", "out['loss']")."""
    slots = jax.tree_util.tree_unflatten(out_tree, range(out_tree.num_leaves))
    return [
        "out" + jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(slots)[0]
    ]
