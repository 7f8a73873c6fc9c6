"""Why each collective is there: the sharding of the inputs, constraints and outputs that met at
the op XLA inserted it for.

Shardy (XLA's partitioner) decides every value's sharding; XLA's SPMD partitioner then inserts a
collective where an op's operands arrive sharded otherwise than its result is. Shardy records
where each sharding came from when asked (``sdy.sharding_origins``), and the lowered module keeps
each op's name and source line. So the kernel runs Shardy's propagation on the lowered module
in-process (:func:`shardwidget._jax.shardy_ops`, about 5 ms), joins each compiled collective to
the op with the same ``op_name`` and source line (then by shapes, then by position where the
layers of a loop share a line), and says what met there. Every explanation is checked against
XLA's own record of the same compile (its ``shardy-verbose`` dump,
:data:`shardwidget._jax.SHARDY_DUMP`), and rests on the dump alone where the two differ.
Where anything is missing, the cause says so and why: never a guess.

Pure: no JAX import (the adapter gives the op records), no widget code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..hlo import collectives as hlo
from ..hlo import concat, gradients
from ..hlo import flow as hlo_flow
from . import cause_match as match
from . import sdy
from .cause_text import (
    describe,
    line_words,
    nothing_met,
    op_word,
    unknown_text,
    users_constraint,
)
from .places import UNCHECKED as UNCHECKED  # (re-exported: explain.py's default)
from .places import Context as Context
from .places import Place as Place
from .places import (
    arg_index,
    arg_positions,
    constraint_ops,
    given_output,
    input_place,
    op_place,
    origins,
    out_positions,
)

CHECKED = "agrees with XLA's own dump of this compile"
FROM_DUMP = "from XLA's own dump of this compile (Shardy in this process differed)"
SCAN = "every layer of the scan: {} iterations"
"""Said of a collective in a loop's body, where one op is every layer."""
IN_BODY = "in a loop's body: read from XLA's own dump of this compile (XLA inlines the body)"


@dataclass(frozen=True)
class Cause:
    """Why one collective is in the compiled program (``view.trace.collectives[i].cause``).

    Attributes:
        text: one sentence in words; "cause unknown: <reason>" when it is not known.
        known: False when the information is missing (``reason`` says what).
        reason: why the cause is unknown ("" when known).
        inputs: the input leaves whose sharding it involves (index, path, sharding).
        constraints: the with_sharding_constraint / reshard lines involved.
        outputs: the outputs whose out_shardings are involved.
        op: the op where the shardings met (its JAX name, file and line).
        checked: how it was verified against XLA's own dump.
        candidates: the ops it may come from, where several share its line.
        layer: (k, n): the k-th of n ops sharing its line (the layers of a loop), else None.
        operand: the input leaf the collective moves, where the HLO leads back to one.
    """

    text: str
    known: bool = True
    reason: str = ""
    inputs: tuple[Place, ...] = ()
    constraints: tuple[Place, ...] = ()
    outputs: tuple[Place, ...] = ()
    op: Place | None = None
    checked: str = ""
    candidates: tuple[Place, ...] = ()
    layer: tuple[int, int] | None = None
    operand: Place | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return self.text


def unknown(reason: str) -> Cause:
    """A cause that is not known, with the reason in words."""
    return Cause(unknown_text(reason), known=False, reason=reason)


def causes(colls: Sequence[hlo.Collective], ctx: Context) -> list[Cause]:
    """The cause of each collective, in order."""
    if ctx.module is None:
        why = unknown(ctx.missing or "Shardy's propagation is not available")
        return [why for _ in colls]
    graph = match.hlo_params(ctx.hlo_text)
    seen: dict[tuple[str, str, str, tuple[int, ...]], int] = {}
    counts: dict[tuple[str, str, str, tuple[int, ...]], int] = {}
    for c in colls:
        key = (c.op_name, c.source, c.kind, c.shape)
        counts[key] = counts.get(key, 0) + 1
    out = []
    for c in colls:
        key = (c.op_name, c.source, c.kind, c.shape)
        k = seen.get(key, 0)
        seen[key] = k + 1
        made = match.element_origins(c.name, graph, ctx.hlo_text) if len(c.elements) > 1 else []
        parts = hlo_flow.combined_parts(c, made)
        try:
            if parts:  # one collective XLA combined from several: each element explained
                cause = _together(c, parts, [_part(p, ctx, graph) for p in parts])
            elif _unnamed_sum(c):  # (the GPU's reduce-scatter of a gradient)
                cause = _carries(c, _by_maker(c, ctx, graph))
            else:
                cause = _carries(c, _one_named(c, _explain(c, ctx, graph, k, counts[key])))
        except Exception as e:  # a form this reader does not know: said, never guessed
            cause = unknown(f"the module has a form this explanation cannot read ({e})")
        out.append(cause)
    return out


