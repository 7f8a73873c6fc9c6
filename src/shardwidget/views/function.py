"""FunctionView: ShardView(f, *args), what XLA does with a layout of a function's inputs.

Traits of the function view and its compute. The model (tracing, compiling, collectives,
memory) lives in :mod:`shardwidget.trace.traced` and :mod:`shardwidget.trace.hlo`; the wire format
in :mod:`shardwidget.wire`. As with array views, a front-end request that fails sets ``error`` and
keeps the last good view; a Python setter that fails raises ValueError with the same message and
changes nothing.
"""

from __future__ import annotations

import math
import pathlib
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import traitlets

from .. import wire
from ..model import spec as spec_mod
from ..model.layout import _dtype_name, layout_of
from ..model.mesh import is_planned
from ..model.summary import Summary, plan_for
from ..model.tiles import LeafStats
from ..render import text
from ..trace import _specs as specs_mod
from ..trace import pmap as pmap_mod
from ..trace import result as result_mod
from ..trace import traced as trace_mod
from . import plan_progress, rerun
from .base import InvalidValue, ShardView, is_function
from .cost import CostMixin

if TYPE_CHECKING:
    from ..export.page import ExportReport

STATE_TRAITS = ("mesh_shape", "axis_names", "axis_types", "in_specs", "out_specs")
OWN_KWARGS = ("mode", "stats", *STATE_TRAITS)


