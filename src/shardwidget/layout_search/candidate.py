"""One compiled candidate with its figures, each with where it came from, and the ranking.

Ranking: the candidates that fit first (then those whose fit is unknown, then those that do
not fit), then by estimated step time on the hardware preset
(:mod:`shardwidget.cost.estimate`: compute = FLOPs / peak, memory = bytes accessed / HBM
bandwidth, each collective steps × latency + bytes / its link's bandwidth; compute and memory
overlap, collectives do not: ``max(compute, memory) + Σ collectives``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cost.estimate import OVERLAP, Estimate, fmt_seconds
from ..cost.hardware import Hardware
from ..hlo import collectives as hlo
from ..model.units import fmt_bytes
from ..plan.compile import Plan
from .candidates import Proposal
from .target import Target


@dataclass(frozen=True)
class Candidate:
    """A layout, compiled by the target's compiler and estimated on a hardware preset.

    Attributes:
        name: "FSDP 32 × TP 8", "ZeRO-1 · DP 8", or the user's strategy's name.
        mesh_shape, axis_names: the mesh.
        strategy: "standard", "zero-1" or the user's strategy's name.
        in_specs: one spec tree per argument (``PartitionSpec`` leaves), as ``plan`` takes it.
        fits: whether the step fits in a device's memory, judged on :attr:`peak` (None:
            unknown).
        peak: peak bytes per device: the compiler's own (the bytes live at once, from its
            live-range report and buffer assignment), or its memory totals where it wrote no
            such report (:attr:`peak_is_totals`); None where it gave neither.
        step_time: estimated seconds per step (see :attr:`parts`).
        parts: the step time's parts: "compute", "memory", and collectives by link ("ICI",
            "NVLink", "DCN" across TPU slices, "network" across GPU hosts), seconds.
        collectives: the compiled program's collectives.
        compiler: the compiler that compiled it, in words.
        compile_s: seconds the compile took in its helper.
        sources: for each figure, where it comes from, in words.
        plan: the compile (:class:`shardwidget.plan.Plan`).
        estimate: the estimate (:class:`shardwidget.Estimate`); None when it did not fit.
        proposal: the layout as the search proposed it (one spec per leaf).
        notes: what a reader should know about the placement.
    """

    name: str
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    strategy: str
    in_specs: tuple[Any, ...] = field(repr=False)
    fits: bool | None
    peak: int | None
    step_time: float | None
    parts: dict[str, float] = field(repr=False)
    collectives: list[hlo.Collective] = field(repr=False)
    compiler: str = field(repr=False)
    compile_s: float = field(repr=False)
    sources: dict[str, str] = field(repr=False)
    plan: Plan = field(repr=False)
    estimate: Estimate | None = field(repr=False)
    proposal: Proposal = field(repr=False)
    notes: tuple[str, ...] = field(repr=False, default=())
    peak_is_totals: bool = field(repr=False, default=False)
    """Whether :attr:`peak` is the memory totals (arguments + outputs + temporaries −
    aliased): because the compiler's peak is unknown (XLA:CPU before jaxlib 0.10 writes no
    live-range report), or on a GPU, whose runtime holds them all at once
    (:attr:`Plan.fit_bytes`)."""

    def rank_key(self) -> tuple[int, float]:
        """Fit first (fits, unknown, does not fit), then the step time."""
        order = 0 if self.fits else 1 if self.fits is None else 2
        return order, self.step_time if self.step_time is not None else float("inf")

    @property
    def fit_word(self) -> str:
        """ "fits", "does not fit" or "fit unknown"."""
        return "fits" if self.fits else "fit unknown" if self.fits is None else "does not fit"

    @property
    def summary(self) -> str:
        """ "fits, peak 508 MiB per device, estimated step 1.15 ms" ("memory totals 530 MiB
        per device (peak unknown)" where the compiler's peak is unknown)."""
        peak = ""
        if self.peak is not None:
            what = "memory totals" if self.peak_is_totals else "peak"
            gpu = self.plan.compiler == "gpu"
            unknown = " (held at once on a GPU)" if gpu else " (peak unknown)"
            unknown = unknown if self.peak_is_totals else ""
            peak = f", {what} {fmt_bytes(self.peak)} per device{unknown}"
        t = f", estimated step {fmt_seconds(self.step_time)}" if self.step_time is not None else ""
        return f"{self.fit_word}{peak}{t}"

    @property
    def line(self) -> str:
        """One line: name, fit and peak ("totals" where the peak is unknown), step time."""
        peak = fmt_bytes(self.peak) if self.peak is not None else "?"
        what = "totals" if self.peak_is_totals else "peak"
        t = fmt_seconds(self.step_time) if self.step_time is not None else "—"
        return f"{self.name:<28} {self.fit_word:<13} {what} {peak:>10}  step {t:>9}"


def links(est: Estimate, slow: str = "DCN") -> dict[str, float]:
    """Collective seconds by the link they cross: ``slow`` ("DCN" across TPU slices, "network"
    across GPU hosts) for an axis marked as crossing, the preset's link ("ICI", "NVLink")
    otherwise."""
    out: dict[str, float] = {}
    for c in est.collectives:
        link = slow if set(c.collective.axes) & set(est.dcn_axes) else est.hardware.link
        out[link] = out.get(link, 0.0) + c.seconds
    return out


def _peak_words(plan: Plan, who: str) -> str:
    """Where the candidate's peak comes from, in words."""
    if plan.compiler == "gpu":
        return f"{who}: {plan.fit_source}"
    if plan.peak is not None:
        return (
            f"{who}: the most bytes live at once on a device, from its live-range report and "
            "buffer assignment of this compile"
        )
    return (
        f"{who}: its memory totals per device (arguments + outputs + temporaries − aliased, "
        f"an upper bound on the peak), because the peak is unknown: {plan.peak_unknown}"
    )


def _sources(plan: Plan, hw: Hardware, hbm: str, target: Target) -> dict[str, str]:
    who = target.compiler
    tpu = plan.compiler == "tpu"
    return {
        "peak": _peak_words(plan, who),
        "fits": f"{plan.fit_source} <= {hbm}"
        + ("; and the TPU compiler's own HBM check" if tpu else ""),
        "compute": f"FLOPs per device from XLA's cost analysis of the compiled program / "
        f"{hw.name}'s peak ({hw.peak_flops:.4g} FLOP/s)",
        "memory": f"bytes accessed per device (XLA's cost analysis) / {hw.name}'s HBM "
        f"bandwidth ({hw.hbm_bandwidth / 1e9:.4g} GB/s)",
        "collectives": f"the compiled HLO's collectives, each steps × latency + bytes / "
        f"{hw.name}'s {hw.link} bandwidth ({hw.ici_bandwidth / 1e9:.4g} GB/s per axis); "
        f"{target.slow_link} latency and bandwidth ({hw.network_bandwidth / 1e9:.4g} GB/s) on "
        f"axes that cross {_crossing(target)}",
        "step_time": OVERLAP,
        "compile_s": f"the compile's own time in its helper ({who})",
    }


def _crossing(target: Target) -> str:
    if target.kind == "gpu":
        return "hosts outside one NVLink domain"
    return "slices"


def make(
    proposal: Proposal,
    in_specs: Sequence[Any],
    plan: Plan,
    hw: Hardware,
    target: Target,
) -> Candidate:
    """The candidate of a compiled proposal, estimated on ``hw``; its fit judged on the
    compiler's peak (:attr:`Plan.peak_bytes`: the memory totals where the peak is unknown)."""
    hbm, hbm_source = target.hbm_bytes(hw)
    dcn = target.dcn_axes(plan.mesh)
    sources = _sources(plan, hw, f"{fmt_bytes(round(hbm))} ({hbm_source})", target)
    # one figure with Plan.fits (a GPU's: what its runtime holds at once, the totals)
    peak, totals = plan.fit_bytes, plan.compiler == "gpu" or plan.peak is None
    if not plan.fits and plan.compiler == "tpu":  # libtpu refused: its words are all there is
        sources["fits"] = f"{target.compiler}: {plan.note}"
        return Candidate(
            proposal.name, proposal.mesh_shape, proposal.axis_names, proposal.strategy,
            tuple(in_specs), False, peak, None, {}, [], target.compiler, plan.compile_s,
            sources, plan, None, proposal, proposal.notes, totals,
        )  # fmt: skip
    fits = None if peak is None else peak <= hbm
    # the estimate's own fit read the totals: one figure, one rule, as the candidate's
    est = dataclasses.replace(plan.estimate(hw, dcn_axes=dcn), peak_bytes=peak, fits=fits)
    parts = {"compute": est.compute_s, "memory": est.memory_s, **links(est, target.slow_link)}
    return Candidate(
        name=proposal.name,
        mesh_shape=proposal.mesh_shape,
        axis_names=proposal.axis_names,
        strategy=proposal.strategy,
        in_specs=tuple(in_specs),
        fits=fits,
        peak=peak,
        step_time=est.total_s,
        parts=parts,
        collectives=list(plan.collectives),
        compiler=target.compiler,
        compile_s=plan.compile_s,
        sources=sources,
        plan=plan,
        estimate=est,
        proposal=proposal,
        notes=proposal.notes,
        peak_is_totals=totals,
    )


def ranked(cands: Sequence[Candidate]) -> list[Candidate]:
    """Fit first, then the step time; ties keep the order of proposal."""
    return sorted(cands, key=lambda c: c.rank_key())


def why(best: Candidate, other: Candidate) -> str:
    """Why ``best`` ranks above ``other``, in the ranking's own terms: fit first, then the
    part of the estimated step time that differs most."""
    if best.fits != other.fits:
        fit = {True: "fits", False: "does not fit", None: "has no known fit"}
        return (
            f"{best.name} {fit[best.fits]} and {other.name} {fit[other.fits]}: the ranking "
            "puts the layouts that fit first"
        )
    if best.step_time is None or other.step_time is None:
        return f"neither {best.name} nor {other.name} has an estimated step time"
    keys = sorted(set(best.parts) | set(other.parts))
    gap = {k: other.parts.get(k, 0.0) - best.parts.get(k, 0.0) for k in keys}
    k = max(keys, key=lambda key: abs(gap[key]))
    what = k if k in ("compute", "memory") else f"collectives over {k}"
    peak = ""
    if best.peak is not None and other.peak is not None:
        peak = f"; peak {fmt_bytes(best.peak)} against {fmt_bytes(other.peak)} per device"
    return (
        f"{best.name} ({fmt_seconds(best.step_time)}) beats {other.name} "
        f"({fmt_seconds(other.step_time)}): the largest difference is {what}, "
        f"{fmt_seconds(best.parts.get(k, 0.0))} against {fmt_seconds(other.parts.get(k, 0.0))}"
        f"{peak} (estimated: {OVERLAP})"
    )
