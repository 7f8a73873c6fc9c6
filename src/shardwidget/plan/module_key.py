"""A lowered module's text as a compile cache key: without its source locations (the TPU and
GPU helpers' results are cached by it)."""

from __future__ import annotations

import re


def without_locations(text: str) -> str:
    """The module text without its source locations (``loc(...)`` after an op or an argument,
    ``#locN = loc(...)`` lines): the same program traced from another call stack (a background
    thread, a re-run cell) is the same compile. Every other character stays: a signature line
    holds each argument's sharding between the arguments' locations, and cutting the line at
    its first ``loc(`` once made two layouts one key (issue 35)."""
    lines = (strip_locs(ln) for ln in text.splitlines() if not ln.startswith("#loc"))
    return "\n".join(lines)


_LOC_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\sloc\(|[()]')
"""A quoted string (its parentheses are text), a location's start, or a parenthesis."""


def strip_locs(line: str) -> str:
    """``line`` without its `` loc(...)`` parts (nested parentheses and quoted strings read
    whole); the line unchanged where a location does not close on it (more key, never less)."""
    if "loc(" not in line:
        return line
    out, pos, depth = [], 0, 0
    for m in _LOC_TOKENS.finditer(line):
        tok = m.group()
        if tok[0] == '"':
            continue
        if depth == 0:
            if tok.endswith("loc("):
                out.append(line[pos : m.start()])
                depth = 1
            continue
        depth += 1 if tok.endswith("(") else -1
        if depth == 0:
            pos = m.end()
    if depth:
        return line
    out.append(line[pos:])
    return "".join(out)
