"""Traced functions: what XLA does with a layout. Imports no widget code.

:class:`Traced` holds a function and its arguments. Array leaves (``jax.Array``, numpy arrays,
``jax.ShapeDtypeStruct``) get a sharding from the state; every other leaf is static (closed
over). :meth:`Traced.run` compiles for one :class:`TraceState` and returns a :class:`TraceResult`:

- mode ``"jit"``: ``jax.jit(g, in_shardings=…, out_shardings=…)``, where an output spec of None
  lets XLA choose;
- mode ``"shard_map"``: ``jax.jit(jax.shard_map(g, mesh=…, in_specs=…, out_specs=…))``.

Everything runs inside ``jax.set_mesh(mesh)``, so functions written for Explicit axes
(``reshard(x, P('y'))``, ``out_sharding=P(...)``) see the view's mesh. Results are cached per
state; the user's arguments are never donated or changed.
"""

from __future__ import annotations

import inspect
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import hlo
from . import mesh as mesh_mod
from . import spec as spec_mod
from . import state as state_mod
from .layout import Layout

MODES = ("jit", "shard_map")
CACHE_SIZE = 16


@dataclass(frozen=True)
class Leaf:
    """An array argument of the function: where it sits in the arguments, shape and dtype."""

    path: str
    """Where it sits in the arguments, as the user would write it ("a", "params['w']")."""
    shape: tuple[int, ...]
    dtype: Any
    value: Any
    """The user's leaf: a jax.Array, numpy array or ShapeDtypeStruct."""

    @property
    def concrete(self) -> bool:
        """False for a jax.ShapeDtypeStruct (compiled only, never run)."""
        import jax

        return not isinstance(self.value, jax.ShapeDtypeStruct)


@dataclass(frozen=True)
class TraceState:
    """The layout a person asks for in a function view: one mesh for every input, a spec per
    input array leaf, and a spec per output leaf (None: XLA chooses, jit mode only).

    Attributes:
        mesh_shape: size of each mesh axis; their product is the device count.
        axis_names: one name per mesh axis.
        axis_types: "auto" or "explicit" per mesh axis.
        in_specs: one normalized spec per input array leaf.
        out_specs: one per output leaf, or empty until the outputs are known
            (see :func:`complete`).
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...]
    in_specs: tuple[spec_mod.NormSpec, ...]
    out_specs: tuple[spec_mod.NormSpec | None, ...]

    @staticmethod
    def from_wire(d: dict[str, Any], ndims: Sequence[int], out_ndims: Sequence[int]) -> TraceState:
        """From traits / a front-end request (ndims / out_ndims: rank of each input / output
        leaf; out_ndims may be empty when the outputs are not known yet). ValueError when
        malformed; an out_specs entry may be None (XLA chooses, jit only), and no out_specs at
        all means the defaults of :func:`complete`."""
        try:
            shape = tuple(d["mesh_shape"])
            names = tuple(d["axis_names"])
            types = tuple(d["axis_types"])
            ins, outs = list(d["in_specs"]), list(d["out_specs"])
        except (KeyError, TypeError) as e:
            raise ValueError(f"incomplete layout request: {e}") from None
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise ValueError(f"mesh sizes must be integers; got {list(shape)}")
        if len(ins) != len(ndims):
            raise ValueError(
                f"in_specs has {len(ins)} entries; the function has {len(ndims)} array inputs"
            )
        in_specs = tuple(spec_mod.normalize(s, n) for s, n in zip(ins, ndims, strict=True))
        if out_ndims and outs and len(outs) != len(out_ndims):  # none: defaults (complete)
            raise ValueError(
                f"out_specs has {len(outs)} entries; the function has {len(out_ndims)} outputs"
            )
        out_specs = tuple(
            None if s is None else spec_mod.normalize(s, out_ndims[i] if out_ndims else len(s))
            for i, s in enumerate(outs)
        )
        return TraceState(shape, names, types, in_specs, out_specs)

    def to_wire(self) -> dict[str, Any]:
        """The trait values (and front-end request state) of this layout."""
        return {
            "mesh_shape": list(self.mesh_shape),
            "axis_names": list(self.axis_names),
            "axis_types": list(self.axis_types),
            "in_specs": [spec_mod.to_wire(s) for s in self.in_specs],
            "out_specs": [None if s is None else spec_mod.to_wire(s) for s in self.out_specs],
        }

    @property
    def mesh_key(self) -> tuple[tuple[int, ...], tuple[str, ...], tuple[str, ...]]:
        """(mesh_shape, axis_names, axis_types): equal keys build the same mesh."""
        return (self.mesh_shape, self.axis_names, self.axis_types)


@dataclass(frozen=True)
class Constraint:
    """An intermediate the user pinned with with_sharding_constraint or reshard."""

    kind: str
    """"with_sharding_constraint" or "reshard"."""
    shape: tuple[int, ...]
    """The global shape of the pinned value."""
    dtype: str
    """Its dtype, as text."""
    sharding: Any
    """The sharding asked for (as the jaxpr carries it)."""
    spec_text: str
    """That sharding's spec as Python text, "P('x', None)" (else the sharding's repr)."""
    source: str
    """Where the user's code asked for it ("file.py:12"), "" when JAX does not say."""