def _unnamed_sum(c: hlo.Collective) -> bool:
    """Whether c sums partial results of one array and its record names no op."""
    return not c.op_name and len(c.elements) == 1 and c.kind in ("all-reduce", "reduce-scatter")


def _by_maker(c: hlo.Collective, ctx: Context, graph: dict[str, Any]) -> Cause:
    """The cause of a sum whose record names no op: at the op that makes what it sums (its
    operand's maker, through bitcasts and copies), where that one has a name."""
    op_name, source = concat.made_by(ctx.hlo_text, c.name)
    if not op_name:
        return _explain(c, ctx, graph, 0, 1)
    return _part(replace(c, op_name=op_name, source=source), ctx, graph)


def _part(p: hlo.Collective, ctx: Context, graph: dict[str, Any]) -> Cause:
    """The cause of one element of a combined collective. Where the line its maker's record
    gives has no op of its name (older XLA writes the line of the ``value_and_grad`` call, or
    the library's), the ops of its name anywhere, told apart by the leaves it touches: the
    answer holds only when every op left is on one line."""
    cause = _explain(p, ctx, graph, 0, 1)
    if cause.known or not p.source or "no op of Shardy's module" not in cause.reason:
        return cause
    alt = _explain(replace(p, source=""), ctx, graph, 0, 1)
    lines = {(q.file, q.line) for q in (alt.op, *alt.candidates) if q is not None}
    return alt if alt.known and len(lines) == 1 else cause


def _one_named(c: hlo.Collective, cause: Cause) -> Cause:
    """cause, said of a combined collective whose record names one op only (older XLA): the
    other elements' causes are not told."""
    if len(c.elements) < 2:
        return cause
    head = (
        f"{c.kind} of {len(c.elements)} arrays XLA combined into one (its record names one op: "
        "the other elements' ops are not told)"
    )
    return replace(cause, text=f"{head}: {cause.text}")


def _carries(c: hlo.Collective, cause: Cause) -> Cause:
    """cause, with the parameter whose gradient c carries where that is told."""
    grads = c.gradients
    if len(grads) != 1 or len(c.elements) > 1:
        return cause
    return replace(cause, text=f"{cause.text} (it carries the gradient of {grads[0]})")


def _element_head(e: hlo.HloShape, part: hlo.Collective) -> str:
    """An element's words in a combined collective's cause: its shape, and whose gradient it
    is (or that it is one, whose not told)."""
    grad = part.element_gradients[0] if part.element_gradients else ""
    told = part.out_leaves is not None
    of = f" (gradient of {grad})" if grad else ""
    if not grad and told and gradients.backward(part.op_name):
        of = f" ({gradients.NOT_TOLD})"
    return f"{e.dtype}{list(e.dims)}{of}"


def _together(c: hlo.Collective, elems: Sequence[hlo.Collective], parts: Sequence[Cause]) -> Cause:
    """One cause for a combined collective: each element's, in order."""
    shapes = [_element_head(e, q) for e, q in zip(c.elements, elems, strict=True)]
    texts = [f"{s}: {p.text}" for s, p in zip(shapes, parts, strict=True)]
    head = f"{c.kind} of {len(parts)} arrays XLA combined into one"
    known = [p for p in parts if p.known]
    if not known:
        return unknown(f"{head}; no element's cause is known: " + "; ".join(texts))

    def union(places: Sequence[Place]) -> tuple[Place, ...]:
        return tuple({(p.what, p.index): p for p in places}.values())

    return replace(
        known[0],
        text=f"{head}: " + "; ".join(texts),
        inputs=union([q for p in known for q in p.inputs]),
        constraints=union([q for p in known for q in p.constraints]),
        outputs=union([q for p in known for q in p.outputs]),
        candidates=(),
        layer=None,
    )


