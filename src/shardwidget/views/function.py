"""FunctionView: ShardView(f, *args), what XLA does with a layout of a function's inputs.

Traits of the function view and its compute. The model (tracing, compiling, collectives,
memory) lives in :mod:`shardwidget.trace.function` and :mod:`shardwidget.hlo`; the wire format
in :mod:`shardwidget.wire`. As with array views, a front-end request that fails sets ``error`` and
keeps the last good view; a Python setter that fails raises ValueError with the same message and
changes nothing.
"""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import traitlets
from traitlets.utils.bunch import Bunch

from .. import wire
from ..cost import hardware as hw_mod
from ..export.code import FunctionLayout, function_code
from ..export.page import save_function_view
from ..model import tree_input
from ..model.layout import mesh_info
from ..model.mesh import all_factorizations
from ..model.spec import is_spec
from ..plan import tpu as tpu_mod
from ..plan.planned_function import PlanTraced
from ..render import text
from ..render.function_picture import function_svg
from ..render.snapshot import picture_html
from ..trace import function as trace_mod
from ..trace import pmap as pmap_mod
from ..trace.result import TraceResult, TraceState
from ..why import fixes as fixes_mod
from ..wire import search as search_wire
from ..wire import why as why_wire
from . import plan_progress, why
from .base import ShardView, is_function
from .boundary import InvalidValue
from .cost import CostMixin
from .function_path import Computed, FunctionPath, RunArrays
from .memory import MemoryMixin
from .search import SearchMixin

if TYPE_CHECKING:
    from ..export.page import ExportReport

STATE_TRAITS = ("mesh_shape", "axis_names", "axis_types", "in_specs", "out_specs")
OWN_KWARGS = ("mode", "stats", "hardware", *STATE_TRAITS)


