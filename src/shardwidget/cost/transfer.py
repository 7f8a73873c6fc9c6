"""What a re-layout moves: bytes each device receives and sends, and who sends to whom.

Pure numpy over two :class:`~shardwidget.model.layout.Layout` s (the old and the new geometry of the
same array); no JAX, no widget code.

- **received**: a device receives the elements of its new block that it did not hold in the old
  layout (a device outside the old layout held nothing), in bytes as XLA stores them: sub-byte
  dtypes (int4, uint4) packed, ceil(elements * bits / 8) per device (and per pair).
- **sent**, the sender rule: every element a device must receive lies in exactly one old block
  (the old blocks partition the array). The piece of old block ``o`` that receiver ``r`` needs
  is sent by one holder of ``o``: the pieces of ``o`` are dealt round-robin among its holders in
  device-id order, receivers taken in device-id order (the first receiver's piece from the
  lowest-id holder, the next from the next holder, …). With even shardings every piece of a
  block has the same size, so this spreads the block's sending evenly over its copies.

The work is one sparse join per dimension (intervals of the old and new blocks that overlap),
then array operations over the pieces: no Python loop over devices or blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model.layout import Layout


@dataclass(frozen=True)
class Plan:
    """The bytes moved by a re-layout, per device (ids as in the layouts)."""

    received: dict[int, int]
    """Device id -> bytes it receives (every device of the new layout, 0 included)."""
    sent: dict[int, int]
    """Device id -> bytes it sends (every device of the old layout, 0 included)."""
    pairs: np.ndarray = field(repr=False)
    """int64 (k, 3): sender id, receiver id, bytes; one row per pair that moves data (in no
    particular order)."""

    @property
    def total(self) -> int:
        """Bytes received, all devices together."""
        return int(sum(self.received.values()))


def _boxes(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) int64 arrays (n_blocks, ndim) of the layout's blocks (made once per layout)."""
    return lay.derived("transfer.boxes", _make_boxes)


