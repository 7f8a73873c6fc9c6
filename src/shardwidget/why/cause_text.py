"""A cause in one sentence: "all-gather of w at the matmul on line 11: x arrives split over x on
dim 0, w over x on dim 1, but the matmul's result was given y on dim 0 by the constraint on
line 12". Pure text over :mod:`.sdy`'s records; no JAX, no widget code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..hlo import collectives as hlo
from . import sdy

OP_WORDS = {
    "dot_general": "matmul",
    "sharding_constraint": "constraint",
    "reshard": "reshard",
    "reduce_sum": "sum",
    "reduce_max": "max",
    "reduce_min": "min",
    "reduce_prod": "product",
    "add": "addition",
    "sub": "subtraction",
    "mul": "multiplication",
    "div": "division",
    "transpose": "transpose",
    "reshape": "reshape",
    "concatenate": "concatenation",
    "dynamic_slice": "dynamic slice",
    "dynamic_update_slice": "dynamic update",
    "gather": "gather",
    "scatter": "scatter",
    "conv_general_dilated": "convolution",
}


def op_word(short: str) -> str:
    """The op in words ("matmul" for dot_general), else its JAX name."""
    return OP_WORDS.get(short, short)


def unknown_text(reason: str) -> str:
    """The sentence of a cause that is not known."""
    return f"cause unknown: {reason}"


def line_words(file: str, line: int) -> str:
    """ "line 12" (or "cell [3], line 12"; "a.py:12" when the file matters), "" unknown."""
    if not file:
        return ""
    w = hlo.where(file, line)
    return w if w.startswith("cell") else f"line {line}"


def describe(
    kind: str,
    short: str,
    at: Any,
    labels: Sequence[str],
    operands: Sequence[sdy.Value | None],
    results: Sequence[sdy.Value | None],
    op: sdy.Op,
    moved: int | None,
    ctx: Any,
    mod: sdy.Module,
) -> str:
    """The sentence: what moved, where, how the operands arrive and what the result was given."""
    word = op_word(short)
    what = f"{kind} of {ctx.in_paths[moved]}" if moved is not None else kind
    where = line_words(at.file, at.line)
    head = f"{what} at the {word}" + (f" on {where}" if where else "")
    parts: list[str] = []
    for label, v in zip(labels, operands, strict=True):
        if not label or v is None or not v.shape or v.sharding is None:
            continue
        words = v.sharding.words()
        words = words.removeprefix("split ") if parts else f"arrives {words}"
        src = "" if not label.startswith("operand") else _from(v, mod, ctx)
        parts.append(f"{label} {words}{src}")
    result = next((r for r in results if r is not None and r.sharding is not None), None)
    if result is None and results and all(r is not None and not r.shape for r in results):
        result = results[0]  # a scalar: whole on every device
        assert result is not None
        result = sdy.Value(result.name, (), result.dtype, sdy.Sharding(()), result.origins)
    tail = _result_words(labels, word, op, result, operands, mod, ctx)
    body = ", ".join(parts) if parts else "its operands carry no sharding"
    return f"{head}: {body}{tail}"


def _result_words(
    labels: Sequence[str],
    word: str,
    op: sdy.Op,
    result: sdy.Value | None,
    operands: Sequence[sdy.Value | None],
    mod: sdy.Module,
    ctx: Any,
) -> str:
    if result is None or result.sharding is None:
        return ""
    if op.op in ("sdy.reshard", "sdy.sharding_constraint"):
        asked = result.sharding.words().removeprefix("split over ")
        return f", but the {word} asks for {'it ' if result.sharding.replicated else ''}{asked}"
    extra = reduced_axes(op, operands, labels)
    if result.sharding.replicated:
        tail = f", but the {word}'s result is replicated"
    else:
        by = _by(result, mod, ctx)
        given = result.sharding.words().removeprefix("split over ")
        tail = f", but the {word}'s result was given {given}" + (f" {by}" if by else "")
    return tail + extra


def reduced_axes(op: sdy.Op, operands: Sequence[sdy.Value | None], labels: Sequence[str]) -> str:
    """ ", and the contracted dims are split over x on both sides (partial sums)" and the like."""
    if op.op in ("stablehlo.dot_general", "stablehlo.dot") and len(operands) == 2:
        dn = op.attrs.get("dot_dimension_numbers", "")
        lhs = _ints(re.search(r"lhs_contracting_dimensions = \[([\d, ]*)\]", dn))
        rhs = _ints(re.search(r"rhs_contracting_dimensions = \[([\d, ]*)\]", dn))
        a, b = operands
        if op.op == "stablehlo.dot" and a is not None:  # (the dump's form: the usual matmul)
            lhs, rhs = [len(a.shape) - 1], [0]
        if a is None or b is None or a.sharding is None or b.sharding is None:
            return ""
        la = {x for d in lhs if d < len(a.sharding.dims) for x in a.sharding.dims[d]}
        rb = {x for d in rhs if d < len(b.sharding.dims) for x in b.sharding.dims[d]}
        both = sorted(la & rb)
        if both and la == rb:
            return (
                f"; the contracted dim is split over {'+'.join(both)} on both sides, so each "
                "device holds a partial sum"
            )
        sides = [
            f"over {'+'.join(sorted(s))} in {n}" for s, n in ((la, labels[0]), (rb, labels[1])) if s
        ]
        if sides:
            return f"; the contracted dim is split {' and '.join(sides)}"
    if op.op == "stablehlo.reduce" and operands:
        dims = _ints(re.search(r"array<i64: ([\d, ]*)>", op.attrs.get("dimensions", "")))
        v = operands[0]
        if v is not None and v.sharding is not None:
            axes = sorted({x for d in dims if d < len(v.sharding.dims) for x in v.sharding.dims[d]})
            if axes:
                return f"; it reduces a dim split over {'+'.join(axes)} (partial results)"
    return ""


def _ints(m: Any) -> list[int]:
    return [int(v) for v in m.group(1).split(",") if v.strip()] if m else []


def _by(v: sdy.Value, mod: sdy.Module, ctx: Any) -> str:
    """ "by the constraint on line 12", "by the out_shardings of out[1]", "from x"."""
    words = []
    for origin in sorted(set(v.origins.values())):
        kind, n, origin = sdy.resolve(mod, v, origin)
        if kind == "constraint" and origin in mod.constraints:
            c = mod.constraints[origin]
            w = line_words(c.file, c.line)
            if not users_constraint(c):  # Explicit axes: JAX's own, for its result's type
                at = f" on {w}" if w else ""
                words.append(f"by JAX's type for the result of the {op_word(c.short)}{at}")
                continue
            words.append(f"by the constraint on {w}" if w else "by a constraint")
        elif kind == "output" and n is not None and n < len(ctx.out_paths):
            words.append(f"by the out_shardings of {ctx.out_paths[n]}")
        elif kind == "input" and n is not None and n < len(ctx.in_paths):
            words.append(f"from {ctx.in_paths[n]}")
        elif kind == "shard_map":
            words.append("by the shard_map's specs")
    return " and ".join(dict.fromkeys(words))


USER_CONSTRAINTS = ("sharding_constraint", "reshard", "mesh_cast", "with_sharding_constraint")
"""The primitives of the constraints a user writes; under Explicit axes JAX adds its own for
an op's result type, named after that op ("mul", "reduce_sum")."""


def users_constraint(op: sdy.Op) -> bool:
    """Whether a constraint op is one the user's code wrote (not JAX's for a result's type)."""
    return not op.name or op.short in USER_CONSTRAINTS


def _from(v: sdy.Value, mod: sdy.Module, ctx: Any) -> str:
    by = _by(v, mod, ctx)
    return f" ({by})" if by else ""


def nothing_met(
    op: sdy.Op, operands: Sequence[sdy.Value | None], results: Sequence[sdy.Value | None]
) -> str:
    """Why the shardings at op explain nothing ("" when they differ): every value replicated,
    or an elementwise op whose operands arrive as its result is laid out."""
    if not any(v is not None and v.shape for v in operands):
        return "the {} builds its result from scalars on every device"
    vals = [
        v for v in (*operands, *results) if v is not None and v.shape and v.sharding is not None
    ]
    if vals and all(v.sharding is not None and v.sharding.replicated for v in vals):
        return "every value at the {} is replicated in Shardy's propagation"
    shapes = {v.shape for v in vals}
    if len(shapes) == 1 and len({v.sharding for v in vals}) == 1 and len(vals) > 1:
        return "the operands of the {} arrive as its result is laid out"
    return ""
