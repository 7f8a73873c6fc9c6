"""Traced functions: what XLA does with a layout. Imports no widget code.

:class:`Traced` holds a function and its arguments. Array leaves (``jax.Array``, numpy arrays,
``jax.ShapeDtypeStruct``) get a sharding from the state; every other leaf is static (closed
over). :meth:`Traced.run` compiles for one :class:`TraceState` and returns a :class:`TraceResult`:

- mode ``"jit"``: ``jax.jit(g, in_shardings=…, out_shardings=…)``, where an output spec of None
  lets XLA choose;
- mode ``"shard_map"``: ``jax.jit(jax.shard_map(g, mesh=…, in_specs=…, out_specs=…))``.

Everything runs inside ``jax.set_mesh(mesh)`` (``_jax.mesh_context``), so code for Explicit axes
(``reshard(x, P('y'))``) sees the view's mesh. Results are cached per state, arguments unchanged.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec

from .. import _jax
from ..hlo import collectives as hlo
from ..hlo import flow as hlo_flow
from ..hlo import peak as hlo_peak
from ..model import free_memory
from ..model import mesh as mesh_mod
from ..model import spec as spec_mod
from ..model import state as state_mod
from ..model.layout import layout_of
from ..why import explain as why
from . import _specs
from ._calls import FunctionCall
from ._compiled import check_alive, compiled_flops, local_shape, run_disabled
from ._jaxpr import (
    leaf_notes,
    other_mesh,
    walk_constraints,
    walk_shard_map_meshes,
)
from ._specs import Sharded, jit_out_specs, own_mesh, pad_out_specs
from .result import (
    JIT_REFUSES,
    MODES,
    Constraint,
    Leaf,
    TraceResult,
    TraceState,
    clean_error,
    jaxpr_text,
)

CACHE_SIZE = 16


# ------------------------------------------------------------------------------- the model
class Traced(FunctionCall):
    """A function and its arguments, compiled on demand per TraceState (cached) on the
    kernel's devices (its arguments and outputs as pytrees: :class:`FunctionCall`)."""

    def __init__(
        self,
        f: Callable[..., Any],
        args: Sequence[Any],
        kwargs: dict[str, Any],
        mode: str,
        devices: Sequence[Any],
    ) -> None:
        if mode not in MODES:
            raise ValueError(
                f"mode must be one of {', '.join(MODES)}; got {mode!r} (mode is the view's own "
                "keyword: give f a keyword of that name with functools.partial(f, mode=...))"
            )
        super().__init__(f, args, kwargs, mode)
        self.devices = list(devices)
        self.own_mesh: Any = own_mesh(self.leaves)
        """The mesh of the first input with a NamedSharding (None when none has one): its
        devices, in its order, are the view's mesh while the mesh shape stays its shape, so
        outputs land where ``jax.jit(f)(*args)`` puts them (a sub-mesh of some devices too).
        Found in f's sharding constraints when no input has one (see :meth:`find_own_mesh`)."""
        self.jit_out_shardings: list[Any] = []
        """Per output leaf: the sharding a ``jax.jit(g, out_shardings=…)`` f puts it in, as
        its own compile reports it ([] where f gives no out_shardings or is not jitted): the
        default out_specs on f's mesh, so the view shows what ``f(*args)`` does; their memory
        kinds (pinned_host) go with every out_spec the view compiles."""
        self.jit_in_memory: list[str | None] = [None] * len(self.leaves)
        """Per input leaf: the memory kind f's own jit places it in (None where not jitted)."""
        self.jit_in_shardings: list[Any] = self._jit_in_shardings(args, kwargs)
        """Per input leaf: the sharding a ``jax.jit(g, in_shardings=…)`` f gives it (its own
        in_shardings; None where it gives none or f is not jitted). A leaf without a
        sharding of its own (numpy) starts there, as ``f(*args)`` lays it out."""
        if self.own_mesh is None:  # f's own in_shardings, else its out_shardings
            shs = [*self.jit_in_shardings, *self.jit_out_shardings]
            self.own_mesh = own_mesh([Leaf("", (), None, Sharded(sh)) for sh in shs if sh])
        self.find_own_mesh()
        self.run_disabled = run_disabled(self.leaves, self.devices)
        """Why the compiled function is not run ("" when it is): ShapeDtypeStruct inputs, or
        sub-byte inputs (int4, uint4) that this backend's executables take only packed."""
        self.runnable = not self.run_disabled
        self._cache: OrderedDict[TraceState, TraceResult] = OrderedDict()

    def output_leaves(self, state: TraceState) -> list[tuple[str, tuple[int, ...], Any]]:
        """(path, global shape, dtype) of every output leaf for state; traces f, so it raises
        ValueError for errors in f."""
        state = complete(self, state)
        _, dtypes = self.output_info(state)
        return list(zip(self.out_paths(state), self.global_out_shapes(state), dtypes, strict=True))

    def mesh(self, state: TraceState) -> Any:
        """The jax Mesh of state: the inputs' own mesh devices in their order while the mesh
        shape is that mesh's (names and types as state says); else ``jax.make_mesh`` over the
        own mesh's devices when the sizes multiply to their count, else over every device."""
        own = self.own_mesh
        if own is not None and tuple(own.devices.shape) == state.mesh_shape:
            self.validate_mesh(state)
            types = tuple(
                AxisType.Explicit if t == "explicit" else AxisType.Auto for t in state.axis_types
            )
            return Mesh(own.devices, state.axis_names, axis_types=types)
        return mesh_mod.build_mesh(
            state.mesh_shape, state.axis_names, state.axis_types, self.mesh_devices(state)
        )

    def mesh_devices(self, state: TraceState) -> list[Any]:
        """The devices a mesh of state's shape is built on: a sub-mesh's own devices when the
        sizes multiply to their count (it stays on them), else every device (in
        ``jax.make_mesh``'s order)."""
        own = self.own_mesh
        if own is not None and math.prod(state.mesh_shape) == own.devices.size < len(self.devices):
            return list(own.devices.flat)
        return self.devices

    def validate_mesh(self, state: TraceState) -> None:
        """ValueError when state's mesh cannot be built: on the own mesh's devices, or on every
        device (the message names the device count the shape misses), or whose axis names
        XLA cannot read (it aborts the process compiling them: jax.jit(f) would too)."""
        bad = [a for a in state.axis_names if mesh_mod.xla_unsafe(a)]
        if bad:
            raise ValueError(
                f"axis name {bad[0]!r}: XLA aborts the process compiling a mesh axis name that "
                "is not plain ASCII (jax.jit(f) would kill the kernel); rename the mesh axes "
                "(axis_names=[...]) to ASCII names"
            )
        own = self.own_mesh
        n = len(self.devices)
        if own is not None and math.prod(state.mesh_shape) == own.devices.size:
            n = int(own.devices.size)
        # The inputs' own mesh keeps every axis it has (the controls build at most MAX_AXES).
        k = len(state.mesh_shape)
        own_shape = own is not None and state.mesh_shape == tuple(own.devices.shape)
        most = max(mesh_mod.MAX_AXES, k) if own_shape else mesh_mod.MAX_AXES
        try:
            mesh_mod.validate_mesh(state.mesh_shape, state.axis_names, state.axis_types, n, most)
        except ValueError as e:
            size = int(own.devices.size) if own is not None else n
            if size == n or "devices, but the kernel has" not in str(e):
                raise
            fits = ", ".join(map(str, mesh_mod.first_factorizations(size, k, 6)))
            raise ValueError(
                f"{e}; or on the inputs' own mesh of {size} devices: {fits or 'none'}"
            ) from None

    def _jit_in_shardings(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """See :attr:`jit_in_shardings` (and :attr:`jit_in_memory`, :attr:`jit_out_shardings`):
        read from ``f.lower(*args)`` when f is jitted (see :func:`_specs.jit_own_shardings`)."""
        if not hasattr(self.f, "lower") or self.mode != "jit" or not self.leaves:
            return [None] * len(self.leaves)
        ins, self.jit_in_memory, self.jit_out_shardings = _specs.jit_own_shardings(
            self.f, args, kwargs, len(self.leaves)
        )
        return ins

    def find_own_mesh(self) -> None:
        """No input has a mesh: take the mesh of f's first sharding constraint with a concrete
        mesh (``with_sharding_constraint(x, NamedSharding(mesh, ...))``: a sub-mesh, another
        device order, the axis names f uses), else of the first shard_map f calls, so the
        view compiles f where ``jax.jit(f)`` does. Traces f once; errors are left to the
        compile."""

        if self.own_mesh is not None or not self.leaves:
            return
        structs = [jax.ShapeDtypeStruct(lf.shape, lf.dtype) for lf in self.leaves]
        try:
            closed = jax.make_jaxpr(self._call)(*structs)
        except Exception:
            return
        found: list[Constraint] = []
        walk_constraints(closed.jaxpr, found)
        for c in found:
            mesh = getattr(c.sharding, "mesh", None)
            if isinstance(c.sharding, NamedSharding) and isinstance(mesh, jax.sharding.Mesh):
                self.own_mesh = mesh  # (an AbstractMesh, from a bare PartitionSpec: no devices)
                return
        # A shard_map on a mesh of its own (a named pmap's too): JAX runs it only inside that
        # same mesh. An unnamed pmap's axis has JAX's internal name: that one is left to the
        # error, which says which mesh to give (pmap.mesh_clash_hint).
        meshes: list[Any] = []
        walk_shard_map_meshes(closed.jaxpr, meshes)
        for mesh in meshes:
            if _jax.unnamed_pmap_axis(mesh.axis_names) is None:
                self.own_mesh = mesh
                return

    def _structs(self, state: TraceState, mesh: Mesh | AbstractMesh) -> list[Any]:

        def kind(i: int, lf: Leaf) -> str | None:
            # jit: an input keeps its own memory kind (pinned_host), else (numpy) takes the one
            # f's own in_shardings give it, as jax.jit(f)(x) runs it
            sh = getattr(lf.value, "sharding", None)
            mk = self.jit_in_memory[i] if sh is None else getattr(sh, "memory_kind", None)
            return mk if self.mode == "jit" and mk not in (None, "device") else None

        return [
            jax.ShapeDtypeStruct(
                lf.shape,
                lf.dtype,
                sharding=NamedSharding(
                    mesh, spec_mod.to_partition_spec(s), memory_kind=kind(i, lf)
                ),
            )
            for i, (lf, s) in enumerate(zip(self.leaves, state.in_specs, strict=True))
        ]

    # -- validation with messages that name the leaf
    def validate(self, state: TraceState) -> None:
        """Cheap checks (no tracing or compiling): the mesh, every input spec against its leaf,
        and out_specs for shard_map. Raises ValueError naming the leaf."""
        self.validate_mesh(state)
        if len(state.in_specs) != len(self.leaves):
            raise ValueError(
                f"in_specs has {len(state.in_specs)} entries; the function has "
                f"{len(self.leaves)} array inputs ({', '.join(lf.path for lf in self.leaves)})"
            )
        for lf, s in zip(self.leaves, state.in_specs, strict=True):
            self._check_spec(f"input {lf.path}", lf.shape, s, state)
        if self.mode == "shard_map" and any(s is None for s in state.out_specs):
            raise ValueError("shard_map needs an out_spec for every output (None is jit-only)")

    def check_outputs(self, state: TraceState) -> None:
        """out_specs against the output leaves (traces f once). Raises ValueError."""
        shapes, _ = self.output_info(state)
        if len(state.out_specs) != len(shapes):
            raise ValueError(
                f"out_specs has {len(state.out_specs)} entries; the function has "
                f"{len(shapes)} outputs"
            )
        for i, (shape, s) in enumerate(zip(shapes, state.out_specs, strict=True)):
            if s is None:
                continue
            if len(s) != len(shape):
                raise ValueError(
                    f"output {i}: the spec has {len(s)} entries; the output is {len(shape)}-d"
                )
            if self.mode == "jit":
                self._check_spec(f"output {i}", shape, s, state)

    @staticmethod
    def _check_spec(
        what: str, shape: tuple[int, ...], spec: spec_mod.NormSpec, state: TraceState
    ) -> None:
        axes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
        try:  # the mesh itself is checked by validate_mesh (an own mesh may have more axes)
            spec_mod.validate(spec, shape, axes)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None

    # -- compile and run
    def cached(self, state: TraceState) -> bool:
        """Whether state (completed) was compiled already."""
        try:
            return complete(self, state) in self._cache
        except ValueError:
            return False

    def result(self, state: TraceState, run: bool = True, *, checked: bool = False) -> TraceResult:
        """Compile (cached per state: executables and metadata only, at most CACHE_SIZE) and,
        when run and possible, run once (for its outputs' layouts and run time; the arrays are
        not kept, see :meth:`run`). Raises ValueError with a readable message for invalid
        layouts, trace / compile errors and runs that would not fit in device memory.
        ``checked``: the caller ran :meth:`validate` on state already."""
        if not checked:
            self.validate(state)
        state = complete(self, state)
        hit = self._cache.get(state)
        if hit is not None:
            self._cache.move_to_end(state)
            if run and not hit.ran and not hit.run_error and self.runnable:
                self.run(hit)
            return hit
        try:
            res = self._compile(state)
        except Exception as e:  # trace / lowering / compile errors from JAX and XLA
            raise ValueError(self._user_error(e)) from None
        self._cache[state] = res
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        if run and self.runnable:
            self.run(res)
        return res

    def stage(self, state: TraceState) -> tuple[Any, list[Any], list[Any], list[Any], Any]:
        """(mesh, input shardings, output dtypes, output shapes, the traced stage) of state: f
        jitted (shard_map mode: its shard_map) for state's layout, traced under the mesh."""

        mesh = self.mesh(state)
        structs = self._structs(state, mesh)
        in_sh = [s.sharding for s in structs]
        with _jax.mesh_context(mesh):
            self.check_outputs(state)
            _, out_dtypes = self.output_info(state)
            out_shapes = self.global_out_shapes(state)
            jf = _jitted(self, state, mesh, in_sh)
            self._check_jit_args(structs)
            called = _specs.as_called(structs, self.leaves, self.jit_in_memory)
            return mesh, in_sh, out_dtypes, out_shapes, jf.trace(*called)

    def _compile(self, state: TraceState) -> TraceResult:
        t0 = time.perf_counter()
        mesh, in_sh, out_dtypes, out_shapes, traced = self.stage(state)
        with _jax.quiet_donation():  # what a donation saves is read from the compile itself
            compiled, lowered, dump, report = _compile_reporting(traced, mesh)
        compile_ms = (time.perf_counter() - t0) * 1e3
        constraints: list[Constraint] = []
        walk_constraints(traced.jaxpr.jaxpr, constraints)
        # An input f does not use is dropped by XLA (its sharding reads None): it keeps the
        # sharding asked for, and a note says so.
        kept = jax.tree_util.tree_leaves(compiled.input_shardings[0], is_leaf=lambda v: v is None)
        c_in = [k if k is not None else asked for k, asked in zip(kept, in_sh, strict=True)]
        c_out = list(jax.tree_util.tree_leaves(compiled.output_shardings))
        other = [(other_mesh(lf.value, self.own_mesh) or (None, ""))[1] for lf in self.leaves]
        notes = leaf_notes(traced.jaxpr.jaxpr, [k is None for k in kept], self.leaves, other)
        txt = compiled.as_text()
        used = [k for k in kept if k is not None]
        da = [d.id for d in (_jax.device_assignment(used[0]) if used else mesh.devices.flat)]
        coords = {int(d.id): tuple(int(v) for v in idx) for idx, d in np.ndenumerate(mesh.devices)}
        colls = hlo.collectives(txt, da, coords, mesh.axis_names, tuple(mesh.devices.shape))
        in_paths, out_paths = [lf.path for lf in self.leaves], self.out_paths(state)
        colls = hlo_flow.attribute(colls, txt, [k is not None for k in kept], in_paths, out_paths)
        colls = why.lazily(colls, why.Explainer(lowered, dump, txt, self, state, constraints))
        sizes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
        if self.mode == "shard_map":
            local_in = [
                local_shape(lf.shape, s, sizes)
                for lf, s in zip(self.leaves, state.in_specs, strict=True)
            ]
            local_out = self.output_info(state)[0]
        else:
            local_in = [
                tuple(s.shard_shape(lf.shape)) for s, lf in zip(c_in, self.leaves, strict=True)
            ]
            local_out = [
                tuple(s.shard_shape(shape)) for s, shape in zip(c_out, out_shapes, strict=True)
            ]
        return TraceResult(
            state=state,
            mode=self.mode,
            in_shardings=c_in,
            out_shardings=c_out,
            in_shapes=[lf.shape for lf in self.leaves],
            in_dtypes=[lf.dtype for lf in self.leaves],
            out_shapes=out_shapes,
            out_dtypes=out_dtypes,
            local_shapes={"in": local_in, "out": local_out},
            collectives=colls,
            constraints=constraints,
            memory=free_memory.compiled_memory(compiled),
            flops=compiled_flops(compiled),
            compiled=compiled,
            hlo_text=txt,
            in_paths=in_paths,
            out_paths=out_paths,
            compile_ms=compile_ms,
            jaxpr=jaxpr_text(traced.jaxpr),
            notes=notes,
            **hlo_peak.peak_fields(report, _kept_paths(self.leaves, kept)),
        )

    def _check_jit_args(self, structs: Sequence[Any]) -> None:
        """Raise JAX's own error when f is a ``jax.jit(g, in_shardings=...)`` that refuses
        its arguments laid out as structs say: ``f(x)`` on a committed array whose sharding is
        not f's in_shardings raises "Sharding passed to jit does not match the sharding on the
        respective arg" (the view lays every input out with device_put, which commits it), and
        one in another memory kind "Memory kinds passed to jax.jit does not match memory kind".
        ``f.lower`` on the structs makes that same check; any other error is left to the
        compile."""
        if self.mode != "jit" or not self.leaves or not hasattr(self.f, "lower"):
            return
        if not hasattr(self.f, "trace"):  # jax.jit's wrapper has both (pmap has no trace)
            return
        if not _jax.jit_user_in_shardings(self.f):
            return  # no in_shardings: nothing to refuse, and no second trace of f
        vals = list(self._all)
        for pos, v in zip(self._dyn_pos, structs, strict=True):
            vals[pos] = v
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, vals)
        try:
            self.f.lower(*args, **kwargs)
        except ValueError as e:
            if any(m in str(e) for m in JIT_REFUSES):
                raise
        except Exception:  # f's own errors: the compile reports them
            return

    def run(self, res: TraceResult) -> tuple[list[Any], list[Any]] | None:
        """Run res's executable on the arguments laid out for it: (inputs, outputs), which only
        the caller holds, or None when the run failed (``res.run_error`` says why). Records
        the outputs' layouts and the run time on res. ValueError (nothing run) when the run
        would not fit in free device memory (see :mod:`shardwidget.model.free_memory`)."""

        if res.memory:
            mesh_devices = list(self.mesh(res.state).devices.flat)
            free_memory.check_fits(
                {d: res.memory["peak"] for d in mesh_devices},
                f"running {self.fn_name} for this layout",
            )
        t0 = time.perf_counter()
        try:
            check_alive(self.leaves)
            placed = [
                _jax.device_put(lf.value, sh)
                for lf, sh in zip(self.leaves, res.in_shardings, strict=True)
            ]
            with jax.set_mesh(self.mesh(res.state)), _jax.quiet_donation():
                outs = res.compiled(*_donatable(placed, res.state.donate))
            outs = list(outs)
            jax.block_until_ready(outs)
        except Exception as e:
            res.run_error = clean_error(e)
            return None
        res.run_ms = (time.perf_counter() - t0) * 1e3
        res.out_layouts = [  # a float0 output comes back as numpy: its sharding's layout
            layout_of(o) if isinstance(o, jax.Array) else lf.layout
            for o, lf in zip(outs, res.output_leaves, strict=True)
        ]
        res.ran = True
        res.rerun = self._rerun
        return placed, outs

    def _rerun(self, res: TraceResult) -> tuple[list[Any], list[Any]]:
        """(inputs, outputs) of res re-created (the user asked for them)."""
        arrays = self.run(res)
        if arrays is None:
            raise ValueError(f"re-running {self.fn_name} failed: {res.run_error}")
        return arrays