class FunctionView(SearchMixin, MemoryMixin, CostMixin, ShardView[TraceState, Computed]):
    """Live view of a function compiled for a layout of its inputs: input and output shardings,
    the collectives XLA inserted, per-device memory and flops, and the outputs it computes.

    Made by ``ShardView(f, *args, **kwargs)``. Keyword arguments named ``mode`` ("jit" or
    "shard_map"), ``mesh_shape``, ``axis_names``, ``axis_types``, ``in_specs``, ``out_specs`` and
    ``stats`` set up the view, as do ``hardware`` (the preset the estimates are for) and, for
    a plan, ``mesh=AbstractMesh(...)``; all other keyword arguments go to ``f``. Array leaves of
    the arguments (jax.Array, numpy arrays, jax.ShapeDtypeStruct) get a sharding from the view;
    other leaves are static.
    """

    _KIND_RANK = 0
    _HOLDS: ClassVar[tuple[str, ...]] = ("_path", "_result")
    _path: FunctionPath

    @classmethod
    def _accepts(cls, obj: object) -> bool:
        """A callable that is not an array: ``ShardView(f, *args)``."""
        return is_function(obj)

    STATE_TRAITS: ClassVar[tuple[str, ...]] = STATE_TRAITS
    REQUEST_TYPE: ClassVar[str] = "trace_request"
    SYNCED: ClassVar[tuple[str, ...]] = (
        "_kind",
        "mode",
        "_trace_options",
        "_trace",
        "_trace_stats",
        "hardware",
        "_hardware_presets",
        "_estimate",
        "_search",
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
    _search: Any = traitlets.Dict(dict(search_wire.empty())).tag(sync=True)  # a wire TypedDict
    """wire.SearchWire: the newest ``search()``'s candidates as they arrive. Python → JS."""

    def _build(self, f: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        own = {k: kwargs.pop(k) for k in list(kwargs) if k in OWN_KWARGS}
        tree_input.check_arguments(args, kwargs)  # cycles, depth: in words, before JAX flattens
        self._path = FunctionPath(f, args, kwargs, own)
        self._result: TraceResult | None = None
        self._making = False
        if self._path.planned:
            plan_progress.attach(self)  # a tpu_mesh: TPU compiles in the background
        self._open()
        path = self._path
        self.set_trait("mode", path.mode)
        # the view's keyword (the estimates' preset), never f's; on a tpu_mesh, its TPU's
        hw = own.get("hardware", hw_mod.preset_for(getattr(path.traced, "plan_mesh", None), ""))
        if hw:
            self.hardware = hw
        base = path.default_state()
        self._original = base
        self._set_traits(base.to_wire())
        path.out_leaves = path.output_infos(None, base)  # the outputs' ranks normalize specs
        self._quiet = False
        overrides = {k: own[k] for k in STATE_TRAITS if k in own}
        st = self._candidate(overrides) if overrides else base  # malformed input raises here
        self._set_traits(st.to_wire())
        self._shown = st
        self._making = True  # the first layout published is the view's original
        try:  # f may fail for this layout: then show why; the controls can fix it
            self._change(st)  # (its publish publishes the options, once)
        except ValueError as e:
            self._failed = str(e)
            self.publish_options()
            self._show_error(str(e))
        finally:
            self._making = False

    # ---------------------------------------------------------------- public API
    @property
    def planned(self) -> str:
        """For a plan (``mesh=AbstractMesh(...)``), what it is in words: "planned on
        AbstractMesh (32, 8) · no devices · planned: compiled by XLA's CPU compiler for 256
        simulated devices…" (the mesh shown); "" for a view on the kernel's devices."""
        self._take_later()  # a TPU result that arrived meanwhile (no kernel: taken on read)
        return self._planned()

    def _planned(self) -> str:
        return self._path.planned_on(self._result)

    @property
    def _traced(self) -> trace_mod.Traced:
        """The traced function (its compile cache): the path's."""
        return self._path.traced

    @property
    def plan_traced(self) -> PlanTraced | None:
        """The plan this view shows (its compiles, and the TPU or GPU compiler's results that
        arrive later); None for a view on the kernel's devices."""
        traced = self._path.traced
        return traced if isinstance(traced, PlanTraced) else None

    @property
    def shown_trace(self) -> TraceResult | None:
        """The compiled layout in the traits now: :attr:`trace` without taking first what
        arrived meanwhile (for the work that hands results over, which runs in that taking)."""
        return self._result

    def _n_devices(self) -> int:
        return self._path.n_devices()

    @property
    def fn_name(self) -> str:
        """The function's name (``f.__name__``, or its type's name)."""
        return self._traced.fn_name

    @property
    def trace(self) -> TraceResult | None:
        """The compiled layout now shown: ``.input_leaves`` and ``.output_leaves`` (path,
        shape, dtype, sharding, local shape, layout), ``.collectives`` (records with ``.kind``,
        ``.axes``, ``.shape``, ``.bytes``), ``.memory``, ``.flops``, ``.constraints``,
        ``.hlo_text``, ``.compiled``. None when no layout has compiled yet."""
        self._take_later()  # a TPU result that arrived meanwhile (no kernel: taken on read)
        return self._result

    @property
    def outputs(self) -> list[Any] | None:
        """The output arrays of the last good run, flattened (one per output leaf). The view
        keeps none: they are computed again (the cached executable re-runs) when asked for,
        and the caller holds them."""
        return None if self._result is None else self._result.outputs

    def fixes(self, i: int) -> list[Any]:
        """The layouts that remove collective i's cause (``trace.collectives[i].cause``), each
        compiled now (one compile each): ``.what``, ``.state``, ``.removes``, ``.collectives``,
        ``.memory``; the ones that remove it first (:mod:`shardwidget.why.fixes`)."""
        return fixes_mod.compute(self._traced, fixes_mod.check_index(self._result, i), i)

    def apply_fix(self, i: int, k: int = 0) -> None:
        """Show the layout of ``fixes(i)[k]`` (a layout change: :meth:`undo` restores)."""
        fix = fixes_mod.pick(self.fixes(i), i, k)
        self.set_layout(**{n: v for n, v in fix.state.to_wire().items() if n in self.STATE_TRAITS})

    @property
    def code(self) -> str:
        """Python for the layout shown: the mesh, then ``f_sharded = jax.jit(f,
        in_shardings=..., out_shardings=...)`` (jit) or ``jax.jit(jax.shard_map(f, mesh=mesh,
        in_specs=..., out_specs=...))``; "" before a layout compiled. What the widget's "copy"
        button copies."""
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

    def _code_layout(self, res: TraceResult) -> Any:
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
            planned=bool(self._planned()),
            donate=st.donate,
        )

    def to_svg(self, width: int = 760) -> str:
        """The compiled function as a standalone SVG (no browser needed): every input and
        output leaf's layout, the collectives XLA inserted and memory per device. ValueError
        when no layout compiled yet."""
        if self._result is None:
            raise ValueError(f"nothing compiled to draw: {self.error or 'no layout yet'}")
        return function_svg(
            self._result,
            name=self.fn_name,
            width=width,
            n_devices=self._n_devices(),
            note=self._planned(),
        )

    def _picture_name(self) -> str:
        return "shardwidget_" + (re.sub(r"[^A-Za-z0-9_]+", "_", self.fn_name).strip("_") or "f")

    def reset(self) -> None:
        """Back to the layout the view was made with (its donation too)."""
        self.set_layout(**self._original.to_wire(), donate=list(self._original.donate))

    def save_html(self, path: str | pathlib.Path) -> ExportReport:
        """Write one self-contained HTML file (no network, no kernel) showing the function as
        compiled now: shardings, collectives, memory and outputs. Returns a report of the size
        (one layout: a saved page cannot re-compile)."""
        return save_function_view(self, path)

    def __repr__(self) -> str:
        self._take_later()  # a TPU/GPU result that arrived meanwhile, as .trace reads it
        mesh = dict(zip(self.axis_names, self.mesh_shape, strict=False))
        out = text.render_trace(self.fn_name, self.mode, mesh, self.error, self._result)
        if not self._planned():
            return out
        head, _, rest = out.partition("\n")
        return "\n".join(
            [head, f"  {self._planned()}", *([rest] if rest else []), *self._over_text()]
        )

    def _static_html(self) -> str:
        drawn = self.to_svg() if self._result is not None else ""
        said = text.collectives_said(self._result)
        caption = f"{self.fn_name} ({self.mode})"
        return picture_html(drawn, self.error, repr(self), caption=caption, said=said)

    def __setattr__(self, name: str, value: object) -> None:
        """As ShardView's; ``in_specs`` / ``out_specs`` also take a single PartitionSpec (every
        leaf, as JAX reads one), which the list traits cannot hold: it goes to set_layout."""
        if (
            name in ("in_specs", "out_specs")
            and value is not None
            and (is_spec(value) or isinstance(value, dict))  # (a dict: a prefix)
            and not getattr(self, "_quiet", True)
        ):
            self.set_layout(**{name: value})
            return
        super().__setattr__(name, value)

    # ---------------------------------------------------------------- the change path
    def _is_shown(self, st: TraceState) -> bool:
        """The state shown already, and good: changing to it runs nothing."""
        return st == self._shown and not self._failed and self._result is not None

    def publish_options(self) -> None:
        """Send the controls' options (``_trace_options``) again: a plan's badge (how long the
        TPU or GPU compiler has worked) and its "compile with" choice change while it is
        shown."""
        self._trace_options = _trace_options(self)

    def _on_custom_msg(self, widget: object, content: object, buffers: object) -> None:
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
        asked = why_wire.parse(content)  # the "why" panel: a cause, its fixes, applying one
        if asked is not None:
            with self._busy():  # fixes compile, and applying one is a layout change
                self.send(why.answer(self, asked))
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
            self._show_over()  # a layout refused for its size: what is over
            self._trace_stats = wire.pending_trace_stats(self._key, 0)
            self._estimate = wire.empty_estimate(self._key, self.hardware)

    def _publish(self, st: TraceState, result: Computed) -> None:
        res, cached, arrays = result
        first = self._making  # the layout the view is made with
        self._result = res
        self._shown, self._failed = st, ""
        self._key += 1
        if first:  # as compiled (specs completed): what reset and the controls' "original" show
            self._original = res.state
        if first or (not self._path.out_leaves and res.out_shapes):  # the outputs as compiled
            self._path.out_leaves = self._path.output_infos(res, res.state)
            self.publish_options()
        elif self._trace_options.get("planned", "") != self._planned():  # a plan on another mesh
            self._trace_options = {**self._trace_options, "planned": self._planned()}
        trace = wire.trace(
            res, mode=self.mode, key=self._key, cached=cached, code=self.code, hbm=self._hbm()
        )
        pending = wire.pending_trace_stats(self._key, len(res.out_shapes))
        self._set_traits(
            {**res.state.to_wire(), "error": "", "_trace": trace, "_trace_stats": pending}
        )
        self._send_stats(arrays)
        self._publish_estimate()
        self._remember(res.state)
        plan_progress.watch(self)

    def _hbm(self) -> tuple[float | None, str]:
        """(device memory, whose) the memory panel draws its line at: the ``hardware``
        preset's HBM, or on a ``tpu_mesh``/``gpu_mesh`` the memory a program gets there (as
        the estimate's "fits" and ``Plan.fits`` judge); (None, "") where the preset is unknown."""
        try:
            hw = hw_mod.hardware(self.hardware)
        except (KeyError, ValueError, TypeError):
            return None, ""
        machine = self._result.machine if self._result is not None else None
        if machine is not None:
            hw, _, source = machine.apply(hw)
            if source:
                return float(hw.hbm_bytes), f"{hw.name}, what a program gets"
        return float(hw.hbm_bytes), str(hw.name)

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
        if self._planned():  # the preset's TPU, for "compile with"
            self.publish_options()

    @traitlets.validate("mode")
    def _validate_mode(self, proposal: Bunch) -> Any:
        """The mode is fixed when the view is made: ``set_trait`` (which passes read_only by)
        is refused too."""
        if not self._quiet and proposal["value"] != self.mode:
            raise InvalidValue(
                f"mode is fixed when the view is made ({self.mode!r}); make another view for "
                f"{proposal['value']!r}: ShardView(f, *args, mode={proposal['value']!r})"
            )
        return proposal["value"]

    # ---------------------------------------------------------------- statistics
    def _send_stats(self, arrays: RunArrays | None) -> None:
        """Per-block statistics of the result shown (see FunctionPath.leaf_summaries); arrays:
        the run's (inputs, outputs), or None when it did not run."""
        res = self._result
        if res is None:
            return
        known = self._path.known_summaries(res) if arrays is None else None
        sides = known if known is not None else self._path.leaf_summaries(res, arrays)
        self._trace_stats = wire.trace_stats(sides[0], key=self._key, inputs=sides[1])


def _trace_options(view: FunctionView) -> wire.TraceOptions:
    """The controls' options of ``view`` (``_trace_options``): meshes, devices, the plan's
    compilers, what a pmap'd function or several processes keep fixed."""
    opts = wire.trace_options(
        view._traced,
        n_devices=view._n_devices(),
        platform="planned" if view._planned() else view._path.devices[0].platform,
        memory_kinds=["device"]
        if view._planned()
        else [m.kind for m in view._path.devices[0].addressable_memories()],
        original=view._original,
        outputs=view._path.out_leaves,
    )
    opts["mode"] = view.mode  # "pmap" for a pmap'd function (traced as jit of it)
    opts["planned"] = view._planned()
    offered = plan_progress.compile_with(view)
    if offered is not None:
        opts["compile_with"] = offered
    own = view._traced.own_mesh
    if own is not None and own.devices.size < len(view._path.devices):  # a sub-mesh: offer both
        mine = all_factorizations(int(own.devices.size))
        both = opts["factorizations"]
        opts["factorizations"] = {k: mine.get(k, []) + v for k, v in both.items()}
    plan_mesh = getattr(view._traced, "plan_mesh", None)  # a TPU plan: shapes its torus holds
    opts["factorizations"] = tpu_mod.offered(plan_mesh, opts["factorizations"])
    if isinstance(view._traced, pmap_mod.PmapTraced):
        opts["static"] = pmap_mod.FIXED
    if _several_processes():
        opts["static"] = MULTIPROCESS
    return opts


MULTIPROCESS = (
    "re-compiling from the controls is off with several processes: the front end reaches "
    "process 0 only, and a compile and run are collective (every process must run them at "
    "once). From Python, run the same change on every process, e.g. "
    "view.set_layout(in_specs=...)"
)


def _several_processes() -> bool:
    return int(jax.process_count()) > 1
