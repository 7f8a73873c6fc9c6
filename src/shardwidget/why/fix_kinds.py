"""Two more layouts the fix search tries for each input that is an operand of the op where
shardings met (:mod:`.fixes`): split as the op's other operand is (a contraction's paired dims,
an elementwise op's every dim), and split over the axes the op's result is, dim by dim (a
contracted dim whole). Read from Shardy's module at that op; each is only a candidate: the fix
search compiles it and says whether the collective is gone. Pure; no JAX import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model import spec as spec_mod
from . import sdy
from .cause_text import op_word

Spec = spec_mod.NormSpec
ELEMENTWISE = frozenset(
    "stablehlo." + k
    for k in (  # noqa: SIM905 (33 names read better as words)
        "add subtract multiply divide maximum minimum power remainder atan2 and or xor select "
        "compare clamp negate abs exponential log tanh logistic sqrt rsqrt convert sine cosine "
        "floor ceil sign exponential_minus_one log_plus_one round_nearest_even not"
    ).split()
)
"""Ops whose result's every element is made from the same place of each operand."""


def candidates(
    mod: sdy.Module, op_index: int, in_paths: Sequence[str], in_specs: Sequence[Spec]
) -> list[tuple[int, str, Spec]]:
    """(input index, words, spec) of each layout of this kind for the op ``op_index`` of mod:
    for each operand that is an input leaf, laid out as another operand is, and as the result
    is; none where a sharding is not known or uses a sub-axis."""
    if not 0 <= op_index < len(mod.ops):
        return []
    op = mod.ops[op_index]
    vals = [mod.value(op, n) for n in op.operands]
    res = mod.value(op, op.results[0]) if op.results else None
    out: list[tuple[int, str, Spec]] = []
    word = op_word(op.short)
    for i, v in enumerate(vals):
        idx = _input(mod, _through(mod, op, op.operands[i]), in_paths)
        if idx is None or v is None:
            continue
        for j, w in enumerate(vals):
            pairs = _paired(op, i, j, vals)
            other = _spec(w)
            if j == i or not pairs or other is None:
                continue
            new = _laid(in_specs[idx], {d: other[e] for d, e in pairs})
            label = _label(mod, w, in_paths, j)
            out.append((idx, f"split as the {word}'s other operand ({label}) is", new))
        dims = _to_result(op, i, vals) or {}
        for want, whose in _wanted(mod, op, res) if dims else []:
            new = _laid(in_specs[idx], {d: want[r] if r >= 0 else () for d, r in dims.items()})
            out.append((idx, f"over the axes {whose} {word}'s result", new))
    return [(k, w, s) for k, w, s in out if s != tuple(in_specs[k])]


_ASKS = ("sdy.sharding_constraint", "sdy.reshard")


def _wanted(mod: sdy.Module, op: sdy.Op, res: sdy.Value | None) -> list[tuple[Spec, str]]:
    """The layouts op's result is given: its own, and a constraint's its use asks for."""
    out = []
    own = _spec(res)
    if own is not None:
        out.append((own, "that split the"))
    name = op.results[0] if op.results else ""
    for o in mod.ops:
        if o.scope == op.scope and o.op in _ASKS and name in o.operands and o.results:
            asked = _spec(mod.value(o, o.results[0]))
            if asked is not None and asked != own:
                out.append((asked, "a constraint asks of the"))
    return out


def _input(mod: sdy.Module, v: sdy.Value | None, in_paths: Sequence[str]) -> int | None:
    """The input leaf an operand is (a main argument), else None."""
    if v is None or v not in mod.args:
        return None
    if v.loc_name in in_paths:
        return list(in_paths).index(v.loc_name)
    i = mod.args.index(v)
    return i if len(mod.args) == len(in_paths) else None