def default_state(traced: Traced, n_devices: int) -> TraceState:
    """The inputs' own mesh (:attr:`Traced.own_mesh`; else one axis 'x' over every device),
    each input's own spec on it (else replicated); out_specs empty (see :func:`complete`)."""
    mesh_st: state_mod.LayoutState | None = None
    own_mesh = traced.own_mesh
    if own_mesh is not None:
        mesh_st = state_mod.state_of_sharding(NamedSharding(own_mesh, PartitionSpec()), 0)
    if mesh_st is None:
        mesh_st = state_mod.default_state(0, n_devices, "device")
    specs = []
    for i, lf in enumerate(traced.leaves):
        sh = getattr(lf.value, "sharding", None) or traced.jit_in_shardings[i]
        own = state_mod.state_of_sharding(sh, len(lf.shape)) if sh is not None else None
        elsewhere = other_mesh(lf.value, own_mesh)  # on another mesh: see other_mesh
        if elsewhere is not None:
            entries = elsewhere[0] or ()
            specs.append(spec_mod.normalize(tuple(entries), len(lf.shape)))
            continue
        same = own is not None and getattr(sh, "mesh", None) == own_mesh
        if own is not None and same and own.mesh_key == mesh_st.mesh_key:
            specs.append(own.spec)
        else:
            specs.append(((),) * len(lf.shape))
    return TraceState(*mesh_st.mesh_key, tuple(specs), ())


