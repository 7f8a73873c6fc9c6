"""The function view's change path without widget code: a TraceState read from a request,
checked against the function's leaves and the mesh, compiled (with the way out of an error
that has one) and run, and the per-leaf statistics of a run.

:class:`FunctionPath` holds the traced function (:class:`~shardwidget.trace.function.Traced`, a
pmap's or a plan's), the compile cache lives there; the statistics of each layout that ran
are kept here (host data), so going back to a layout runs nothing.
:class:`~shardwidget.views.function.FunctionView` runs it through ``ShardView._change`` and
publishes the result.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import jax

from .. import wire
from ..model import spec as spec_mod
from ..model.help import explicit_fixes, indivisible_hint, pad_for, sharding_type_hint
from ..model.layout import dtype_name, is_extended, layout_of
from ..model.mesh import is_planned
from ..model.state import LayoutState, validate
from ..model.summary import Summary, plan_for
from ..model.tiles import LeafStats
from ..plan.planned_function import PlanTraced
from ..trace import function as trace_mod
from ..trace import pmap as pmap_mod
from ..trace.result import TraceResult, TraceState

RunArrays = tuple[list[Any], list[Any]]
"""A run's (inputs as laid out, outputs), flattened: jax.Arrays, and what f returns that is
not one (float0 data)."""

Computed = tuple[TraceResult, bool, RunArrays | None]
"""What a function view's compute returns: (the compiled result, whether it came from the
compile cache, the run's (inputs, outputs) or None when nothing ran)."""


