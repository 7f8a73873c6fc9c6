"""The cost model's wire format (the array and function views): hardware presets, estimates,
and what a re-layout moves. Mirrors ``js/wire/cost.ts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypedDict, cast

import numpy as np

from ._common import MAX_PAIRS_PER_DEVICE, MAX_RECORDS, cap_message, num
from .function import CollectiveWire, collective, group_sets

if TYPE_CHECKING:
    from ..cost.estimate import Estimate
    from ..cost.hardware import Hardware
    from ..cost.reshard import Transfer


class HardwareWire(TypedDict):
    """A hardware preset the dropdown offers (``_hardware_presets``); units: FLOP/s, bytes,
    bytes/s, per device (see :mod:`shardwidget.cost.hardware`)."""

    name: str
    label: str
    peak_flops: float
    hbm_bytes: float
    hbm_bandwidth: float
    ici_bandwidth: float
    ici_latency: float
    """Seconds per collective step over ICI / NVLink."""
    dcn_latency: float
    """Seconds per collective step over an axis that crosses slices or hosts."""
    source: str


class EstimatePart(TypedDict):
    """One bar of an estimate: compute, memory, one collective, or a point-to-point transfer."""

    kind: Literal["compute", "memory", "collective", "transfer"]
    label: str
    seconds: float
    collective: int
    """Index into the collectives it comes from (the trace's or the transfer's); -1 if none."""
    formula: str
    latency_s: float
    """The part of ``seconds`` that is steps × latency (0 for compute and memory)."""


class EstimateWire(TypedDict):
    """``_estimate`` of a function view (and ``estimate`` of a transfer) for ``hardware``."""

    key: int
    hardware: str
    parts: list[EstimatePart]
    total_s: float
    overlap: str
    bound: Literal["compute", "memory", "communication", ""]
    fits: bool | None
    fits_text: str
    peak_bytes: int
    hbm_bytes: float


class TransferWire(TypedDict):
    """``_transfer`` of an array view: what moving the original layout to the shown one moves
    (same key as ``_layout``). Per-device lists are parallel to ``_layout.devices.ids``."""

    key: int
    status: Literal["none", "pending", "ready", "unavailable"]
    message: str
    line: str
    total: int
    received: list[int]
    sent: list[int]
    pairs: list[list[int]]
    """[sender id, receiver id, bytes], at most MAX_PAIRS_PER_DEVICE × n_devices."""
    pairs_left_out: int
    collectives: list[CollectiveWire]
    group_sets: list[list[list[int]]]
    """The collectives' distinct device groups (as ``Trace.group_sets``)."""
    estimate: EstimateWire | None


# ---------------------------------------------------------------------- cost (issue 12)
def hardware_presets(presets: Sequence[Hardware]) -> list[HardwareWire]:
    """``_hardware_presets``: what the hardware dropdown offers."""
    return [cast(HardwareWire, h.to_wire()) for h in presets]


def empty_estimate(key: int, hardware: str, message: str = "") -> EstimateWire:
    """An estimate with no parts (no compiled result to estimate)."""
    return {
        "key": key,
        "hardware": hardware,
        "parts": [],
        "total_s": 0.0,
        "overlap": message,
        "bound": "",
        "fits": None,
        "fits_text": "",
        "peak_bytes": 0,
        "hbm_bytes": 0.0,
    }


def estimate(est: Estimate, *, key: int) -> EstimateWire:
    """``_estimate`` of a function view (and ``estimate`` of a transfer); the parts in order
    compute, memory, each collective (at most MAX_RECORDS), a point-to-point transfer."""
    parts = est.parts()
    colls = [p for p in parts if p["kind"] == "collective"][:MAX_RECORDS]
    parts = (
        [p for p in parts if p["kind"] != "collective"][:2]
        + colls
        + [p for p in parts if p["kind"] == "transfer"]
    )
    return {
        "key": key,
        "hardware": est.hardware.name,
        "parts": [
            cast(
                EstimatePart,
                {
                    **p,
                    "seconds": num(p["seconds"]) or 0.0,
                    "latency_s": num(p["latency_s"]) or 0.0,
                },
            )
            for p in parts
        ],
        "total_s": num(est.total_s) or 0.0,
        "overlap": est.overlap,
        "bound": cast(Literal["compute", "memory", "communication", ""], est.bound),
        "fits": est.fits,
        "fits_text": est.fits_text,
        "peak_bytes": int(est.peak_bytes or 0),
        "hbm_bytes": float(est.hardware.hbm_bytes),
    }


def no_transfer(
    key: int, status: Literal["none", "pending", "unavailable"] = "none", message: str = ""
) -> TransferWire:
    """``_transfer`` with nothing to show: the original layout ("none"), still being computed,
    or unavailable (message says why)."""
    line = "the original layout: nothing moves" if status == "none" else ""
    return {
        "key": key,
        "status": status,
        "message": cap_message(message) if message else "",
        "line": line,
        "total": 0,
        "received": [],
        "sent": [],
        "pairs": [],
        "pairs_left_out": 0,
        "collectives": [],
        "group_sets": [],
        "estimate": None,
    }


def transfer(
    t: Transfer, *, key: int, device_ids: Sequence[int], est: Estimate | None
) -> TransferWire:
    """``_transfer`` of an array view: per-device lists in ``device_ids`` order (the shown
    layout's devices), pairs capped at MAX_PAIRS_PER_DEVICE × n + 64 (largest first). With
    ``est`` None the reshard is not compiled yet: status "pending", the bytes without the
    collectives and the estimate (they follow)."""
    cap = MAX_PAIRS_PER_DEVICE * len(device_ids) + 64
    pairs = t.plan.pairs
    if len(pairs) > cap:
        pairs = pairs[np.argsort(-pairs[:, 2], kind="stable")[:cap]]
    colls = t.collectives[:MAX_RECORDS] if est is not None else []
    sets, set_of = group_sets([c.groups for c in colls], budget=8 * max(len(device_ids), 64))
    out = no_transfer(key)
    out.update(
        {
            "status": "ready" if est is not None else "pending",
            "line": t.line(compiled=est is not None),
            "total": t.total,
            "received": [int(t.received.get(d, 0)) for d in device_ids],
            "sent": [int(t.sent.get(d, 0)) for d in device_ids],
            "pairs": pairs.tolist(),
            "pairs_left_out": len(t.plan.pairs) - len(pairs),
            "collectives": [collective(c, set_of[i]) for i, c in enumerate(colls)],
            "group_sets": sets,
            "estimate": estimate(est, key=key) if est is not None else None,
        }
    )
    return out