def _explain(c: hlo.Collective, ctx: Context, graph: dict[str, Any], k: int, n_same: int) -> Cause:
    mod = ctx.module
    assert mod is not None
    if not c.op_name:
        return _to_given_output(c, ctx) or unknown(
            "the compiled program names no operation for it (no op_name in its metadata)"
        )
    ops = match.by_name(mod).get(c.op_name, [])
    if not ops:  # an op of a called function (a scan's body) is named within that function
        names = [n for n in match.by_name(mod) if n and c.op_name.endswith("/" + n)]
        ops = [o for n in names for o in match.by_name(mod)[n]]
    if c.source:  # (a library's inner jit: its ops' lines are the library's, its call's ours)
        here = [o for o in ops if o.file and match.where(mod, o) == c.source]
        ops = here or [o for o in ops if match.called_from(mod, o, c.source)]
    if not ops:
        if any(a.loc_name == c.op_name for a in mod.args):
            return unknown(
                f"XLA names input {c.op_name} for it: it lays the input out anew before any op "
                "of the function (Shardy's module has no op for that)"
            )
        at = f" at {c.source}" if c.source else ""
        return unknown(
            f"no op of Shardy's module is {c.op_name}{at} (a custom call, or an op "
            "XLA created after partitioning)"
        )
    if c.kind in ("all-reduce", "reduce-scatter"):
        ops = _past_moves(mod, ops)
    if all(o.op in _EXPLICIT for o in ops):
        return _asked_for(c, ops[0])
    if "main" not in mod.memo:
        mod.memo["main"] = min((o.scope for o in mod.ops), default=0)
    main = mod.memo["main"]
    in_body = all(o.scope != main for o in ops) and all(match.agreeing(mod, o) for o in ops)
    looped = in_body and any(match.in_loop(mod, o) for o in ops)
    if in_body and not looped:  # a call (jax.jit(f), a nested jit, a library's inner jit)
        return _in_call(c, ops, ctx, graph)
    body = _in_body(c, ops, ctx, graph) if in_body else None
    if body is not None:
        return body
    if in_body:
        return unknown(
            f"the {op_word(ops[0].short)} on {c.source or 'its line'} sits in a function a loop "
            "calls (a scan's body), which Shardy's run in this process leaves unsharded (XLA "
            "inlines it first), and XLA's dump has no single op of its kind and shapes in its "
            "loops to read instead"
        )
    fit = [o for o in ops if match.shapes_fit(mod, o, c.shape)]
    ops = fit or ops
    met = [o for o in ops if not match.agreeing(mod, o)]  # where shardings differ: where they met
    ops = met or ops
    if c.kind in ("all-reduce", "reduce-scatter") and len(ops) > 1:  # partial results
        partial = [o for o in ops if match.partial(mod, o)]
        ops = partial or ops
    layer = None
    if len(ops) > 1:  # ops sharing a line: by the compiled dot's kind, by operands' shapes
        dot = match.compiled_dot(c.name, c.kind, graph)
        ops = [o for o in ops if match.kind(o, mod) == dot] or ops
        ops = [o for o in ops if not match.from_scalars(mod, o)] or ops  # a scalar's broadcast
    want = arg_positions(mod, ctx, c.in_leaves) if len(ops) > 1 else None
    if want is not None:  # by the inputs that flow into it
        ops = match.by_flow(mod, ops, c.kind, want) or ops
    reached = out_positions(ctx, c.out_leaves) if len(ops) > 1 else None
    if reached is not None:  # by the outputs it flows into (the gradients of two weights)
        ops = match.by_outputs(mod, ops, reached) or ops
    if len(ops) > 1:
        if len({match.signature(mod, o) for o in ops}) == 1:  # alike: any one explains it
            layers = len(ops) == n_same and match.trips(c.op_name, graph) > 0
            layer = (k + 1, n_same) if layers else None  # a layer number only in a loop
        else:
            cands = tuple(op_place(o) for o in ops)
            return replace(
                unknown(
                    f"{len(ops)} ops named {ops[0].short} share {c.source or 'its line'} with "
                    "different shardings, and the compiled program does not say which"
                ),
                candidates=cands,
            )
    op = ops[0]
    cause = _from_module(c, op, mod, ctx, graph)
    if layer is not None and cause.known:
        lw = line_words(cause.op.file, cause.op.line) if cause.op is not None else ""
        at = f" on {lw}" if lw else ""
        text = cause.text.replace(f"{at}:", f"{at} (layer {layer[0]} of {layer[1]}):", 1)
        cause = replace(cause, text=text)
    cause = replace(cause, layer=layer, candidates=tuple(op_place(o) for o in ops[1:]))
    return _checked(c, op, cause, ctx, graph)


