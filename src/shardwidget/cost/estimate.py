"""Estimated time of a compiled program (or a re-layout) on a hardware preset.

All per device. With ``hw`` a :class:`~shardwidget.cost.hardware.Hardware`:

- compute: FLOPs / ``peak_flops``: XLA's cost analysis, with what it leaves out counted from the
  compiled HLO (gemm and convolution custom-calls, which XLA's GPU cost analysis omits; see
  :mod:`shardwidget.hlo.flops`); ``flops_source`` says which;
- memory: bytes accessed (XLA's cost analysis) / ``hbm_bandwidth``;
- each collective, ring model with ``n`` devices per group, ``V`` the bytes of the whole buffer
  one group works on, ``B = ici_bandwidth``:

  ==================== ====================================================================
  all-gather           (n-1)/n · V / B   (V: the gathered result)
  reduce-scatter       (n-1)/n · V / B   (V: the input, n × the result)
  all-reduce           2 (n-1)/n · V / B (a reduce-scatter, then an all-gather)
  all-to-all           V/n · Σ_{k=1}^{n-1} min(k, n-k) / B: each device's buffer V is cut into
                       n chunks, chunk k travels min(k, n-k) hops on the bidirectional ring,
                       and every hop costs the sending device's link time (n = 2: V/2 / B)
  collective-permute   V / B  (each device sends its buffer once, to a ring neighbour)
  ==================== ====================================================================

- the link: a collective over an axis in ``dcn_axes`` (one that crosses slices or hosts, or
  leaves an NVLink domain) has groups that cross the network, the slowest link they cross:
  its bytes move at the preset's ``network_bandwidth`` (``B`` above is then that), not the
  ICI/NVLink's, and its formula names the link that set its time;
- latency: each collective also pays ``steps × latency`` (the α-β model), its steps on the
  ring algorithm: all-gather, reduce-scatter and all-to-all (pairwise exchange) ``n-1``,
  all-reduce ``2(n-1)``, collective-permute 1; the latency is the preset's ``ici_latency``, or
  ``dcn_latency`` when the collective runs over an axis in ``dcn_axes`` (slices or hosts). So a
  4-element psum over 8 devices costs 14 steps (14 µs on a TPU), and a large one stays within
  a fraction of a percent of its bandwidth time.
- overlap: compute and memory traffic overlap each other (the roofline: the larger of the two
  counts); collectives do not overlap with them nor with each other. ``total_s = max(compute_s,
  memory_s) + Σ collective seconds``. ``bound`` names the largest of compute, memory and all
  communication together.
- ``fits``: ``peak_bytes`` per device <= ``hbm_bytes``; ``peak_bytes`` is what the caller
  judges fit on: a function view the memory analysis' arguments + outputs + temporaries -
  aliased (what the runtime holds at once), a plan its ``fit_bytes`` (``fit_basis`` says which
  where it needs saying).

A first-order model: no link contention between axes, no compute/collective
overlap that XLA's scheduler may find. Good for comparing layouts, not for a stopwatch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..hlo import collectives as hlo
from ..hlo import flops as hlo_flops
from ..model.units import fmt_bytes
from .hardware import Hardware, hardware

if TYPE_CHECKING:  # machine.py builds on this module's estimate(); JAX's types only
    import jax

    from .machine import Machine

OVERLAP = (
    "compute and memory overlap (the larger counts); collectives run after, one after another: "
    "total = max(compute, memory) + sum of collectives"
)


def volume(c: hlo.Collective) -> float:
    """V of the ring model: the bytes of the whole buffer a group of the collective works on,
    from the bytes one device sends (hlo.Collective.bytes, the same ring model)."""
    n = c.group_size
    if c.kind == "collective-permute":
        return float(c.bytes)
    if n <= 1:
        return 0.0
    if c.kind == "all-reduce":
        return c.bytes * n / (2 * (n - 1))
    return c.bytes * n / (n - 1)  # all-gather, reduce-scatter (V = n·R), all-to-all


def a2a_hops(n: int) -> int:
    """Σ_{k=1}^{n-1} min(k, n-k): chunk-hops of one device's all-to-all on a bidirectional ring."""
    return sum(min(k, n - k) for k in range(1, n))