class FunctionPath:
    """Read, check, compile and run a layout of a function's inputs (see the module's doc).

    Attributes:
        traced: the traced function (a pmap's or a plan's too); mode: "jit", "shard_map" or
        "pmap"; devices: the kernel's; out_leaves: the output leaves as last traced (their
        ranks normalize out_specs); summaries: per layout that ran, its outputs' and inputs'
        statistics (as many as the compile cache).
    """

    def __init__(
        self,
        f: Callable[..., Any],
        args: Sequence[Any],
        kwargs: dict[str, Any],
        own: dict[str, Any],
    ) -> None:
        mode = own.get("mode", "jit")
        self.devices = list(jax.devices())
        self.traced: trace_mod.Traced
        if pmap_mod.pmapped_of(f) is not None:  # pmap fixes its own mesh and layout
            self.traced = pmap_mod.PmapTraced(f, args, kwargs, self.devices, own.get("mode"))
            mode = "pmap"
        elif is_planned(kwargs.get("mesh")):  # a plan: compiled in the planning helper
            plan_mesh = kwargs.pop("mesh")
            self.traced = PlanTraced(f, args, kwargs, mode, self.devices, plan_mesh=plan_mesh)
        else:
            self.traced = trace_mod.Traced(f, args, kwargs, mode, self.devices)
        self.mode: str = mode
        self.with_stats = bool(own.get("stats", True))
        # Statistics without a compile per layout: inputs from their arguments' tiles (kept for
        # the view's life: the arguments never change), outputs where their shards sit.
        n = self.n_devices()
        self.leaf_stats = LeafStats(n, wire.values_budget(n))
        self.summaries: OrderedDict[TraceState, list[list[Summary]]] = OrderedDict()
        self.out_leaves: list[wire.LeafInfo] = []

    @property
    def planned(self) -> str:
        """For a plan, what it is in words; "" on the kernel's devices."""
        return str(getattr(self.traced, "note", ""))

    def planned_on(self, shown: TraceResult | None) -> str:
        """For a plan, what it is in words on the mesh of the result shown (``None``: the plan's
        own mesh), and for a TPU plan whose CPU stand-in is shown, that the TPU compiler is at
        work; "" on the kernel's devices."""
        note_of = getattr(self.traced, "note_of", None)
        return str(note_of(shown)) if note_of is not None else ""

    def n_devices(self) -> int:
        """The devices layouts span: the kernel's, or a plan's positions."""
        return int(getattr(self.traced, "n_positions", len(self.devices)))

    def default_state(self) -> TraceState:
        """The layout the view starts from: a pmap's own, else :meth:`own_state`."""
        if isinstance(self.traced, pmap_mod.PmapTraced):
            return self.traced.own
        return self.own_state()

    # ---------------------------------------------------------------- read and check
    def adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """Specs as JAX reads them (a single spec, a pytree prefix) become one per leaf.
        None (as jax.jit's unspecified shardings): each input's own spec where it has one on
        the view's mesh, and the outputs' defaults (XLA chooses; shard_map: see complete)."""
        if "in_specs" in changes and changes["in_specs"] is None:
            own = self.own_state()
            d["in_specs"] = [
                spec_mod.to_wire(s) if own.mesh_key[1] == tuple(d["axis_names"]) else None
                for s in own.in_specs
            ]
        elif "in_specs" in changes:
            d["in_specs"] = self.traced.in_leaf_specs(changes["in_specs"])
        if "out_specs" in changes and changes["out_specs"] is None:
            d["out_specs"] = []
        elif "out_specs" in changes and not _empty_seq(changes["out_specs"]):
            d["out_specs"] = self.out_leaf_specs(d, changes["out_specs"])
        # A mesh change alone drops the axes the new mesh no longer has from every spec.
        keep = set(d["axis_names"])
        if "in_specs" not in changes:
            d["in_specs"] = [_drop_axes(s, keep) for s in d["in_specs"]]
        if "out_specs" not in changes:
            d["out_specs"] = [None if s is None else _drop_axes(s, keep) for s in d["out_specs"]]
        for k in ("in_specs", "out_specs"):  # anything else: from_wire names it (ValueError)
            if isinstance(d[k], list | tuple):
                d[k] = list(d[k])

    def own_state(self) -> TraceState:
        """The inputs' own layout on their mesh (a plan's mesh for a plan)."""
        if isinstance(self.traced, PlanTraced):
            return self.traced.default_state()
        return trace_mod.default_state(self.traced, len(self.devices))

    def out_leaf_specs(self, d: dict[str, Any], value: Any) -> list[Any]:
        """out_specs as given, one per output leaf (:meth:`Traced.out_leaf_specs`); as given
        when f does not trace for the state (the compile then says why)."""
        try:
            ins = TraceState.from_wire({**d, "out_specs": []}, self.ndims(), [])
            self.traced.output_info(ins)
        except ValueError:  # malformed, or f fails to trace here: the check / compile says so
            return [value] if spec_mod.is_spec(value) or isinstance(value, dict) else list(value)
        return self.traced.out_leaf_specs(value, ins)

    def ndims(self) -> list[int]:
        return [len(lf.shape) for lf in self.traced.leaves]

    def from_wire(self, d: dict[str, Any]) -> TraceState:
        out_ndims = [len(o["shape"]) for o in self.out_leaves]
        paths = ([lf.path for lf in self.traced.leaves], [o["path"] for o in self.out_leaves])
        return TraceState.from_wire(d, self.ndims(), out_ndims, paths)

    def check(self, st: TraceState) -> None:
        try:
            self.traced.validate(st)
        except ValueError as e:
            raise ValueError(self.with_pad_hint(str(e), st)) from None

    def with_pad_hint(self, msg: str, st: TraceState) -> str:
        """msg, ending with the padding of the first input that needs it, when padding the
        inputs is all st lacks (their padded shapes pass the same validation)."""
        n = len(self.traced.mesh_devices(st))  # a sub-mesh: its own devices
        axes = dict(zip(st.axis_names, st.mesh_shape, strict=False))
        hints = []
        try:
            for lf, spec in zip(self.traced.leaves, st.in_specs, strict=True):
                pad = pad_for(lf.shape, spec, axes)
                padded = [d + a for d, (_, a) in zip(lf.shape, pad, strict=True)]
                validate(LayoutState(*st.mesh_key, spec, "device"), padded, n, ["device"])
                hints.append(indivisible_hint(lf.shape, spec, axes, lf.path))
        except (ValueError, KeyError):
            return msg  # padding would not make it fit: the message says what is wrong
        hints = [h for h in hints if h]
        if not hints:
            return msg
        more = len(hints) - 1
        hint = hints[0] + (
            f"; {more} more input{'s need' if more > 1 else ' needs'} padding too" if more else ""
        )
        room = wire.MAX_MESSAGE - len(hint) - 2
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + ". " + hint

    def label(self, st: TraceState) -> str:
        """The mesh and ``in_specs -> out_specs``, in a few words."""
        mesh = " × ".join(f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=False))
        ins = ", ".join(spec_mod.to_text(s) for s in st.in_specs)
        outs = ", ".join("auto" if s is None else spec_mod.to_text(s) for s in st.out_specs)
        given = ", ".join(self.traced.leaves[i].path for i in st.donate)
        return f"mesh {mesh} · {ins} → {outs or 'auto'}" + (f" · donate {given}" if given else "")

    # ---------------------------------------------------------------- compute
    def compute(self, st: TraceState) -> Computed:
        """(compiled result, whether it came from the cache, the run's (inputs, outputs) or
        None); ValueError when f fails or the run would not fit in device memory."""
        cached = self.traced.cached(st)
        res = self.compiled(st)
        if res.ran and res.state in self.summaries:  # statistics known: no run needed
            self.summaries.move_to_end(res.state)
            return res, cached, None
        return res, cached, self.run(res)

    def compiled(self, st: TraceState) -> TraceResult:
        """The compiled layout st (validated already); ValueError with a way out for errors
        that have one (see :mod:`shardwidget.model.help`)."""
        try:
            return self.traced.result(st, run=False, checked=True)
        except ValueError as e:
            msg = self.with_help(str(e), st)
            if self.mode == "shard_map" and not st.out_specs:
                msg = self.default_out_note(msg, st)
            raise ValueError(msg) from None

    def default_out_note(self, msg: str, st: TraceState) -> str:
        """msg, then: out_specs were not given, which ones the view tried (jax.shard_map
        itself requires them), and how to give them."""
        try:
            tried = trace_mod.complete(self.traced, st).out_specs
        except ValueError:
            return msg
        specs = ", ".join(spec_mod.to_text(s or ()) for s in tried)
        note = f"(out_specs not given: tried [{specs}]; jax.shard_map requires out_specs)"
        room = wire.MAX_MESSAGE - len(note) - 1
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + " " + note

    def with_help(self, msg: str, st: TraceState) -> str:
        """msg, ending with what fixes a ShardingTypeError under Explicit axes: the axis
        switches to Auto that compile (tried here), else the op's out_sharding. The message is
        capped when shown: the hint keeps its place, JAX's text gives way."""
        if not msg.startswith("ShardingTypeError") or "explicit" not in st.axis_types:
            return msg

        def compiles(candidate: TraceState) -> bool:
            try:
                self.traced.result(candidate, run=False)
            except ValueError:
                return False
            return True

        hint = sharding_type_hint(explicit_fixes(st, compiles), self.mode)
        room = wire.MAX_MESSAGE - len(hint) - 1
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + " " + hint

    def run(self, res: TraceResult) -> RunArrays | None:
        """(inputs, outputs) of a run of res, held by the caller only for the publish; None
        when the function cannot run here (ShapeDtypeStruct leaves) or the run failed."""
        if not self.traced.runnable:
            return None
        return self.traced.run(res)

    def output_infos(self, res: TraceResult | None, st: TraceState) -> list[wire.LeafInfo]:
        """The output leaves of res, else of st as traced (none when f fails to trace)."""
        if res is not None:
            outs = [(lf.path, lf.shape, lf.dtype) for lf in res.output_leaves]
        else:
            try:
                outs = self.traced.output_leaves(st)
            except ValueError:
                outs = []
        return [wire.leaf_info(p, s, dtype_name(dt)) for p, s, dt in outs]

    # ---------------------------------------------------------------- statistics
    def known_summaries(self, res: TraceResult) -> list[list[Summary]] | None:
        """The statistics of res's layout when it ran before (outputs, inputs)."""
        return self.summaries.get(res.state) if res.ran else None

    def leaf_summaries(self, res: TraceResult, arrays: RunArrays | None) -> list[list[Summary]]:
        """Per-block statistics of every output leaf, then every input leaf as laid out for
        the run (each leaf the payload carries, sharing STATS_SHARES leaves' bytes); arrays:
        the run's (inputs, outputs), or None when it did not run (each leaf then says why).
        Kept per layout that ran."""
        sides = [
            self._side(None if arrays is None else arrays[1], res.output_leaves, res, False),
            self._side(None if arrays is None else arrays[0], res.input_leaves, res, True),
        ]
        if arrays is not None:
            self.summaries[res.state] = sides
            while len(self.summaries) > trace_mod.CACHE_SIZE:
                self.summaries.popitem(last=False)
        return sides

    def _side(
        self, side: list[Any] | None, leaves: Sequence[Any], res: TraceResult, is_input: bool
    ) -> list[Summary]:
        """The statistics of one side's leaves: each of its share of the side's budgets."""
        n = self.n_devices()
        shown = leaves[: wire.MAX_LEAVES]  # what the payload carries
        share = min(1.0, wire.STATS_SHARES / max(1, len(shown)))
        pixels = int(wire.thumb_pixel_budget(n) * share)
        values = int(wire.values_budget(n) * share)
        out = []
        for i, leaf in enumerate(shown):
            if side is None:  # the function did not run: blocks from the sharding
                why = self.traced.run_disabled or res.run_error or "not run"
                out.append(Summary.unavailable(len(leaf.layout.blocks), why))
                continue
            why = _no_stats(side[i])
            if why:
                out.append(Summary.unavailable(len(leaf.layout.blocks), why))
                continue
            out.append(self._summary(side[i], pixels, values, i if is_input else None))
        return out

    def _summary(self, arr: Any, pixels: int, values: int, argument: int | None) -> Summary:
        """One leaf's statistics within ``pixels`` thumbnail pixels and ``values`` bytes of raw
        values; ``argument``: its index among the inputs (None: an output)."""
        lay = layout_of(arr)
        if not self.with_stats:
            return Summary.unavailable(len(lay.blocks), "statistics are off")
        plan = plan_for(lay, tuple(range(min(arr.ndim, 2))), pixels, values)
        try:
            return self.leaf_stats.summarize(arr, lay, plan, pixels, argument)
        except Exception as e:  # statistics are an extra: never lose the view
            return Summary.unavailable(len(lay.blocks), f"statistics failed: {e}")


def _no_stats(arr: jax.Array) -> str:
    """Why a leaf of a run has no value statistics ("" when it has): float0 (no data, and
    not a jax.Array) and PRNG keys (their data is opaque key bits)."""
    if not isinstance(arr, jax.Array):
        return f"no data: {dtype_name(getattr(arr, 'dtype', 'float0'))} (not a jax.Array)"
    if is_extended(arr.dtype):
        return f"PRNG keys ({arr.dtype}): no value statistics; the layout is shown"
    return ""


def _empty_seq(value: object) -> bool:
    """An empty list or tuple (no out_specs given), never P(): jax before 0.10 has
    ``P() == ()`` true, and P() is replicated outputs."""
    return isinstance(value, list | tuple) and not value


def _drop_axes(spec: Any, keep: set[str]) -> Any:
    if spec is None:
        return None
    out: list[Any] = []
    for e in spec:
        if e is None:
            out.append(None)
        elif isinstance(e, str):
            out.append(e if e in keep else None)
        else:
            kept = [a for a in e if a in keep]
            out.append(kept[0] if len(kept) == 1 else kept or None)
    return out