_MOVES = ("stablehlo.transpose", "stablehlo.reshape")


def _past_moves(mod: sdy.Module, ops: list[sdy.Op]) -> list[sdy.Op]:
    """For a sum of partial results named after a transpose (XLA's GPU compiler folds a
    backward pass's transpose into the dot before it, and the gemm carries the transpose's
    name): the ops that make the moved values, where those leave partial results; ops as they
    are otherwise (a move sums nothing)."""
    if not ops or not all(o.op in _MOVES and o.operands for o in ops):
        return ops
    made = [m for o in ops if (m := mod.made_by(o, o.operands[0])) is not None]
    return made if made and all(match.partial(mod, m) for m in made) else ops


def _in_body(c: hlo.Collective, ops: list[sdy.Op], ctx: Context, graph: Any) -> Cause | None:
    """The cause of a collective in a loop's body (a function a scan calls, which XLA inlines
    and Shardy in this process leaves unsharded), read from XLA's dump: each candidate op's
    twin there (same shapes, one sharding among them), filtered as in :func:`_explain`; None
    where the dump does not settle it."""
    mod, dump = ctx.module, ctx.dump
    if mod is None or dump is None:
        return None
    pairs = [(o, t) for o in ops if (t := match.twin(mod, o, dump, body=True)) is not None]
    dot = match.compiled_dot(c.name, c.kind, graph)  # the compiled dot it is for, if one
    pairs = [p for p in pairs if match.kind(p[1], dump) == dot] or pairs
    pairs = [p for p in pairs if match.shapes_fit(dump, p[1], c.shape)] or pairs
    pairs = [p for p in pairs if not match.agreeing(dump, p[1])] or pairs
    if c.kind in ("all-reduce", "reduce-scatter"):
        pairs = [p for p in pairs if match.partial(dump, p[1])] or pairs
    if not pairs or len({match.signature(dump, t) for _, t in pairs}) != 1:
        return None
    o, t = pairs[0]
    cause = _from_module(c, t, dump, ctx, graph, place_of=o)
    if not cause.known:
        return None
    n = match.trips(c.op_name, graph)
    if n:  # one op runs every layer: it is the cause of every iteration's collective
        lw = line_words(o.file, o.line)
        at = f" on {lw}" if lw else ""
        cause = replace(cause, text=cause.text.replace(f"{at}:", f"{at} ({SCAN.format(n)}):", 1))
    others = tuple(op_place(p[0]) for p in pairs[1:])
    return replace(cause, checked=IN_BODY, candidates=others)


