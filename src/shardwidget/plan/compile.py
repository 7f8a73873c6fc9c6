"""Plans: what XLA compiles for a function on a mesh the kernel does not have.

The kernel lowers the function against a ``jax.sharding.AbstractMesh`` (no device is touched;
``lowering_platforms=("cpu",)``) and sends the lowered module's text to the planning helper
(:mod:`.helper`), which compiles it for that many simulated CPU devices. Collectives come from
the compiled HLO (``hlo.collectives``), with device ids as positions on the plan's mesh (row-major).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from .. import _jax
from ..cost import hardware as hw_mod
from ..cost.hardware import DEFAULT, Hardware
from ..cost.machine import estimate_on
from ..hlo import collectives as hlo
from ..hlo import flops as hlo_flops
from ..hlo import flow as hlo_flow
from ..hlo import peak as hlo_peak
from ..hlo import tpu as hlo_tpu
from ..hlo import traffic as hlo_traffic
from ..hlo.peak import Peak
from ..model import mesh as mesh_mod
from ..trace import paths as trace_paths
from . import gpu as _gpu
from . import helper as _helper
from . import inputs
from . import tpu as _tpu
from .delta import delta_line
from .machine import machine_of_info

WHAT_A_PLAN_IS = (
    "planned: compiled by XLA's CPU compiler for {n} simulated devices. A TPU or GPU compiler may "
    "schedule and fuse differently; the memory figures are the CPU compiler's."
)


GPU_HELD = (
    "held at once on the GPU: arguments + outputs + temporaries - aliased (XLA's GPU runtime "
    "allocates every output and its temp buffer when the program starts, whatever the "
    "compiler's live ranges: its peak can be lower)"
)
"""What a GPU plan's :attr:`Plan.fit_bytes` is."""


