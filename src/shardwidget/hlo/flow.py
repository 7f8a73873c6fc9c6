"""Which input and output leaves each collective touches, by dataflow through compiled HLO.

An input leaf touches a collective when the entry computation's parameter that holds it reaches
one of the collective's operands through the ops between them; an output leaf, when the
collective's result reaches the entry's root element that is that output. Never by shape.

Values are followed element by element through tuples (``tuple``, ``get-tuple-element``), into
called computations (fusions, calls, async wrappers, conditionals) and around loops (a while
body is run to a fixed point: what a loop carries mixes only as its body says). Every other op
mixes all its operands into its result. A flat all-reduce of a concatenate (XLA's GPU compiler
combines gradients so, :mod:`.concat`) carries each part as an element; a 1-d slice of its
result takes only the parts it covers. Pure text; imports no JAX and no widget code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Union

from . import collectives as hlo
from . import concat, gradients
from .program import Computation, Instr, parse

Flow = Union[frozenset[object], tuple["Flow", ...]]  # noqa: UP007 (a recursive alias)
"""What reaches a value: parameter numbers (int) and collective elements ((name, k)); a tuple
value has one Flow per element."""

EMPTY: frozenset[object] = frozenset()
MAX_LOOP_ROUNDS = 64
"""Rounds of a while body before its carried values are read as all mixed (an upper bound)."""

MEGASCALE = "_xla_megascale_transfer_type"
"""In a send's or recv's attributes: one half of libtpu's collective across TPU slices."""
_RENDEZVOUS = r'_xla_host_transfer_rendezvous="([^"]*)"'
_CALLED = {
    "fusion": ("calls",),
    "async-start": ("calls",),
    "call": ("to_apply",),
    "while": ("body",),
}


@dataclass(frozen=True)
class Touches:
    """What one collective touches, per element it carries: the input leaves (indices) that
    reach it and the output leaves it reaches (None where the program's outputs could not be
    lined up with the leaves)."""

    inputs: tuple[tuple[int, ...], ...]
    outputs: tuple[tuple[int, ...], ...] | None
    makers: tuple[str, ...] = ()
    """Per operand, the op name of the instruction that makes it ("" where none)."""

    @property
    def all_inputs(self) -> tuple[int, ...]:
        """Every input leaf index, over all elements."""
        return tuple(sorted({i for e in self.inputs for i in e}))

    @property
    def all_outputs(self) -> tuple[int, ...] | None:
        """Every output leaf index, over all elements (None: not lined up)."""
        if self.outputs is None:
            return None
        return tuple(sorted({i for e in self.outputs for i in e}))


def flat(f: Flow) -> frozenset[object]:
    """Everything that reaches a value, its elements together."""
    if isinstance(f, frozenset):
        return f
    out: frozenset[object] = EMPTY
    for e in f:
        out = out | flat(e)
    return out


