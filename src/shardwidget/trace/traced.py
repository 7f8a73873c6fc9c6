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
import pathlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import mesh as mesh_mod
from ..model import spec as spec_mod
from ..model import state as state_mod
from ..model.layout import Layout
from . import hlo

MODES = ("jit", "shard_map")
CACHE_SIZE = 16
JIT_REFUSES = "does not match the sharding on the respective arg"
"""Part of JAX's message when a jitted function's in_shardings refuse a committed argument."""


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
        from ..cost.estimate import estimate_trace
        from ..cost.hardware import DEFAULT

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
        from ..model.layout import layout_of_sharding

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
        from ..model.layout import layout_of_sharding

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


UNUSED_NOTE = "not used by the function: XLA drops it (no copy on the devices); shown as laid out"
CONSTANT_NOTE = "a constant: the function returns it without computing it from its inputs"
OTHER_MESH_NOTE = "on another mesh than the first input's ({what}): {how}"


def _same_blocks_spec(sharding: Any, shape: tuple[int, ...], own: Any) -> tuple[Any, ...] | None:
    """PartitionSpec entries on the mesh own that put the same blocks on the same devices as
    sharding (checked with devices_indices_map), or None when no spec does."""
    import itertools

    from jax.sharding import NamedSharding, PartitionSpec

    def key(sh: Any) -> dict[int, tuple[tuple[int, int], ...]]:
        return {
            d.id: tuple(sl.indices(n)[:2] for sl, n in zip(idx, shape, strict=True))
            for d, idx in sh.devices_indices_map(shape).items()
        }

    try:
        want = key(sharding)
        splits = [
            n // s if s else 1 for n, s in zip(shape, sharding.shard_shape(shape), strict=True)
        ]
    except Exception:
        return None
    sizes = dict(own.shape)
    names = list(own.axis_names)

    def per_dim(d: int, free: list[str]) -> Any:
        if d == len(shape):
            yield ()
            return
        for r in range(len(free) + 1):
            for combo in itertools.permutations(free, r):
                if math.prod(sizes[a] for a in combo) != splits[d]:
                    continue
                rest = [a for a in free if a not in combo]
                for tail in per_dim(d + 1, rest):
                    yield (combo, *tail)

    for n, cand in enumerate(per_dim(0, names)):
        if n > 200:
            break
        entries = tuple(None if not c else c[0] if len(c) == 1 else c for c in cand)
        sh = NamedSharding(own, PartitionSpec(*entries))  # type: ignore[no-untyped-call]
        if key(sh) == want:
            return entries
    return None


def other_mesh(value: Any, own: Any) -> tuple[tuple[Any, ...] | None, str] | None:
    """For an input whose NamedSharding is over a concrete mesh other than own: (its spec's
    entries on own, or None for replicated; a line in words). None for every other input.
    The same blocks on the same devices where a spec on own gives them (jax.jit(f) accepts
    that), else its own spec where own has the same axes (another device order or axis
    types: jax.jit(f) refuses it), else replicated."""
    import jax
    from jax.sharding import NamedSharding

    sh = getattr(value, "sharding", None)
    mesh = getattr(sh, "mesh", None)
    if (
        own is None
        or not isinstance(sh, NamedSharding)
        or not isinstance(mesh, jax.sharding.Mesh)
        or mesh == own
    ):
        return None
    ids = [d.id for d in mesh.devices.flat]
    if mesh.shape_tuple != own.shape_tuple:
        what = f"axes {dict(mesh.shape)}"
    elif ids != [d.id for d in own.devices.flat]:
        what = f"devices {ids}"
    else:
        what = "axis types " + ", ".join(str(t).split(".")[-1] for t in mesh.axis_types)
    shape = tuple(int(n) for n in value.shape)
    same = _same_blocks_spec(sh, shape, own)
    if same is not None:
        spec_txt = ", ".join(repr(e) for e in same)
        how = f"the same blocks on the same devices are P({spec_txt}) on the view's mesh"
        auto = jax.sharding.AxisType.Auto
        if any(t != auto for t in (*mesh.axis_types, *own.axis_types)):
            how += " (jax.jit(f) refuses inputs on different meshes with Explicit axes)"
        return same, OTHER_MESH_NOTE.format(what=what, how=how)
    if mesh.shape_tuple == own.shape_tuple:
        return tuple(sh.spec.partitions), OTHER_MESH_NOTE.format(
            what=what,
            how=(
                "jax.jit(f) refuses inputs on different meshes; "
                "shown with its spec on the view's mesh"
            ),
        )
    return None, OTHER_MESH_NOTE.format(what=what, how="shown replicated on the view's mesh")


