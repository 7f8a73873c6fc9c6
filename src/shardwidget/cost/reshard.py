"""A re-layout as a whole (``view.transfer``): the byte plan, and what XLA compiles for it.

The collectives come from compiling an identity with the new ``out_shardings`` for an input of
the old sharding (``jax.jit(lambda x: x, out_shardings=new).lower(struct).compile()``), read
with :mod:`shardwidget.hlo.collectives`. The compile is cached per (old sharding, new sharding,
shape, dtype): no device memory, a few ms when cached.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .. import _jax
from ..hlo import collectives as hlo
from ..model.free_memory import compiled_memory  # the function view's per-device numbers
from ..model.layout import Layout, layout_of_sharding
from ..model.mesh import xla_safe_sharding
from ..model.units import fmt_bytes
from . import estimate as est
from . import transfer as transfer_mod
from .hardware import DEFAULT, Hardware


@dataclass(frozen=True)
class Compiled:
    """What XLA compiled for one re-layout (per device)."""

    collectives: list[hlo.Collective]
    flops: float | None
    bytes_accessed: float | None
    peak_bytes: int | None
    error: str
    """Why it could not be compiled ("" when it was), e.g. device sets that differ."""


CACHE_SIZE = 64
_cache: OrderedDict[tuple[Any, ...], Compiled] = OrderedDict()
stats = {"hits": 0, "compiles": 0}
"""How often :func:`compile_reshard` answered from its cache, and compiled."""


def cached_reshard(
    old: jax.sharding.Sharding, new: jax.sharding.Sharding, shape: tuple[int, ...], dtype: np.dtype
) -> Compiled | None:
    """The compiled reshard of this pair if it is in the cache, else None (no work)."""
    key = (old, new, shape, dtype)
    c = _cache.get(key)
    if c is not None:
        _cache.move_to_end(key)
        stats["hits"] += 1
    return c


def clear_cache() -> None:
    """Forget every compiled reshard (benchmarks time a first compile with it)."""
    _cache.clear()


def compile_reshard(
    old: jax.sharding.Sharding, new: jax.sharding.Sharding, shape: tuple[int, ...], dtype: np.dtype
) -> Compiled:
    """Compile the identity from sharding ``old`` to ``new``, cached per pair (the last
    CACHE_SIZE pairs; metadata only, no executable is kept)."""
    c = cached_reshard(old, new, shape, dtype)
    if c is None:
        c = _compile(old, new, shape, dtype)
        stats["compiles"] += 1
        _cache[(old, new, shape, dtype)] = c
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return c


def _compile(
    old: jax.sharding.Sharding, new: jax.sharding.Sharding, shape: tuple[int, ...], dtype: np.dtype
) -> Compiled:

    try:
        # (axis names XLA cannot read would abort the process: compiled over renamed axes)
        safe_old, safe_new = xla_safe_sharding(old), xla_safe_sharding(new)
        struct = jax.ShapeDtypeStruct(shape, dtype, sharding=safe_old)
        compiled = jax.jit(lambda x: x, out_shardings=safe_new).lower(struct).compile()
    except Exception as e:  # reported in words: the byte plan does not need the compile
        return Compiled([], None, None, None, f"{type(e).__name__}: {e}".splitlines()[0][:300])
    mesh = getattr(new, "mesh", None) or getattr(old, "mesh", None)
    c_in = jax.tree_util.tree_leaves(compiled.input_shardings[0])
    da = [d.id for d in _jax.device_assignment(c_in[0] if c_in else new)]
    if mesh is not None and hasattr(mesh, "axis_names"):
        coords = {int(d.id): tuple(int(v) for v in i) for i, d in np.ndenumerate(mesh.devices)}
        names, sizes = tuple(mesh.axis_names), tuple(mesh.devices.shape)
    else:
        coords = {int(d): (k,) for k, d in enumerate(sorted(da))}
        names, sizes = ("devices",), (len(da),)
    colls = hlo.collectives(compiled.as_text() or "", da, coords, names, sizes)
    flops, accessed = est.cost_numbers(compiled)
    mem = compiled_memory(compiled)
    return Compiled(colls, flops, accessed, mem.get("peak") if mem else None, "")


def _dtype(dtype: np.dtype) -> np.dtype:
    """A hashable dtype for the compile cache: numpy's for numpy types (np.float32 and
    np.dtype("float32") are one key), JAX's own extended dtypes (PRNG keys) as they are."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return dtype