def _in_call(c: hlo.Collective, ops: list[sdy.Op], ctx: Context, graph: Any) -> Cause:
    """The cause of a collective at an op of a called function that no loop calls (a jitted
    f, a nested jit, jnp.take's inner jit): XLA inlines the call before it propagates, so the
    op's twin in XLA's dump (same kind and shapes, outside every loop) explains it."""
    mod, dump = ctx.module, ctx.dump
    assert mod is not None
    if dump is None:
        return unknown(
            f"the {op_word(ops[0].short)} on {c.source or 'its line'} sits in a called "
            "function (a nested jit), which Shardy's run in this process leaves unsharded, and "
            "there is no dump of XLA's own propagation to read instead"
        )
    dot = match.compiled_dot(c.name, c.kind, graph)
    pairs = [(o, t) for o in ops if (t := match.twin(mod, o, dump, call=True)) is not None]
    pairs = [p for p in pairs if not dot or match.kind(p[1], dump) == dot] or pairs
    pairs = [p for p in pairs if match.shapes_fit(dump, p[1], c.shape)] or pairs
    pairs = [p for p in pairs if not match.agreeing(dump, p[1])] or pairs
    if c.kind in ("all-reduce", "reduce-scatter"):
        pairs = [p for p in pairs if match.partial(dump, p[1])] or pairs
    if not pairs or len({match.signature(dump, t) for _, t in pairs}) != 1:
        return unknown(
            f"the {op_word(ops[0].short)} on {c.source or 'its line'} sits in a called "
            "function (a nested jit; no loop), which Shardy's run in this process leaves "
            "unsharded, and XLA's dump has no single op of its kind and shapes to read instead"
        )
    o, t = pairs[0]
    cause = _from_module(c, t, dump, ctx, graph, place_of=o)
    others = tuple(op_place(p[0]) for p in pairs[1:])
    return replace(cause, checked=FROM_DUMP, candidates=others) if cause.known else cause


def _checked(c: hlo.Collective, op: sdy.Op, cause: Cause, ctx: Context, graph: Any) -> Cause:
    """The cause, checked against XLA's dump; rebuilt from the dump where the two differ."""
    if ctx.dump is None:
        return replace(cause, checked=ctx.checked)
    mod = ctx.module
    assert mod is not None
    if match.agrees(mod, op, ctx.dump):
        return replace(cause, checked=CHECKED)
    twin = match.twin(mod, op, ctx.dump)
    if twin is None:
        return unknown(
            f"Shardy in this process and XLA's own dump differ on the shardings at the "
            f"{op.short} ({hlo.where(op.file, op.line) if op.file else 'no line'}), and the dump "
            "has no single op of the same shapes to read instead"
        )
    rebuilt = _from_module(c, twin, ctx.dump, ctx, graph, place_of=op)
    return replace(rebuilt, layer=cause.layer, candidates=cause.candidates, checked=FROM_DUMP)


def _from_module(
    c: hlo.Collective,
    op: sdy.Op,
    mod: sdy.Module,
    ctx: Context,
    graph: dict[str, Any],
    place_of: sdy.Op | None = None,
) -> Cause:
    operands = [mod.value(op, n) for n in op.operands]
    results = [mod.value(op, n) for n in op.results]
    if any(v is None or (v.shape and v.sharding is None) for v in operands + results):
        return unknown(
            f"Shardy's module gives no sharding for some operand of the {op.short} "
            "(a loop's carried value, or a custom call)"
        )
    same = nothing_met(op, operands, results)
    if same:
        return unknown(
            same.format(op_word(op.short)) + ": the collective is XLA's partitioner's choice, "
            "not a sharding that met another"
        )
    inputs: dict[int, Place] = {}
    constraints: dict[int, Place] = {}
    outputs: dict[int, Place] = {}
    labels = []
    for i, v in enumerate(operands):
        assert v is not None
        idx = arg_index(mod, v, ctx)
        if idx is not None:
            inputs[idx] = input_place(idx, v, ctx)
            labels.append(ctx.in_paths[idx])
            continue
        made = mod.made_by(op, op.operands[i])
        if made is not None and match.from_scalars(mod, made):
            labels.append("")  # a constant broadcast where it is needed: nothing arrives
            continue
        k_of = [(a, k) for a in mod.args if (k := arg_index(mod, a, ctx)) is not None]
        stacks = [(ctx.in_paths[k], a.shape) for a, k in k_of]
        layer = match.layer_of(v.shape, c.op_name, stacks)
        labels.append(f"operand {i}" + (f" (shaped as one layer of {layer})" if layer else ""))
        if layer and c.in_leaves and layer in c.in_leaves:  # its shape and the dataflow agree
            k, a = next((k, a) for a, k in k_of if ctx.in_paths[k] == layer)
            inputs.setdefault(k, input_place(k, a, ctx))  # (a scan's weight: what is moved)
        origins(v, mod, ctx, inputs, constraints, outputs)
    for v in results:
        assert v is not None
        origins(v, mod, ctx, inputs, constraints, outputs)
    moved = _moved_input(c, graph, mod, ctx)
    at = place_of or op
    text = describe(c.kind, at.short, op_place(at), labels, operands, results, op, moved, ctx, mod)
    if not inputs and c.in_leaves:  # none named by the shardings' origins: by dataflow
        for p in c.in_leaves:
            if p in ctx.in_paths:
                k = list(ctx.in_paths).index(p)
                inputs[k] = Place("input", k, p)
        if inputs and any(not users_constraint(x) for x in constraint_ops(constraints, mod)):
            text += " (the input that flows into it: " + ", ".join(c.in_leaves) + ")"
    given = given_output(op, results, mod, ctx) if not outputs else None
    if given is not None:  # replicated because the layout given to that output says so
        outputs[given.index] = given
        text = text.replace(
            "'s result is replicated",
            f"'s result is replicated, as the layout given to {given.label} "
            "(out_shardings / out_specs) asks",
            1,
        )
    return Cause(
        text,
        inputs=tuple(inputs[k] for k in sorted(inputs)),
        constraints=tuple(constraints[k] for k in sorted(constraints)),
        outputs=tuple(outputs[k] for k in sorted(outputs)),
        op=op_place(at),
        operand=input_place(moved, None, ctx) if moved is not None else None,
    )