def _notes(
    jaxpr: Any, dropped: Sequence[bool], leaves: Sequence[Leaf], other_mesh: Sequence[str] = ()
) -> dict[str, list[str]]:
    """{"in": [...], "out": [...]}: a line per input XLA dropped (unused, or float0), per input
    on another mesh than the view's (``other_mesh``) and per output that is a constant (a
    literal or a closed-over value in the traced jaxpr)."""
    from jax._src import core

    from ..model.layout import _dtype_name

    ins = []
    other = list(other_mesh) or [""] * len(leaves)
    for gone, lf, elsewhere in zip(dropped, leaves, other, strict=True):
        if elsewhere:
            ins.append(elsewhere)
        elif not gone:
            ins.append("")
        elif _dtype_name(lf.dtype) == "float0":
            ins.append("float0: a zero tangent with no data; XLA takes no buffer for it")
        else:
            ins.append(UNUSED_NOTE)
    outs = [CONSTANT_NOTE if c else "" for c in _constant_outputs(jaxpr, core)]
    return {"in": ins if any(ins) else [], "out": outs if any(outs) else []}


def _constant_outputs(jaxpr: Any, core: Any) -> list[bool]:
    """Per output of jaxpr: whether it is a literal or a closed-over value, looking through the
    shard_map / jit equation that produces it (the body's own output)."""
    invars = set(jaxpr.invars)
    made = {id(o): (eqn, i) for eqn in jaxpr.eqns for i, o in enumerate(eqn.outvars)}
    out = []
    for v in jaxpr.outvars:
        if isinstance(v, core.Literal):
            out.append(True)
        elif v in invars:
            out.append(False)
        elif id(v) not in made:  # a constvar
            out.append(True)
        else:
            eqn, i = made[id(v)]
            inner = (
                eqn.params.get("jaxpr")
                if eqn.primitive.name in ("shard_map", "pjit", "jit")
                else None
            )
            inner = getattr(inner, "jaxpr", inner)
            out.append(bool(inner is not None and _constant_outputs(inner, core)[i]))
    return out


def _walk_shard_map_meshes(jaxpr: Any, out: list[Any]) -> None:
    """The concrete meshes of the shard_maps in jaxpr (and the jaxprs inside it), in order."""
    import jax
    from jax._src import core

    for eqn in jaxpr.eqns:
        mesh = eqn.params.get("mesh") if eqn.primitive.name == "shard_map" else None
        if isinstance(mesh, jax.sharding.Mesh):
            out.append(mesh)
        for sub in core.jaxprs_in_params(eqn.params):
            _walk_shard_map_meshes(sub, out)


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


def is_spec(v: Any) -> bool:
    """A single spec as JAX reads one in a pytree of specs: a PartitionSpec, or None."""
    from jax.sharding import PartitionSpec

    return v is None or isinstance(v, PartitionSpec)


def _spec_like(v: Any) -> bool:
    """A spec in any form the view takes: None, a PartitionSpec, or a list of entries."""
    if is_spec(v):
        return True
    return isinstance(v, list | tuple) and all(
        e is None
        or isinstance(e, str)
        or (isinstance(e, list | tuple) and all(isinstance(a, str) for a in e))
        for e in v
    )


class _Each:
    """The spec of every leaf under one prefix leaf (a box tree_map leaves alone)."""

    def __init__(self, specs: list[Any]) -> None:
        self.specs = specs