@dataclass(frozen=True)
class LeafResult:
    """One input or output leaf of a compiled layout, complete: name, global shape, dtype,
    the executable's sharding, the shape one device sees, and its geometry."""

    path: str
    """The leaf's name: an input as the user wrote it, an output "out", "out[0]", …."""
    shape: tuple[int, ...]
    dtype: Any
    sharding: Any
    local_shape: tuple[int, ...]
    """The shape one device holds (in shard_map mode, what the body sees or returns)."""
    layout: Layout
    """Blocks and devices of the leaf: of the computed array when the function ran, else
    of the sharding."""


@dataclass
class TraceResult:
    """One compiled layout of the function, complete (the Python API: ``view.trace``): input
    and output leaves with names, shapes, dtypes and shardings; per-device memory and flops;
    the collectives XLA inserted; the arrays of the run."""

    state: TraceState
    """The layout compiled, out_specs completed."""
    mode: str
    """"jit" or "shard_map"."""
    in_shardings: list[Any]
    """One jax.sharding.Sharding per flattened input array leaf: the executable's own."""
    out_shardings: list[Any]
    """One per flattened output leaf: the executable's own."""
    in_shapes: list[tuple[int, ...]]
    """Global shape of each flattened input array leaf."""
    in_dtypes: list[Any]
    """Dtype of each flattened input array leaf."""
    out_shapes: list[tuple[int, ...]]
    """Global shape of each flattened output leaf."""
    out_dtypes: list[Any]
    """Dtype of each flattened output leaf."""
    local_shapes: dict[str, list[tuple[int, ...]]]
    """{"in": [...], "out": [...]}: the shape one device sees for every input and output leaf
    (in shard_map mode, the shapes the body is traced with and returns)."""
    collectives: list[hlo.Collective]
    """The collectives of the compiled HLO, with the mesh axes they run over."""
    constraints: list[Constraint]
    """The intermediates pinned with with_sharding_constraint or reshard, in program order."""
    memory: dict[str, int]
    """Per device, bytes: argument, output, alias, temp, generated_code, peak (= argument +
    output - alias + temp). Empty when XLA gives no analysis."""
    flops: float | None
    compiled: Any = field(repr=False)
    """The jax.stages.Compiled executable."""
    hlo_text: str = field(repr=False)
    """The per-device HLO XLA compiled."""
    in_paths: list[str] = field(default_factory=list)
    """Names of the input array leaves as the user wrote them ("a", "params['w']", …)."""
    out_paths: list[str] = field(default_factory=list)
    """Names of the output leaves: "out" for a single array, else "out[0]", "out['loss']"…"""
    compile_ms: float = 0.0
    """Milliseconds the trace, lowering and compile took (0 when it came from the cache)."""
    run_ms: float = 0.0
    """Milliseconds the run took (0 when it did not run)."""
    run_error: str = ""
    """Why running the compiled function failed ("" when it ran or was not run)."""
    ran: bool = False
    """Whether the compiled function ran (its outputs can be re-created)."""
    out_layouts: list[Layout] | None = field(default=None, repr=False)
    """The computed outputs' layouts, when the function ran."""
    jaxpr: str = field(default="", repr=False)
    """The jaxpr of the traced program as text (``str(jax.make_jaxpr(f)(*args))`` for the
    arguments laid out; Explicit axes show in its types, e.g. ``f32[8@x,4]``)."""
    notes: dict[str, list[str]] = field(default_factory=dict, repr=False)
    """{"in": [...], "out": [...]}: a line in words per leaf where the layout needs one
    (pmap's); empty otherwise."""
    rerun: Callable[[TraceResult], tuple[list[Any], list[Any]]] | None = field(
        default=None, repr=False, compare=False
    )
    """Re-creates (inputs, outputs) of a run: the result keeps no device arrays."""

    def estimate(self, hw: Any = None) -> Any:
        """Estimated time per device on a hardware preset (a name such as "tpu-v5p" or a
        ``shardwidget.Hardware``): ``.compute_s``, ``.memory_s``, ``.collectives`` (each with
        ``.seconds``), ``.total_s``, ``.bound``, ``.fits``; the model is in
        :mod:`shardwidget.cost.estimate`."""
        from .cost.estimate import estimate_trace
        from .cost.hardware import DEFAULT

        return estimate_trace(self, hw or DEFAULT)

    @property
    def outputs(self) -> list[Any] | None:
        """The output arrays (flattened), when the function ran; None otherwise. Not kept: each
        access re-runs the cached executable on freshly laid out inputs (the caller holds the
        arrays it gets, and frees them by dropping them)."""
        if not self.ran or self.rerun is None:
            return None
        return self.rerun(self)[1]

    @property
    def inputs(self) -> list[Any] | None:
        """The input arrays (flattened) as laid out for the run: the user's own arrays where
        they already had the chosen sharding, else copies made now (not kept, as outputs);
        None where the function was not run."""
        if not self.ran or self.rerun is None:
            return None
        return self.rerun(self)[0]

    @property
    def input_leaves(self) -> list[LeafResult]:
        """Every input array leaf as laid out for this compile."""
        from .layout import layout_of_sharding

        return [
            LeafResult(path, shape, dtype, sh, tuple(loc), layout_of_sharding(sh, shape, dtype))
            for path, shape, dtype, sh, loc in zip(
                self.in_paths,
                self.in_shapes,
                self.in_dtypes,
                self.in_shardings,
                self.local_shapes["in"],
                strict=True,
            )
        ]

    @property
    def output_leaves(self) -> list[LeafResult]:
        """Every output leaf: the computed arrays' layouts when the function ran."""
        from .layout import layout_of_sharding

        out = []
        for i, (path, shape, dtype, sh, loc) in enumerate(
            zip(
                self.out_paths,
                self.out_shapes,
                self.out_dtypes,
                self.out_shardings,
                self.local_shapes["out"],
                strict=True,
            )
        ):
            lay = (
                self.out_layouts[i]
                if self.out_layouts is not None
                else layout_of_sharding(sh, tuple(shape), dtype)
            )
            out.append(LeafResult(path, tuple(shape), dtype, sh, tuple(loc), lay))
        return out


