"""The function view's wire format: ``_trace_options`` (:class:`TraceOptions`), ``_trace``
(:class:`Trace`), ``_trace_stats`` (:class:`TraceStats`) and :class:`TraceRequestMsg`. Mirrors
``js/wire/function.ts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

from ..model import mesh as mesh_mod
from ..model.layout import Layout, dtype_name
from ..model.summary import Summary
from . import peak as peak_wire
from ._common import MAX_JAXPR, MAX_LEAVES, MAX_RECORDS, SpecEntry
from .array import LayoutWire, Stats, layout, pending_stats, stats
from .peak import FitWire, PeakWire

if TYPE_CHECKING:
    from ..trace.function import Traced
    from ..trace.result import TraceResult, TraceState


class TraceStateWire(TypedDict):
    """A function view's layout as the controls send it (``TraceState.to_wire``)."""

    mesh_shape: list[int]
    axis_names: list[str]
    axis_types: list[str]
    in_specs: list[list[SpecEntry]]
    out_specs: list[list[SpecEntry] | None]
    donate: NotRequired[list[int]]
    """The input leaves donated (indices): sent in ``TraceOptions.original`` so that the
    widget's Reset, like ``view.reset()``, returns to the view's donation as first made; a
    request without it keeps the donation shown."""


class LeafInfo(TypedDict):
    """An input or output leaf of a function: path, global shape, dtype."""

    path: str
    shape: list[int]
    dtype: str


class TraceOptions(TypedDict):
    """``_trace_options``: fixed facts of a function view (its leaves, the mesh choices)."""

    n_devices: int
    platform: str
    factorizations: dict[str, list[list[int]]]
    memory_kinds: list[str]
    mode: str
    fn_name: str
    inputs: list[LeafInfo]
    outputs: list[LeafInfo]
    static_args: list[str]
    original: TraceStateWire
    run_disabled: str
    static: NotRequired[str]
    """Why the controls cannot re-compile: a saved page, or several processes."""
    planned: NotRequired[str]
    """What a plan is, in words (``mesh=AbstractMesh(...)``); "" on the kernel's devices."""
    compile_with: NotRequired[CompileWith]
    """A plan's compilers (``views/plan_progress.py``): the CPU compiler, or the TPU's own."""


class CompileWith(TypedDict):
    """What a plan view's "compile with" offers: the compiler in use ("cpu" / "tpu"), the TPU
    choice's label ("this TPU: v5e:16x16"; "" when there is none) and, then, why not (one line:
    not a TPU preset, no topology of that size, or what to install)."""

    current: str
    tpu: str
    why: str


class TraceLeaf(TypedDict):
    """One leaf of a compiled layout, with its geometry."""

    path: str
    shape: list[int]
    dtype: str
    typeof: str
    spec_str: str
    local_shape: list[int]
    layout: LayoutWire
    note: str
    """The layout in words where the spec alone would mislead (a pmap'd function's); "" else."""


class ConstraintWire(TypedDict):
    """A sharding the user pinned inside the function."""

    kind: str
    shape: list[int]
    dtype: str
    spec_str: str
    source: str


class CollectiveWire(TypedDict):
    """One collective in the compiled HLO, with its mesh axes and bytes sent per device."""

    kind: str
    axes: list[str]
    shape: list[int]
    dtype: str
    bytes: int
    group_size: int
    n_groups: int
    op_name: str
    source: str
    groups_text: str
    group_set: int
    """Index into ``Trace.group_sets``: the device groups it runs over (collective-permute: the
    (source, target) pairs that move data); -1 when left out of a bounded payload."""
    elements: NotRequired[list[ElementWire]]
    """Every array it carries (a combined all-reduce: each gradient, the loss's scalar too)."""
    in_leaves: NotRequired[list[int] | None]
    """The input leaves (indices) that flow into it, by dataflow; None: not told."""
    out_leaves: NotRequired[list[int] | None]
    """The output leaves (indices) it flows into; None: not told."""
    leaves_note: NotRequired[str]
    """Why the leaves are not told ("" when they are)."""