def _through(mod: sdy.Module, op: sdy.Op, name: str) -> sdy.Value | None:
    """The value op's operand ``name`` is laid out as: back through elementwise ops of one
    operand of its shape (``tanh(a)`` is laid out as ``a``), to an argument where it comes
    from one."""
    v = mod.value(op, name)
    for _ in range(8):
        made = mod.made_by(op, name)
        if v is None or made is None or made.op not in ELEMENTWISE:
            return v
        arrays = [n for n in made.operands if (w := mod.value(made, n)) is not None and w.shape]
        if len(arrays) != 1 or (w := mod.value(made, arrays[0])) is None or w.shape != v.shape:
            return v
        op, name, v = made, arrays[0], w
    return v


def _label(mod: sdy.Module, v: sdy.Value | None, in_paths: Sequence[str], j: int) -> str:
    k = _input(mod, v, in_paths)
    return in_paths[k] if k is not None else f"operand {j}"


def _spec(v: sdy.Value | None) -> Spec | None:
    """A value's sharding as a spec; None where not known or it uses a sub-axis."""
    if v is None or v.sharding is None or any(":" in a for d in v.sharding.dims for a in d):
        return None
    return v.sharding.spec()


def _numbers(op: sdy.Op) -> dict[str, list[int]]:
    """A dot_general's dimension numbers (lhs/rhs contracting and batching)."""
    dn = op.attrs.get("dot_dimension_numbers", "")
    out = {}
    for k in ("lhs_contracting", "rhs_contracting", "lhs_batching", "rhs_batching"):
        m = re.search(k + r"_dimensions = \[([\d, ]*)\]", dn)
        out[k] = [int(x) for x in m.group(1).split(",") if x.strip()] if m else []
    return out


def _paired(op: sdy.Op, i: int, j: int, vals: Sequence[sdy.Value | None]) -> list[tuple[int, int]]:
    """(dim of operand i, dim of operand j) that must be split alike for the op to be local:
    a contraction's contracted and batch dims; every dim of an elementwise op's operands."""
    a, b = vals[i], vals[j]
    if a is None or b is None or not a.shape or not b.shape:
        return []
    if op.op == "stablehlo.dot_general" and {i, j} == {0, 1}:
        n = _numbers(op)
        mine, theirs = ("lhs", "rhs") if i == 0 else ("rhs", "lhs")
        return [
            (d, e)
            for kind in ("contracting", "batching")
            for d, e in zip(n[f"{mine}_{kind}"], n[f"{theirs}_{kind}"], strict=False)
        ]
    if op.op in ELEMENTWISE and a.shape == b.shape:
        return [(d, d) for d in range(len(a.shape))]
    return []


def _to_result(op: sdy.Op, i: int, vals: Sequence[sdy.Value | None]) -> dict[int, int] | None:
    """Operand i's dims → the result dim each becomes (-1: contracted away); None where the
    op is not a contraction of two operands nor elementwise."""
    v = vals[i] if i < len(vals) else None
    if v is None or not v.shape:
        return None
    if op.op == "stablehlo.dot_general" and len(vals) == 2 and i in (0, 1):
        n = _numbers(op)
        side = "lhs" if i == 0 else "rhs"
        batch, con = n[f"{side}_batching"], n[f"{side}_contracting"]
        free = [d for d in range(len(v.shape)) if d not in batch and d not in con]
        lhs = vals[0]
        assert lhs is not None
        n_lhs_free = len(lhs.shape) - len(n["lhs_batching"]) - len(n["lhs_contracting"])
        start = len(batch) + (0 if i == 0 else n_lhs_free)
        out = {d: k for k, d in enumerate(batch)}
        out.update({d: start + k for k, d in enumerate(free)})
        out.update({d: -1 for d in con})
        return out
    elementwise = op.op in ELEMENTWISE and all(w is None or w.shape == v.shape for w in vals)
    return {d: d for d in range(len(v.shape))} if elementwise else None


def _laid(spec: Spec, dims: dict[int, tuple[str, ...]]) -> Spec:
    """spec with dims set as given; the axes they use taken off its other dims (an axis splits
    one dim only)."""
    used = {a for axes in dims.values() for a in axes}
    return tuple(
        tuple(dims[d]) if d in dims else tuple(a for a in spec[d] if a not in used)
        for d in range(len(spec))
    )
