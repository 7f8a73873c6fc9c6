"""The layouts that remove a collective's cause (``view.fixes(i)``): re-lay an input as the op
wants it (the sharding Shardy gives that input when it is left open), lay the moved input out
whole, or let XLA choose an output's layout where an out_sharding was part of the cause. Each
is compiled by the view's own :class:`~.traced.Traced` (on demand, one compile each) and
carries the collectives and per-device memory it gives.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _jax
from ..hlo import collectives as hlo
from ..model import spec as spec_mod
from . import fix_kinds, sdy

if TYPE_CHECKING:  # a trace's results are read by their attributes: trace/ sits a floor up
    from ..trace.result import TraceResult, TraceState


@dataclass(frozen=True)
class Fix:
    """One layout that removes (or is meant to remove) a collective.

    Attributes:
        what: the change in words ("lay params['w'] out as P(None, None)").
        state: the layout (apply it with ``view.apply_fix`` or ``view.set_layout``).
        removes: True when the compile of ``state`` no longer has the collective.
        collectives: the collectives that layout gives.
        memory: its per-device memory (bytes: "peak", "argument", "temp", ...).
        compile_ms: the milliseconds its compile took (0 when it was cached).
        error: why it does not compile ("" when it does).
    """

    what: str
    state: TraceState
    removes: bool
    collectives: list[hlo.Collective] = field(repr=False)
    memory: dict[str, int] = field(repr=False)
    compile_ms: float = 0.0
    error: str = ""

    def __str__(self) -> str:
        peak = self.memory.get("peak")
        mem = f", {peak / 2**20:.2f} MiB per device" if peak is not None else ""
        gone = "removes it" if self.removes else "keeps it"
        return f"{self.what}: {gone}; {len(self.collectives)} collectives{mem}"


def candidates(res: TraceResult, i: int) -> list[tuple[str, TraceState]]:
    """(words, layout) of every change that may remove collective i's cause, without compiling."""
    c = res.collectives[i]
    cause = c.cause
    out = _from_cause(res, c, cause) if cause is not None and cause.known else []
    for idx, why, st in _at_the_op(res, c, cause) if cause is not None and cause.known else []:
        same = [k for k, o in enumerate(out) if o[1] == st]
        if not same:
            out.append((f"lay {res.in_paths[idx]} out as {_text(st, idx)} ({why})", st))
        elif "(as the op wants it" in (words := out[same[0]][0]):  # the same layout: all words
            sep = ": " if words.endswith("wants it)") else "; "
            out[same[0]] = (f"{words[:-1]}{sep}{why})", st)
    for words, st in _by_flow(res, c):
        if all(o[1] != st for o in out):
            out.append((words, st))
    return out


MAX_FLOW_TRIES = 6
"""Inputs tried one by one by :func:`_by_flow` (each is a compile when the fixes are asked)."""


def _by_flow(res: TraceResult, c: Any) -> list[tuple[str, TraceState]]:
    """Each input that flows into collective c (by dataflow through the compiled program),
    laid out no longer split over the axes c runs over, one at a time (at most
    MAX_FLOW_TRIES), then all of them together (jit mode: shard_map's specs are the code's)."""
    if res.mode != "jit" or not c.in_leaves or not c.axes:
        return []
    st, axes = res.state, set(c.axes)
    idxs = [res.in_paths.index(p) for p in c.in_leaves if p in res.in_paths]
    changed = {}
    for idx in idxs:
        spec = st.in_specs[idx]
        new = tuple(tuple(a for a in d if a not in axes) for d in spec)
        if new != spec:
            changed[idx] = new
    over = ", ".join(c.axes)
    out = [
        (
            f"lay {res.in_paths[idx]} out as {spec_mod.to_text(spec)} (not split over {over}, "
            "the axes the collective runs over)",
            _with_in(st, idx, spec),
        )
        for idx, spec in list(changed.items())[:MAX_FLOW_TRIES]
    ]
    if len(changed) > 1:
        new_st = st
        for idx, spec in changed.items():
            new_st = _with_in(new_st, idx, spec)
        names = ", ".join(res.in_paths[idx] for idx in changed)
        out.append((f"lay {names} out not split over {over} (together)", new_st))
    return out


def _at_the_op(res: TraceResult, c: Any, cause: Any) -> list[tuple[int, str, TraceState]]:
    """(input, why, layout) of each input that is an operand of the op where shardings met,
    split as the op's other operand is, or over the axes its result is (:mod:`.fix_kinds`)."""
    mod = getattr(c.explainer, "module", None)
    if cause.op is None or mod is None:
        return []
    found = fix_kinds.candidates(mod, cause.op.index, res.in_paths, res.state.in_specs)
    return [
        (idx, why, _with_in(res.state, idx, spec))
        for idx, why, spec in found
        if len(spec) == len(res.in_shapes[idx])
    ]


def _text(st: TraceState, idx: int) -> str:
    return spec_mod.to_text(st.in_specs[idx])


