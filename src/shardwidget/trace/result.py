"""What a traced function gives for one layout: the state asked for (:class:`TraceState`), and the
compiled result (:class:`TraceResult`: leaves, shardings, memory, flops, collectives). Plain data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from ..cost.estimate import estimate_trace
from ..cost.hardware import DEFAULT, Hardware
from ..cost.machine import Machine
from ..hlo import collectives as hlo
from ..hlo.peak import Peak
from ..model import spec as spec_mod
from ..model.layout import Layout, layout_of_sharding

MODES = ("jit", "shard_map")
JIT_REFUSES = (
    "does not match the sharding on the respective arg",
    "does not match memory kind on the respective arg",
)
"""Parts of JAX's messages when a jitted function's in_shardings refuse a committed argument
(its layout, or its memory kind)."""


@dataclass(frozen=True)
class Slot:
    """A placeholder for leaf ``i`` of a pytree of arguments or outputs (see
    :meth:`shardwidget.trace.function.Traced.arg_template`; the snippets of
    :mod:`shardwidget.export.code` write them out); static: a leaf the view closes over."""

    i: int
    static: bool = False


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
        donate: the input array leaves donated (indices, ascending): compiled as
            ``jax.jit(..., donate_argnums=donate)`` of f on its leaves, so an output may reuse
            such an input's buffer. Part of the state (and so of every cache key): it changes
            the program XLA compiles.
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...]
    in_specs: tuple[spec_mod.NormSpec, ...]
    out_specs: tuple[spec_mod.NormSpec | None, ...]
    donate: tuple[int, ...] = ()

    @staticmethod
    def from_wire(
        d: dict[str, Any],
        ndims: Sequence[int],
        out_ndims: Sequence[int],
        paths: tuple[Sequence[str], Sequence[str]] = ((), ()),
    ) -> TraceState:
        """From traits / a front-end request (ndims / out_ndims: rank of each input / output
        leaf; out_ndims may be empty when the outputs are not known yet; ``paths``: the input
        and output leaves' names, for messages). ValueError when malformed, naming the leaf;
        an out_specs entry may be None (XLA chooses, jit only), and no out_specs at all means
        the defaults of :func:`complete`."""
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
        in_specs = tuple(
            _normalize(s, n, "input", i, paths[0])
            for i, (s, n) in enumerate(zip(ins, ndims, strict=True))
        )
        if out_ndims and outs and len(outs) != len(out_ndims):  # none: defaults (complete)
            raise ValueError(
                f"out_specs has {len(outs)} entries; the function has {len(out_ndims)} outputs"
            )
        out_specs = tuple(
            None
            if s is None
            else _normalize(s, out_ndims[i] if out_ndims else len(s), "output", i, paths[1])
            for i, s in enumerate(outs)
        )
        donate = _donated(d.get("donate", ()), len(ndims), paths[0])
        return TraceState(shape, names, types, in_specs, out_specs, donate)

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
    """The jax.stages.Compiled executable (None for a plan: compiled in the planning helper)."""
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
    bytes_accessed: float | None = None
    """Bytes read and written per device, where no executable is at hand to ask (a plan)."""
    notes: dict[str, list[str]] = field(default_factory=dict, repr=False)
    """{"in": [...], "out": [...]}: a line in words per leaf where the layout needs one
    (pmap's); empty otherwise."""
    peak: Peak | None = None
    """Where the memory goes: the most device memory one device holds during the program,
    where and what (:class:`~shardwidget.hlo.peak.Peak`), read from the compiler's own
    report; None where the compiler wrote none (:attr:`peak_unknown` says why)."""
    peak_unknown: str = ""
    """Why :attr:`peak` is None ("" when it is known)."""
    machine: Machine | None = field(default=None, repr=False)
    """What the plan's mesh stands for (a ``tpu_mesh`` or ``gpu_mesh``: the axes that cross
    slices or hosts, the memory a program gets); None on the kernel's devices or a CPU plan."""
    rerun: Callable[[TraceResult], tuple[list[Any], list[Any]]] | None = field(
        default=None, repr=False, compare=False
    )
    """Re-creates (inputs, outputs) of a run: the result keeps no device arrays."""

    def estimate(self, hw: str | Hardware | None = None, dcn_axes: Sequence[str] = ()) -> Any:
        """Estimated time per device on a hardware preset (a name such as "tpu-v5p" or a
        ``shardwidget.Hardware``): ``.compute_s``, ``.memory_s``, ``.collectives`` (each with
        ``.seconds`` = ``.latency_s`` + ``.bandwidth_s``), ``.total_s``, ``.bound``, ``.fits``;
        ``dcn_axes``: mesh axes crossing slices or hosts (DCN latency and the network's
        bandwidth); on a ``tpu_mesh`` or ``gpu_mesh`` the axes that cross its slices or hosts
        when none are named, and "fits" judged against the memory a program gets there (as
        ``plan().estimate`` does: :mod:`shardwidget.cost.machine`). The model is in
        :mod:`shardwidget.cost.estimate`."""

        return estimate_trace(self, hw or DEFAULT, tuple(dcn_axes), self.machine)

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
def _normalize(spec: object, ndim: int, kind: str, i: int, paths: Sequence[str]) -> Any:
    """spec_mod.normalize, its ValueError naming the leaf ("input p['w']: ...")."""
    try:
        return spec_mod.normalize(spec, ndim)
    except ValueError as e:
        name = paths[i] if i < len(paths) else f"{i}"
        raise ValueError(f"{kind} {name}: {e}") from None


def _donated(given: object, n: int, paths: Sequence[str]) -> tuple[int, ...]:
    """The donated inputs as ascending leaf indices, from indices or input paths; ValueError
    in words for anything else (an index out of range, a path that is no input)."""
    if isinstance(given, str | int):
        given = [given]
    if not isinstance(given, list | tuple | set | frozenset):
        raise ValueError(f"donate takes input leaf indices or paths; got {given!r}")
    out = set()
    for g in given:
        if isinstance(g, str) and g in paths:
            out.add(list(paths).index(g))
        elif isinstance(g, int) and not isinstance(g, bool) and 0 <= g < n:
            out.add(g)
        else:
            names = f" ({', '.join(paths)})" if paths else ""
            raise ValueError(f"donate: {g!r} is not one of the {n} array inputs{names}")
    return tuple(sorted(out))


def is_array_leaf(x: object) -> bool:
    """Whether an argument leaf gets a sharding from the view (else it is static)."""
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


UNUSED_NOTE = "not used by the function: XLA drops it (no copy on the devices); shown as laid out"
CONSTANT_NOTE = "a constant: the function returns it without computing it from its inputs"
OTHER_MESH_NOTE = "on another mesh than the first input's ({what}): {how}"