def leaf_specs(
    value: Any,
    full: Any,
    as_prefix: Callable[[Any], Any],
    keep: Sequence[int],
    what: str,
    of: str,
) -> list[Any]:
    """value as one spec per kept leaf of the pytree ``full`` (``keep``: the positions of the
    leaves that take a spec among all of full's leaves), read as JAX reads specs:

    - a PartitionSpec: that spec for every leaf;
    - a list with one spec-like entry per kept leaf: as it is (the view's own form);
    - a tuple or dict (or a list that is not one per leaf): a pytree prefix of full (after
      ``as_prefix``), each spec or None broadcast over the leaves below it.

    Raises ValueError in JAX's words when it is none of these."""
    import jax

    if is_spec(value) and value is not None:
        return [value] * len(keep)
    seq = isinstance(value, list | tuple)
    if not seq and not isinstance(value, dict):
        raise ValueError(
            f"{what} must be a PartitionSpec, a tuple or dict (a pytree prefix of {of}) or a "
            f"list with one spec per array leaf; got {type(value).__name__}"
        )
    one_each = seq and len(value) == len(keep) and all(_spec_like(v) for v in value)
    if one_each and (isinstance(value, list) or not keep):
        return list(value)
    try:
        boxed = jax.tree.map(
            lambda s, sub: _Each([s] * len(jax.tree_util.tree_leaves(sub))),
            as_prefix(value),
            full,
            is_leaf=is_spec,
        )
    except (ValueError, TypeError) as e:
        if one_each:
            return list(value)
        if seq and all(_spec_like(v) for v in value):  # a flat list of specs: the count is off
            leaves = "array inputs" if what == "in_specs" else "outputs"
            raise ValueError(
                f"{what} has {len(value)} entries; the function has {len(keep)} {leaves} (or "
                f"give a single spec, or a tuple that is a pytree prefix of {of})"
            ) from None
        raise ValueError(
            f"{what} {value!r} is neither one spec per array leaf ({len(keep)}) nor a pytree "
            f"prefix of {of}: {str(e).strip()}"
        ) from None
    every = [
        s
        for box in jax.tree_util.tree_leaves(boxed, is_leaf=lambda v: isinstance(v, _Each))
        for s in box.specs
    ]
    return [every[i] for i in keep]


@dataclass
class _Sharded:
    sharding: Any


def _own_mesh(leaves: Sequence[Leaf]) -> Any:
    """The jax Mesh of the first leaf with a NamedSharding over a concrete mesh; else, for an
    array committed to one device (``jax.device_put(x, device)``: jax.jit runs there), a
    one-axis mesh of that device; else None."""
    import jax
    from jax.sharding import NamedSharding, SingleDeviceSharding

    for lf in leaves:
        sh = getattr(lf.value, "sharding", None)
        if isinstance(sh, NamedSharding) and isinstance(sh.mesh, jax.sharding.Mesh):
            return sh.mesh
    for lf in leaves:
        sh = getattr(lf.value, "sharding", None)
        if isinstance(sh, SingleDeviceSharding) and getattr(lf.value, "committed", False):
            (device,) = sh.device_set
            return jax.sharding.Mesh(np.array([device]), ("x",))
    return None


SUB_BYTE = ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")
"""Dtypes of fewer than 8 bits: XLA compiles for them a packed layout that the arrays
``jax.device_put`` makes do not have, so a compiled executable refuses them as arguments."""