class ElementWire(TypedDict):
    """One array a collective carries, per device."""

    shape: list[int]
    dtype: str
    in_leaves: list[int]
    out_leaves: list[int]
    gradient_of: int
    """The input leaf (index) whose gradient it carries; -1 where none is told."""


class Memory(TypedDict):
    """Per-device bytes of the compiled executable."""

    argument: int
    output: int
    alias: int
    temp: int
    generated_code: int
    peak: int


class Trace(TypedDict):
    """``_trace``: one compiled layout of the function (or an error with no result)."""

    key: int
    status: Literal["ok", "error"]
    message: str
    mode: str
    inputs: list[TraceLeaf]
    outputs: list[TraceLeaf]
    constraints: list[ConstraintWire]
    collectives: list[CollectiveWire]
    memory: Memory | None
    flops: float | None
    compile_ms: float
    run_ms: float
    cached: bool
    ran: bool
    left_out: LeftOut
    """How many leaves and records beyond the MAX_LEAVES / MAX_RECORDS sent were left out."""
    jaxpr: str
    """The jaxpr of the traced program: whole lines, MAX_JAXPR characters at most ("" before a
    compile)."""
    jaxpr_cut: int
    """Characters of the jaxpr left out (0 when it was sent whole)."""
    group_sets: list[list[list[int]]]
    """The distinct device groups of the collectives (device ids), each set once: many
    collectives run over the same axis, so a set is shared (see ``group_sets``)."""
    code: str
    """Python for this compiled layout (FunctionView.code); "" without a result."""
    peak: PeakWire | None
    """Where the memory goes (the memory panel); None without a result."""
    over: NotRequired[PeakWire]
    """Where the memory of the layout last asked for goes, when the compiler refused it for
    not fitting (the panel shows what is over); absent otherwise."""
    fit: NotRequired[FitWire]
    """``view.largest_fit``'s progress and answer for this layout; absent until asked."""


class LeftOut(TypedDict):
    """Counts of what a bounded function-view payload left out."""

    inputs: int
    outputs: int
    constraints: int
    collectives: int


class TraceStats(TypedDict):
    """``_trace_stats``: per-leaf statistics of a function view (same key as ``_trace``)."""

    key: int
    outputs: list[Stats]
    inputs: NotRequired[list[Stats]]


class TraceRequestMsg(TypedDict):
    """A function view's request: compile and run for ``state``."""

    type: Literal["trace_request"]
    seq: int
    state: TraceStateWire


# ---------------------------------------------------------------------- function views
def leaf_info(path: str, shape: Sequence[int], dtype: str) -> LeafInfo:
    """An input or output leaf of a function view: its name, global shape and dtype."""
    return {"path": path, "shape": list(shape), "dtype": dtype}


def trace_options(
    traced: Traced,
    *,
    n_devices: int,
    platform: str,
    memory_kinds: Sequence[str],
    original: TraceState,
    outputs: Sequence[LeafInfo],
) -> TraceOptions:
    """``_trace_options`` of a function view."""
    return {
        "n_devices": n_devices,
        "platform": platform,
        "factorizations": mesh_mod.all_factorizations(n_devices),
        "memory_kinds": list(memory_kinds),
        "mode": traced.mode,
        "fn_name": traced.fn_name,
        "inputs": [leaf_info(lf.path, lf.shape, dtype_name(lf.dtype)) for lf in traced.leaves],
        "outputs": list(outputs),
        "static_args": list(traced.static_args),
        "original": cast(TraceStateWire, {**original.to_wire(), "donate": list(original.donate)}),
        "run_disabled": traced.run_disabled,
    }


def _leaf(
    path: str, lay: Layout, local_shape: Sequence[int], *, key: int, note: str = ""
) -> TraceLeaf:
    return {
        "path": path,
        "shape": list(lay.shape),
        "dtype": lay.dtype,
        "typeof": lay.typeof,
        "spec_str": lay.spec_text,
        "local_shape": list(local_shape),
        "layout": layout(lay, key=key, source="original", note="", local_process=0),
        "note": note,
    }


