"""The rules editor's text: regex rules and logical rules, one per line, as data and back.

    # a comment
    embed        P('model', None)      a regex rule: regex on the leaf's path, then its spec
    layers.*w  -> P(None, 'model')     (also "regex: P(...)" / "regex -> P(...)")
    vocab -> model                     a logical rule: logical axis name -> mesh axis
    batch -> data, model               ... -> several mesh axes (major to minor)
    heads -> None                      ... -> replicated

Regex rules keep their order (first match wins); logical rules keep theirs (precedence, as
flax reads them). A line is a logical rule when it has no ``P(...)`` and reads ``name -> axes``.
"""

from __future__ import annotations

import re

from . import rules as rules_mod

_LOGICAL = re.compile(r"^([A-Za-z_][\w.]*)\s*->\s*(.+)$")


def parse_logical(text: str, number: int) -> tuple[str, tuple[str, ...] | None] | None:
    """``name -> axes`` as a logical rule, or None when the line is not one."""
    m = _LOGICAL.match(text)
    if m is None or "P(" in text or "PartitionSpec(" in text:
        return None
    right = m.group(2).strip().strip("()[]")
    if right in ("None", ""):
        return (m.group(1), None)
    axes = tuple(a.strip().strip("'\"") for a in right.split(","))
    if not all(re.fullmatch(r"[A-Za-z_]\w*", a) for a in axes):
        raise ValueError(
            f"line {number}: logical rule {m.group(1)!r}: mesh axes must be names "
            f"(write 'name -> axis', 'name -> axis1, axis2' or 'name -> None'), got {right!r}"
        )
    return (m.group(1), axes)


def parse(text: str) -> tuple[tuple[rules_mod.Rule, ...], rules_mod.LogicalRules]:
    """(regex rules, logical rules) of the editor's text; ValueError naming the first bad
    line."""
    rules: list[rules_mod.Rule] = []
    logical: list[tuple[str, tuple[str, ...] | None]] = []
    for i, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        lr = parse_logical(stripped, i)
        if lr is not None:
            logical.append(lr)
            continue
        rule = rules_mod.parse_line(line, i, len(rules) + 1)
        if rule is not None:
            rules.append(rule)
    return tuple(rules), tuple(logical)


def line_errors(text: str) -> list[tuple[int, str]]:
    """(line number, message) for every line the editor should mark."""
    errors = []
    n = 0
    for i, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            if parse_logical(stripped, i) is None:
                rules_mod.parse_line(line, i, n + 1)
                n += 1
        except ValueError as e:
            errors.append((i, str(e)))
    return errors


def logical_line(name: str, axes: tuple[str, ...] | None) -> str:
    """One logical rule as the editor writes it: ``vocab -> model``."""
    return f"{name} -> {'None' if axes is None else ', '.join(axes)}"


def to_text(rules: tuple[rules_mod.Rule, ...], logical: rules_mod.LogicalRules) -> str:
    """The editor's text of these rules: the regex rules, then the logical rules."""
    lines = [r.text for r in rules] + [logical_line(n, a) for n, a in logical]
    return "\n".join(lines)