def complete(traced: Traced, state: TraceState) -> TraceState:
    """state with out_specs filled in when it has none: XLA chooses (jit), or (shard_map) the
    spec of the first input of the same rank (the elementwise pattern), else replicated. Traces
    the function for its outputs, so it raises ValueError for errors in f."""
    if state.out_specs:
        return _padded(traced, state)
    shapes, _ = traced.output_info(state)
    if traced.mode == "jit":
        outs = jit_out_specs(traced.jit_out_shardings, traced.own_mesh, state.mesh_key, shapes)
        return dataclasses.replace(state, out_specs=outs)
    by_rank: dict[int, spec_mod.NormSpec] = {}
    for lf, sp in zip(traced.leaves, state.in_specs, strict=True):
        by_rank.setdefault(len(lf.shape), sp)
    outs = tuple(by_rank.get(len(s), ((),) * len(s)) for s in shapes)
    return dataclasses.replace(state, out_specs=outs)


def _padded(traced: Traced, state: TraceState) -> TraceState:
    """state with its short out_specs padded as JAX reads them (see :func:`pad_out_specs`)."""
    if all(s is None for s in state.out_specs):
        return state
    outs = pad_out_specs(state.out_specs, traced.output_info(state)[0])
    return state if outs == state.out_specs else dataclasses.replace(state, out_specs=outs)