@dataclass(frozen=True)
class Plan:
    """What XLA compiled for one function on an abstract mesh of ``n_devices`` (per device)."""

    mesh: Any
    """The jax.sharding.AbstractMesh planned for; device ids are positions on it (row-major)."""
    collectives: list[hlo.Collective]
    """Every collective, with its axes, bytes per device and source line."""
    output_shardings: list[str]
    """Each output's sharding as the compiled program has it (HLO text)."""
    memory: dict[str, int]
    """Bytes per device: "arguments", "outputs", "temporaries", "aliased", "code", and "peak"
    (arguments + outputs + temporaries - aliased): the compiler's. For a program that does not
    fit (``fits`` False), the figures the TPU compiler gave in its refusal: "required" (what it
    needs per chip) and "available" (the chip's usable HBM), each where it says it."""
    flops: float
    """FLOPs per device (XLA's cost analysis)."""
    bytes_accessed: float
    """Bytes read and written per device (XLA's cost analysis; on the GPU compiler, which has
    none, counted from the HLO as :mod:`shardwidget.hlo.traffic` says)."""
    compile_s: float
    """Seconds XLA took in the helper."""
    plan_s: float
    """Seconds of the whole plan: lowering here, the helper's answer, parsing."""
    hlo_text: str = field(repr=False, default="")
    """The compiled HLO text (after SPMD partitioning)."""
    shardy_dump: str = field(repr=False, default="")
    """XLA's record of Shardy's propagation in this compile ("" when the helper gave none)."""
    compiler: str = "cpu"
    """"cpu": XLA's CPU compiler for N simulated devices (an AbstractMesh); "tpu": the TPU's own
    compiler, libtpu, for a :func:`shardwidget.tpu_mesh` topology; "gpu": XLA's GPU compiler
    (jaxlib's CUDA plugin) for a :func:`shardwidget.gpu_mesh`."""
    topology: Any = None
    """The TPU topology and each position's chip (:class:`~.tpu.TpuMeshInfo`), or the GPUs
    and their hosts (:class:`~.gpu.GpuMeshInfo`); None on CPU."""
    fits: bool = True
    """False when the program does not fit in device memory: the TPU compiler said so (its
    words in :attr:`hbm`; the other figures are then empty: nothing was compiled), or a GPU
    plan's peak is over what a program gets of each GPU (:attr:`hbm` says by how much)."""
    hbm: str = ""
    """Why the program does not fit ("" when it fits)."""
    flops_source: str = "cost_analysis"
    """Where :attr:`flops` came from ("counted from HLO" on the GPU compiler, which has no
    cost analysis; there only the matrix work is counted)."""
    peak: Peak | None = field(repr=False, default=None)
    """Where the memory goes (:class:`~shardwidget.hlo.peak.Peak`), read from the compiler's
    own report of this compile, also when it does not fit; None where the compiler wrote
    none (:attr:`peak_unknown` says why)."""
    peak_unknown: str = ""
    """Why :attr:`peak` is None ("" when it is known)."""

    @property
    def peak_bytes(self) -> int | None:
        """Peak bytes per device: :attr:`peak`'s (the bytes live at once in the compiler's own
        report) where it wrote one, else the memory totals (arguments + outputs + temporaries
        - aliased: an upper bound, :attr:`peak_unknown` says why); None where it gave neither
        (a TPU refusal without a report)."""
        return self.peak.bytes if self.peak is not None else self.memory.get("peak")

    @property
    def fit_bytes(self) -> int | None:
        """The bytes per device "fits" is judged on, by :attr:`fits`, :meth:`estimate`, the
        search's candidates and the largest fit alike: on the GPU compiler the memory totals
        (arguments + outputs + temporaries - aliased), which XLA's GPU runtime allocates all
        at once when the program starts (:data:`GPU_HELD`); elsewhere :attr:`peak_bytes`.
        :attr:`fit_source` says which."""
        return self.memory.get("peak") if self.compiler == "gpu" else self.peak_bytes

    @property
    def fit_source(self) -> str:
        """What :attr:`fit_bytes` is, in words."""
        if self.compiler == "gpu":
            return GPU_HELD
        if self.peak is not None:
            return "peak (the compiler's live-range report)"
        return f"memory totals (an upper bound; the peak is unknown: {self.peak_unknown})"

    @property
    def n_devices(self) -> int:
        """Devices of the plan's mesh."""
        return int(np.prod(self.mesh.axis_sizes))

    @property
    def note(self) -> str:
        """What a plan is, in words: "compiled by the TPU compiler (libtpu 0.0.42.1) for v5e
        16×16: the program a v5e-256 runs" (and "does not fit: …" when it does not)."""
        mi = self.topology
        if self.compiler == "gpu" and mi is not None:
            return _gpu.note(mi) + (f". {self.hbm}" if self.hbm else "")
        if self.compiler != "tpu" or mi is None:
            return WHAT_A_PLAN_IS.format(n=self.n_devices)
        text = _tpu.note(mi)
        return text if self.fits else f"{text}. {_tpu.hbm_words(self.hbm, mi)}"

    def versus(self, other: Plan) -> str:
        """How this plan differs from ``other`` (the same layout by another compiler, e.g. a
        TPU plan beside the CPU plan of an AbstractMesh of the same shape), in one line."""
        return delta_line(self, other)

    def estimate(self, hw: str | Hardware | None = None, dcn_axes: Sequence[str] = ()) -> Any:
        """The estimated time per device on a hardware preset (:mod:`shardwidget.cost.estimate`)
        on the machine the plan's mesh stands for (:mod:`.machine`): the axes that cross TPU
        slices or GPU hosts priced at the network (where ``dcn_axes`` names none), and "fits"
        judged against the memory a program gets there. ``hw``: a preset; by default the plan's
        own chip's (a GPU plan: its GPU's; a TPU plan: its TPU's), else the default preset.
        ValueError for a program the TPU compiler refused (it compiled nothing to price: the
        times would read 0 s)."""
        if not self.fits and self.compiler == "tpu":
            raise ValueError(
                f"no estimate: {self.note}; the TPU compiler compiled nothing whose time could "
                "be estimated (plan.memory has its figures)"
            )
        return estimate_on(
            machine_of_info(self.topology),
            hw or self._own_preset(),
            dcn_axes=dcn_axes,
            flops=self.flops,
            bytes_accessed=self.bytes_accessed,
            collectives=self.collectives,
            peak_bytes=self.fit_bytes,  # one figure with fits, the search, largest_fit
            flops_source=self.flops_source,
            bytes_source=hlo_traffic.SOURCE if self.compiler == "gpu" else "",
            fit_basis=self._fit_basis(),
        )

    def _fit_basis(self) -> str:
        """What :attr:`fit_bytes` is, in the estimate's few words, where it is not what the
        runtime holds (the GPU's, as a function view's) nor the compiler's peak."""
        if self.compiler == "gpu" or self.peak is not None:
            return ""
        return "totals: no live-range report"

    def _own_preset(self) -> str:
        """The preset of the plan's chip (ValueError in words for a GPU no preset has)."""
        mi = self.topology
        if self.compiler == "gpu" and mi is not None:
            if not mi.gpu.hardware:
                raise ValueError(
                    f"no hardware preset has the {mi.gpu.title}'s speeds: pass hardware= "
                    "(shardwidget.cost.hardware(name=..., ...))"
                )
            return str(mi.gpu.hardware)
        if self.compiler == "tpu" and mi is not None:
            return hw_mod.kind_preset(mi.device_kind) or DEFAULT
        return DEFAULT