class FunctionView(CostMixin, ShardView):
    """Live view of a function compiled for a layout of its inputs: input and output shardings,
    the collectives XLA inserted, per-device memory and flops, and the outputs it computes.

    Made by ``ShardView(f, *args, **kwargs)``. Keyword arguments named ``mode`` ("jit" or
    "shard_map"), ``mesh_shape``, ``axis_names``, ``axis_types``, ``in_specs``, ``out_specs`` and
    ``stats`` set up the view; all other keyword arguments go to ``f``. Array leaves of the
    arguments (jax.Array, numpy arrays, jax.ShapeDtypeStruct) get a sharding from the view; other
    leaves are static.
    """

    _KIND_RANK = 0

    @classmethod
    def _accepts(cls, obj: Any) -> bool:
        """A callable that is not an array: ``ShardView(f, *args)``."""
        return is_function(obj)

    STATE_TRAITS: ClassVar[tuple[str, ...]] = STATE_TRAITS
    REQUEST_TYPE: ClassVar[str] = "trace_request"
    SYNCED: ClassVar[tuple[str, ...]] = (
        "_kind",
        "mode",
        *STATE_TRAITS,
        "error",
        "busy",
        "_trace_options",
        "_trace",
        "_trace_stats",
        "hardware",
        "_hardware_presets",
        "_estimate",
    )
    FRONT_END_TRAITS: ClassVar[tuple[str, ...]] = ("hardware",)

    _kind = traitlets.Unicode("function", read_only=True).tag(sync=True)
    """str, "function": tells the front end which view to draw. Python → JS."""
    mode = traitlets.Unicode("jit", read_only=True).tag(sync=True)
    """str, default "jit": "jit" or "shard_map" ("pmap" for a jax.pmap'd function), fixed when
    the view is made (read-only; make another view for the other mode). Python → JS."""
    mesh_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int], default: the mesh of the first input with a NamedSharding (any devices, its
    order kept; else of f's first sharding constraint; else one axis of every device): the mesh
    every input is laid out on. Both directions."""
    axis_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str], default: that mesh's (else ["x"]): one name per mesh axis. Both directions."""
    axis_types = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str], default: that mesh's (else ["auto"]): "auto" or "explicit" per mesh axis.
    Both directions."""
    in_specs = traitlets.List(traitlets.Any()).tag(sync=True)
    """list, default: each input's own spec on that mesh (else replicated): one spec per input
    array leaf (entries as ArrayView.spec). From Python also a single PartitionSpec (every
    leaf) or a tuple that is a pytree prefix of the arguments, as jax.shard_map reads it. Both
    directions."""
    out_specs = traitlets.List(traitlets.Any()).tag(sync=True)
    """list, default: None per output in jit mode (XLA chooses); in shard_map mode the spec of
    the first input of the same rank: one spec per output leaf (from Python also a single
    PartitionSpec or a pytree prefix of the outputs). Both directions."""
    _trace_options: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.TraceOptions: the function's leaves and the mesh choices. Python → JS."""
    _trace: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.Trace: the compiled layout shown. Python → JS."""
    _trace_stats: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.TraceStats: per-leaf statistics of the trace with the same key. Python → JS."""
    _estimate: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.EstimateWire: the estimate of the compiled layout on ``hardware`` (same key as
    ``_trace``). Python → JS."""

    def __init__(self, f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        import jax

        own = {k: kwargs.pop(k) for k in list(kwargs) if k in OWN_KWARGS}
        mode = own.get("mode", "jit")
        self._devices = list(jax.devices())
        self._traced: trace_mod.Traced
        if pmap_mod.pmapped_of(f) is not None:  # pmap fixes its own mesh and layout
            self._traced = pmap_mod.PmapTraced(f, args, kwargs, self._devices, own.get("mode"))
            mode = "pmap"
        elif is_planned(kwargs.get("mesh")):  # a plan: compiled in the planning helper
            from ..plan.traced import PlanTraced

            plan_mesh = kwargs.pop("mesh")
            self._traced = PlanTraced(f, args, kwargs, mode, self._devices, plan_mesh=plan_mesh)
            plan_progress.attach(self)  # a tpu_mesh: TPU compiles in the background
        else:
            self._traced = trace_mod.Traced(f, args, kwargs, mode, self._devices)
        self._with_stats = bool(own.get("stats", True))
        # Statistics without a compile per layout: inputs from their arguments' tiles (kept for
        # the view's life: the arguments never change), outputs where their shards sit.
        n = self._n_devices()
        self._leaf_stats = LeafStats(n, wire.values_budget(n))
        # The statistics of each layout that ran (host data, as many as the compile cache):
        # going back to one needs no run, and the view keeps no device arrays for it.
        self._summaries: OrderedDict[result_mod.TraceState, list[list[Summary]]] = OrderedDict()
        self._result: result_mod.TraceResult | None = None
        self._out_leaves: list[wire.LeafInfo] = []
        super().__init__()
        self.set_trait("mode", mode)
        base = (
            self._traced.own
            if isinstance(self._traced, pmap_mod.PmapTraced)
            else self._default_state()
        )
        self._original = base
        self._set_traits(base.to_wire())
        self._out_leaves = self._output_infos(None, base)  # the outputs' ranks normalize specs
        self._quiet = False
        overrides = {k: own[k] for k in STATE_TRAITS if k in own}
        st = self._candidate(overrides) if overrides else base  # malformed input raises here
        self._set_traits(st.to_wire())
        self._shown = st
        res: result_mod.TraceResult | None = None
        try:  # f may fail for this layout: then show why; the controls can fix it
            self._check(st)
            res = self._compiled(st)
            arrays = self._run(res)
        except ValueError as e:
            error = str(e)
        if res is not None:
            self._original = res.state
            self._out_leaves = self._output_infos(res, st)
        self._publish_options()
        if res is None:
            self._failed = error
            self._show_error(error)
        else:
            self._publish(res.state, (res, False, arrays))
        rerun.register(self)

    # ---------------------------------------------------------------- public API
    @property
    def planned(self) -> str:
        """For a plan (``mesh=AbstractMesh(...)``), what it is in words: "planned on
        AbstractMesh (32, 8) · no devices · planned: compiled by XLA's CPU compiler for 256
        simulated devices…"; "" for a view on the kernel's devices."""
        note_of = getattr(self._traced, "note_of", None)  # (a TPU plan: the compiler at work)
        return note_of(self._result) if note_of else str(getattr(self._traced, "note", ""))

    def _n_devices(self) -> int:
        """The devices layouts span: the kernel's, or a plan's positions."""
        return int(getattr(self._traced, "n_positions", len(self._devices)))

    def _default_state(self) -> result_mod.TraceState:
        """The layout the view starts from (the inputs' own; a plan's mesh for a plan)."""
        if hasattr(self._traced, "plan_mesh"):
            return self._traced.default_state()  # type: ignore[attr-defined, no-any-return]
        return trace_mod.default_state(self._traced, len(self._devices))

    @property
    def fn_name(self) -> str:
        """The function's name (``f.__name__``, or its type's name)."""
        return self._traced.fn_name

    @property
    def trace(self) -> result_mod.TraceResult | None:
        """The compiled layout now shown: ``.input_leaves`` and ``.output_leaves`` (path,
        shape, dtype, sharding, local shape, layout), ``.collectives`` (records with ``.kind``,
        ``.axes``, ``.shape``, ``.bytes``), ``.memory``, ``.flops``, ``.constraints``,
        ``.hlo_text``, ``.compiled``. None when no layout has compiled yet."""
        return self._result

    @property
    def outputs(self) -> list[Any] | None:
        """The output arrays of the last good run, flattened (one per output leaf). The view
        keeps none: they are computed again (the cached executable re-runs) when asked for,
        and the caller holds them."""
        return None if self._result is None else self._result.outputs

    @property
    def code(self) -> str:
        """Python for the layout shown: the mesh, then ``f_sharded = jax.jit(f,
        in_shardings=..., out_shardings=...)`` (jit) or ``jax.jit(jax.shard_map(f, mesh=mesh,
        in_specs=..., out_specs=...))``; "" before a layout compiled. What the widget's "copy"
        button copies."""
        from ..export.code import function_code

        if self._result is None:
            return ""
        if self.mode == "pmap":  # pmap's own layout: nothing to choose, so no shardings to write
            n = math.prod(self.mesh_shape)
            return (
                f"# f is jax.pmap'd: pmap lays each argument's mapped dimension over {n} devices\n"
                "# itself (one slice per device), so there are no shardings to write.\n"
                "out = f(*args)\n"
            )
        return function_code(self._code_layout(self._result))

    def _code_layout(self, res: result_mod.TraceResult) -> Any:
        from ..export.code import FunctionLayout
        from ..model.layout import mesh_info

        args, kwargs = self._traced.arg_template()
        st = res.state
        return FunctionLayout(
            name=self.fn_name,
            mode=self.mode,
            mesh=mesh_info(self._traced.mesh(st)),
            in_specs=st.in_specs,
            out_specs=st.out_specs,
            args=args,
            kwargs=kwargs,
            out=self._traced.out_template(st),
            in_memory=[getattr(sh, "memory_kind", None) for sh in res.in_shardings],
            out_memory=[getattr(sh, "memory_kind", None) for sh in res.out_shardings],
            planned=bool(self.planned),
        )

    def to_svg(self, width: int = 760) -> str:
        """The compiled function as a standalone SVG (no browser needed): every input and
        output leaf's layout, the collectives XLA inserted and memory per device. ValueError
        when no layout compiled yet."""
        from ..render.picture import function_svg

        if self._result is None:
            raise ValueError(f"nothing compiled to draw: {self.error or 'no layout yet'}")
        return function_svg(
            self._result,
            name=self.fn_name,
            width=width,
            n_devices=self._n_devices(),
            note=self.planned,
        )

    def _picture_name(self) -> str:
        import re

        return "shardwidget_" + (re.sub(r"[^A-Za-z0-9_]+", "_", self.fn_name).strip("_") or "f")

    def reset(self) -> None:
        """Back to the layout the view was made with."""
        self.set_layout(**self._original.to_wire())

    def save_html(self, path: str | pathlib.Path) -> ExportReport:
        """Write one self-contained HTML file (no network, no kernel) showing the function as
        compiled now: shardings, collectives, memory and outputs. Returns a report of the size
        (one layout: a saved page cannot re-compile)."""
        from ..export.page import save_function_view

        return save_function_view(self, path)

    def __repr__(self) -> str:
        mesh = dict(zip(self.axis_names, self.mesh_shape, strict=False))
        out = text.render_trace(self.fn_name, self.mode, mesh, self.error, self._result)
        if not self.planned:
            return out
        head, _, rest = out.partition("\n")
        return "\n".join([head, f"  {self.planned}", *([rest] if rest else [])])

    def _static_html(self) -> str:
        from ..render.snapshot import picture_html

        drawn = self.to_svg() if self._result is not None else ""
        return picture_html(drawn, self.error, repr(self), caption=f"{self.fn_name} ({self.mode})")

    def __setattr__(self, name: str, value: Any) -> None:
        """As ShardView's; ``in_specs`` / ``out_specs`` also take a single PartitionSpec (every
        leaf, as JAX reads one), which the list traits cannot hold: it goes to set_layout."""
        if (
            name in ("in_specs", "out_specs")
            and value is not None
            and (specs_mod.is_spec(value) or isinstance(value, dict))  # (a dict: a prefix)
            and not getattr(self, "_quiet", True)
        ):
            self.set_layout(**{name: value})
            return
        super().__setattr__(name, value)

    # ---------------------------------------------------------------- the change path
    def _adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        # Specs as JAX reads them (a single spec, a pytree prefix) become one per leaf.
        # None (as jax.jit's unspecified shardings): each input's own spec where it has one on
        # the view's mesh, and the outputs' defaults (XLA chooses; shard_map: see complete).
        if "in_specs" in changes and changes["in_specs"] is None:
            own = self._default_state()
            d["in_specs"] = [
                spec_mod.to_wire(s) if own.mesh_key[1] == tuple(d["axis_names"]) else None
                for s in own.in_specs
            ]
        elif "in_specs" in changes:
            d["in_specs"] = self._traced.in_leaf_specs(changes["in_specs"])
        if "out_specs" in changes and changes["out_specs"] is None:
            d["out_specs"] = []
        elif "out_specs" in changes and not _empty_seq(changes["out_specs"]):
            d["out_specs"] = self._out_leaf_specs(d, changes["out_specs"])
        # A mesh change alone drops the axes the new mesh no longer has from every spec.
        keep = set(d["axis_names"])
        if "in_specs" not in changes:
            d["in_specs"] = [_drop_axes(s, keep) for s in d["in_specs"]]
        if "out_specs" not in changes:
            d["out_specs"] = [None if s is None else _drop_axes(s, keep) for s in d["out_specs"]]
        for k in ("in_specs", "out_specs"):  # anything else: from_wire names it (ValueError)
            if isinstance(d[k], list | tuple):
                d[k] = list(d[k])

    def _out_leaf_specs(self, d: dict[str, Any], value: Any) -> list[Any]:
        """out_specs as given, one per output leaf (:meth:`Traced.out_leaf_specs`); as given
        when f does not trace for the state (the compile then says why)."""
        try:
            ins = result_mod.TraceState.from_wire({**d, "out_specs": []}, self._ndims(), [])
            self._traced.output_info(ins)
        except ValueError:  # malformed, or f fails to trace here: the check / compile says so
            return [value] if specs_mod.is_spec(value) or isinstance(value, dict) else list(value)
        return self._traced.out_leaf_specs(value, ins)

    def _ndims(self) -> list[int]:
        return [len(lf.shape) for lf in self._traced.leaves]

    def _from_wire(self, d: dict[str, Any]) -> result_mod.TraceState:
        ndims = [len(lf.shape) for lf in self._traced.leaves]
        out_ndims = [len(o["shape"]) for o in self._out_leaves]
        return result_mod.TraceState.from_wire(d, ndims, out_ndims)

    def _check(self, st: result_mod.TraceState) -> None:
        try:
            self._traced.validate(st)
        except ValueError as e:
            raise ValueError(self._with_pad_hint(str(e), st)) from None

    def _with_pad_hint(self, msg: str, st: result_mod.TraceState) -> str:
        """msg, ending with the padding of the first input that needs it, when padding the
        inputs is all st lacks (their padded shapes pass the same validation)."""
        from ..model.help import indivisible_hint, pad_for
        from ..model.state import LayoutState, validate

        n = len(self._traced.mesh_devices(st))  # a sub-mesh: its own devices
        axes = dict(zip(st.axis_names, st.mesh_shape, strict=False))
        hints = []
        try:
            for lf, spec in zip(self._traced.leaves, st.in_specs, strict=True):
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

    def _compute(self, st: result_mod.TraceState) -> tuple[result_mod.TraceResult, bool, Any]:
        """(compiled result, whether it came from the cache, the run's (inputs, outputs) or
        None); ValueError when f fails or the run would not fit in device memory."""
        cached = self._traced.cached(st)
        res = self._compiled(st)
        if res.ran and res.state in self._summaries:  # statistics known: no run needed
            self._summaries.move_to_end(res.state)
            return res, cached, None
        return res, cached, self._run(res)

    def _compiled(self, st: result_mod.TraceState) -> result_mod.TraceResult:
        """The compiled layout st (validated already); ValueError with a way out for errors
        that have one (see :mod:`shardwidget.model.help`)."""
        try:
            return self._traced.result(st, run=False, checked=True)
        except ValueError as e:
            msg = self._with_help(str(e), st)
            if self.mode == "shard_map" and not st.out_specs:
                msg = self._default_out_note(msg, st)
            raise ValueError(msg) from None

    def _default_out_note(self, msg: str, st: result_mod.TraceState) -> str:
        """msg, then: out_specs were not given, which ones the view tried (jax.shard_map
        itself requires them), and how to give them."""
        try:
            tried = trace_mod.complete(self._traced, st).out_specs
        except ValueError:
            return msg
        specs = ", ".join(spec_mod.to_text(s or ()) for s in tried)
        note = f"(out_specs not given: tried [{specs}]; jax.shard_map requires out_specs)"
        room = wire.MAX_MESSAGE - len(note) - 1
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + " " + note

    def _with_help(self, msg: str, st: result_mod.TraceState) -> str:
        """msg, ending with what fixes a ShardingTypeError under Explicit axes: the axis
        switches to Auto that compile (tried here), else the op's out_sharding. The message is
        capped when shown: the hint keeps its place, JAX's text gives way."""
        if not msg.startswith("ShardingTypeError") or "explicit" not in st.axis_types:
            return msg
        from ..model.help import explicit_fixes, sharding_type_hint

        def compiles(candidate: result_mod.TraceState) -> bool:
            try:
                self._traced.result(candidate, run=False)
            except ValueError:
                return False
            return True

        hint = sharding_type_hint(explicit_fixes(st, compiles), self.mode)
        room = wire.MAX_MESSAGE - len(hint) - 1
        return (msg if len(msg) <= room else msg[: room - 1] + "…") + " " + hint

    def _run(self, res: result_mod.TraceResult) -> Any:
        """(inputs, outputs) of a run of res, held by the caller only for the publish; None
        when the function cannot run here (ShapeDtypeStruct leaves) or the run failed."""
        if not self._traced.runnable:
            return None
        return self._traced.run(res)

    def _is_shown(self, st: result_mod.TraceState) -> bool:
        """The state shown already, and good: changing to it runs nothing."""
        return st == self._shown and not self._failed and self._result is not None

    def _output_infos(
        self, res: result_mod.TraceResult | None, st: result_mod.TraceState
    ) -> list[wire.LeafInfo]:
        """The output leaves of res, else of st as traced (none when f fails to trace)."""
        if res is not None:
            outs = [(lf.path, lf.shape, lf.dtype) for lf in res.output_leaves]
        else:
            try:
                outs = self._traced.output_leaves(st)
            except ValueError:
                outs = []
        return [wire.leaf_info(p, s, _dtype_name(dt)) for p, s, dt in outs]

    def _publish_options(self) -> None:
        opts = wire.trace_options(
            self._traced,
            n_devices=self._n_devices(),
            platform="planned" if self.planned else self._devices[0].platform,
            memory_kinds=["device"]
            if self.planned
            else [m.kind for m in self._devices[0].addressable_memories()],
            original=self._original,
            outputs=self._out_leaves,
        )
        opts["mode"] = self.mode  # "pmap" for a pmap'd function (traced as jit of it)
        opts["planned"] = self.planned
        opts.update(plan_progress.compile_with(self))  # type: ignore[typeddict-item]
        own = self._traced.own_mesh
        if own is not None and own.devices.size < len(self._devices):  # a sub-mesh: offer both
            from ..model.mesh import all_factorizations

            mine = all_factorizations(int(own.devices.size))
            both = opts["factorizations"]
            opts["factorizations"] = {k: mine.get(k, []) + v for k, v in both.items()}
        if isinstance(self._traced, pmap_mod.PmapTraced):
            opts["static"] = pmap_mod.FIXED
        if _several_processes():
            opts["static"] = MULTIPROCESS
        self._trace_options = opts

    def _on_custom_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        """Front-end requests and undo/redo steps, refused in words with several processes
        (MULTIPROCESS): they reach one process, and a compile and run must run on all."""
        if _several_processes():
            req = wire.parse_request(content, self.REQUEST_TYPE)
            if req is not None:
                self.error = MULTIPROCESS
                self.send(wire.result_msg(req[0], MULTIPROCESS))
                return
            if wire.parse_history(content) is not None:
                self.error = MULTIPROCESS
                return
        if isinstance(content, dict) and content.get("type") == "compile_with":
            plan_progress.on_message(self, content)  # a plan: "compile with" CPU / this TPU
            return
        super()._on_custom_msg(widget, content, buffers)

    def set_state(self, sync_data: dict[str, Any]) -> None:
        """As ShardView's; with several processes a layout trait from the front end is refused
        (MULTIPROCESS) and put back before anything is computed or cached."""
        if _several_processes():
            layout = [k for k in sync_data if k in self.STATE_TRAITS]
            if layout:
                self.error = MULTIPROCESS
                self.send_state(layout)  # the front end gets back the values kept here
                sync_data = {k: v for k, v in sync_data.items() if k not in layout}
                if not sync_data:
                    return
        super().set_state(sync_data)

    def _show_error(self, msg: str) -> None:
        """Keep the last good trace (or an empty one) and say why the new one failed."""
        msg = pmap_mod.mesh_clash_hint(msg)  # f calls a pmap'd function: say how to view it
        self.error = msg
        if self._result is None:
            self._key += 1
            self._trace = wire.trace(None, mode=self.mode, key=self._key, message=msg)
            self._trace_stats = wire.pending_trace_stats(self._key, 0)
            self._estimate = wire.empty_estimate(self._key, self.hardware)

    def _publish(self, st: Any, result: tuple[result_mod.TraceResult, bool, Any]) -> None:
        res, cached, arrays = result
        self._result = res
        self._shown, self._failed = st, ""
        self._key += 1
        if not self._out_leaves and res.out_shapes:  # the first layout that compiled
            self._out_leaves = self._output_infos(res, res.state)
            self._publish_options()
        trace = wire.trace(res, mode=self.mode, key=self._key, cached=cached, code=self.code)
        pending = wire.pending_trace_stats(self._key, len(res.out_shapes))
        self._set_traits(
            {**res.state.to_wire(), "error": "", "_trace": trace, "_trace_stats": pending}
        )
        self._send_stats(arrays)
        self._publish_estimate()
        self._remember(res.state)
        plan_progress.watch(self)

    # ---------------------------------------------------------------- cost (issue 12)
    def _publish_estimate(self) -> None:
        """``_estimate`` of the result shown on ``hardware`` (cost analysis: no device work)."""
        if self._result is None:
            self._estimate = wire.empty_estimate(self._key, self.hardware)
            return
        try:
            out = wire.estimate(self._result.estimate(self.hardware), key=self._key)
        except Exception as e:  # the estimate is an extra: never lose the view over it
            out = wire.empty_estimate(self._key, self.hardware, f"no estimate: {e}")
        self._estimate = out

    def _cost_changed(self) -> None:
        self._publish_estimate()
        if self.planned:  # the preset's TPU, for "compile with"
            self._publish_options()

    @traitlets.validate("mode")
    def _validate_mode(self, proposal: Any) -> Any:
        """The mode is fixed when the view is made: ``set_trait`` (which passes read_only by)
        is refused too."""
        if not self._quiet and proposal["value"] != self.mode:
            raise InvalidValue(
                f"mode is fixed when the view is made ({self.mode!r}); make another view for "
                f"{proposal['value']!r}: ShardView(f, *args, mode={proposal['value']!r})"
            )
        return proposal["value"]

    @traitlets.validate(*STATE_TRAITS)
    def _validate_layout(self, proposal: Any) -> Any:
        return self._validate_state(proposal)

    @traitlets.observe(*STATE_TRAITS)
    def _on_layout_trait(self, change: Any) -> None:
        self._on_state_trait(change)

    # ---------------------------------------------------------------- statistics
    def _send_stats(self, arrays: Any) -> None:
        """Per-block statistics of every output leaf, then every input leaf as laid out for
        the run (the first MAX_OUTPUT_STATS of each side); arrays: the run's (inputs, outputs),
        or None when it did not run."""
        res = self._result
        if res is None:
            return
        known = self._summaries.get(res.state) if arrays is None and res.ran else None
        if known is not None:
            self._trace_stats = wire.trace_stats(known[0], key=self._key, inputs=known[1])
            return
        n = self._n_devices()
        sides: list[list[Summary]] = []
        pixels = wire.thumb_pixel_budget(n)
        for side, leaves, is_input in (
            (None if arrays is None else arrays[1], res.output_leaves, False),
            (None if arrays is None else arrays[0], res.input_leaves, True),
        ):
            summaries = []
            for i, leaf in enumerate(leaves[: wire.MAX_LEAVES]):  # what the payload carries
                if side is None:  # the function did not run: blocks from the sharding
                    why = self._trace_options.get("run_disabled") or res.run_error or "not run"
                    summaries.append(Summary.unavailable(len(leaf.layout.blocks), why))
                    continue
                arr = side[i]
                why = _no_stats(arr)
                if why:
                    summaries.append(Summary.unavailable(len(leaf.layout.blocks), why))
                    continue
                lay = layout_of(arr)
                if not self._with_stats:
                    summ = Summary.unavailable(len(lay.blocks), "statistics are off")
                elif i >= wire.MAX_OUTPUT_STATS:
                    summ = Summary.unavailable(
                        len(lay.blocks),
                        f"statistics are sent for the first {wire.MAX_OUTPUT_STATS} leaves",
                    )
                else:
                    vd = tuple(range(min(arr.ndim, 2)))
                    plan = plan_for(lay, vd, pixels, wire.values_budget(n))
                    argument = i if is_input else None
                    try:
                        summ = self._leaf_stats.summarize(arr, lay, plan, pixels, argument)
                    except Exception as e:  # statistics are an extra: never lose the view
                        summ = Summary.unavailable(len(lay.blocks), f"statistics failed: {e}")
                summaries.append(summ)
            sides.append(summaries)
        if arrays is not None:
            self._summaries[res.state] = sides
            while len(self._summaries) > trace_mod.CACHE_SIZE:
                self._summaries.popitem(last=False)
        self._trace_stats = wire.trace_stats(sides[0], key=self._key, inputs=sides[1])


MULTIPROCESS = (
    "re-compiling from the controls is off with several processes: the front end reaches "
    "process 0 only, and a compile and run are collective (every process must run them at "
    "once). From Python, run the same change on every process, e.g. "
    "view.set_layout(in_specs=...)"
)


def _several_processes() -> bool:
    import jax

    return int(jax.process_count()) > 1


def _no_stats(arr: Any) -> str:
    """Why a leaf of a run has no value statistics ("" when it has): float0 (no data, and
    not a jax.Array) and PRNG keys (their data is opaque key bits)."""
    import jax

    from ..model.layout import _is_extended

    if not isinstance(arr, jax.Array):
        return f"no data: {_dtype_name(getattr(arr, 'dtype', 'float0'))} (not a jax.Array)"
    if _is_extended(arr.dtype):
        return f"PRNG keys ({arr.dtype}): no value statistics; the layout is shown"
    return ""


def _empty_seq(value: Any) -> bool:
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
