"""The largest size of one input dimension whose step fits in device memory: a bisection over
real compiles (:func:`~.compile.plan`), each judged by the compiler's own answer (the TPU
compiler refuses a program over its HBM) and by the peak read from its own report
(:class:`~shardwidget.hlo.peak.Peak`) against the memory given.

Sizes tried are multiples of the devices the dimension is split over (an uneven split is
refused by JAX), so the answer is exact at that step: ``fits`` fits and ``fits + step`` does
not (both compiled), unless the compile budget ran out first (then ``exact`` is False and the
two sizes bound the answer)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh

from .compile import Plan, plan

MAX_COMPILES = 8


@dataclass(frozen=True)
class Fit:
    """What :func:`largest_fit` found.

    Attributes:
        fits: the largest size tried that fits (0 when none did).
        peak: that size's peak bytes per device (None when none fit).
        over: the smallest size tried that does not fit (None when every size tried fit).
        over_peak: its peak per device, where the compiler reported one.
        step: the sizes tried are multiples of this (the devices the dimension is split over).
        exact: whether ``over`` is ``fits + step`` (else the budget of compiles ran out).
        compiles: compiles made.
        hbm: the device memory judged against (bytes).
        tried: (size, peak or None, fits) of every compile, in order.
    """

    fits: int
    peak: int | None
    over: int | None
    over_peak: int | None
    step: int
    exact: bool
    compiles: int
    hbm: float
    tried: list[tuple[int, int | None, bool]] = field(default_factory=list)

    def __str__(self) -> str:
        if not self.fits:
            return f"no size of {self.step} or more fits in {self.hbm:.4g} B"
        top = f"; {self.over} does not ({self.over_peak} B)" if self.over else ""
        how = "" if self.exact else " (the bound after the compiles allowed)"
        return f"largest that fits: {self.fits} (peak {self.peak} B of {self.hbm:.4g} B){top}{how}"


def largest_fit(
    f: Callable[..., Any],
    *args: Any,
    mesh: Mesh | AbstractMesh,
    in_specs: Sequence[Any],
    arg: int,
    dim: int,
    hbm: float,
    max_compiles: int = MAX_COMPILES,
    progress: Callable[[int, int, int, bool], None] | None = None,
    donate_argnums: Sequence[int] = (),
) -> Fit:
    """The largest size of dimension ``dim`` of argument ``arg`` (an array or a
    ShapeDtypeStruct) for which ``plan(f, *args, mesh=mesh, in_specs=in_specs,
    donate_argnums=donate_argnums)`` fits in ``hbm`` bytes per device, in at most
    ``max_compiles`` compiles; ``progress(compile, of, size, fits)`` is called after each."""
    step = _step(in_specs[arg], dim, mesh)
    size = int(args[arg].shape[dim])
    tried: list[tuple[int, int | None, bool]] = []

    def judge(n: int) -> bool:
        resized = _resized(args, arg, dim, n)
        pl = plan(f, *resized, mesh=mesh, in_specs=in_specs, donate_argnums=donate_argnums)
        peak, ok = _judged(pl, hbm)
        tried.append((n, peak, ok))
        if progress is not None:
            progress(len(tried), max_compiles, n, ok)
        return ok

    lo, hi = 0, None  # lo fits (0: none known), hi does not (None: none known)
    n = max(step, size // step * step)
    while len(tried) < max_compiles and (hi is None or hi - lo > step):
        if judge(n):
            lo = n
        else:
            hi = n
        n = n * 2 if hi is None else (lo + hi) // 2 // step * step
        if hi is not None and n <= lo:
            n = lo + step
    return _fit(lo, hi, step, hbm, tried)


def _judged(pl: Plan, hbm: float) -> tuple[int | None, bool]:
    """(peak bytes per device or None, whether it fits): the compiler's refusal, else the
    peak from its report (the compiler's argument + output - alias + temp where it wrote
    none) against hbm."""
    peak = pl.fit_bytes  # one figure with Plan.fits (a GPU plan's: its totals)
    if not pl.fits:
        return peak, False
    return peak, peak is not None and peak <= hbm


def _fit(lo: int, hi: int | None, step: int, hbm: float, tried: list[Any]) -> Fit:
    peaks = {n: p for n, p, _ in tried}
    return Fit(
        fits=lo,
        peak=peaks.get(lo),
        over=hi,
        over_peak=peaks.get(hi) if hi is not None else None,
        step=step,
        exact=hi is not None and hi - lo == step,
        compiles=len(tried),
        hbm=hbm,
        tried=tried,
    )


def _step(spec: Any, dim: int, mesh: Mesh | AbstractMesh) -> int:
    """The devices dimension ``dim`` is split over under ``spec`` (1: not split)."""
    entries = list(spec or ())
    entry = entries[dim] if dim < len(entries) else None
    names = entry if isinstance(entry, tuple) else (entry,) if entry else ()
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    return math.prod(int(sizes[a]) for a in names)


def _resized(args: Sequence[Any], arg: int, dim: int, n: int) -> list[Any]:
    a = args[arg]
    shape = list(a.shape)
    shape[dim] = n
    out = list(args)
    out[arg] = jax.ShapeDtypeStruct(tuple(shape), a.dtype)
    return out