def collective_steps(kind: str, n: int) -> int:
    """Steps of one collective on the ring algorithm (module docstring): each pays a latency."""
    if kind == "collective-permute":
        return 1
    if n <= 1:
        return 0
    return 2 * (n - 1) if kind == "all-reduce" else n - 1


def crosses_network(c: hlo.Collective, dcn_axes: Sequence[str]) -> bool:
    """Whether the collective's groups span an axis that crosses slices or hosts."""
    return bool(set(c.axes) & set(dcn_axes))


def link_bandwidth(hw: Hardware, network: bool) -> tuple[float, str]:
    """(bytes/s, the link in words) a collective moves at: the network's where its groups
    cross it (the slowest link), else the preset's ICI/NVLink."""
    if not network:
        return hw.ici_bandwidth, hw.link
    if hw.dcn_bandwidth:
        return hw.dcn_bandwidth, hw.dcn_link
    return hw.ici_bandwidth, f"{hw.dcn_link} (no network bandwidth given: {hw.link}'s)"


def bandwidth_seconds(
    c: hlo.Collective, hw: Hardware, dcn_axes: Sequence[str] = ()
) -> tuple[float, str]:
    """(seconds, the formula with its numbers) of the bytes of one collective: the β term, at
    the bandwidth of the slowest link its groups cross."""
    b, link = link_bandwidth(hw, crosses_network(c, dcn_axes))
    n, v = c.group_size, volume(c)
    vb = f"{fmt_bytes(round(v))} / {b / 1e9:.4g} GB/s {link}"
    if c.kind == "collective-permute":
        return v / b, f"V / B = {vb}"
    if n <= 1 or v == 0:
        return 0.0, "nothing to send (one device per group)"
    if c.kind == "all-reduce":
        return 2 * (n - 1) / n * v / b, f"2(n-1)/n · V / B = 2·{n - 1}/{n} · {vb}"
    if c.kind == "all-to-all":
        h = a2a_hops(n)
        return v / n * h / b, f"V/n · Σmin(k,n-k) / B = {h}/{n} · {vb}"
    return (n - 1) / n * v / b, f"(n-1)/n · V / B = {n - 1}/{n} · {vb}"


def latency_seconds(
    c: hlo.Collective, hw: Hardware, dcn_axes: Sequence[str] = ()
) -> tuple[float, str]:
    """(seconds, the formula) of one collective's steps × latency: the α term; DCN latency when
    it runs over an axis in ``dcn_axes``."""
    steps = collective_steps(c.kind, c.group_size)
    if c.kind != "collective-permute" and (c.group_size <= 1 or volume(c) == 0):
        steps = 0
    dcn = crosses_network(c, dcn_axes)
    lat, net = (hw.dcn_latency, hw.dcn_link) if dcn else (hw.ici_latency, hw.link)
    return steps * lat, f"{steps} steps × {fmt_seconds(lat)} {net} latency"


def collective_seconds(
    c: hlo.Collective, hw: Hardware, dcn_axes: Sequence[str] = ()
) -> tuple[float, str]:
    """(seconds, the formula with its numbers) of one collective: steps × latency + bytes ÷
    bandwidth (see the module docstring)."""
    lat, lf = latency_seconds(c, hw, dcn_axes)
    bw, bf = bandwidth_seconds(c, hw, dcn_axes)
    if lat == 0 and bw == 0:
        return 0.0, bf
    return lat + bw, f"{lf} + {bf}"