def _from_cause(res: TraceResult, c: Any, cause: Any) -> list[tuple[str, TraceState]]:
    """The changes the cause points at: the inputs it names as the op wants them, the moved
    input whole, an output's given layout dropped."""
    st = res.state
    out: list[tuple[str, TraceState]] = []
    idxs = [p.index for p in cause.inputs]
    if cause.operand is not None and cause.operand.index not in idxs:
        idxs.insert(0, cause.operand.index)
    for idx in idxs:
        spec = _wanted(res, [idx])[0]
        if spec is not None and spec != st.in_specs[idx]:
            words = f"lay {res.in_paths[idx]} out as {spec_mod.to_text(spec)} (as the op wants it)"
            out.append((words, _with_in(st, idx, spec)))
    if len(idxs) > 1:  # all at once: where no single input can give way (a contraction)
        specs = _wanted(res, idxs)
        new = st
        for idx, spec in zip(idxs, specs, strict=True):
            new = _with_in(new, idx, spec) if spec is not None else new
        if new != st and all(o[1] != new for o in out):
            laid = ", ".join(
                f"{res.in_paths[i]} as {spec_mod.to_text(new.in_specs[i])}" for i in idxs
            )
            out.append((f"lay {laid} (as the op wants them, together)", new))
    if cause.operand is not None:
        idx = cause.operand.index
        whole = ((),) * len(st.in_specs[idx])
        if whole != st.in_specs[idx] and all(s[1] != _with_in(st, idx, whole) for s in out):
            out.append(
                (f"lay {res.in_paths[idx]} out whole on every device", _with_in(st, idx, whole))
            )
    if res.mode == "jit":
        for p in cause.outputs:
            if p.index < len(st.out_specs) and st.out_specs[p.index] is not None:
                outs = list(st.out_specs)
                outs[p.index] = None
                new = dataclasses.replace(st, out_specs=tuple(outs))
                out.append((f"let XLA choose the layout of {p.label} (drop its out_sharding)", new))
    return out


def compute(traced: Any, res: TraceResult, i: int) -> list[Fix]:
    """Each candidate compiled (on demand): the fixes that remove collective i first."""
    target = res.collectives[i]
    # the same collective at the same op (its shape may change with the layout: still there)
    key = (target.kind, target.op_name, target.source)
    before = sum(1 for c in res.collectives if (c.kind, c.op_name, c.source) == key)
    fixes = []
    for words, st in candidates(res, i):
        t0 = time.perf_counter()
        try:
            other = traced.result(st, run=False)
        except ValueError as e:
            fixes.append(Fix(words, st, False, [], {}, error=str(e)))
            continue
        ms = (time.perf_counter() - t0) * 1e3
        after = sum(1 for c in other.collectives if (c.kind, c.op_name, c.source) == key)
        fixes.append(Fix(words, other.state, after < before, other.collectives, other.memory, ms))
    fixes.sort(
        key=lambda f: (bool(f.error), not f.removes, len(f.collectives), f.memory.get("peak", 0))
    )
    return fixes


def _wanted(res: TraceResult, idxs: list[int]) -> list[spec_mod.NormSpec | None]:
    """The specs Shardy gives inputs idxs when they are left open together (None for one it
    cannot say)."""
    explainer = res.collectives[0].explainer if res.collectives else None
    text = explainer.module_text if explainer is not None else ""
    none: list[spec_mod.NormSpec | None] = [None] * len(idxs)
    if not text:
        return none
    for idx in idxs:
        text = sdy.open_argument(text, idx)
    try:
        mod = sdy.build(_jax.shardy_ops(text, propagate=True))
    except Exception:  # JAX's MLIR refused: no proposal
        return none
    if len(mod.args) != len(res.in_paths):
        return none  # an input XLA dropped: the arguments no longer line up
    out: list[spec_mod.NormSpec | None] = []
    for idx in idxs:
        sh = mod.args[idx].sharding
        spec = (
            sh.spec() if sh is not None and not any(":" in a for d in sh.dims for a in d) else None
        )
        out.append(spec if spec is not None and len(spec) == len(res.in_shapes[idx]) else None)
    return out


def _with_in(st: TraceState, idx: int, spec: spec_mod.NormSpec) -> TraceState:
    ins = list(st.in_specs)
    ins[idx] = spec
    return dataclasses.replace(st, in_specs=tuple(ins))


def check_index(res: TraceResult | None, i: int) -> TraceResult:
    """res, when collective i is one of its own; ValueError in words otherwise."""
    if res is None:
        raise ValueError("no layout has compiled yet: there are no collectives to fix")
    n = len(res.collectives)
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        raise ValueError(
            f"collective {i!r}: this layout has {n} collectives (0 to {n - 1})"
            if n
            else f"collective {i!r}: this layout has no collectives"
        )
    return res


def pick(fixes: list[Fix], i: int, k: int) -> Fix:
    """fixes[k], when it is a layout that compiles; ValueError in words otherwise."""
    if not fixes:
        raise ValueError(f"collective {i}: no layout the view can change removes its cause")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(fixes):
        raise ValueError(f"fix {k!r}: collective {i} has {len(fixes)} (0 to {len(fixes) - 1})")
    if fixes[k].error:
        raise ValueError(f"fix {k} does not compile: {fixes[k].error}")
    return fixes[k]
