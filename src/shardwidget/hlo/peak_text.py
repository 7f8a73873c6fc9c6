"""The memory peak in words: its title ("peak 12.1 GiB at …"), the groups its buffers fall in
(parameters and inputs, optimizer state, activations saved for the backward pass, temporaries,
outputs), and the compact lines of the text view and the static picture. Pure (reads a
:class:`~shardwidget.hlo.peak.Peak`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..model.units import fmt_bytes
from .peak import Buffer, Peak

GROUPS = ("parameters and inputs", "optimizer state", "saved activations", "temporaries", "outputs")
"""The groups of the memory panel, in its order."""

OPTIMIZER = re.compile(r"opt|adam|\bmu\b|\bnu\b|momentum|velocity|count", re.IGNORECASE)
"""Input paths that name an optimizer's state (optax's ``mu`` / ``nu`` / ``count``, an
``opt_state`` argument): by name only, the compiled program does not say."""


def group_of(b: Buffer) -> str:
    """Which :data:`GROUPS` a buffer falls in. Arguments: optimizer state where the input's
    path names it (:data:`OPTIMIZER`), else parameters and inputs (every other input: the
    compiled program does not tell a weight from a batch);
    temporaries: saved activations where JAX's op name is of the forward pass of a gradient
    (``jvp(`` without ``transpose(``: a value of the forward pass still live in the backward),
    else temporaries."""
    if b.kind == "argument":
        optimizer = OPTIMIZER.search(b.path or b.op_name)
        return "optimizer state" if optimizer else "parameters and inputs"
    if b.kind == "output":
        return "outputs"
    if "jvp(" in b.op_name and "transpose(" not in b.op_name:
        return "saved activations"
    return "temporaries"


def label(b: Buffer) -> str:
    """A buffer's row label: its input leaf's path, else JAX's op name and line."""
    if b.kind == "argument":
        return b.path or b.op_name or f"parameter {b.parameter}"
    what = op_word(b.op_name) if b.op_name else re.sub(r"\{[\d,]*\}$", "", b.value)
    return f"{what} ({b.source})" if b.source else what


def op_word(op_name: str) -> str:
    """The op of JAX's op name: its last path part, without the parentheses of a fusion's
    list ("jit(f)/(jvp()/sum:transpose(jvp())/dot_general)" → "dot_general")."""
    last = op_name.rsplit("/", 1)[-1]
    while last.endswith(")") and last.count(")") > last.count("("):
        last = last[:-1]
    return last.split(":")[-1] or op_name


def where(peak: Peak) -> str:
    """Where the peak is, in words: "jit(step)/transpose(jvp())/dot_general at model.py:41,
    in the body of while.30, run 24 times"."""
    at = peak.at
    text = at.op_name or at.instruction
    if at.source:
        text += f" at {at.source}"
    if at.loop:
        text += f", {at.loop}"
    return text


def title(peak: Peak, hbm: float | None = None) -> str:
    """ "peak 12.1 GiB at …" and, with the device memory ``hbm`` known, how it compares."""
    text = f"peak {fmt_bytes(peak.bytes)} at {where(peak)}"
    if hbm:
        over = peak.bytes - hbm
        text += (
            f" ({fmt_bytes(over)} over the {fmt_bytes(hbm)} of HBM)"
            if over > 0
            else (f" ({_share(peak.bytes / hbm)} of {fmt_bytes(hbm)} HBM)")
        )
    return text


def _share(f: float) -> str:
    """A fraction as a percentage that never reads 0 % for a non-zero share."""
    pct = 100 * f
    return f"{pct:.0f} %" if pct >= 10 else f"{pct:.2g} %" if pct >= 0.01 else "< 0.01 %"


def grouped(peak: Peak) -> list[tuple[str, int, list[Buffer]]]:
    """(group, bytes, buffers largest first) for each non-empty group, in :data:`GROUPS`'
    order."""
    by: dict[str, list[Buffer]] = {g: [] for g in GROUPS}
    for b in peak.buffers:
        by[group_of(b)].append(b)
    return [(g, sum(b.bytes for b in bs), bs) for g, bs in by.items() if bs]


def compact(
    peak: Peak | None, unknown: str = "", hbm: float | None = None, rows: int = 3
) -> list[str]:
    """The text view's lines: the title, then each group with its bytes and its largest
    ``rows`` buffers; one line saying why where the peak is unknown."""
    if peak is None:
        return [f"peak: unknown ({unknown})"] if unknown else []
    out = [title(peak, hbm)]
    for g, total, bs in grouped(peak):
        names = ", ".join(f"{label(b)} {fmt_bytes(b.bytes)}" for b in bs[:rows])
        more = f", +{len(bs) - rows} more" if len(bs) > rows else ""
        out.append(f"  {g} {fmt_bytes(total)}: {names}{more}")
    return out


def one_line(peak: Peak | None, unknown: str = "", hbm: float | None = None) -> list[str]:
    """The static picture's form: the title, then the groups' bytes on one line."""
    if peak is None:
        return compact(None, unknown)
    groups = " · ".join(f"{g} {fmt_bytes(total)}" for g, total, _ in grouped(peak))
    return [title(peak, hbm).replace("peak", "Peak", 1), f"Live at the peak: {groups}"]


def downsample(timeline: Sequence[int], width: int) -> list[int]:
    """At most ``width`` points of a timeline, each the largest of its run (the peak stays)."""
    n = len(timeline)
    if n <= width:
        return list(timeline)
    return [
        max(timeline[i * n // width : max(i * n // width + 1, (i + 1) * n // width)])
        for i in range(width)
    ]