@dataclass(frozen=True)
class CollectiveTime:
    """One collective with its estimated time."""

    collective: hlo.Collective
    seconds: float
    """Its estimated time on the preset, by the ring model: ``latency_s + bandwidth_s``."""
    formula: str
    """The arithmetic behind ``seconds``, in words and numbers."""
    latency_s: float = 0.0
    """Steps × latency (the α term)."""
    bandwidth_s: float = 0.0
    """Bytes ÷ bandwidth (the β term)."""

    @property
    def kind(self) -> str:
        """all-reduce, all-gather, …"""
        return self.collective.kind

    @property
    def label(self) -> str:
        """ "all-gather over x" (or just the kind when it matches no mesh axes)."""
        axes = self.collective.axes
        return f"{self.kind} over {','.join(axes)}" if axes else self.kind


@dataclass(frozen=True)
class Estimate:
    """Estimated seconds per device of one program on one hardware preset (module docstring)."""

    hardware: Hardware
    compute_s: float
    """FLOPs / peak_flops."""
    memory_s: float
    """Bytes accessed / hbm_bandwidth."""
    collectives: list[CollectiveTime]
    """Each collective with its time."""
    total_s: float
    """max(compute, memory) + the collectives (and a point-to-point transfer)."""
    bound: str
    """"compute", "memory" or "communication" ("" when every part is 0)."""
    fits: bool | None
    """peak bytes per device <= hbm_bytes; None when XLA gave no memory analysis."""
    peak_bytes: int | None
    """Bytes per device fit is judged on (module docstring); None when XLA gave none."""
    flops: float
    """FLOPs per device (XLA's cost analysis)."""
    bytes_accessed: float
    """Bytes per device read and written (XLA's cost analysis)."""
    transfer_s: float = 0.0
    """A re-layout XLA compiled no collective for: the largest bytes one device receives / B."""
    transfer_formula: str = field(default="", repr=False)
    """The arithmetic behind ``transfer_s`` ("" without one)."""
    transfer_latency_s: float = 0.0
    """The latency part of ``transfer_s`` (one step)."""
    dcn_axes: tuple[str, ...] = ()
    """Mesh axes marked as crossing slices or hosts: their collectives pay the network's
    latency and bandwidth."""
    overlap: str = field(default=OVERLAP, repr=False)
    """The assumption about what overlaps, in words."""
    flops_source: str = ""
    """Where ``flops`` came from: "cost_analysis", "cost_analysis + N matrix custom-calls
    counted from HLO", "counted from HLO" ("" when given by the caller)."""
    bytes_source: str = ""
    """Where ``bytes_accessed`` came from where not XLA's cost analysis ("counted from the
    HLO: …" on the GPU compiler), "" for the cost analysis."""
    hbm_source: str = ""
    """What ``fits`` judged the peak against where not the preset's HBM (a GPU plan: JAX's
    share of the GPU's memory, as ``Plan.fits``), "" for the preset's."""
    fit_basis: str = ""
    """What :attr:`peak_bytes` is where it needs saying ("totals: no live-range report" for a
    plan whose compiler wrote no peak), "" otherwise."""

    @property
    def communication_s(self) -> float:
        """All collectives (and a point-to-point transfer) together, seconds."""
        return sum(c.seconds for c in self.collectives) + self.transfer_s

    @property
    def fits_text(self) -> str:
        """ "fits in HBM (1.2 MiB of 95 GiB)", "does not fit …", or "" when unknown."""
        if self.fits is None or self.peak_bytes is None:
            return ""
        word = "fits" if self.fits else "does not fit"
        hbm = fmt_bytes(round(self.hardware.hbm_bytes))
        why = f": {self.hbm_source}" if self.hbm_source else ""
        basis = f" {self.fit_basis}" if self.fit_basis else ""
        return f"{word} in HBM ({fmt_bytes(self.peak_bytes)}{basis} of {hbm}{why})"

    def parts(self) -> list[dict[str, Any]]:
        """One bar each (wire.EstimatePart): compute, memory, each collective, a transfer."""
        out: list[dict[str, Any]] = [
            {
                "kind": "compute",
                "label": "compute",
                "seconds": self.compute_s,
                "collective": -1,
                "formula": f"FLOPs / peak = {self.flops:.4g} / {self.hardware.peak_flops:.4g}"
                + (f" (FLOPs: {self.flops_source})" if self.flops_source else ""),
                "latency_s": 0.0,
            },
            {
                "kind": "memory",
                "label": "memory",
                "seconds": self.memory_s,
                "collective": -1,
                "formula": "bytes accessed / HBM bandwidth = "
                f"{fmt_bytes(round(self.bytes_accessed))}"
                f" / {self.hardware.hbm_bandwidth / 1e9:.4g} GB/s"
                + (f" (bytes: {self.bytes_source})" if self.bytes_source else ""),
                "latency_s": 0.0,
            },
        ]
        for i, c in enumerate(self.collectives):
            out.append(
                {
                    "kind": "collective",
                    "label": c.label,
                    "seconds": c.seconds,
                    "collective": i,
                    "formula": c.formula,
                    "latency_s": c.latency_s,
                }
            )
        if self.transfer_formula:
            out.append(
                {
                    "kind": "transfer",
                    "label": "point-to-point",
                    "seconds": self.transfer_s,
                    "collective": -1,
                    "formula": self.transfer_formula,
                    "latency_s": self.transfer_latency_s,
                }
            )
        return out

    def __repr__(self) -> str:
        rows = [
            f"{p['label']:<28} {fmt_seconds(p['seconds']):>10}"
            + (f"  (latency {fmt_seconds(p['latency_s'])})" if p["latency_s"] else "")
            for p in self.parts()
        ]
        name = self.hardware.label or self.hardware.name
        head = f"estimate on {name}: {fmt_seconds(self.total_s)}"
        tail = f"bound: {self.bound or '—'}" + (f"; {self.fits_text}" if self.fits_text else "")
        return "\n".join([head, *rows, tail])


