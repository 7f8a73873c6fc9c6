"""A leaf's path in the two forms partition rules are written against: ``jax.tree_util.keystr``
(``['params']['h'][0]['attn']``, what the tree view shows) and the ``/``-joined keys of the
regex partition rules of large-model codebases (``params/h/0/attn``: EasyLM's
``match_partition_rules``, t5x, flax's ``traverse_util`` names). A rule matches a leaf when its
regex ``re.search``-matches either, so rules ported from those codebases lay out the same
leaves as there. Pure: no JAX.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Any

_KEY = re.compile(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\]]*)\]|\.([^.\[]+)")


@functools.lru_cache(maxsize=1 << 16)
def slash_path(path: str) -> str:
    """The keys of a keystr path joined by "/" as ``str(key)`` writes each: "['a'][0].b" ->
    "a/0/b"."""
    parts = []
    for m in _KEY.finditer(path):
        if m.group(2) is not None:
            parts.append(m.group(2))
            continue
        key = m.group(1)
        if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
            try:
                key = str(ast.literal_eval(key))
            except (ValueError, SyntaxError):
                key = key[1:-1]
        parts.append(key)
    return "/".join(parts)


def rule_matches(regex: Any, path: str) -> bool:
    """Whether a rule's compiled regex ``re.search``-matches the keystr path or its "/" form."""
    return bool(regex.search(path) or regex.search(slash_path(path)))
