"""memory_map(): device memory per device, summed over every live jax.Array. No widget code.

It answers "why is device 3 full?": bytes per device, the largest arrays with the bytes each
puts on every device, the device holding the most (and its ratio to the mean), and capacity
where the backend reports ``memory_stats()`` (accelerators; CPU devices report none).

Each device buffer is counted once, by its address: the per-shard arrays that JAX caches on an
array (``shard.data``) and a view's copy that is the user's own array share buffers with it, and
are not counted again. Deleted arrays are skipped.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import jax
from jax.sharding import NamedSharding

from .._jax import spec_entries
from . import spec as spec_mod
from .layout import dtype_name
from .units import fmt_bytes

TOP = 10
"""Arrays listed in :attr:`MemoryMap.arrays` by default (the largest)."""
DEVICE_KINDS = ("device", None)
"""Memory kinds that count as device memory; pinned_host / unpinned_host shards are host."""


@dataclass(frozen=True)
class ArrayEntry:
    """One live array as the memory map counts it.

    Attributes:
        shape, dtype: of the global array.
        spec: "P('x', None)" for a NamedSharding, else the sharding's class name.
        memory_kind: "device", "pinned_host", …
        bytes_per_device: device id -> bytes of this array's buffers there (counted once).
    """

    shape: tuple[int, ...]
    dtype: str
    spec: str
    memory_kind: str
    bytes_per_device: dict[int, int]

    @property
    def total(self) -> int:
        """Bytes over every device (replicas counted on each device that holds them)."""
        return sum(self.bytes_per_device.values())


@dataclass(frozen=True)
class MemoryMap:
    """Device memory per device over ``jax.live_arrays()`` at one moment (a plain display
    object: text repr and an HTML repr with a bar per device).

    Attributes:
        per_device: device id -> bytes of live arrays in device memory (every device of this
            process listed, 0 where nothing lives).
        host: device id -> bytes of live arrays in host memory kinds (pinned_host,
            unpinned_host) attached to that device; only devices with some.
        arrays: the largest live arrays (by bytes over all devices), largest first.
        n_arrays: how many live arrays hold buffers (all, not only those listed).
        capacity: device id -> ``bytes_limit`` of ``memory_stats()``, where reported.
        in_use: device id -> ``bytes_in_use`` of ``memory_stats()`` (everything the backend
            allocated, not only arrays), where reported.
    """

    per_device: dict[int, int]
    host: dict[int, int]
    arrays: list[ArrayEntry]
    n_arrays: int
    capacity: dict[int, int] = field(default_factory=dict)
    in_use: dict[int, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Bytes in device memory over every device."""
        return sum(self.per_device.values())

    @property
    def imbalance(self) -> tuple[int, float] | None:
        """(the device holding the most, its bytes over the mean per device); None when
        nothing is held. 1.0 is a perfect balance."""
        if not self.per_device or self.total == 0:
            return None
        dev = max(self.per_device, key=lambda d: (self.per_device[d], -d))
        mean = self.total / len(self.per_device)
        return dev, self.per_device[dev] / mean

    def on_device(self, device_id: int) -> list[ArrayEntry]:
        """The listed arrays with buffers on this device, most bytes there first."""
        here = [a for a in self.arrays if a.bytes_per_device.get(device_id)]
        return sorted(here, key=lambda a: -a.bytes_per_device[device_id])

    def _why(self) -> str:
        imb = self.imbalance
        if imb is None:
            return "no live arrays in device memory"
        dev, ratio = imb
        top = self.on_device(dev)[:3]
        parts = [
            f"{a.dtype}{list(a.shape)} {a.spec} {fmt_bytes(a.bytes_per_device[dev])}" for a in top
        ]
        return f"most on device {dev}: {fmt_bytes(self.per_device[dev])}, {ratio:.2f}× the mean" + (
            f"; largest there: {', '.join(parts)}" if parts else ""
        )

    def __repr__(self) -> str:
        lines = [
            f"memory_map: {self.n_arrays} live arrays, {fmt_bytes(self.total)} in device memory"
            f" on {len(self.per_device)} devices",
            self._why(),
        ]
        for d, n in sorted(self.per_device.items()):
            cap = self.capacity.get(d)
            extra = f" of {fmt_bytes(cap)} ({100 * n / cap:.1f}%)" if cap else ""
            host = f"  + host {fmt_bytes(self.host[d])}" if self.host.get(d) else ""
            lines.append(f"  device {d:>4}: {fmt_bytes(n):>10}{extra}{host}")
        if self.arrays:
            lines.append("largest arrays (bytes per device):")
        for a in self.arrays:
            per = sorted(set(a.bytes_per_device.values()))
            each = " / ".join(fmt_bytes(v) for v in per)
            lines.append(
                f"  {a.dtype}{list(a.shape)} {a.spec} [{a.memory_kind}] on "
                f"{len(a.bytes_per_device)} devices, {each} each, {fmt_bytes(a.total)} in all"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """A bar per device (its share of the fullest device, or of capacity when known)."""
        top = max([*self.per_device.values(), *self.capacity.values(), 1])
        imb = self.imbalance
        rows = []
        for d, n in sorted(self.per_device.items()):
            full = self.capacity.get(d) or top
            width = 100 * n / full
            colour = "#d55e00" if imb and d == imb[0] and imb[1] > 1.05 else "#0072b2"
            cap = self.capacity.get(d)
            label = fmt_bytes(n) + (f" of {fmt_bytes(cap)}" if cap else "")
            rows.append(
                "<tr>"
                f"<td style='padding:1px 8px;text-align:right'>device {d}</td>"
                "<td style='padding:1px 4px;width:320px'>"
                "<div style='background:#eee;height:12px;width:300px'>"
                f"<div title='{html.escape(label)}' style='background:{colour};height:12px;"
                f"width:{width:.1f}%'></div></div></td>"
                f"<td style='padding:1px 8px'>{html.escape(label)}</td></tr>"
            )
        arrays = "".join(
            "<tr>"
            + "".join(
                f"<td style='padding:1px 8px'>{html.escape(str(c))}</td>"
                for c in (
                    f"{a.dtype}{list(a.shape)}",
                    a.spec,
                    a.memory_kind,
                    " / ".join(fmt_bytes(v) for v in sorted(set(a.bytes_per_device.values()))),
                    fmt_bytes(a.total),
                )
            )
            + "</tr>"
            for a in self.arrays
        )
        head = "".join(
            f"<th style='text-align:left;padding:1px 8px'>{h}</th>"
            for h in ("array", "spec", "memory", "per device", "in all")
        )
        return (
            "<div class='shardwidget-memory-map' style='font-family:system-ui,sans-serif;"
            "font-size:12.5px'>"
            f"<div><b>memory_map</b>: {self.n_arrays} live arrays, {fmt_bytes(self.total)} in "
            f"device memory</div><div style='color:#555'>{html.escape(self._why())}</div>"
            f"<table>{''.join(rows)}</table>"
            f"<table><tr>{head}</tr>{arrays}</table></div>"
        )


def device_stats(device: jax.Device) -> dict[str, Any] | None:
    """``device.memory_stats()``, None where the backend reports nothing (or raises)."""
    try:
        stats = device.memory_stats()
    except Exception:  # some backends raise instead of returning None
        return None
    return dict(stats) if stats else None


def _spec_of(sharding: jax.sharding.Sharding) -> str:

    if isinstance(sharding, NamedSharding):
        ndim = len(sharding.spec)
        return spec_mod.to_text(spec_mod.normalize(spec_entries(sharding.spec), ndim))
    return type(sharding).__name__


def _buffers_of(arr: jax.Array) -> list[tuple[int, int, int]] | None:
    """(device id, buffer address, bytes) of arr's addressable shards; None when deleted or
    gone while we looked."""
    try:
        if arr.is_deleted():
            return None
        out = []
        for s in arr.addressable_shards:
            d = s.data
            out.append((int(s.device.id), int(d.unsafe_buffer_pointer()), int(d.nbytes)))
        return out
    except Exception:  # a buffer deleted between the check and the read
        return None


def memory_map(top: int = TOP) -> MemoryMap:
    """Device memory per device now, summed over ``jax.live_arrays()`` (each buffer once),
    with the ``top`` largest arrays, the imbalance and capacity where reported."""

    live = [(a, _buffers_of(a)) for a in jax.live_arrays()]
    # An array owns the buffers it shares with the per-shard arrays cached on it: visit arrays
    # with more shards first, so the whole array gets them, not one of its shards.
    live_ok = sorted(((a, b) for a, b in live if b), key=lambda ab: -len(ab[1]))
    seen: set[tuple[int, int]] = set()
    devices = list(jax.local_devices())
    per_device = {int(d.id): 0 for d in devices}
    host: dict[int, int] = {}
    entries: list[ArrayEntry] = []
    for a, bufs in live_ok:
        kind = a.sharding.memory_kind
        mine: dict[int, int] = {}
        for dev, ptr, n in bufs:
            if (dev, ptr) in seen:
                continue
            seen.add((dev, ptr))
            mine[dev] = mine.get(dev, 0) + n
        if not mine:
            continue
        target = per_device if kind in DEVICE_KINDS else host
        for dev, n in mine.items():
            target[dev] = target.get(dev, 0) + n
        entries.append(
            ArrayEntry(
                shape=tuple(int(s) for s in a.shape),
                dtype=dtype_name(a.dtype),
                spec=_spec_of(a.sharding),
                memory_kind=str(kind or "device"),
                bytes_per_device=mine,
            )
        )
    entries.sort(key=lambda e: -e.total)
    capacity: dict[int, int] = {}
    in_use: dict[int, int] = {}
    for d in devices:
        stats = device_stats(d)
        if stats and "bytes_limit" in stats:
            capacity[int(d.id)] = int(stats["bytes_limit"])
        if stats and "bytes_in_use" in stats:
            in_use[int(d.id)] = int(stats["bytes_in_use"])
    return MemoryMap(per_device, host, entries[:top], len(entries), capacity, in_use)
