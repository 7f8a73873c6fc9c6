"""What a planned mesh stands for, as far as an estimate needs it: which mesh axes cross the
slow links (TPU slices over DCN, GPU hosts over the network) and how much memory a program
gets on each device. One record, made by the plan layer from a ``tpu_mesh`` or ``gpu_mesh``
(``shardwidget.plan.machine.machine_of``), read by every estimate of that mesh: a plan's, a
function view's, a search candidate's. So a collective that crosses hosts is priced at the
network everywhere, and "fits" is judged against one figure everywhere."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..hlo import collectives as hlo
from .estimate import Estimate, estimate
from .hardware import Hardware, hardware


@dataclass(frozen=True)
class Machine:
    """The slow links and the usable memory of the machine a mesh stands for."""

    dcn_axes: tuple[str, ...] = ()
    """Mesh axes whose collectives cross slices or hosts (the network's bandwidth and latency)."""
    memory_bytes: float | None = None
    """Bytes a program may use on each device (libtpu's usable HBM; JAX's share of a GPU's
    memory); None where unknown (the preset's HBM is used, and said)."""
    memory_source: str = ""
    """Where :attr:`memory_bytes` comes from, in words."""
    preset: str = ""
    """The hardware preset of the machine's chip ("tpu-v5e", "h100"): its memory figure
    applies only to an estimate on that preset, not to one on another chip."""

    def apply(
        self, hw: str | Hardware, dcn_axes: Sequence[str] = ()
    ) -> tuple[Hardware, tuple[str, ...], str]:
        """(the preset, with this machine's usable memory where it is the machine's own chip;
        ``dcn_axes``, or this machine's slow axes where none are named; where the memory
        figure comes from, "" when the preset's own HBM is used)."""
        h, slow = hardware(hw), tuple(dcn_axes) or self.dcn_axes
        if self.memory_bytes is None or h.name != self.preset:
            return h, slow, ""
        h = dataclasses.replace(h, hbm_bytes=float(self.memory_bytes))
        return h, slow, self.memory_source


def estimate_on(
    machine: Machine | None,
    hw: str | Hardware,
    *,
    dcn_axes: Sequence[str] = (),
    flops: float | None,
    bytes_accessed: float | None,
    collectives: Sequence[hlo.Collective],
    peak_bytes: int | None,
    flops_source: str = "",
    bytes_source: str = "",
    fit_basis: str = "",
) -> Estimate:
    """:func:`~.estimate.estimate` on the machine a mesh stands for: its slow axes where the
    caller names none, and its usable memory for "fits" (on its own chip's preset)."""
    h, source = hardware(hw), ""
    if machine is not None:
        h, dcn_axes, source = machine.apply(h, dcn_axes)
    return estimate(
        h,
        flops=flops,
        bytes_accessed=bytes_accessed,
        collectives=collectives,
        peak_bytes=peak_bytes,
        dcn_axes=tuple(dcn_axes),
        flops_source=flops_source,
        bytes_source=bytes_source,
        hbm_source=source,
        fit_basis=fit_basis,
    )