def _compile_reporting(
    traced: object, mesh: Mesh | AbstractMesh
) -> tuple[Any, Any, str | None, dict[str, str]]:
    """:func:`why.compile_with_dump` (XLA's Shardy record) with the compile's memory reports
    (what the peak is read from) kept too."""
    report: dict[str, str] = {}
    compiled, lowered, dump = why.compile_with_dump(traced, mesh, report)
    return compiled, lowered, dump, report


def _jitted(traced: Traced, state: TraceState, mesh: Mesh | AbstractMesh, in_sh: list[Any]) -> Any:
    """f on its leaves jitted for state's layout (shard_map mode: its shard_map), the inputs
    state donates donated."""
    to = spec_mod.to_partition_spec
    if traced.mode != "jit":
        ins = tuple(to(s) for s in state.in_specs)
        outs = tuple(to(s or ()) for s in state.out_specs)
        sm = jax.shard_map(traced._named, mesh=mesh, in_specs=ins, out_specs=outs)
        return jax.jit(sm, in_shardings=tuple(in_sh), donate_argnums=state.donate)
    # each output in the memory kind f's own out_shardings give it (pinned_host)
    mks = _specs.memory_kinds(traced.jit_out_shardings, len(state.out_specs))
    out = [
        s if s is None else NamedSharding(mesh, to(s), memory_kind=mk)
        for s, mk in zip(state.out_specs, mks, strict=True)
    ]
    return jax.jit(
        traced._named,
        in_shardings=tuple(in_sh),
        out_shardings=tuple(out),
        donate_argnums=state.donate,
    )


def _donatable(placed: list[Any], donate: Sequence[int]) -> list[Any]:
    """The run's arguments: a donated input is a copy (the donation deletes what it is given,
    and ``device_put`` hands back the user's own array where it is laid out so already: the
    user's arrays are never donated), the others as placed."""
    return [
        jax.device_put(a, a.sharding, may_alias=False) if i in donate else a
        for i, a in enumerate(placed)
    ]


def _kept_paths(leaves: Sequence[Any], kept: Sequence[Any]) -> list[str]:
    """The compiled program's parameters' paths, in order: the input leaves XLA kept (an
    unused one has no parameter; its kept sharding reads None)."""
    return [lf.path for lf, k in zip(leaves, kept, strict=True) if k is not None]