def _pspec(spec: Any) -> Any:
    if isinstance(spec, PartitionSpec):
        return spec
    return PartitionSpec(*(spec or ()))


def lower(
    f: Callable[..., Any],
    args: Sequence[Any],
    mesh: Mesh | AbstractMesh,
    in_specs: Any,
    out_specs: Any,
    mode: str = "jit",
    donate_argnums: Sequence[int] = (),
) -> str:
    """The text of :func:`lowered`'s module (StableHLO with its sharding annotations)."""
    low = lowered(f, args, mesh, in_specs, out_specs, mode, donate_argnums)
    return str(low.as_text(debug_info=True))


def lowered(
    f: Callable[..., Any],
    args: Sequence[Any],
    mesh: Mesh | AbstractMesh,
    in_specs: Any,
    out_specs: Any,
    mode: str = "jit",
    donate_argnums: Sequence[int] = (),
) -> jax.stages.Lowered:
    """The lowered module (StableHLO with its sharding annotations) of ``jax.jit(f)`` for
    ``args`` laid out by ``in_specs`` (one spec per argument; None: replicated) on ``mesh``;
    ``mode="shard_map"``: of ``jax.jit(jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=...))``
    (out_specs then required: shard_map has no default). ``donate_argnums``: as jax.jit's."""

    inputs.check_mesh(mesh)
    specs = list(in_specs) if in_specs is not None else [None] * len(args)
    if len(specs) != len(args):
        raise ValueError(f"in_specs has {len(specs)} specs for {len(args)} arguments")
    pairs = enumerate(zip(args, specs, strict=True))
    sds = [inputs.arg_sds(i, a, s, mesh, _is_spec) for i, (a, s) in pairs]
    if mode not in ("jit", "shard_map"):
        raise ValueError(f'mode must be "jit" or "shard_map"; got {mode!r}')
    if mode == "shard_map":
        if out_specs is None:
            raise ValueError("a shard_map plan needs out_specs (one spec per output)")
        to_spec = functools.partial(jax.tree.map, _pspec, is_leaf=_is_spec)
        sm = jax.shard_map(
            f,
            mesh=mesh,
            in_specs=tuple(to_spec(s) if s is not None else _pspec(None) for s in specs),
            out_specs=to_spec(out_specs),
        )
        jf = jax.jit(sm, donate_argnums=tuple(donate_argnums))
        return _lowered(jf, sds, mesh)
    kw: dict[str, Any] = {"donate_argnums": tuple(donate_argnums)}
    if out_specs is not None:
        kw["out_shardings"] = jax.tree.map(
            lambda s: NamedSharding(mesh, _pspec(s)),
            out_specs,
            is_leaf=_is_spec,
        )
    return _lowered(jax.jit(f, **kw), sds, mesh)