def _run_disabled(leaves: Sequence[Leaf], devices: Sequence[Any]) -> str:
    """Why the compiled function cannot run on these leaves ("" when it can)."""
    if not all(lf.concrete for lf in leaves):
        return "not run: some inputs are jax.ShapeDtypeStruct (compiled only)"
    small = sorted({str(lf.dtype) for lf in leaves if str(lf.dtype) in SUB_BYTE})
    if small:
        kinds = " and ".join(small)
        platform = devices[0].platform if devices else "this backend"
        return (
            f"not run: {kinds} inputs compile, but the compiled executable takes {kinds} arrays "
            f"only in a packed layout that device_put does not make on {platform}; shown: the "
            "compiled layout, without per-shard data"
        )
    return ""


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
            raise ValueError(
                f"mode must be one of {', '.join(MODES)}; got {mode!r} (mode is the view's own "
                "keyword: give f a keyword of that name with functools.partial(f, mode=...))"
            )
        self.f, self.mode, self.devices = f, mode, list(devices)
        self.fn_name = getattr(f, "__name__", None) or type(f).__name__
        leaves_p, self._treedef = jax.tree_util.tree_flatten_with_path((tuple(args), dict(kwargs)))
        names = _param_names(getattr(f, "__wrapped__", f), len(args))
        self._all = [v for _, v in leaves_p]
        for p, v in leaves_p:  # inside jit/vmap/grad: nothing concrete to compile or show
            if isinstance(v, jax.core.Tracer):
                raise TypeError(
                    f"ShardView got a tracer for {_path_text(p, names)} ({type(v).__name__}, "
                    f"{getattr(v, 'aval', '?')}): it compiles and runs f on concrete arrays, so "
                    "make the view outside jit/vmap/grad, with the arrays f is called with"
                )
        self._dyn_pos = [i for i, v in enumerate(self._all) if is_array_leaf(v)]
        self.leaves = [
            Leaf(
                _path_text(leaves_p[i][0], names),
                tuple(int(d) for d in self._all[i].shape),
                jax.dtypes.canonicalize_dtype(self._all[i].dtype, allow_extended_dtype=True),
                self._all[i],
            )
            for i in self._dyn_pos
        ]
        self.static_args = [
            f"{_path_text(p, names)}={v!r}"[:80] for p, v in leaves_p if not is_array_leaf(v)
        ]
        self.own_mesh: Any = _own_mesh(self.leaves)
        """The mesh of the first input with a NamedSharding (None when none has one): its
        devices, in its order, are the view's mesh while the mesh shape stays its shape, so
        outputs land where ``jax.jit(f)(*args)`` puts them (a sub-mesh of some devices too).
        Found in f's sharding constraints when no input has one (see :meth:`find_own_mesh`)."""
        self.jit_in_shardings: list[Any] = self._jit_in_shardings(args, kwargs)
        """Per input leaf: the sharding a ``jax.jit(g, in_shardings=…)`` f gives it (its own
        in_shardings; None where it gives none or f is not jitted). A leaf without a
        sharding of its own (numpy) starts there, as ``f(*args)`` lays it out."""
        if self.own_mesh is None:
            self.own_mesh = _own_mesh(
                [Leaf("", (), None, _Sharded(sh)) for sh in self.jit_in_shardings if sh]
            )
        self.find_own_mesh()
        self.run_disabled = _run_disabled(self.leaves, self.devices)
        """Why the compiled function is not run ("" when it is): ShapeDtypeStruct inputs, or
        sub-byte inputs (int4, uint4) that this backend's executables take only packed."""
        self.runnable = not self.run_disabled
        self._cache: OrderedDict[TraceState, TraceResult] = OrderedDict()
        self._out_info: dict[Any, tuple[list[tuple[int, ...]], list[Any], list[str]]] = {}
        self._out_tree: dict[Any, Any] = {}

    # -- specs as JAX reads them: a single spec, a pytree prefix, one per leaf
    def in_leaf_specs(self, value: Any) -> list[Any]:
        """in_specs as given to the view, one spec per input array leaf (see
        :func:`leaf_specs`): a single PartitionSpec applies to every leaf; a tuple is a pytree
        prefix of the positional arguments (as ``jax.shard_map`` / ``jax.jit`` read it;
        keyword arguments' leaves are replicated); a list of one spec per array leaf is the
        view's own form."""
        import jax

        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, self._all)
        full = (tuple(args), dict(kwargs))

        def prefix(v: Any) -> Any:
            return (tuple(v), {k: None for k in kwargs})

        return leaf_specs(value, full, prefix, self._dyn_pos, "in_specs", "the arguments")

    def out_leaf_specs(self, value: Any, state: TraceState) -> list[Any]:
        """out_specs as given to the view, one per output leaf (see :meth:`in_leaf_specs`; a
        prefix is of f's output pytree). Traces f (ValueError for errors in f)."""
        import jax

        self.output_info(state)
        tree = self._out_tree[None if self.mode == "jit" else (state.mesh_key, state.in_specs)]
        full = jax.tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
        return leaf_specs(
            value, full, lambda v: v, list(range(tree.num_leaves)), "out_specs", "the outputs"
        )

    # -- the function with array leaves as its only arguments
    def _call(self, *dyn: Any) -> Any:
        import jax

        vals = list(self._all)
        for pos, v in zip(self._dyn_pos, dyn, strict=True):
            vals[pos] = v
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, vals)
        return self.f(*args, **kwargs)

    def _user_error(self, e: BaseException) -> str:
        """JAX's message about f, naming the user's function where JAX names the internal
        wrapper (its name and this file's line, e.g. "function f at .../trace.py:688")."""
        import re

        from jax._src.api_util import fun_sourceinfo

        try:
            where = fun_sourceinfo(self.f)
        except Exception:  # a callable JAX cannot describe
            where = self.fn_name
        msg = clean_error(e).replace("'_call_flat'", repr(self.fn_name))
        return re.sub(r"\S+ at \S*?" + re.escape(pathlib.Path(__file__).name) + r":\d+", where, msg)

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
                raise ValueError(self._user_error(e)) from None
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
        """(args, kwargs) as given, each leaf replaced by a :class:`shardwidget.export.code.Slot`:
        the array leaves numbered in order, the static ones marked (for ``view.code``)."""
        import jax

        from ..export.code import Slot

        dyn = {pos: k for k, pos in enumerate(self._dyn_pos)}
        slots = [Slot(dyn[i]) if i in dyn else Slot(i, True) for i in range(len(self._all))]
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, slots)
        return tuple(args), dict(kwargs)

    def out_template(self, state: TraceState) -> Any:
        """The outputs' pytree with leaf i replaced by ``Slot(i)`` (from the trace that
        :meth:`output_info` keeps)."""
        import jax

        from ..export.code import Slot

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
        """The jax Mesh of state: the inputs' own mesh devices in their order while the mesh
        shape is that mesh's (names and types as state says); else ``jax.make_mesh`` over the
        own mesh's devices when the sizes multiply to their count, else over every device."""
        from jax.sharding import AxisType, Mesh

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
            fits = ", ".join(map(str, mesh_mod.factorizations(size, k)[:6]))
            raise ValueError(
                f"{e}; or on the inputs' own mesh of {size} devices: {fits or 'none'}"
            ) from None

    def _jit_in_shardings(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """See :attr:`jit_in_shardings`: read from ``f.lower(*args)`` when f is jitted and its
        lowered input shardings match the array leaves one for one (else all None)."""
        import jax
        from jax.sharding import NamedSharding

        none: list[Any] = [None] * len(self.leaves)
        if not hasattr(self.f, "lower") or self.mode != "jit" or not self.leaves:
            return none
        try:
            lowered = self.f.lower(*args, **kwargs)
            shs = jax.tree_util.tree_leaves(lowered.compile().input_shardings)
        except Exception:  # (committed inputs it refuses, pmap, …): the view's defaults
            return none
        if len(shs) != len(self.leaves):
            return none
        return [
            sh if isinstance(sh, NamedSharding) and not sh.is_fully_replicated else None
            for sh in shs
        ]

    def find_own_mesh(self) -> None:
        """No input has a mesh: take the mesh of f's first sharding constraint with a concrete
        mesh (``with_sharding_constraint(x, NamedSharding(mesh, ...))``: a sub-mesh, another
        device order, the axis names f uses), else of the first shard_map f calls, so the
        view compiles f where ``jax.jit(f)`` does. Traces f once; errors are left to the
        compile."""
        import jax
        from jax.sharding import NamedSharding

        if self.own_mesh is not None or not self.leaves:
            return
        structs = [jax.ShapeDtypeStruct(lf.shape, lf.dtype) for lf in self.leaves]  # type: ignore[no-untyped-call]
        try:
            closed = jax.make_jaxpr(self._call)(*structs)
        except Exception:
            return
        found: list[Constraint] = []
        _walk_constraints(closed.jaxpr, found)
        for c in found:
            mesh = getattr(c.sharding, "mesh", None)
            if isinstance(c.sharding, NamedSharding) and isinstance(mesh, jax.sharding.Mesh):
                self.own_mesh = mesh  # (an AbstractMesh, from a bare PartitionSpec: no devices)
                return
        # A shard_map on a mesh of its own (a named pmap's too): JAX runs it only inside that
        # same mesh. An unnamed pmap's axis has JAX's internal name: that one is left to the
        # error, which says which mesh to give (pmap.mesh_clash_hint).
        meshes: list[Any] = []
        _walk_shard_map_meshes(closed.jaxpr, meshes)
        for mesh in meshes:
            if "_internal_pmap_axis_name" not in mesh.axis_names:
                self.own_mesh = mesh
                return

    def _structs(self, state: TraceState, mesh: Any) -> list[Any]:
        import jax
        from jax.sharding import NamedSharding

        def kind(lf: Leaf) -> str | None:
            # jit: an input keeps its own memory kind (pinned_host), as jax.jit(f)(x) runs it
            mk = getattr(getattr(lf.value, "sharding", None), "memory_kind", None)
            return mk if self.mode == "jit" and mk not in (None, "device") else None

        return [
            jax.ShapeDtypeStruct(  # type: ignore[no-untyped-call]
                lf.shape,
                lf.dtype,
                sharding=NamedSharding(mesh, spec_mod.to_partition_spec(s), memory_kind=kind(lf)),
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
            self._check_jit_args(structs)
            traced = jf.trace(*structs)
            compiled = traced.lower().compile()
        compile_ms = (time.perf_counter() - t0) * 1e3
        constraints: list[Constraint] = []
        _walk_constraints(traced.jaxpr.jaxpr, constraints)
        # An input f does not use is dropped by XLA (its sharding reads None): it keeps the
        # sharding asked for, and a note says so.
        kept = jax.tree_util.tree_leaves(compiled.input_shardings[0], is_leaf=lambda v: v is None)
        c_in = [k if k is not None else asked for k, asked in zip(kept, in_sh, strict=True)]
        c_out = list(jax.tree_util.tree_leaves(compiled.output_shardings))
        other = [(other_mesh(lf.value, self.own_mesh) or (None, ""))[1] for lf in self.leaves]
        notes = _notes(traced.jaxpr.jaxpr, [k is None for k in kept], self.leaves, other)
        txt = compiled.as_text()
        used = [k for k in kept if k is not None]
        da = [d.id for d in (used[0]._device_assignment if used else mesh.devices.flat)]
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
            notes=notes,
        )

    def _check_jit_args(self, structs: Sequence[Any]) -> None:
        """Raise JAX's own error when f is a ``jax.jit(g, in_shardings=...)`` that refuses
        its arguments laid out as structs say: ``f(x)`` on a committed array whose sharding is
        not f's in_shardings raises "Sharding passed to jit does not match the sharding on the
        respective arg" (the view lays every input out with device_put, which commits it).
        ``f.lower`` on the structs makes that same check; any other error is left to the
        compile."""
        import jax

        if self.mode != "jit" or not self.leaves or not hasattr(self.f, "lower"):
            return
        if not hasattr(self.f, "trace"):  # jax.jit's wrapper has both (pmap has no trace)
            return
        info = getattr(self.f, "_jit_info", None)  # (private: when absent, check anyway)
        if not getattr(info, "user_specified_in_shardings", True):
            return  # no in_shardings: nothing to refuse, and no second trace of f
        vals = list(self._all)
        for pos, v in zip(self._dyn_pos, structs, strict=True):
            vals[pos] = v
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, vals)
        try:
            self.f.lower(*args, **kwargs)
        except ValueError as e:
            if JIT_REFUSES in str(e):
                raise
        except Exception:  # f's own errors: the compile reports them
            return

    def run(self, res: TraceResult) -> tuple[list[Any], list[Any]] | None:
        """Run res's executable on the arguments laid out for it: (inputs, outputs), which only
        the caller holds, or None when the run failed (``res.run_error`` says why). Records
        the outputs' layouts and the run time on res. ValueError (nothing run) when the run
        would not fit in free device memory (see :mod:`shardwidget.model.memory`)."""
        import jax

        from ..model import memory
        from ..model.layout import layout_of

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
    from jax.sharding import NamedSharding, PartitionSpec

    mesh_st: state_mod.LayoutState | None = None
    own_mesh = traced.own_mesh
    if own_mesh is not None:
        mesh_st = state_mod.state_of_sharding(NamedSharding(own_mesh, PartitionSpec()), 0)  # type: ignore[no-untyped-call]
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
        return state
    shapes, _ = traced.output_info(state)
    if traced.mode == "jit":
        return TraceState(*state.mesh_key, state.in_specs, (None,) * len(shapes))
    by_rank: dict[int, spec_mod.NormSpec] = {}
    for lf, sp in zip(traced.leaves, state.in_specs, strict=True):
        by_rank.setdefault(len(lf.shape), sp)
    outs = tuple(by_rank.get(len(s), ((),) * len(s)) for s in shapes)
    return TraceState(*state.mesh_key, state.in_specs, outs)