def _join(a: Flow, b: Flow) -> Flow:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_join(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        return a | b
    return _shaped(flat(a) | flat(b), a)


def _shaped(s: frozenset[object], like: Flow | int) -> Flow:
    """s as a value of like's structure (an int: that many tuple elements; 0: an array)."""
    if isinstance(like, int):
        return tuple(s for _ in range(like)) if like else s
    if isinstance(like, tuple):
        return tuple(_shaped(s, e) for e in like)
    return s


class _Walker:
    """Runs the flow of every computation the entry reaches, recording each collective's
    operands."""

    def __init__(
        self, comps: dict[str, Computation], splits: dict[str, list[concat.Part]] | None = None
    ) -> None:
        self.comps = comps
        self.operands: dict[str, list[frozenset[object]]] = {}
        self.splits = splits or {}  # a flat all-reduce's parts (:mod:`.concat`), by its name
        self.pieces: dict[str, tuple[frozenset[object], list[frozenset[object]]]] = {}
        """A flat all-reduce's result: (its whole Flow, each part's), for slices of it."""
        self.recvs = {  # a Megascale rendezvous -> its recv (the collective across slices)
            m.group(1): i.name
            for c in comps.values()
            for i in c.instrs
            if i.op == "recv" and (m := re.search(_RENDEZVOUS, i.attrs))
        }

    def run(self, name: str, args: Sequence[Flow]) -> Flow:
        comp = self.comps.get(name)
        if comp is None:
            return _shaped(frozenset().union(*(flat(a) for a in args)), 0)
        vals: dict[str, Flow] = {}
        root: Flow = EMPTY
        for ins in comp.instrs:
            vals[ins.name] = self._one(ins, vals, args)
            if ins.root:
                root = vals[ins.name]
        return root

    def _one(self, ins: Instr, vals: dict[str, Flow], args: Sequence[Flow]) -> Flow:
        ops = [vals.get(o, EMPTY) for o in ins.operands]
        mixed = frozenset().union(*(flat(o) for o in ops)) if ops else EMPTY
        op = ins.op
        if op == "parameter":
            k = int(ins.operands[0]) if ins.operands and ins.operands[0].isdigit() else -1
            return args[k] if 0 <= k < len(args) else _shaped(EMPTY, ins.tuple_size)
        if op == "tuple":
            return tuple(ops)
        if op == "get-tuple-element":
            idx = re.search(r"\bindex=(\d+)", ins.attrs)
            src = ops[0] if ops else EMPTY
            if isinstance(src, tuple) and idx and int(idx.group(1)) < len(src):
                return src[int(idx.group(1))]
            return flat(src)
        kind = op[: -len("-start")] if op.endswith("-start") else op
        if op.endswith("-done") and ops and isinstance(ops[0], tuple) and len(ops[0]) == 2:
            done = ops[0][1]  # an async collective's results, element by element
            if isinstance(done, tuple) and len(done) == ins.tuple_size:
                return done
        if kind in hlo.KINDS:
            return self._collective(ins, ops, vals)
        if op == "slice" and ops and isinstance(ops[0], frozenset):
            return self._slice(ins, ops[0])
        if op in ("send", "recv") and MEGASCALE in ins.attrs:
            return self._across_slices(ins, ops)
        if op == "while":
            return self._loop(ins, ops[0] if ops else EMPTY)
        if op == "conditional":
            return self._branches(ins, ops, mixed)
        called = self._called(ins)
        if called:
            inner = self.run(called, ops)
            return _shaped(flat(inner) | (mixed if op == "async-start" else EMPTY), ins.tuple_size)
        return _shaped(mixed, ins.tuple_size)

    def _called(self, ins: Instr) -> str:
        for key in _CALLED.get(ins.op, ()):
            m = re.search(rf"\b{key}=%?([\w.\-]+)", ins.attrs)
            if m:
                return m.group(1)
        return ""

    def _collective(self, ins: Instr, ops: list[Flow], vals: dict[str, Flow]) -> Flow:
        parts = self.splits.get(ins.name)
        if parts:  # a flat all-reduce: each part of its concatenate is an element
            per = [flat(vals.get(p.value, EMPTY)) for p in parts]
            elems = [p | {(ins.name, k)} for k, p in enumerate(per)]
            seen = self.operands.setdefault(ins.name, [EMPTY] * len(per))
            self.operands[ins.name] = [a | b for a, b in zip(seen, per, strict=True)]
            whole = frozenset().union(*elems)
            self.pieces[ins.name] = (whole, elems)
            return whole
        per = [flat(o) for o in ops] or [EMPTY]
        seen = self.operands.setdefault(ins.name, [EMPTY] * len(per))
        self.operands[ins.name] = [a | b for a, b in zip(seen, per, strict=False)]
        elems = [p | {(ins.name, k)} for k, p in enumerate(per)]
        if ins.tuple_size == len(elems) > 1 and not ins.op.endswith("-start"):
            return tuple(elems)
        if ins.shape.startswith("((") and ins.tuple_size == 2 and len(elems) > 1:
            return (tuple(per), tuple(elems))  # an async start: ((operands), (results))
        return _shaped(frozenset().union(*elems), ins.tuple_size)

    def _slice(self, ins: Instr, src: frozenset[object]) -> Flow:
        """A 1-d slice of a flat all-reduce's result (as it comes, through bitcasts): only the
        parts whose elements it takes; any other slice mixes its operand."""
        bounds = re.search(r"slice=\{\[(\d+):(\d+)(?::1)?\]\}", ins.attrs)
        for name, (whole, elems) in self.pieces.items():
            if src == whole and bounds:
                lo, hi = int(bounds.group(1)), int(bounds.group(2))
                parts = zip(self.splits[name], elems, strict=True)
                return frozenset().union(*(e for p, e in parts if p.start < hi and lo < p.stop))
        return src

    def _across_slices(self, ins: Instr, ops: list[Flow]) -> Flow:
        """libtpu's collective across slices is a Megascale ``send`` of the value and a
        ``recv`` of the result, paired by their rendezvous: what is sent is the collective's
        operand (recorded under the recv's name, the collective's), the recv's value is what
        reaches it and the collective itself."""
        key = re.search(_RENDEZVOUS, ins.attrs)
        recv = self.recvs.get(key.group(1), "") if key else ""
        if ins.op == "send":
            sent = flat(ops[0]) if ops else EMPTY
            if recv:
                seen = self.operands.get(recv, [EMPTY])
                self.operands[recv] = [seen[0] | sent]
            return _shaped(sent, ins.tuple_size)
        got = self.operands.setdefault(ins.name, [EMPTY])[0] | {(ins.name, 0)}
        return _shaped(got, ins.tuple_size)

    def _loop(self, ins: Instr, init: Flow) -> Flow:
        body = self._called(ins)
        state = init
        for _ in range(MAX_LOOP_ROUNDS):
            new = _join(state, self.run(body, [state]))
            if new == state:
                return state
            state = new
        return _shaped(flat(state), state)

    def _branches(self, ins: Instr, ops: list[Flow], mixed: frozenset[object]) -> Flow:
        names = re.search(r"branch_computations=\{([^}]*)\}", ins.attrs)
        found = [n.strip().lstrip("%") for n in names.group(1).split(",")] if names else []
        for key in ("true_computation", "false_computation"):
            m = re.search(rf"\b{key}=%?([\w.\-]+)", ins.attrs)
            if m:
                found.append(m.group(1))
        out: frozenset[object] = flat(ops[0]) if ops else EMPTY
        for k, name in enumerate(found):
            arg = ops[k + 1] if k + 1 < len(ops) else EMPTY
            out = out | flat(self.run(name, [arg]))
        return _shaped(out if found else mixed, ins.tuple_size)


def touches(
    hlo_text: str, names: Sequence[str], kept: Sequence[bool] | None, n_outputs: int
) -> dict[str, Touches]:
    """For each collective named in ``names``: the input leaves (indices) whose parameter
    reaches each element it carries, and the output leaves its result reaches. ``kept``: per
    input leaf, whether the compiled program has a parameter for it (XLA drops unused ones;
    None: every leaf has one, in order); ``n_outputs``: the output leaves."""
    comps, entry = parse(hlo_text)
    if entry not in comps:
        return {}
    params = sorted(comps[entry].params)
    leaf_of = [i for i, k in enumerate(kept) if k] if kept is not None else list(params)
    if len(leaf_of) != len(params):
        return {}  # the parameters do not line up with the leaves: unknown, not guessed
    splits = {n: p for n in names if (p := concat.concatenated(hlo_text, n))}
    walker = _Walker(comps, splits)
    root = walker.run(entry, [frozenset({p}) for p in params])
    if isinstance(root, tuple) and len(root) == n_outputs:
        outs: list[frozenset[object]] | None = [flat(e) for e in root]
    elif n_outputs == 1:
        outs = [flat(root)]
    else:
        outs = None
    out: dict[str, Touches] = {}
    instrs = {i.name: i for comp in comps.values() for i in comp.instrs}
    for name in names:
        per = walker.operands.get(name)
        if per is None:
            continue
        made = [instrs.get(o) for o in instrs[name].operands] if name in instrs else []
        ins = tuple(
            tuple(leaf_of[p] for p in sorted(x for x in e if isinstance(x, int))) for e in per
        )
        reached = None
        if outs is not None:
            reached = tuple(
                tuple(k for k, o in enumerate(outs) if (name, e) in o) for e in range(len(per))
            )
        makers = [m.op_name if m else "" for m in made]
        if name in splits:  # a flat all-reduce: each part's maker
            makers = [p.op_name for p in splits[name]]
        out[name] = Touches(ins, reached, tuple(makers))
    return out


def attribute(
    colls: Sequence[hlo.Collective],
    hlo_text: str,
    kept: Sequence[bool] | None,
    in_paths: Sequence[str],
    out_paths: Sequence[str],
) -> list[hlo.Collective]:
    """colls with their :attr:`~.hlo.Collective.leaves` (input paths, then output paths) and
    each element's, read by :func:`touches` from the same compiled text."""
    if not colls:
        return list(colls)
    colls = [split(c, hlo_text) for c in colls]
    found = touches(hlo_text, [c.name for c in colls], kept, len(out_paths))
    out = []
    for c in colls:
        t = found.get(c.name)
        out.append(
            replace(c, leaves_note=UNFOLLOWED) if t is None else _named(c, t, in_paths, out_paths)
        )
    return out


def split(c: hlo.Collective, hlo_text: str) -> hlo.Collective:
    """c with the arrays it carries as its elements, where it is a flat all-reduce of a
    concatenate (:mod:`.concat`): each part's shape, their bytes summing to its result's."""
    parts = concat.concatenated(hlo_text, c.name) if c.kind == "all-reduce" else []
    shapes = tuple(p.shape for p in parts)
    if not parts or sum(s.nbytes for s in shapes) != sum(e.nbytes for e in c.elements):
        return c
    return replace(c, elements=shapes)


UNFOLLOWED = (
    "unknown: the compiled program's parameters do not line up with the input leaves, or this "
    "collective's operands could not be followed"
)
OUTPUTS_UNTOLD = (
    "the outputs it reaches are not told: the program's results do not line up with the "
    "output leaves"
)


def _named(
    c: hlo.Collective, t: Touches, in_paths: Sequence[str], out_paths: Sequence[str]
) -> hlo.Collective:
    """c with the leaves it touches, as paths (per element too)."""
    n = max(len(c.elements), 1)
    per_in = list(t.inputs) if len(t.inputs) == n else [t.all_inputs] * n
    if t.outputs is None:
        per_out: list[tuple[int, ...]] = [()] * n
    else:
        per_out = list(t.outputs) if len(t.outputs) == n else [t.all_outputs or ()] * n
    el_in = tuple(tuple(in_paths[i] for i in ins) for ins in per_in)
    el_out = tuple(tuple(out_paths[k] for k in outs) for outs in per_out)
    ins = tuple(in_paths[i] for i in t.all_inputs)
    outs = None if t.outputs is None else tuple(out_paths[k] for k in t.all_outputs or ())
    note = OUTPUTS_UNTOLD if t.outputs is None else ""
    ops = element_op_names(c, t.makers)
    grads = tuple(gradients.gradient_of(n, o, in_paths) for n, o in zip(ops, el_out, strict=True))
    return replace(
        c,
        in_leaves=ins,
        out_leaves=outs,
        element_in_leaves=el_in,
        element_out_leaves=el_out if t.outputs is not None else (),
        element_gradients=grads if t.outputs is not None else (),
        leaves_note=note,
    )


def element_op_names(c: hlo.Collective, makers: Sequence[str] = ()) -> list[str]:
    """Per element, the op it is for: the names XLA lists in a combined collective's op name;
    older XLA names one op for the whole: each operand's maker's (``makers``), where every one
    has a name; else the collective's own for each."""
    names = _combined_names(c)
    if names:
        prefix = c.op_name[: c.op_name.find("/(") + 1]
        return [prefix + n for n in names]
    n = max(len(c.elements), 1)
    if n > 1 and len(makers) == n and (all(makers) or (not c.op_name and any(makers))):
        return list(makers)  # (a part whose maker has no name is "": said unknown)
    return [c.op_name] * n


def combined_parts(
    c: hlo.Collective, origins: Sequence[tuple[str, str]] = ()
) -> list[hlo.Collective]:
    """The elements of a collective XLA combined from several (a data-parallel step's
    gradients in one tuple all-reduce, op_name "jit(f)/(a:b:c)"), each as a collective of its
    own (its op name, source line, shape and leaves); [] for one that is not combined, or whose
    op names do not line up with its elements.

    ``origins``: per element, the op name and source of the instruction that makes its operand
    (:func:`shardwidget.why.cause_match.element_origins`). An element takes its maker's line
    where the maker is the op the combined name lists for it (the backward matmuls of two lines
    share one name); older XLA names one op for the whole: there the makers' names are used."""
    names = [o[0] for o in origins]
    named = len(origins) == len(c.elements) and (all(names) or (not c.op_name and any(names)))
    if len(c.elements) < 2 or not (_combined_names(c) or named):
        return []
    full = element_op_names(c, [o[0] for o in origins])  # (older XLA: each maker's name)
    lined = len(origins) == len(full)
    sources = [
        o[1] if lined and o[0] == n else "" for n, o in zip(full, origins or full, strict=False)
    ]
    ins = c.element_in_leaves if len(c.element_in_leaves) == len(full) else [None] * len(full)
    outs = c.element_out_leaves if len(c.element_out_leaves) == len(full) else [None] * len(full)
    grads = c.element_gradients if len(c.element_gradients) == len(full) else [""] * len(full)
    return [
        replace(
            c,
            op_name=n,
            shape=e.dims,
            dtype=e.dtype,
            elements=(e,),
            source=src,
            in_leaves=i,
            out_leaves=o,
            element_in_leaves=(i,) if i is not None else (),
            element_out_leaves=(o,) if o is not None else (),
            element_gradients=(g,),
        )
        for n, e, src, i, o, g in zip(full, c.elements, sources, ins, outs, grads, strict=True)
    ]


def _combined_names(c: hlo.Collective) -> list[str]:
    """The element op names of a combined collective's "jit(f)/(a:b:c)"; [] when its name is
    not of that form or does not line up with its elements."""
    if len(c.elements) < 2 or not c.op_name.endswith(")"):
        return []
    start = c.op_name.find("/(")
    if start < 0:
        return []
    names, depth, cur = [], 0, ""
    for ch in c.op_name[start + 2 : -1]:
        depth += (ch == "(") - (ch == ")")
        if ch == ":" and depth == 0:
            names.append(cur)
            cur = ""
        else:
            cur += ch
    names.append(cur)
    return names if len(names) == len(c.elements) else []