# ------------------------------------------------------------------------------- helpers
def is_array_leaf(x: Any) -> bool:
    """Whether an argument leaf gets a sharding from the view (else it is static)."""
    import jax

    return isinstance(x, jax.Array | np.ndarray | jax.ShapeDtypeStruct)


def jaxpr_text(jaxpr: Any) -> str:
    """A jaxpr as ``str(jaxpr)`` prints it, without the colour codes JAX adds in a notebook."""
    return str(jaxpr.pretty_print(use_color=False))


def clean_error(e: BaseException) -> str:
    """One readable message from a JAX/XLA exception (no traceback-filtering footer)."""
    msg = str(e).split("\n--------------------")[0].strip()
    name = type(e).__name__
    if not msg:
        return name
    if name in ("ValueError", "TypeError"):
        return msg
    return f"{name}: {msg}"


def _param_names(f: Callable[..., Any], n: int) -> list[str]:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return [f"args[{i}]" for i in range(n)]
    names: list[str] = []
    for i in range(n):
        if i < len(params) and params[i].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            names.append(params[i].name)
        else:
            names.append(f"args[{i}]")
    return names


def _path_text(path: Any, arg_names: Sequence[str]) -> str:
    import jax

    head, rest = path[0], path[1:]
    if getattr(head, "idx", None) == 0 and rest:  # positional args
        i = rest[0].idx
        return str(arg_names[i]) + jax.tree_util.keystr(rest[1:])
    if rest:  # keyword args
        return str(getattr(rest[0], "key", rest[0])) + jax.tree_util.keystr(rest[1:])
    return jax.tree_util.keystr(path)


