"""The layouts that lower the memory peak (``view.memory_fixes()``): each input leaf that is live
at the peak (:class:`~shardwidget.hlo.peak.Peak`'s argument buffers) split further over a mesh
axis its layout does not use yet, on the first dimension that axis divides evenly. Each is
compiled by the view's own :class:`~.traced.Traced` (one compile each) and carries the peak that
compile's own report gives.

Only jit mode: in shard_map mode an input's spec is part of the code (it sets the shapes f
sees), so a different one is another program, not another layout. Donating an argument is not
offered: the view's layouts carry no donation (``donate_argnums``) to change.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    """(words, layout) of each input leaf live at the peak split further over one unused mesh
    axis, without compiling (none outside jit mode or where the peak is unknown)."""
    if res.mode != "jit" or res.peak is None:
        return []
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


def compute(traced: Any, res: TraceResult) -> list[MemoryFix]:
    """Each candidate compiled (one compile each), the lowest peak first."""
    before = peak_bytes(res)
    if before is None:
        return []
    fixes = []
    for words, st in candidates(res):
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
