"""A function view's compiles for a plan: ``ShardView(step, *args, mesh=AbstractMesh(...))``.

:class:`PlanTraced` is the function view's :class:`~shardwidget.trace.function.Traced` on an
AbstractMesh: the same states, specs and checks, with the mesh's positions 0…N-1 as its
devices. Each layout is traced and lowered here under the AbstractMesh
(``lowering_platforms=("cpu",)``, no device touched) and compiled in the planning helper
(:func:`.compile.compile_text`): the collectives, memory and FLOPs are those of a real XLA
compile for N devices. Outputs XLA lays out itself are read back as specs on the plan's mesh
(:mod:`.shardings`). Nothing is run: inputs and outputs are shapes, statistics say so.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from jax.sharding import AbstractMesh, Mesh, NamedSharding

from .. import _jax
from ..hlo import flow as hlo_flow
from ..hlo import peak as hlo_peak
from ..hlo.peak import Peak
from ..model import mesh as mesh_mod
from ..model import spec as spec_mod
from ..trace.function import Traced
from ..trace.result import TraceResult, TraceState, jaxpr_text
from ..why import explain as why
from . import background, gpu, shardings, tpu
from . import compile as compile_mod
from . import helper as helper_mod
from .helper import PlanError
from .machine import machine_of

PLAN_UNCHECKED = (
    "not checked against XLA's dump: the planning helper compiles in another process and "
    "returns none"
)


class Refused(NamedTuple):
    """A layout the compiler refused for not fitting: where its memory goes (``peak``: None,
    ``unknown`` saying why, where the compiler wrote no report), against the device memory it
    has (``available`` bytes; None where not said) and whose that is."""

    peak: Peak | None
    unknown: str
    available: float | None
    whose: str


def _available(pl: compile_mod.Plan) -> tuple[float | None, str]:
    """(device memory, whose) a refused plan was judged against."""
    if pl.compiler == "gpu":
        have = getattr(pl.topology, "usable_memory", None)
        return (None if have is None else float(have)), "JAX's share of the GPU's"
    have = tpu.hbm_figures(pl.hbm)[1]
    return (None if have is None else float(have)), "the TPU compiler's"


class PlanTraced(Traced):
    """f and its arguments, compiled per layout for an AbstractMesh in the planning helper."""

    def __init__(self, *traced: Any, plan_mesh: Any, timeout: float | None = None) -> None:
        """``traced``: Traced's own arguments (f, args, kwargs, mode, devices); ``plan_mesh``:
        the AbstractMesh; ``timeout``: seconds the helper may take per compile."""
        self.plan_mesh = plan_mesh
        self.n_positions = int(plan_mesh.size)
        self.timeout = timeout
        super().__init__(*traced)
        self.own_mesh = None  # the plan's mesh is the view's mesh, whatever the inputs carry
        self.on_tpu_ready: Callable[[TraceState, str], None] | None = None
        """Set by a view that takes TPU results later (views/plan_progress.py): a TPU compile
        then runs in the background, the CPU compiler's plan standing in, and this is called
        from that thread with the state and "" (or the error in words) when it is over."""
        self.tpu_over: dict[TraceState, str] = {}
        """States whose background TPU compile is over: "" or the error in words."""
        self.run_disabled = (
            f"planned: no data (compiled for {self.n_positions} positions in the planning "
            "helper, never run)"
        )
        self.runnable = False
        self.refused: Refused | None = None
        """The newest layout refused for not fitting in device memory: where its memory goes
        (the view's memory panel shows what is over)."""

    @property
    def note(self) -> str:
        """What a plan is, in words, on the mesh it was made with (see :meth:`note_on`)."""
        return self.note_on(self.plan_mesh)

    def note_on(self, mesh: Mesh | AbstractMesh) -> str:
        """What a plan is, in words, on ``mesh`` (the view's "planned" badge and repr: the mesh
        shown, which a change of ``mesh_shape`` replaces)."""
        what = compile_mod.WHAT_A_PLAN_IS.format(n=self.n_positions)
        mi, gi = tpu.info(self.plan_mesh), gpu.info(self.plan_mesh)
        if gi is not None:
            what = gpu.note(gi)
        return f"{mesh_mod.planned_text(mesh)} · {tpu.note(mi) if mi is not None else what}"

    def _jit_in_shardings(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        return [None] * len(self.leaves)  # (f.lower(...) would compile on the kernel's devices)

    def default_state(self) -> TraceState:
        """The plan's mesh; each input's own spec where every axis it names is one of the
        plan's and divides its dim there (the layout the user chose, on the pod), else
        replicated (as ``jax.jit`` replicates an input given no sharding), with a note saying
        why (:attr:`not_carried`)."""
        m = self.plan_mesh
        sizes = dict(zip(m.axis_names, mesh_mod.mesh_sizes(m), strict=True))
        specs, self.not_carried = [], []
        for lf in self.leaves:
            spec, why_not = carried_spec(getattr(lf.value, "sharding", None), lf.shape, sizes)
            specs.append(spec)
            self.not_carried.append(why_not)
        types = tuple(mesh_mod.mesh_axis_types(m))
        return TraceState(mesh_mod.mesh_sizes(m), tuple(m.axis_names), types, tuple(specs), ())

    def _in_notes(self, state: TraceState) -> list[str]:
        """Per input: why its own spec was not carried onto the plan, while it is still shown
        replicated (a spec the user set since says nothing of it)."""
        why = getattr(self, "not_carried", None) or [""] * len(self.leaves)
        return [
            w if w and all(e == () for e in sp) else ""
            for w, sp in zip(why, state.in_specs, strict=True)
        ]

    def mesh(self, state: TraceState) -> Any:
        """The AbstractMesh of state (the plan's own while state asks for it)."""
        self.validate_mesh(state)
        m = self.plan_mesh
        own = (mesh_mod.mesh_sizes(m), tuple(m.axis_names), tuple(mesh_mod.mesh_axis_types(m)))
        if state.mesh_key == own:
            return m
        like = mesh_mod.build_abstract_mesh(
            state.mesh_shape, state.axis_names, state.axis_types, self.n_positions
        )
        if gpu.is_gpu(m):
            return gpu.reshaped(m, like)  # a GPU plan: the same GPUs and hosts
        return tpu.reshaped(m, like) if tpu.is_tpu(m) else like  # a TPU plan: the same chips

    def mesh_devices(self, state: TraceState) -> list[Any]:
        """The plan's positions (the view sizes its checks by their count)."""
        return list(range(self.n_positions))

    def validate_mesh(self, state: TraceState) -> None:
        """ValueError when state's mesh is not a mesh of the plan's N positions."""
        bad = [a for a in state.axis_names if mesh_mod.xla_unsafe(a)]
        if bad:
            raise ValueError(f"axis name {bad[0]!r}: XLA cannot compile a name that is not ASCII")
        mesh_mod.validate_mesh(
            state.mesh_shape,
            state.axis_names,
            state.axis_types,
            self.n_positions,
            max(mesh_mod.MAX_AXES, len(state.mesh_shape)),
            where="the plan",
        )

    def _compile(self, state: TraceState) -> TraceResult:
        t0 = time.perf_counter()
        mesh, in_sh, out_dtypes, out_shapes, traced = self.stage(state)
        with _jax.mesh_context(mesh), _jax.quiet_donation():
            lowered = traced.lower(lowering_platforms=tpu.lowering_platforms(mesh))
            text = str(lowered.as_text(debug_info=True))
        lowered_s = time.perf_counter() - t0
        started = None
        try:
            if self._in_background(text, mesh):  # the CPU plan now, the TPU's when it is done
                started = self._start_tpu(state, text, mesh)
                pl = self._cpu_meanwhile(traced, mesh, t0)
            else:
                pl = compile_mod.compile_text(text, mesh, self.timeout, t0)
        except PlanError as e:
            raise ValueError(str(e)) from None
        if not pl.fits:  # the compiler's answer (the GPU's: over JAX's share), in its figures
            self.refused = Refused(
                hlo_peak.with_paths(pl.peak, [lf.path for lf in self.leaves]),
                pl.peak_unknown,
                *_available(pl),
            )
            raise ValueError(pl.hbm if pl.compiler == "gpu" else tpu.hbm_words(pl.hbm, pl.topology))
        c_out, notes = self._out_shardings(state, mesh, pl.output_shardings, out_shapes)
        kept = _jax.kept_inputs(lowered, len(self.leaves))
        paths = [lf.path for lf in self.leaves], self.out_paths(state)
        colls = why.lazily(  # each collective's cause, from the same lowered module
            hlo_flow.attribute(pl.collectives, pl.hlo_text, kept, *paths),
            why.Explainer(text, pl.shardy_dump or None, pl.hlo_text, self, state,
                          unchecked=PLAN_UNCHECKED),
        )  # fmt: skip
        if self.mode == "shard_map":
            local_out = self.output_info(state)[0]
        else:
            local_out = [tuple(s.shard_shape(x)) for s, x in zip(c_out, out_shapes, strict=True)]
        m = pl.memory
        ins = [tuple(s.shard_shape(lf.shape)) for s, lf in zip(in_sh, self.leaves, strict=True)]
        return TraceResult(  # (fields in the order a plan knows them)
            state=state,
            mode=self.mode,
            collectives=colls,
            out_shardings=c_out,
            in_shardings=in_sh,
            local_shapes={"in": ins, "out": local_out},
            out_shapes=out_shapes,
            in_shapes=[lf.shape for lf in self.leaves],
            out_dtypes=out_dtypes,
            in_dtypes=[lf.dtype for lf in self.leaves],
            constraints=[],
            memory={
                "argument": m["arguments"],
                "output": m["outputs"],
                "alias": m["aliased"],
                "temp": m["temporaries"],
                "generated_code": m["code"],
                "peak": m["peak"],
            },
            flops=pl.flops,
            bytes_accessed=pl.bytes_accessed,
            compiled=None,
            hlo_text=pl.hlo_text,
            in_paths=[lf.path for lf in self.leaves],
            out_paths=self.out_paths(state),
            # a result from the TPU's background compile took the compiler's own time, not
            # the moment it took to read it from the cache
            compile_ms=max(time.perf_counter() - t0, lowered_s + pl.compile_s) * 1e3,
            jaxpr=jaxpr_text(traced.jaxpr),
            peak=hlo_peak.with_paths(pl.peak, [lf.path for lf in self.leaves]),
            peak_unknown=pl.peak_unknown,
            machine=machine_of(mesh),
            notes={
                "in": self._in_notes(state),
                "out": notes,
                **({"tpu_started": [repr(started)]} if started is not None else {}),
            },
        )

    # -- TPU plans in the background (plan/background.py)
    def _in_background(self, text: str, mesh: Mesh | AbstractMesh) -> bool:
        """A TPU compile not cached yet, for a view that takes results later (on_tpu_ready),
        on a mesh the CPU compiler can plan meanwhile."""
        later = (tpu.is_tpu(mesh) and not tpu.has_result(text, mesh)) or (
            gpu.is_gpu(mesh) and not gpu.has_result(text, mesh)
        )
        return (
            self.on_tpu_ready is not None
            and later
            and self.n_positions <= helper_mod.MAX_CPU_POSITIONS
        )

    def _start_tpu(self, state: TraceState, text: str, mesh: Mesh | AbstractMesh) -> float:
        def done(error: str) -> None:
            self.tpu_over[state] = error
            self.forget(state)  # the CPU stand-in goes: the next ask gets the TPU's
            if self.on_tpu_ready is not None:
                self.on_tpu_ready(state, error)

        return background.start(
            text, mesh, self.timeout or helper_mod.busy(helper_mod.TIMEOUT_S), done
        )

    def replan(self, mesh: Mesh | AbstractMesh) -> None:
        """Plan on ``mesh`` from now on (the same axes: a CPU AbstractMesh, or a tpu_mesh):
        what was compiled for the old one is dropped."""
        self.plan_mesh = mesh
        self._cache.clear()

    def forget(self, state: TraceState) -> None:
        """Drop state's cached result (a CPU stand-in whose TPU result has arrived)."""
        self._cache.pop(state, None)

    def _cpu_meanwhile(self, traced: Any, mesh: Mesh | AbstractMesh, t0: float) -> Any:
        """The CPU compiler's plan of the same layout on an AbstractMesh of the same axes."""
        with _jax.mesh_context(mesh):
            text = str(traced.lower(lowering_platforms=("cpu",)).as_text(debug_info=True))
        sizes, names = mesh_mod.mesh_sizes(mesh), tuple(mesh.axis_names)
        plain = _jax.abstract_mesh(sizes, names, tuple(mesh.axis_types))
        return compile_mod.compile_text(text, plain, self.timeout, t0)

    def note_of(self, res: TraceResult | None) -> str:
        """:attr:`note` for the result shown; for a CPU stand-in, that the TPU compiler is at
        work and for how long."""
        mi, gi = tpu.info(self.plan_mesh), gpu.info(self.plan_mesh)
        if res is None:
            return self.note
        started = next(iter(res.notes.get("tpu_started", ())), None)
        if (mi is None and gi is None) or started is None:  # the mesh shown
            return self.note_on(self.mesh(res.state))
        sizes = tuple(res.state.mesh_shape)
        shape = "(" + ", ".join(map(str, sizes)) + ("," if len(sizes) == 1 else "") + ")"
        if gi is not None:
            return (
                f"planned on {gi.title} {shape} · no devices · the CPU compiler's plan, shown "
                f"while XLA's GPU compiler (jaxlib {gi.jaxlib}) compiles for {gi.title} "
                f"({background.elapsed_words(float(started))}): the view switches when it is "
                "done"
            )
        assert mi is not None
        return (
            f"planned on {mi.title} {shape} · no devices · the CPU compiler's plan, shown while "
            f"the TPU compiler (libtpu {mi.libtpu}) compiles for {mi.title} "
            f"({background.elapsed_words(float(started))}; 30-60 s at 256 chips): the view "
            "switches when it is done"
        )

    def _out_shardings(
        self,
        state: TraceState,
        mesh: Mesh | AbstractMesh,
        texts: Sequence[str],
        shapes: Sequence[Any],
    ) -> tuple[list[Any], list[str]]:
        """Each output's NamedSharding on the plan's mesh: its out_spec where one was given,
        else the spec of XLA's own layout (replicated, with a note, where none describes it)."""
        names, sizes = tuple(mesh.axis_names), mesh_mod.mesh_sizes(mesh)
        out, notes = [], []
        for i, shape in enumerate(shapes):
            asked = state.out_specs[i] if i < len(state.out_specs) else None
            text = texts[i] if i < len(texts) else "{replicated}"
            spec = asked if asked is not None else shardings.spec_of(text, shape, names, sizes)
            notes.append("" if spec is not None else f"XLA's layout {text}: no spec on this mesh")
            out.append(NamedSharding(mesh, spec_mod.to_partition_spec(spec or ())))
        return out, notes


def carried_spec(sh: object, shape: Sequence[int], sizes: dict[str, int]) -> tuple[Any, str]:
    """(the spec of an input on the plan's mesh ``sizes``, "" or why it is replicated there):
    its NamedSharding's own spec where each axis it names is the plan's and the product of
    those axes' sizes divides the dim (``jax.jit`` refuses an input shape they do not divide)."""
    rep = ((),) * len(shape)
    if not isinstance(sh, NamedSharding):
        return rep, ""
    spec = spec_mod.normalize(_jax.spec_entries(sh.spec), len(shape))
    if all(e == () for e in spec):
        return rep, ""
    text = spec_mod.to_text(spec)
    missing = sorted({a for e in spec for a in e if a not in sizes})
    if missing:
        return rep, (
            f"its own spec {text} names {', '.join(map(repr, missing))}, not an axis of the "
            f"plan's mesh ({', '.join(sizes)}): shown replicated; give in_specs= to lay it out"
        )
    for dim, (n, e) in enumerate(zip(shape, spec, strict=True)):
        k = math.prod(sizes[a] for a in e)
        if n % k:
            return rep, (
                f"its own spec {text} splits dim {dim} ({n}) {k} ways on the plan's mesh, which "
                "does not divide it: shown replicated; give in_specs= to lay it out"
            )
    return spec, ""