def _make_boxes(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    nd = len(lay.shape)
    idx = np.array([b.index for b in lay.blocks], dtype=np.int64).reshape(len(lay.blocks), nd, 2)
    idx.flags.writeable = False  # kept with the layout: views of it are read-only too
    return idx[..., 0], idx[..., 1]


def _ids(lay: Layout) -> np.ndarray:
    """The layout's device ids, in its device order, int64 (made once per layout)."""
    return lay.derived("transfer.ids", lambda v: _frozen([d.id for d in v.devices]))


def _frozen(values: Any) -> np.ndarray:
    """values as a read-only int64 array (kept with a layout, shared by every plan)."""
    out = np.array(values, dtype=np.int64)
    out.flags.writeable = False
    return out


def _device_blocks(lay: Layout) -> tuple[np.ndarray, np.ndarray]:
    """``device_block`` as two int64 arrays, (device ids, block numbers) (made once)."""

    def make(v: Layout) -> tuple[np.ndarray, np.ndarray]:
        n = len(v.device_block)
        dev = np.fromiter(v.device_block.keys(), dtype=np.int64, count=n)
        return _frozen(dev), _frozen(np.fromiter(v.device_block.values(), np.int64, count=n))

    return lay.derived("transfer.device_blocks", make)


def _intervals(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (start, stop) intervals of one dimension, sorted, and each block's interval."""
    span = int(hi.max(initial=0)) + 1
    uniq, inv = np.unique(lo * span + hi, return_inverse=True)  # one int per (start, stop)
    return uniq // span, uniq % span, inv.reshape(-1)


def _overlaps(
    o_lo: np.ndarray, o_hi: np.ndarray, n_lo: np.ndarray, n_hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each new interval j: the old intervals overlapping it, as CSR (start, count) into
    the arrays (old interval, overlap length). Old intervals are a partition, sorted."""
    first = np.searchsorted(o_hi, n_lo, side="right")  # first old interval ending after n_lo
    last = np.searchsorted(o_lo, n_hi, side="left")  # old intervals starting before n_hi
    count = np.maximum(last - first, 0)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    rep = np.repeat(np.arange(len(n_lo)), count)
    old = first[rep] + (np.arange(int(count.sum())) - start[rep])
    length = np.minimum(o_hi[old], n_hi[rep]) - np.maximum(o_lo[old], n_lo[rep])
    return start, count, old, length


def _pieces(old: Layout, new: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(new block, old block, elements) of every non-empty intersection of a new and an old
    block. ValueError when the old blocks do not form a grid (not a jax sharding's geometry)."""
    nb = len(new.blocks)
    o_lo, o_hi = _boxes(old)
    n_lo, n_hi = _boxes(new)
    nd = o_lo.shape[1]
    sizes = []
    cur_n = np.arange(nb, dtype=np.int64)
    cur_flat = np.zeros(nb, dtype=np.int64)
    cur_vol = np.ones(nb, dtype=np.int64)
    grid_idx = np.zeros(len(old.blocks), dtype=np.int64)
    for d in range(nd):
        ulo, uhi, o_inv = _intervals(o_lo[:, d], o_hi[:, d])
        if np.any(ulo[1:] < uhi[:-1]):
            raise ValueError("the old layout's blocks overlap along a dimension: not a grid")
        vlo, vhi, n_inv = _intervals(n_lo[:, d], n_hi[:, d])
        start, count, o_iv, length = _overlaps(ulo, uhi, vlo, vhi)
        j = n_inv[cur_n]
        c = count[j]
        rep = np.repeat(np.arange(len(cur_n)), c)
        k = start[j][rep] + (np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c))
        cur_n, cur_flat = cur_n[rep], cur_flat[rep] * len(ulo) + o_iv[k]
        cur_vol = cur_vol[rep] * length[k]
        grid_idx = grid_idx * len(ulo) + o_inv
        sizes.append(len(ulo))
    grid = np.full(int(np.prod(sizes, dtype=np.int64)), -1, dtype=np.int64)
    grid[grid_idx] = np.arange(len(old.blocks))
    cur_o = grid[cur_flat]
    if np.any(cur_o < 0):
        raise ValueError("the old layout's blocks do not cover the array as a grid")
    keep = cur_vol > 0
    return cur_n[keep], cur_o[keep], cur_vol[keep]


def _holders(lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The devices of each block as CSR (start, count, device ids), ids ascending per block
    (made once per layout)."""
    return lay.derived("transfer.holders", _make_holders)


def _make_holders(lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dev, blk = _device_blocks(lay)
    order = np.lexsort((dev, blk))
    count = np.bincount(blk, minlength=len(lay.blocks)).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    return _frozen(start), _frozen(count), _frozen(dev[order])


def plan(old: Layout, new: Layout) -> Plan:
    """What moving an array from layout ``old`` to layout ``new`` moves (see the module)."""
    if tuple(old.shape) != tuple(new.shape):
        raise ValueError(f"layouts of different shapes: {old.shape} and {new.shape}")
    bits = int(new.itemsize_bits or new.itemsize * 8)

    def packed(n: np.ndarray) -> np.ndarray:
        """Bytes of n elements each (sub-byte dtypes packed: ceil(n * bits / 8))."""
        out: np.ndarray = -(-n.astype(np.int64) * bits // 8)
        return out

    old_ids, new_ids = _ids(old), _ids(new)
    ids = np.unique(np.concatenate([old_ids, new_ids]))
    lut = np.zeros(int(ids[-1]) + 1 if len(ids) else 1, dtype=np.int64)
    lut[ids] = np.arange(len(ids))

    def pos(devs: np.ndarray) -> np.ndarray:
        """Positions in ids (a lookup table: device ids are small integers)."""
        out: np.ndarray = lut[devs]
        return out

    pn, po, vol = _pieces(old, new)
    # receivers: every device of each new block
    n_start, n_cnt, n_flat = _holders(new)
    c = n_cnt[pn]
    rep = np.repeat(np.arange(len(pn)), c)
    recv = n_flat[n_start[pn][rep] + (np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c))]
    po, vol = po[rep], vol[rep]
    # a receiver already holding the old block keeps its part (its own old block only)
    own = np.full(len(ids), -1, dtype=np.int64)
    own_dev, own_blk = _device_blocks(old)
    own[pos(own_dev)] = own_blk
    need = own[pos(recv)] != po
    recv, po, vol = recv[need], po[need], vol[need]
    # the sender rule: round-robin over the holders of each old block, receivers in id order
    o_start, o_cnt, o_flat = _holders(old)
    if np.all(o_cnt == 1):  # one holder per old block (no replicas): it sends every piece
        sender = o_flat[o_start[po]]
    else:
        order = np.argsort(po * len(ids) + pos(recv), kind="stable")
        recv, po, vol = recv[order], po[order], vol[order]
        first = np.ones(len(po), dtype=bool)
        first[1:] = po[1:] != po[:-1]
        group_start = np.maximum.accumulate(np.where(first, np.arange(len(po)), 0))
        rank = np.arange(len(po)) - group_start
        sender = o_flat[o_start[po] + rank % o_cnt[po]]
    # elements per device first, then bytes (packing rounds per device, not per piece)
    received = packed(np.bincount(pos(recv), weights=vol, minlength=len(ids)).astype(np.int64))
    sent = packed(np.bincount(pos(sender), weights=vol, minlength=len(ids)).astype(np.int64))
    nbytes = packed(vol)  # one piece per (sender, receiver): a device holds one old block
    pairs = np.stack([sender, recv, nbytes], 1) if len(recv) else np.zeros((0, 3), np.int64)
    return Plan(
        received=dict(zip(new_ids.tolist(), received[pos(new_ids)].tolist(), strict=True)),
        sent=dict(zip(old_ids.tolist(), sent[pos(old_ids)].tolist(), strict=True)),
        pairs=pairs.astype(np.int64),
    )