def lower_shared(
    f: Callable[..., Any],
    args: Sequence[Any],
    mesh: Mesh | AbstractMesh,
    in_specs: Any,
    donate_argnums: Sequence[int] = (),
) -> str:
    """:func:`lower`'s text (jit mode) for one of many layouts of the same ``f`` and argument
    shapes: traced from the shapes alone, the layout given as jit's ``in_shardings``, so that
    JAX traces f once for all of them (its trace cache keys on f and the shapes). :func:`lower`
    puts the layout in the arguments' types, so each mesh traces f anew, and JAX's caches keep
    every trace alive: ~6,000 Python objects per layout of the 06 step, which each full garbage
    collection of the kernel then walks while it holds the interpreter (a search's ``1 + 1``
    waited 2 s on one). The same module either way, but for the source locations of the calls
    that lowered it. A mesh with Explicit axes (the layout is part of the types there) is
    lowered by :func:`lower`, and so is every layout on jax 0.7
    (:func:`shardwidget._jax.one_trace_for_layouts`)."""
    auto = all(t == "auto" for t in mesh_mod.mesh_axis_types(mesh))
    if not auto or not _jax.one_trace_for_layouts():
        return lower(f, args, mesh, in_specs, None, donate_argnums=donate_argnums)
    inputs.check_mesh(mesh)
    specs = list(in_specs) if in_specs is not None else [None] * len(args)
    if len(specs) != len(args):
        raise ValueError(f"in_specs has {len(specs)} specs for {len(args)} arguments")
    pairs = enumerate(zip(args, specs, strict=True))
    laid = [inputs.arg_sds(i, a, s, mesh, _is_spec) for i, (a, s) in pairs]
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), laid)
    shardings = tuple(jax.tree.map(lambda x: x.sharding, laid))
    jf = jax.jit(f, in_shardings=shardings, donate_argnums=tuple(donate_argnums))
    return str(_lowered(jf, shapes, mesh).as_text(debug_info=True))


def _lowered(jf: Any, sds: Sequence[Any], mesh: Mesh | AbstractMesh) -> jax.stages.Lowered:
    """``jf`` lowered for ``sds`` on ``mesh``'s platform (a donation XLA cannot use is read
    from the compile's alias bytes, not warned about)."""
    with _jax.quiet_donation():
        low: jax.stages.Lowered = jf.trace(*sds).lower(lowering_platforms=lowering_platforms(mesh))
    return low


def lowering_platforms(mesh: object) -> tuple[str, ...]:
    """The platform a plan lowers for: ("cuda",) on a :func:`~.gpu.gpu_mesh`, ("tpu",) on a
    :func:`~.tpu.tpu_mesh`, else ("cpu",)."""
    return _tpu.lowering_platforms(mesh)


def _is_spec(s: object) -> bool:
    if isinstance(s, PartitionSpec):
        return True
    return isinstance(s, list | tuple) and all(
        e is None
        or isinstance(e, str)
        or (isinstance(e, tuple) and all(isinstance(x, str) for x in e))
        for e in s
    )


def plan(
    f: Callable[..., Any],
    *args: Any,
    mesh: Mesh | AbstractMesh,
    in_specs: object = None,
    out_specs: object = None,
    mode: str = "jit",
    timeout: float | None = None,
    donate_argnums: Sequence[int] = (),
) -> Plan:
    """Compile ``jax.jit(f)(*args)`` for ``mesh`` (a ``jax.sharding.AbstractMesh``) in the
    planning helper (``mode="shard_map"``: ``jax.shard_map(f, ...)`` with these specs;
    ``donate_argnums`` as jax.jit takes it); PlanError in words when the helper cannot
    answer."""
    t0 = time.perf_counter()
    _check_mesh(mesh)
    low = lowered(f, args, mesh, in_specs, out_specs, mode, donate_argnums)
    pl = compile_text(str(low.as_text(debug_info=True)), mesh, timeout, t0)
    return _with_leaves(pl, trace_paths.arg_paths(f, args), low)