class Transfer:
    """What moving an array from its original layout to the shown one moves (``view.transfer``).

    ``received`` / ``sent``: device id -> bytes (the sender rule is in
    :mod:`shardwidget.cost.transfer`); ``total``: bytes received, all devices together;
    ``pairs``: (sender id, receiver id, bytes) rows; ``collectives``: what XLA compiles for the
    reshard; ``estimate(hw)``: its time on a hardware preset."""

    def __init__(
        self,
        old_sharding: jax.sharding.Sharding,
        new_sharding: jax.sharding.Sharding,
        shape: tuple[int, ...],
        dtype: np.dtype,
    ):
        self._old, self._new = old_sharding, new_sharding
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.old: Layout = layout_of_sharding(old_sharding, self.shape, dtype)
        self.new: Layout = layout_of_sharding(new_sharding, self.shape, dtype)
        self.plan = transfer_mod.plan(self.old, self.new)

    @property
    def received(self) -> dict[int, int]:
        """Device id -> bytes it receives (the part of its new block it did not hold)."""
        return self.plan.received

    @property
    def sent(self) -> dict[int, int]:
        """Device id -> bytes it sends, under the stated sender rule."""
        return self.plan.sent

    @property
    def total(self) -> int:
        """Sum of :attr:`received`."""
        return self.plan.total

    @property
    def pairs(self) -> list[tuple[int, int, int]]:
        """(sender id, receiver id, bytes) for every pair that moves data."""
        return [(int(a), int(b), int(c)) for a, b, c in self.plan.pairs]

    @property
    def compiled(self) -> Compiled:
        """The compiled reshard (cached per pair of shardings)."""
        return compile_reshard(self._old, self._new, self.shape, _dtype(self.dtype))

    @property
    def compiled_now(self) -> Compiled | None:
        """The compiled reshard if it is cached already, else None (no work)."""
        return cached_reshard(self._old, self._new, self.shape, _dtype(self.dtype))

    @property
    def collectives(self) -> list[hlo.Collective]:
        """The collectives XLA compiles for this reshard ([] when none, or not compilable)."""
        return self.compiled.collectives

    def estimate(self, hw: str | Hardware | None = None) -> est.Estimate:
        """Estimated time of the reshard on ``hw`` (a preset name or Hardware); when XLA
        compiles no collective but bytes move, the most bytes one device receives / B."""
        c = self.compiled
        return est.estimate(
            hw or DEFAULT,
            flops=c.flops,
            bytes_accessed=c.bytes_accessed,
            collectives=c.collectives,
            peak_bytes=c.peak_bytes,
            transfer_bytes=max(self.received.values(), default=0),
        )

    def line(self, compiled: bool = True) -> str:
        """The "moved" line: "all-to-all over y · 2 MiB per device"; with compiled=False, the
        bytes only (no compile): "2 MiB per device (at most); …"."""
        most = max(self.received.values(), default=0)
        mk = (self.old.memory_kind, self.new.memory_kind)
        memory = f"; memory {mk[0]} → {mk[1]}" if mk[0] != mk[1] else ""
        if self.total == 0:
            return "nothing moves between devices: every device already holds its new block" + (
                f"{memory} (each device copies its block)" if memory else ""
            )
        moved = f"{fmt_bytes(most)} per device (at most); {fmt_bytes(self.total)} in all"
        if not compiled:
            return moved + memory
        kinds = [
            f"{c.kind} over {','.join(c.axes)}" if c.axes else c.kind for c in self.collectives
        ]
        what = ", ".join(dict.fromkeys(kinds)) or "point-to-point copies"
        return f"{what} · {moved}{memory}"

    def __repr__(self) -> str:
        return f"Transfer({self.line()})"