def _walk_constraints(jaxpr: Any, out: list[Constraint]) -> None:
    from jax._src import core
    from jax._src import source_info_util as siu

    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in ("sharding_constraint", "reshard"):
            sh = eqn.params.get("sharding", eqn.params.get("dst_sharding"))
            aval = eqn.outvars[0].aval
            spec = getattr(sh, "spec", None)
            ndim = len(aval.shape)
            text = (
                spec_mod.to_text(spec_mod.normalize(tuple(spec), ndim))
                if spec is not None
                else str(sh)
            )
            try:
                src = siu.summarize(eqn.source_info)
            except Exception:
                src = ""
            out.append(
                Constraint(
                    kind="with_sharding_constraint" if name == "sharding_constraint" else "reshard",
                    shape=tuple(int(d) for d in aval.shape),
                    dtype=str(aval.dtype),
                    sharding=sh,
                    spec_text=text,
                    source=src,
                )
            )
        for sub in core.jaxprs_in_params(eqn.params):
            _walk_constraints(sub, out)


def _memory(compiled: Any) -> dict[str, int]:
    try:
        m = compiled.memory_analysis()
    except Exception:
        return {}
    if m is None:
        return {}
    if isinstance(m, list | tuple):
        m = m[0]

    def g(k: str) -> int:
        return int(getattr(m, k, 0) or 0)

    arg, out, alias, temp = (
        g("argument_size_in_bytes"),
        g("output_size_in_bytes"),
        g("alias_size_in_bytes"),
        g("temp_size_in_bytes"),
    )
    return {
        "argument": arg,
        "output": out,
        "alias": alias,
        "temp": temp,
        "generated_code": g("generated_code_size_in_bytes"),
        "peak": arg + out - alias + temp,
    }


def _flops(compiled: Any) -> float | None:
    try:
        c = compiled.cost_analysis()
    except Exception:
        return None
    if isinstance(c, list | tuple):
        c = c[0] if c else None
    if not c or "flops" not in c:
        return None
    return float(c["flops"])


def _local_shape(
    shape: Sequence[int], spec: spec_mod.NormSpec, sizes: dict[str, int]
) -> tuple[int, ...]:
    return tuple(
        d // math.prod(sizes[a] for a in entry) for d, entry in zip(shape, spec, strict=True)
    )