def _with_leaves(pl: Plan, in_paths: list[str], low: jax.stages.Lowered) -> Plan:
    """pl with the input and output leaves each collective touches, by dataflow through the
    compiled program (:func:`~shardwidget.hlo.flow.attribute`), as a function view's plan has
    them; a flat all-reduce of a concatenate carries its parts as elements."""
    kept = _jax.kept_inputs(low, len(in_paths))
    outs = trace_paths.out_paths(low.out_tree)
    colls = hlo_flow.attribute(pl.collectives, pl.hlo_text, kept, in_paths, outs)
    return dataclasses.replace(pl, collectives=colls)


def _check_mesh(mesh: Mesh | AbstractMesh) -> None:
    """TypeError for a mesh= that is not an AbstractMesh; PlanError at once for a CPU plan past
    what the CPU helper compiles (before anything is lowered or started)."""
    if not isinstance(mesh, jax.sharding.AbstractMesh):
        inputs.check_mesh(mesh)  # sizes alone: says which AbstractMesh to write
        raise TypeError(
            "plan(..., mesh=) takes a jax.sharding.AbstractMesh (a CPU plan), a "
            "shardwidget.tpu_mesh(...) (a TPU plan) or a shardwidget.gpu_mesh(...) (a GPU "
            f"plan); got {type(mesh).__name__}"
        )
    if not _tpu.is_tpu(mesh) and not _gpu.is_gpu(mesh):
        _helper.check_cpu_size(int(np.prod(mesh.axis_sizes)))


def compile_text(
    text: str,
    mesh: Mesh | AbstractMesh,
    timeout: float | None = None,
    t0: float = 0.0,
) -> Plan:
    """The Plan of a lowered module's text (:func:`lower`, or a function view's own lowering)
    for ``mesh``, compiled in the planning helper; ``t0``: when the plan began
    (``time.perf_counter()``; 0: now). PlanError in words when the helper cannot answer."""
    t0 = t0 or time.perf_counter()
    n = int(np.prod(mesh.axis_sizes))
    if _gpu.is_gpu(mesh):
        reply = _gpu.compile_text(text, mesh, timeout or _helper.busy(_helper.TIMEOUT_S))
    elif _tpu.is_tpu(mesh):
        reply = _tpu.compile_text(text, mesh, timeout or _helper.busy(_helper.TIMEOUT_S))
    else:
        reply = _helper.helper(n).compile(text, timeout)
    return plan_of(reply, mesh, t0)


def plan_of(reply: dict[str, Any], mesh: Mesh | AbstractMesh, t0: float) -> Plan:
    """The Plan of a helper's reply for ``mesh`` (a compile begun at ``t0``,
    ``time.perf_counter()``): the search's own helpers answer the same way."""
    if _gpu.is_gpu(mesh):
        return _gpu_plan(reply, mesh, t0)
    n = int(np.prod(mesh.axis_sizes))
    mi = _tpu.info(mesh)
    peak = reply.get("_peak")  # read once per reply (the TPU helper's replies are cached)
    if peak is None:
        peak = reply["_peak"] = hlo_peak.peak_fields(reply.get("memory_report") or {})
    if "hbm" in reply:  # the TPU compiler's answer: the program does not fit
        need, have = _tpu.hbm_figures(str(reply["hbm"]))
        figures = {"required": need, "available": have}
        return Plan(
            mesh=mesh,
            collectives=[],
            output_shardings=[],
            memory={k: v for k, v in figures.items() if v is not None},
            flops=0.0,
            bytes_accessed=0.0,
            compile_s=float(reply["compile_s"]),
            plan_s=time.perf_counter() - t0,
            compiler="tpu",
            topology=mi,
            fits=False,
            hbm=str(reply["hbm"]),
            **peak,
        )
    names, sizes = tuple(mesh.axis_names), tuple(int(s) for s in mesh.axis_sizes)
    coords = {i: tuple(int(c) for c in np.unravel_index(i, sizes)) for i in range(n)}
    colls = reply.get("_collectives")  # a TPU result read once (the reply is cached)
    if colls is None:
        colls = tpu_collectives(reply["hlo"], mi, coords, names, sizes)
        if mi is not None:
            reply["_collectives"] = colls
    mem = dict(reply["memory"])
    mem["peak"] = mem["arguments"] + mem["outputs"] + mem["temporaries"] - mem["aliased"]
    return Plan(
        mesh=mesh,
        collectives=colls,
        output_shardings=list(reply["output_shardings"]),
        memory=mem,
        flops=float(reply["flops"]),
        bytes_accessed=float(reply["bytes_accessed"]),
        compile_s=float(reply["compile_s"]),
        plan_s=time.perf_counter() - t0,
        hlo_text=reply["hlo"],
        shardy_dump=str(reply.get("shardy_dump", "")),
        compiler="tpu" if mi is not None else "cpu",
        topology=mi,
        **peak,
    )


