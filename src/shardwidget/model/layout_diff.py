"""Two layouts of one array compared: which blocks moved to which devices, and the bytes per
device that differ. Pure: plain :class:`~shardwidget.model.layout.Layout` data in, plain data out.

Going from layout A to layout B, a device must receive the part of its new block that its old
block does not cover (a device that keeps its block receives nothing). The bytes it holds
change when the block's size does.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from .layout import Index, Layout
from .units import fmt_bytes


@dataclass(frozen=True)
class DeviceChange:
    """One device from layout A to layout B.

    Attributes:
        device: the device id.
        before / after: the block it holds in A / B, as (start, stop) per dimension; None where
            the layout does not use the device.
        bytes_before / bytes_after: what it holds in A / B.
        bytes_in: bytes of its block in B that its block in A does not cover: what it must
            receive.
    """

    device: int
    before: Index | None
    after: Index | None
    bytes_before: int
    bytes_after: int
    bytes_in: int

    @property
    def moved(self) -> bool:
        """Whether the device holds another part of the array in B than in A."""
        return self.before != self.after


@dataclass(frozen=True)
class BlockMove:
    """A block of layout B that some device did not hold in A.

    Attributes:
        index: the block, (start, stop) per dimension.
        to_devices: the devices that hold it in B but did not hold it in A.
        from_devices: the devices holding part of it in A (where its data can come from).
    """

    index: Index
    to_devices: tuple[int, ...]
    from_devices: tuple[int, ...]


def _overlap(a: Index, b: Index) -> int:
    """Elements in both boxes."""
    return math.prod(
        max(0, min(a1, b1) - max(a0, b0)) for (a0, a1), (b0, b1) in zip(a, b, strict=True)
    )


def _size(idx: Index) -> int:
    return math.prod(stop - start for start, stop in idx)


def _held(lay: Layout) -> dict[int, Index]:
    return {d: b.index for b in lay.blocks for d in b.devices}


@dataclass(frozen=True)
class LayoutDiff:
    """Layout B of an array compared with layout A (``compare(view_a, view_b)``).

    Attributes:
        names: labels of A and B.
        a, b: the two layouts.
        devices: one :class:`DeviceChange` per device of either layout, by id.
        moves: the blocks of B that some device newly holds, in B's block order.
    """

    names: tuple[str, str]
    a: Layout
    b: Layout
    devices: list[DeviceChange]
    moves: list[BlockMove]

    @property
    def moved_devices(self) -> list[int]:
        """Devices that hold another block in B."""
        return [c.device for c in self.devices if c.moved]

    @property
    def bytes_in(self) -> dict[int, int]:
        """Device id -> bytes it must receive (devices receiving nothing left out)."""
        return {c.device: c.bytes_in for c in self.devices if c.bytes_in}

    @property
    def bytes_delta(self) -> dict[int, int]:
        """Device id -> bytes held in B minus in A (devices where it differs)."""
        return {
            c.device: c.bytes_after - c.bytes_before
            for c in self.devices
            if c.bytes_after != c.bytes_before
        }

    @property
    def same(self) -> bool:
        """Every device holds the same block in both layouts."""
        return not self.moved_devices

    def __repr__(self) -> str:
        na, nb = self.names
        a_spec = self.a.spec_text or self.a.sharding_type
        b_spec = self.b.spec_text or self.b.sharding_type
        head = f"{na}: {a_spec}  →  {nb}: {b_spec}  ({self.a.dtype}{list(self.a.shape)})"
        if self.same:
            return head + "\nthe same blocks on the same devices: nothing moves"
        total = sum(self.bytes_in.values())
        lines = [
            head,
            f"{len(self.moved_devices)} of {len(self.devices)} devices hold another block; "
            f"{fmt_bytes(total)} to receive in all",
        ]
        shown = [c for c in self.devices if c.moved or c.bytes_before != c.bytes_after]
        # Boxes padded to the widest of their column: the arrows and amounts line up.
        wb = max((len(_box(c.before)) for c in shown), default=0)
        wa = max((len(_box(c.after)) for c in shown), default=0)
        wd = max((len(str(c.device)) for c in shown), default=0)
        for c in shown:
            delta = c.bytes_after - c.bytes_before
            sign = "+" if delta > 0 else ""
            lines.append(
                f"  device {c.device:>{wd}}: {_box(c.before):<{wb}} → {_box(c.after):<{wa}}  "
                f"receives {fmt_bytes(c.bytes_in)}"
                + (f", holds {sign}{fmt_bytes(delta)}" if delta else "")
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return f"<pre class='shardwidget-layout-diff'>{html.escape(repr(self))}</pre>"


def _box(idx: Index | None) -> str:
    if idx is None:
        return "—"
    return "[" + ", ".join(f"{a}:{b}" for a, b in idx) + "]"


def diff(a: Layout, b: Layout, names: tuple[str, str] = ("A", "B")) -> LayoutDiff:
    """Layout b compared with layout a (same shape and dtype: ValueError otherwise)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(
            f"compare() needs two layouts of one array; got {a.dtype}{list(a.shape)} and "
            f"{b.dtype}{list(b.shape)}"
        )
    ha, hb = _held(a), _held(b)
    nbytes = a._packed_bytes  # elements -> bytes as XLA stores them (int4 packed)
    changes = []
    for d in sorted(set(ha) | set(hb)):
        before, after = ha.get(d), hb.get(d)
        covered = _overlap(before, after) if before is not None and after is not None else 0
        changes.append(
            DeviceChange(
                device=d,
                before=before,
                after=after,
                bytes_before=nbytes(_size(before)) if before is not None else 0,
                bytes_after=nbytes(_size(after)) if after is not None else 0,
                bytes_in=nbytes(_size(after) - covered) if after is not None else 0,
            )
        )
    moves = []
    for blk in b.blocks:
        new = tuple(d for d in blk.devices if ha.get(d) != blk.index)
        if new:
            src = tuple(sorted(d for d, idx in ha.items() if _overlap(idx, blk.index)))
            moves.append(BlockMove(blk.index, new, src))
    return LayoutDiff(names, a, b, changes, moves)
