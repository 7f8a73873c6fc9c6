"""The places a cause involves (:class:`Place`): the input and output leaves, the constraints
and the op where shardings met, read from Shardy's module and the function's leaves
(:class:`Context`); split from :mod:`.cause`, which says why each collective is there.

Pure: no JAX import, no widget code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..hlo import collectives as hlo
from . import sdy
from .cause_text import users_constraint

UNCHECKED = "not checked: no dump of XLA's own propagation for this compile"


@dataclass(frozen=True)
class Place:
    """An input, output, constraint or op a cause involves, with where it is."""

    what: str
    """"input", "output", "constraint", "shard_map" or "op"."""
    index: int
    """Its position: input / output leaf index, constraint N, or the op's index in the module."""
    label: str
    """The input or output leaf's path ("params['w']"), the op's JAX name ("dot_general")."""
    spec: str = ""
    """The sharding it carries, in words ("split over x on dim 0")."""
    file: str = ""
    """The source file of the user's code where it is ("" for an input or output leaf)."""
    line: int = 0
    """Its line in that file (0 when unknown)."""

    @property
    def where(self) -> str:
        """ "file.py:12" (or "cell [3], line 12"), "" when unknown."""
        return hlo.where(self.file, self.line) if self.file else ""


@dataclass
class Context:
    """What the explanations read: Shardy's module (in-process and, when there is one, XLA's
    dump), the compiled HLO, and the function's leaves and constraints."""

    module: sdy.Module | None
    dump: sdy.Module | None
    hlo_text: str
    in_paths: Sequence[str]
    out_paths: Sequence[str]
    constraints: Sequence[Any] = ()
    """The trace's Constraint records (their spec text and source)."""
    missing: str = ""
    """Why there is no module ("" when there is one)."""
    checked: str = UNCHECKED
    out_given: Sequence[bool] = ()
    """Per output: whether its layout was given (out_shardings / out_specs), not XLA's."""


def constraint_ops(constraints: dict[int, Place], mod: sdy.Module) -> list[sdy.Op]:
    """The constraint ops of these places."""
    return [o for n in constraints if (o := mod.constraints.get(f"constraint_{n}")) is not None]


def given_output(
    op: sdy.Op, results: Sequence[sdy.Value | None], mod: sdy.Module, ctx: Context
) -> Place | None:
    """The output whose given layout (out_shardings, out_specs) op's replicated result is:
    op makes that output of the main function itself; None otherwise."""
    if not all(v is not None and (v.sharding is None or v.sharding.replicated) for v in results):
        return None
    for k, ret in enumerate(mod.returns):
        given = k < len(ctx.out_given) and ctx.out_given[k] and k < len(ctx.out_paths)
        made: sdy.Op | None = ret
        for _ in range(4):  # through the reshard to the given layout, copies
            if made is None or made.index == op.index or made.op not in PASSES:
                break
            made = mod.made_by(made, made.operands[0]) if made.operands else None
        if made is not None and made.index == op.index and given:
            return Place("output", k, ctx.out_paths[k], "replicated")
    return None


PASSES = ("sdy.reshard", "stablehlo.copy", "stablehlo.reshape", "stablehlo.convert")


def op_place(op: sdy.Op) -> Place:
    return Place("op", op.index, op.short, "", op.file, op.line)


def arg_index(mod: sdy.Module, v: sdy.Value, ctx: Context) -> int | None:
    """The input leaf an operand is, when it is an argument of the main function."""
    if v not in mod.args:
        return None
    if v.loc_name in ctx.in_paths:
        return list(ctx.in_paths).index(v.loc_name)
    i = mod.args.index(v)
    return i if len(mod.args) == len(ctx.in_paths) else None


def arg_positions(
    mod: sdy.Module, ctx: Context, paths: Sequence[str] | None
) -> frozenset[int] | None:
    """The main function's arguments (positions) that are these input leaves; None where they
    do not line up (an input XLA dropped, leaves not told)."""
    if paths is None:
        return None
    names = [a.loc_name for a in mod.args]
    out = set()
    for p in paths:
        if p in names:
            out.add(names.index(p))
        elif p in ctx.in_paths and len(mod.args) == len(ctx.in_paths):
            out.add(list(ctx.in_paths).index(p))
        else:
            return None
    return frozenset(out)


def out_positions(ctx: Context, paths: Sequence[str] | None) -> frozenset[int] | None:
    """The main function's results (positions) that are these output leaves; None where not
    told or not all found."""
    if paths is None or not paths:
        return None
    where = {p: k for k, p in enumerate(ctx.out_paths)}
    found = frozenset(where[p] for p in paths if p in where)
    return found if len(found) == len(paths) else None


def input_place(idx: int, v: sdy.Value | None, ctx: Context) -> Place:
    words = v.sharding.words() if v is not None and v.sharding is not None else ""
    return Place("input", idx, ctx.in_paths[idx], words)


def constraint_place(n: int, op: sdy.Op, mod: sdy.Module, ctx: Context) -> Place:
    """Constraint N: where the user's code asked for it, and the spec asked (under Explicit
    axes, one JAX adds for an op's result type is named as JAX's)."""
    v = mod.value(op, op.results[0]) if op.results else None
    spec = v.sharding.words() if v is not None and v.sharding is not None else ""
    if not users_constraint(op):
        label = f"JAX's type for the result of {op.short}"
        return Place("constraint", n, label, spec, op.file, op.line)
    for con in ctx.constraints:
        m = re.match(r"(.*?):(\d+)(?::\d+)?$", str(getattr(con, "source", "")).split(" ")[0])
        if m and m.group(1) == op.file and int(m.group(2)) == op.line:
            spec = f"{spec} ({con.spec_text})" if spec else con.spec_text
            break
    return Place("constraint", n, f"constraint {n}", spec, op.file, op.line)


def origins(
    v: sdy.Value,
    mod: sdy.Module,
    ctx: Context,
    inputs: dict[int, Place],
    constraints: dict[int, Place],
    outputs: dict[int, Place],
) -> None:
    """Add the places v's sharding came from."""
    for origin in set(v.origins.values()):
        kind, n, origin = sdy.resolve(mod, v, origin)
        if kind == "input" and n is not None and n < len(ctx.in_paths):
            arg = mod.args[n] if n < len(mod.args) else None
            inputs.setdefault(n, input_place(n, arg, ctx))
        elif kind == "output" and n is not None and n < len(ctx.out_paths):
            res = mod.results[n] if n < len(mod.results) else None
            words = res.sharding.words() if res is not None and res.sharding is not None else ""
            made = mod.returns[n] if n < len(mod.returns) else None  # where the output is made
            file, line = (made.file, made.line) if made is not None else ("", 0)
            outputs.setdefault(n, Place("output", n, ctx.out_paths[n], words, file, line))
        elif kind == "constraint" and n is not None and origin in mod.constraints:
            constraints.setdefault(n, constraint_place(n, mod.constraints[origin], mod, ctx))