# ------------------------------------------------------------------------------- the model
class Traced:
    """A function and its arguments, compiled on demand per TraceState (cached)."""

    def __init__(
        self,
        f: Callable[..., Any],
        args: Sequence[Any],
        kwargs: dict[str, Any],
        mode: str,
        devices: Sequence[Any],
    ) -> None:
        import jax

        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        self.f, self.mode, self.devices = f, mode, list(devices)
        self.fn_name = getattr(f, "__name__", None) or type(f).__name__
        leaves_p, self._treedef = jax.tree_util.tree_flatten_with_path((tuple(args), dict(kwargs)))
        names = _param_names(getattr(f, "__wrapped__", f), len(args))
        self._all = [v for _, v in leaves_p]
        self._dyn_pos = [i for i, v in enumerate(self._all) if is_array_leaf(v)]
        self.leaves = [
            Leaf(
                _path_text(leaves_p[i][0], names),
                tuple(int(d) for d in self._all[i].shape),
                jax.dtypes.canonicalize_dtype(self._all[i].dtype),
                self._all[i],
            )
            for i in self._dyn_pos
        ]
        self.static_args = [
            f"{_path_text(p, names)}={v!r}"[:80] for p, v in leaves_p if not is_array_leaf(v)
        ]
        self.runnable = all(lf.concrete for lf in self.leaves)
        self._cache: OrderedDict[TraceState, TraceResult] = OrderedDict()
        self._out_info: dict[Any, tuple[list[tuple[int, ...]], list[Any], list[str]]] = {}
        self._out_tree: dict[Any, Any] = {}

    # -- the function with array leaves as its only arguments
    def _call(self, *dyn: Any) -> Any:
        import jax

        vals = list(self._all)
        for pos, v in zip(self._dyn_pos, dyn, strict=True):
            vals[pos] = v
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, vals)
        return self.f(*args, **kwargs)

    def _under_name(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """fn under the user's function name, so HLO op names and JAX's messages read
        jit(layer)/… rather than an internal name."""

        def call(*dyn: Any) -> Any:
            return fn(*dyn)

        call.__name__ = call.__qualname__ = self.fn_name
        return call

    @property
    def _named(self) -> Callable[..., tuple[Any, ...]]:
        """The function of the array leaves, returning its output leaves flattened."""
        return self._under_name(self._call_flat)

    def _call_flat(self, *dyn: Any) -> tuple[Any, ...]:
        import jax

        return tuple(jax.tree_util.tree_leaves(self._call(*dyn)))

    def output_info(self, state: TraceState) -> tuple[list[tuple[int, ...]], list[Any]]:
        """Shapes and dtypes of the output leaves: global shapes in jit mode (traced once: a
        layout never changes them); in shard_map mode the body's local shapes (they follow the
        in_specs; the global shape is the local one times the out_spec's axis sizes)."""
        import jax
        from jax.sharding import PartitionSpec

        key = None if self.mode == "jit" else (state.mesh_key, state.in_specs)
        hit = self._out_info.get(key)
        if hit is None:
            mesh = self.mesh(state)
            structs = self._structs(state, mesh)
            try:
                with jax.set_mesh(mesh):
                    if self.mode == "jit":
                        outs = jax.eval_shape(self._under_name(self._call), *structs)
                    else:
                        in_specs = tuple(spec_mod.to_partition_spec(s) for s in state.in_specs)
                        probe = jax.shard_map(
                            self._under_name(self._call),
                            mesh=mesh,
                            in_specs=in_specs,
                            out_specs=PartitionSpec(),  # type: ignore[no-untyped-call]
                            check_vma=False,
                        )
                        outs = jax.eval_shape(probe, *structs)
            except Exception as e:  # a shape or sharding error in f, found while tracing
                raise ValueError(
                    clean_error(e).replace("'_call_flat'", repr(self.fn_name))
                ) from None
            flat = jax.tree_util.tree_flatten_with_path(outs)[0]
            self._out_tree[key] = jax.tree_util.tree_structure(outs)  # for view.code
            hit = (
                [tuple(int(d) for d in o.shape) for _, o in flat],
                [o.dtype for _, o in flat],
                ["out" + jax.tree_util.keystr(p) for p, _ in flat],
            )
            self._out_info[key] = hit
        return hit[0], hit[1]

    def out_paths(self, state: TraceState) -> list[str]:
        """Names of the output leaves ("out", "out[0]", "out['loss']", …)."""
        self.output_info(state)
        return self._out_info[None if self.mode == "jit" else (state.mesh_key, state.in_specs)][2]

    def arg_template(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(args, kwargs) as given, each leaf replaced by a :class:`shardwidget.code.Slot`:
        the array leaves numbered in order, the static ones marked (for ``view.code``)."""
        import jax

        from .code import Slot

        dyn = {pos: k for k, pos in enumerate(self._dyn_pos)}
        slots = [Slot(dyn[i]) if i in dyn else Slot(i, True) for i in range(len(self._all))]
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, slots)
        return tuple(args), dict(kwargs)

    def out_template(self, state: TraceState) -> Any:
        """The outputs' pytree with leaf i replaced by ``Slot(i)`` (from the trace that
        :meth:`output_info` keeps)."""
        import jax

        from .code import Slot

        self.output_info(state)
        tree = self._out_tree[None if self.mode == "jit" else (state.mesh_key, state.in_specs)]
        return jax.tree_util.tree_unflatten(tree, [Slot(i) for i in range(tree.num_leaves)])

    def output_leaves(self, state: TraceState) -> list[tuple[str, tuple[int, ...], Any]]:
        """(path, global shape, dtype) of every output leaf for state; traces f, so it raises
        ValueError for errors in f."""
        state = complete(self, state)
        _, dtypes = self.output_info(state)
        return list(zip(self.out_paths(state), self.global_out_shapes(state), dtypes, strict=True))

    def global_out_shapes(self, state: TraceState) -> list[tuple[int, ...]]:
        """Global shapes of the output leaves (shard_map: local shapes times out_spec axes)."""
        shapes, _ = self.output_info(state)
        if self.mode == "jit":
            return shapes
        sizes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
        return [
            tuple(
                d * math.prod(sizes[a] for a in entry)
                for d, entry in zip(shape, spec or ((),) * len(shape), strict=True)
            )
            for shape, spec in zip(shapes, state.out_specs, strict=False)
        ]

    def mesh(self, state: TraceState) -> Any:
        """The jax Mesh of state over the kernel's devices."""
        return mesh_mod.build_mesh(
            state.mesh_shape, state.axis_names, state.axis_types, self.devices
        )

    def _structs(self, state: TraceState, mesh: Any) -> list[Any]:
        import jax
        from jax.sharding import NamedSharding

        return [
            jax.ShapeDtypeStruct(  # type: ignore[no-untyped-call]
                lf.shape, lf.dtype, sharding=NamedSharding(mesh, spec_mod.to_partition_spec(s))
            )
            for lf, s in zip(self.leaves, state.in_specs, strict=True)
        ]

    def _shard_mapped(self, state: TraceState, mesh: Any) -> Any:
        import jax

        in_specs = tuple(spec_mod.to_partition_spec(s) for s in state.in_specs)
        out_specs = tuple(spec_mod.to_partition_spec(s or ()) for s in state.out_specs)
        return jax.shard_map(self._named, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

    # -- validation with messages that name the leaf
    def validate(self, state: TraceState) -> None:
        """Cheap checks (no tracing or compiling): the mesh, every input spec against its leaf,
        and out_specs for shard_map. Raises ValueError naming the leaf."""
        n = len(self.devices)
        mesh_mod.validate_mesh(state.mesh_shape, state.axis_names, state.axis_types, n)
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
        st = state_mod.LayoutState(
            state.mesh_shape, state.axis_names, state.axis_types, spec, "device"
        )
        try:
            state_mod.validate(st, shape, math.prod(state.mesh_shape), ["device"])
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
            msg = clean_error(e).replace("'_call_flat'", repr(self.fn_name))
            raise ValueError(msg) from None
        self._cache[state] = res
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        if run and self.runnable:
            self.run(res)
        return res

    def _compile(self, state: TraceState) -> TraceResult:
        import jax
        from jax.sharding import NamedSharding

        t0 = time.perf_counter()
        mesh = self.mesh(state)
        structs = self._structs(state, mesh)
        in_sh = [s.sharding for s in structs]
        with jax.set_mesh(mesh):
            self.check_outputs(state)
            _, out_dtypes = self.output_info(state)
            out_shapes = self.global_out_shapes(state)
            if self.mode == "jit":
                out_sh = tuple(
                    None if s is None else NamedSharding(mesh, spec_mod.to_partition_spec(s))
                    for s in state.out_specs
                )
                jf = jax.jit(self._named, in_shardings=tuple(in_sh), out_shardings=out_sh)
            else:
                jf = jax.jit(self._shard_mapped(state, mesh), in_shardings=tuple(in_sh))
            traced = jf.trace(*structs)
            compiled = traced.lower().compile()
        compile_ms = (time.perf_counter() - t0) * 1e3
        constraints: list[Constraint] = []
        _walk_constraints(traced.jaxpr.jaxpr, constraints)
        c_in = list(jax.tree_util.tree_leaves(compiled.input_shardings[0]))
        c_out = list(jax.tree_util.tree_leaves(compiled.output_shardings))
        txt = compiled.as_text()
        da = [d.id for d in (c_in[0]._device_assignment if c_in else mesh.devices.flat)]
        coords = {int(d.id): tuple(int(v) for v in idx) for idx, d in np.ndenumerate(mesh.devices)}
        colls = hlo.collectives(txt, da, coords, mesh.axis_names, tuple(mesh.devices.shape))
        sizes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
        if self.mode == "shard_map":
            local_in = [
                _local_shape(lf.shape, s, sizes)
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
            memory=_memory(compiled),
            flops=_flops(compiled),
            compiled=compiled,
            hlo_text=txt,
            in_paths=[lf.path for lf in self.leaves],
            out_paths=self.out_paths(state),
            compile_ms=compile_ms,
            jaxpr=jaxpr_text(traced.jaxpr),
        )

    def run(self, res: TraceResult) -> tuple[list[Any], list[Any]] | None:
        """Run res's executable on the arguments laid out for it: (inputs, outputs), which only
        the caller holds, or None when the run failed (``res.run_error`` says why). Records
        the outputs' layouts and the run time on res. ValueError (nothing run) when the run
        would not fit in free device memory (see :mod:`shardwidget.memory`)."""
        import jax

        from . import memory
        from .layout import layout_of

        if res.memory:
            mesh_devices = list(self.mesh(res.state).devices.flat)
            memory.check_fits(
                {d: res.memory["peak"] for d in mesh_devices},
                f"running {self.fn_name} for this layout",
            )
        t0 = time.perf_counter()
        try:
            placed = [
                jax.device_put(lf.value, sh)
                for lf, sh in zip(self.leaves, res.in_shardings, strict=True)
            ]
            with jax.set_mesh(self.mesh(res.state)):
                outs = res.compiled(*placed)
            outs = list(outs)
            jax.block_until_ready(outs)  # type: ignore[no-untyped-call]
        except Exception as e:
            res.run_error = clean_error(e)
            return None
        res.run_ms = (time.perf_counter() - t0) * 1e3
        res.out_layouts = [layout_of(o) for o in outs]
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
    """The mesh of the first input with a NamedSharding over all devices (else one axis 'x'),
    each input's own spec on it (else replicated); out_specs empty (see :func:`complete`)."""
    from jax.sharding import NamedSharding

    mesh_st: state_mod.LayoutState | None = None
    for lf in traced.leaves:
        sh = getattr(lf.value, "sharding", None)
        if isinstance(sh, NamedSharding) and sh.mesh.size == n_devices:
            mesh_st = state_mod.state_of_sharding(sh, len(lf.shape))
            break
    if mesh_st is None:
        mesh_st = state_mod.default_state(0, n_devices, "device")
    specs = []
    for lf in traced.leaves:
        sh = getattr(lf.value, "sharding", None)
        own = state_mod.state_of_sharding(sh, len(lf.shape)) if sh is not None else None
        if own is not None and own.mesh_key == mesh_st.mesh_key:
            specs.append(own.spec)
        else:
            specs.append(((),) * len(lf.shape))
    return TraceState(*mesh_st.mesh_key, tuple(specs), ())


def complete(traced: Traced, state: TraceState) -> TraceState:
    """state with out_specs filled in when it has none: XLA chooses (jit), or (shard_map) the
    spec of the first input of the same rank (the elementwise pattern), else replicated. Traces
    the function for its outputs, so it raises ValueError for errors in f."""
    if state.out_specs:
        return state
    shapes, _ = traced.output_info(state)
    if traced.mode == "jit":
        return TraceState(*state.mesh_key, state.in_specs, (None,) * len(shapes))
    by_rank: dict[int, spec_mod.NormSpec] = {}
    for lf, sp in zip(traced.leaves, state.in_specs, strict=True):
        by_rank.setdefault(len(lf.shape), sp)
    outs = tuple(by_rank.get(len(s), ((),) * len(s)) for s in shapes)
    return TraceState(*state.mesh_key, state.in_specs, outs)