def collective(
    c: Any, group_set: int, paths: tuple[Sequence[str], Sequence[str]] | None = None
) -> CollectiveWire:
    """One hlo.Collective as the front end reads it (a reshard's; the same fields as the
    collectives of :func:`trace`, keep the two in step); ``paths``: the trace's input and
    output paths, for the leaves it touches as indices."""
    out: CollectiveWire = {
        "kind": c.kind,
        "axes": list(c.axes),
        "shape": list(c.shape),
        "dtype": c.dtype,
        "bytes": c.bytes,
        "group_size": c.group_size,
        "n_groups": c.n_groups,
        "op_name": c.op_name,
        "source": c.source,
        "groups_text": c.groups_text[:400],
        "group_set": group_set,
    }
    if paths is not None:
        _leaves(out, c, *paths)
    return out


def _leaves(out: CollectiveWire, c: Any, in_paths: Sequence[str], out_paths: Sequence[str]) -> None:
    """The leaves a collective touches, as indices into the trace's inputs and outputs, and
    every element it carries, set on out."""
    ins = {p: i for i, p in enumerate(in_paths)}
    outs = {p: i for i, p in enumerate(out_paths)}

    def element(k: int) -> ElementWire:
        e = c.elements[k]
        touched_in = c.element_in_leaves[k] if k < len(c.element_in_leaves) else ()
        touched_out = c.element_out_leaves[k] if k < len(c.element_out_leaves) else ()
        grad = c.element_gradients[k] if k < len(c.element_gradients) else ""
        return {
            "shape": list(e.dims),
            "dtype": e.dtype,
            "in_leaves": [ins[p] for p in touched_in if p in ins],
            "out_leaves": [outs[p] for p in touched_out if p in outs],
            "gradient_of": ins.get(grad, -1),
        }

    out["elements"] = [element(k) for k in range(len(c.elements))]
    out["in_leaves"] = None if c.in_leaves is None else [ins[p] for p in c.in_leaves if p in ins]
    out["out_leaves"] = (
        None if c.out_leaves is None else [outs[p] for p in c.out_leaves if p in outs]
    )
    out["leaves_note"] = c.leaves_note