def fmt_seconds(s: float) -> str:
    """Seconds in the unit that reads best: 349 ps, 12.3 µs, 4.56 ms, 1.2 s (formatSeconds in
    js/shared/text.ts)."""
    if s == 0:
        return "0 s"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= f:
            return f"{s / f:.3g} {unit}"
    return f"{s / 1e-12:.3g} ps"


def estimate(
    hw: str | Hardware,
    *,
    flops: float | None,
    bytes_accessed: float | None,
    collectives: Sequence[hlo.Collective],
    peak_bytes: int | None,
    transfer_bytes: int = 0,
    dcn_axes: Sequence[str] = (),
    flops_source: str = "",
    bytes_source: str = "",
    hbm_source: str = "",
    fit_basis: str = "",
) -> Estimate:
    """The estimate of one program's per-device numbers (module docstring); ``transfer_bytes``:
    the most bytes one device receives in a re-layout XLA compiled no collective for;
    ``dcn_axes``: mesh axes that cross slices or hosts (their collectives pay the network's
    latency and move at its bandwidth);
    ``flops_source``: where ``flops`` came from, in words; ``bytes_source``, ``hbm_source``,
    ``fit_basis``: see :class:`Estimate`."""
    h = hardware(hw)
    fl, ba = float(flops or 0.0), float(bytes_accessed or 0.0)
    compute_s, memory_s = fl / h.peak_flops, ba / h.hbm_bandwidth
    times = [_timed(c, h, dcn_axes) for c in collectives]
    transfer_s, t_formula, t_lat = 0.0, "", 0.0
    if transfer_bytes and not collectives:
        t_lat = h.ici_latency
        transfer_s = t_lat + transfer_bytes / h.ici_bandwidth
        t_formula = (
            f"1 step × {fmt_seconds(t_lat)} ICI latency + most bytes one device receives / B = "
            f"{fmt_bytes(transfer_bytes)} / {h.ici_bandwidth / 1e9:.4g} GB/s"
        )
    comm = sum(t.seconds for t in times) + transfer_s
    total = max(compute_s, memory_s) + comm
    biggest = max(compute_s, memory_s, comm)
    bound = (
        ""
        if biggest <= 0
        else "compute"
        if compute_s == biggest
        else "memory"
        if memory_s == biggest
        else "communication"
    )
    return Estimate(
        hardware=h,
        compute_s=compute_s,
        memory_s=memory_s,
        collectives=times,
        total_s=total,
        bound=bound,
        fits=None if peak_bytes is None else peak_bytes <= h.hbm_bytes,
        peak_bytes=peak_bytes,
        flops=fl,
        bytes_accessed=ba,
        transfer_s=transfer_s,
        transfer_formula=t_formula,
        transfer_latency_s=t_lat,
        dcn_axes=tuple(dcn_axes),
        flops_source=flops_source,
        bytes_source=bytes_source,
        hbm_source=hbm_source,
        fit_basis=fit_basis,
    )