def tpu_collectives(
    text: str,
    mi: Any,
    coords: dict[int, tuple[int, ...]],
    names: tuple[str, ...],
    sizes: tuple[int, ...],
) -> list[hlo.Collective]:
    """The collectives of a compiled program on the mesh ``coords`` places (``mi``: the TPU
    topology, else None). Across slices libtpu compiles one slice's program: partition ``p``
    is the ``p``-th mesh position of the slice, and each of its collectives runs in every
    slice (its groups given for all); those over DCN are Megascale transfers
    (:func:`.hlo.tpu.megascale_collectives`)."""
    n = len(coords)
    if mi is None or mi.num_slices == 1:
        colls = hlo.collectives(text, list(range(n)), coords, names, sizes)
        return colls if mi is None else hlo_tpu.fused_collectives(text, colls)
    slices = [[i for i in range(n) if mi.slice_index[i] == s] for s in range(mi.num_slices)]
    ici = hlo_tpu.fused_collectives(text, hlo.collectives(text, slices[0], coords, names, sizes))
    ici = [hlo_tpu.in_every_slice(c, slices) for c in ici]
    dcn = hlo_tpu.megascale_collectives(text, slices, coords, names, sizes)
    return hlo_tpu.in_text_order(text, [*ici, *dcn])


def _gpu_plan(reply: dict[str, Any], mesh: Mesh | AbstractMesh, t0: float) -> Plan:
    """The Plan of the GPU compiler's reply: FLOPs and bytes counted from the HLO (its
    compile-only client has no cost analysis), "does not fit" where the peak is over what a
    program gets of each GPU."""
    gi = _gpu.info(mesh)
    assert gi is not None
    n = gi.n_gpus
    names, sizes = tuple(mesh.axis_names), tuple(int(s) for s in mesh.axis_sizes)
    colls = reply.get("_collectives")
    if colls is None:
        coords = {i: tuple(int(c) for c in np.unravel_index(i, sizes)) for i in range(n)}
        colls = reply["_collectives"] = hlo.collectives(
            reply["hlo"], list(range(n)), coords, names, sizes
        )
    mem = dict(reply["memory"])
    mem["peak"] = mem["arguments"] + mem["outputs"] + mem["temporaries"] - mem["aliased"]
    fl, ba = float(reply["flops"]), float(reply["bytes_accessed"])
    if ba < 0:  # no cost analysis: the traffic of every top-level op, counted from the HLO
        ba = hlo_traffic.bytes_accessed(reply["hlo"]) or -1.0
    counted = hlo_flops.count(reply["hlo"], fl if fl >= 0 else None, ba if ba >= 0 else None)
    words = _gpu.memory_words(mem["peak"], gi)
    return Plan(
        mesh=mesh,
        collectives=colls,
        output_shardings=list(reply["output_shardings"]),
        memory=mem,
        flops=float(counted.flops or 0.0),
        bytes_accessed=float(counted.bytes_accessed or 0.0),
        compile_s=float(reply["compile_s"]),
        plan_s=time.perf_counter() - t0,
        hlo_text=reply["hlo"],
        shardy_dump=str(reply.get("shardy_dump", "")),
        compiler="gpu",
        topology=gi,
        fits=not words,
        hbm=words,
        flops_source=counted.source or "unknown: no cost analysis and no matrix work in the HLO",
        **hlo_peak.peak_fields(reply.get("memory_report") or {}),
    )