def trace(
    res: TraceResult | None,
    *,
    mode: str,
    key: int,
    message: str = "",
    cached: bool = False,
    code: str = "",
    hbm: tuple[float | None, str] = (None, ""),
) -> Trace:
    """``_trace`` for a result (or, with res None, an empty error trace carrying message)."""
    out: Trace = {
        "key": key,
        "status": "error" if message else "ok",
        "message": message,
        "mode": mode,
        "inputs": [],
        "outputs": [],
        "constraints": [],
        "collectives": [],
        "memory": None,
        "flops": None,
        "compile_ms": 0.0,
        "run_ms": 0.0,
        "cached": False,
        "ran": False,
        "left_out": {"inputs": 0, "outputs": 0, "constraints": 0, "collectives": 0},
        "jaxpr": "",
        "jaxpr_cut": 0,
        "group_sets": [],
        "code": code,
        "peak": None,
    }
    if res is None:
        return out
    out["peak"] = peak_wire.peak(res.peak, res.peak_unknown, *hbm)
    ins, outs = res.input_leaves[:MAX_LEAVES], res.output_leaves[:MAX_LEAVES]
    notes_in, notes_out = res.notes.get("in", []), res.notes.get("out", [])
    out["inputs"] = [
        _leaf(lf.path, lf.layout, lf.local_shape, key=key, note=_at(notes_in, i))
        for i, lf in enumerate(ins)
    ]
    out["outputs"] = [
        _leaf(lf.path, lf.layout, lf.local_shape, key=key, note=_at(notes_out, i))
        for i, lf in enumerate(outs)
    ]
    out["jaxpr"] = _cut_lines(res.jaxpr, MAX_JAXPR)
    out["jaxpr_cut"] = len(res.jaxpr) - len(out["jaxpr"])
    out["left_out"] = {
        "inputs": len(res.input_leaves) - len(ins),
        "outputs": len(res.output_leaves) - len(outs),
        "constraints": max(0, len(res.constraints) - MAX_RECORDS),
        "collectives": max(0, len(res.collectives) - MAX_RECORDS),
    }
    out["constraints"] = [
        {
            "kind": c.kind,
            "shape": list(c.shape),
            "dtype": c.dtype,
            "spec_str": c.spec_text,
            "source": c.source,
        }
        for c in res.constraints[:MAX_RECORDS]
    ]
    sets, set_of = group_sets(
        [c.groups for c in res.collectives[:MAX_RECORDS]], budget=_group_id_budget(res)
    )
    out["group_sets"] = sets
    out["collectives"] = [
        collective(c, set_of[i], (res.in_paths, res.out_paths))
        for i, c in enumerate(res.collectives[:MAX_RECORDS])
    ]
    out["memory"] = cast(Memory, dict(res.memory)) if res.memory else None
    out["flops"] = res.flops
    out["cached"] = cached
    out["compile_ms"] = 0.0 if cached else round(res.compile_ms, 1)
    out["run_ms"] = round(res.run_ms, 1)
    out["ran"] = res.ran
    if res.run_error:
        out["status"] = "error"
        out["message"] = f"compiled, but the run failed: {res.run_error}"
    return out


def _cut_lines(text: str, limit: int) -> str:
    """text's first ``limit`` characters at most, ending at a whole line where one fits."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = head.rfind("\n")
    return head[:end] if end > 0 else head


def _at(notes: Sequence[str], i: int) -> str:
    return notes[i] if i < len(notes) else ""


def _group_id_budget(res: TraceResult) -> int:
    """Device ids all group sets may hold together: 8 sets over every device (a few bytes per id,
    well inside size_budget's 400 bytes per device)."""
    leaves = [*res.input_leaves, *res.output_leaves]
    n = leaves[0].layout.n_devices if leaves else 0
    return 8 * max(n, 64)


def group_sets(
    groups: Sequence[Sequence[Sequence[int]]], *, budget: int
) -> tuple[list[list[list[int]]], list[int]]:
    """The distinct group sets among ``groups`` (one per collective) and each one's index.

    A set that would take the ids sent past ``budget`` is left out: its collectives get -1 (the
    widget then lights no devices for them, and says so)."""
    sets: list[list[list[int]]] = []
    index: dict[tuple[tuple[int, ...], ...], int] = {}
    of: list[int] = []
    used = 0
    for g in groups:
        k = tuple(tuple(int(d) for d in grp) for grp in g)
        if k not in index:
            size = sum(len(grp) for grp in k)
            if used + size > budget:
                of.append(-1)
                continue
            used += size
            index[k] = len(sets)
            sets.append([list(grp) for grp in k])
        of.append(index[k])
    return sets, of


def trace_stats(
    summaries: Sequence[Summary], *, key: int, inputs: Sequence[Summary] | None = ()
) -> TraceStats:
    """Per-leaf statistics of a function view: outputs, and inputs as laid out for the run
    (``inputs=None`` leaves the field out, as for a view that never compiled)."""
    out: TraceStats = {
        "key": key,
        "outputs": [stats(s, key=key) for s in summaries[:MAX_LEAVES]],
    }
    if inputs is not None:
        out["inputs"] = [stats(s, key=key) for s in inputs[:MAX_LEAVES]]
    return out


def pending_trace_stats(key: int, n_outputs: int) -> TraceStats:
    """``_trace_stats`` while the statistics of trace ``key`` are being computed."""
    return {"key": key, "outputs": [pending_stats(key) for _ in range(min(n_outputs, MAX_LEAVES))]}
