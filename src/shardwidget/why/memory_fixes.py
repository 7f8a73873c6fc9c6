"""The layouts that lower the memory peak (``view.memory_fixes()``): each input leaf that is live
at the peak (:class:`~shardwidget.hlo.peak.Peak`'s argument buffers; every input where the
compiler wrote no report, each judged by the totals) split further over a mesh
axis its layout does not use yet, on the first dimension that axis divides evenly. Each is
compiled by the view's own :class:`~.traced.Traced` (one compile each) and carries the peak that
compile's own report gives.

Only jit mode: in shard_map mode an input's spec is part of the code (it sets the shapes f
sees), so a different one is another program, not another layout.

And each positional argument an output could reuse, donated (``jax.jit(f,
donate_argnums=k)``, as :class:`~.result.TraceState`'s ``donate`` compiles it): offered where
some output has one of its leaves' shape, dtype and sharding (XLA may then write that output
into the argument's buffer), in either mode, with or without a peak report (the totals'
``alias`` bytes then say what it saved).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from ..model import spec as spec_mod

if TYPE_CHECKING:  # a trace's results are read by their attributes: trace/ sits a floor up
    from ..trace.result import TraceResult, TraceState


@dataclass(frozen=True)
class MemoryFix:
    """One layout that may lower the peak.

    Attributes:
        what: the change in words ("split x further over y: P('x', 'y')").
        state: the layout (apply it with ``view.apply_memory_fix`` or ``view.set_layout``).
        peak: bytes per device at that layout's peak (its compiler's report; else
            argument + output - alias + temp; None when it does not compile).
        before: the peak of the layout it changes.
        memory: that layout's per-device memory (bytes: "peak", "argument", "temp", ...).
        error: why it does not compile ("" when it does).
    """

    what: str
    state: TraceState
    peak: int | None
    before: int
    memory: dict[str, int] = field(repr=False)
    error: str = ""

    @property
    def lowers(self) -> bool:
        """Whether its peak is below the peak before."""
        return self.peak is not None and self.peak < self.before

    def __str__(self) -> str:
        if self.error:
            return f"{self.what}: does not compile ({self.error})"
        return f"{self.what}: peak {self.peak} B per device (was {self.before} B)"


def peak_bytes(res: TraceResult) -> int | None:
    """A result's peak per device: its report's, else memory_analysis' total."""
    return res.peak.bytes if res.peak is not None else res.memory.get("peak")


def candidates(res: TraceResult) -> list[tuple[str, TraceState]]:
    """(words, layout) of each input leaf live at the peak (every input where the compiler
    wrote no peak report: which are live there is not known) split further over one unused
    mesh axis, without compiling (none outside jit mode)."""
    if res.mode != "jit":
        return []
    if res.peak is None:
        live = set(res.in_paths)
    else:
        live = {b.path for b in res.peak.buffers if b.kind == "argument" and b.path}
    st = res.state
    axes = [(a, n) for a, n in zip(st.axis_names, st.mesh_shape, strict=True) if n > 1]
    out = []
    for idx, path in enumerate(res.in_paths):
        if path not in live:
            continue
        for axis, _ in axes:
            spec = _split(st, idx, res.in_shapes[idx], axis)
            if spec is not None:
                words = f"split {path} further over {axis}: {spec_mod.to_text(spec)}"
                out.append((words, _with_in(st, idx, spec)))
    return out


def donations(traced: Any, res: TraceResult) -> list[tuple[str, TraceState]]:
    """(words, layout) of each positional argument not donated yet whose leaves an output
    could reuse (same shape, dtype and sharding, each output reused once), donated whole as
    ``donate_argnums`` donates it; without compiling."""
    args, _ = traced.arg_template()
    out = []
    for k, arg in enumerate(args):
        leaves = [s.i for s in jax.tree_util.tree_leaves(arg) if not s.static]
        if not leaves or set(leaves) <= set(res.state.donate):
            continue
        reused = _reused(res, leaves)
        if reused:
            name = res.in_paths[leaves[0]] if len(leaves) == 1 else f"argument {k}"
            outs = ", ".join(res.out_paths[o] for o in reused)
            words = f"donate {name} (donate_argnums={k}): {outs} can reuse its buffer"
            donate = tuple(sorted({*res.state.donate, *leaves}))
            out.append((words, dataclasses.replace(res.state, donate=donate)))
    return out


def _reused(res: TraceResult, leaves: list[int]) -> list[int]:
    """The outputs that can take the buffers of these input leaves (one each, in order)."""
    taken: list[int] = []
    for i in leaves:
        for o in range(len(res.out_shapes)):
            if o not in taken and _same_buffer(res, i, o):
                taken.append(o)
                break
    return taken


def _same_buffer(res: TraceResult, i: int, o: int) -> bool:
    """Input i and output o are alike: shape, dtype, and sharding (equivalent where JAX can
    tell; else the same local shape)."""
    if tuple(res.in_shapes[i]) != tuple(res.out_shapes[o]):
        return False
    if np.dtype(res.in_dtypes[i]) != np.dtype(res.out_dtypes[o]):
        return False
    try:
        return bool(
            res.in_shardings[i].is_equivalent_to(res.out_shardings[o], len(res.in_shapes[i]))
        )
    except Exception:  # (a sharding JAX cannot compare: on an AbstractMesh)
        return tuple(res.local_shapes["in"][i]) == tuple(res.local_shapes["out"][o])


def compute(traced: Any, res: TraceResult) -> list[MemoryFix]:
    """Each candidate compiled (one compile each), the lowest peak first."""
    before = peak_bytes(res)
    if before is None:
        return []
    fixes = []
    for words, st in [*candidates(res), *donations(traced, res)]:
        try:
            other = traced.result(st, run=False)
        except ValueError as e:
            fixes.append(MemoryFix(words, st, None, before, {}, error=str(e)))
            continue
        fixes.append(MemoryFix(words, other.state, peak_bytes(other), before, other.memory))
    fixes.sort(key=lambda f: (bool(f.error), not f.lowers, f.peak or 0))
    return fixes


def pick(fixes: list[MemoryFix], k: int) -> MemoryFix:
    """fixes[k], when it is a layout that compiles; ValueError in words otherwise."""
    if not fixes:
        raise ValueError("no layout the view can change lowers the peak")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(fixes):
        raise ValueError(f"memory fix {k!r}: there are {len(fixes)} (0 to {len(fixes) - 1})")
    if fixes[k].error:
        raise ValueError(f"memory fix {k} does not compile: {fixes[k].error}")
    return fixes[k]


def _split(st: TraceState, idx: int, shape: tuple[int, ...], axis: str) -> Any:
    """Input idx's spec with ``axis`` added to the first dimension it divides evenly (with the
    axes already there); None where the spec uses the axis already or no dimension divides."""
    spec = [tuple(d) for d in st.in_specs[idx]]
    spec += [()] * (len(shape) - len(spec))
    if any(axis in d for d in spec):
        return None
    sizes = dict(zip(st.axis_names, st.mesh_shape, strict=True))
    for dim, n in enumerate(shape):
        parts = math.prod(sizes[a] for a in spec[dim]) * sizes[axis]
        if n % parts == 0:
            spec[dim] = (*spec[dim], axis)
            return tuple(spec)
    return None


def _with_in(st: TraceState, idx: int, spec: Any) -> TraceState:
    ins = list(st.in_specs)
    ins[idx] = spec
    return dataclasses.replace(st, in_specs=tuple(ins))