# ------------------------------------------------------------------------------- places
def _to_given_output(c: hlo.Collective, ctx: Context) -> Cause | None:
    """A collective XLA names no op for whose result reaches one output only, an output whose
    layout was given (out_shardings / out_specs): the move to that layout."""
    outs = c.out_leaves or ()
    if len(outs) != 1 or outs[0] not in ctx.out_paths:
        return None
    k = list(ctx.out_paths).index(outs[0])
    if not (k < len(ctx.out_given) and ctx.out_given[k]):
        return None
    return Cause(
        f"{c.kind} to lay {outs[0]} out as its given layout (out_shardings / out_specs) asks: "
        "XLA names no op for it, and the only output its result reaches is that one",
        outputs=(Place("output", k, outs[0]),),
        checked="by dataflow through the compiled program (XLA's record names no op for it)",
    )


# ------------------------------------------------------------------------------- matching
_EXPLICIT = (
    "stablehlo.all_reduce",
    "stablehlo.reduce_scatter",
    "stablehlo.all_gather",
    "stablehlo.all_to_all",
    "stablehlo.collective_permute",
    "stablehlo.collective_broadcast",
)
"""Collectives the function writes itself (psum, psum_scatter, all_gather, ppermute, … inside
shard_map or pmap): no sharding asked for them."""


def _asked_for(c: hlo.Collective, op: sdy.Op) -> Cause:
    """The cause of a collective the function wrote itself."""
    where = line_words(op.file, op.line)
    at = f" on {where}" if where else ""
    text = (
        f"{c.kind} asked for by the function: its {op.short}{at}, over the manual axes of "
        "shard_map (or pmap); no sharding met another here"
    )
    return Cause(text, op=op_place(op), checked="the function's own collective: nothing to check")


def _moved_input(
    c: hlo.Collective, graph: dict[str, Any], mod: sdy.Module, ctx: Context
) -> int | None:
    """The input leaf a collective moves, when its operand leads back to an entry parameter
    through copies, fusions and slices (never through an op that computes)."""
    node = graph.get(c.name)
    for _ in range(16):
        if node is None or not node[1]:
            break
        node = graph.get(node[1][0])
        if node is None:
            break
        if node[0] == "parameter":
            n = node[2]
            return arg_index(mod, mod.args[n], ctx) if n is not None and n < len(mod.args) else None
        if node[0] not in match.THROUGH or (
            node[0] == "fusion" and not match.moves_only(node, graph)
        ):
            break
    return None