def _timed(c: hlo.Collective, h: Hardware, dcn_axes: Sequence[str]) -> CollectiveTime:
    lat, lf = latency_seconds(c, h, dcn_axes)
    bw, bf = bandwidth_seconds(c, h, dcn_axes)
    formula = bf if lat == 0 and bw == 0 else f"{lf} + {bf}"
    return CollectiveTime(c, lat + bw, formula, latency_s=lat, bandwidth_s=bw)


def cost_numbers(compiled: jax.stages.Compiled) -> tuple[float | None, float | None]:
    """(flops, bytes accessed) per device from XLA's cost analysis; None where it has none."""
    try:
        c = compiled.cost_analysis()
    except Exception:  # some backends have no cost analysis: the estimate then says 0
        return None, None
    if isinstance(c, list | tuple):
        c = c[0] if c else None
    if not c:
        return None, None
    fl, ba = c.get("flops"), c.get("bytes accessed")
    return (None if fl is None else float(fl)), (None if ba is None else float(ba))


def counted_numbers(compiled: jax.stages.Compiled) -> hlo_flops.Counted:
    """FLOPs and bytes accessed per device of a compiled program: XLA's cost analysis with what
    it leaves out counted from the compiled HLO (:func:`shardwidget.hlo.flops.count`)."""
    flops, accessed = cost_numbers(compiled)
    try:
        text = compiled.as_text()
    except Exception:  # an executable without text (deserialized): the cost analysis alone
        text = None
    return hlo_flops.count(text, flops, accessed)


def estimate_trace(
    res: Any, hw: str | Hardware, dcn_axes: Sequence[str] = (), machine: Machine | None = None
) -> Estimate:
    """The estimate of a function view's compiled layout (a trace.TraceResult); ``machine``:
    what its mesh stands for where it is a ``tpu_mesh`` or ``gpu_mesh`` (its slow axes, where
    ``dcn_axes`` names none, and the memory a program gets: :mod:`.machine`)."""
    counted = counted_numbers(res.compiled)
    flops, accessed, source = counted.flops, counted.bytes_accessed, counted.source
    if flops is None:
        flops = res.flops
    if accessed is None:
        accessed = getattr(res, "bytes_accessed", None)
    # what the runtime holds at once (the compiler's live peak is the memory panel's)
    peak = res.memory.get("peak") if res.memory else None
    hbm_source = ""
    if machine is not None:
        hw, dcn_axes, hbm_source = machine.apply(hw, dcn_axes)
    return estimate(
        hw,
        flops=flops,
        bytes_accessed=accessed,
        collectives=res.collectives,
        peak_bytes=peak,
        dcn_axes=dcn_axes,
        flops_source=source,
        hbm_source=hbm_source,
    )
