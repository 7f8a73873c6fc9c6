"""The array view's cost half: what a re-layout moves (``view.transfer``, the ``_transfer``
trait) and when the reshard behind its collectives and estimate is compiled.

The bytes (who sends what to whom) follow from the two layouts and cost no compile. The
collectives and the estimate need XLA's compile of the reshard: it is done only when asked for
(``cost_open``: the front end's re-layout section open; or ``view.transfer.collectives`` read in
Python), or answered from the cache of pairs seen before. In a kernel the compile runs on the
event loop after the update is answered (issue 38: one compile per re-layout otherwise).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import traitlets
from traitlets.utils.bunch import Bunch

from .. import wire
from ..cost.reshard import Transfer
from ..model import spec as spec_mod
from ._source import PartialSource, in_kernel
from .array_path import ArrayPath
from .cost import CostMixin


class TransferMixin(CostMixin):
    """``cost_open``, ``view.transfer`` and the publishing of ``_transfer`` (the array view's
    trait: see ArrayView)."""

    cost_open = traitlets.Bool(False).tag(sync=True)
    """bool, default False: whether the re-layout's collectives and estimate are open (the
    section under the grid). The reshard is compiled for them only while open (or when
    ``view.transfer.collectives`` is read); closed, a re-layout compiles nothing of ours.
    Both directions."""

    _path: ArrayPath
    _key: int
    _sharding: Any
    _is_source: bool
    _quiet: bool
    _transfer: Any
    _transfer_of: tuple[int, Transfer] | None

    @property
    def transfer(self) -> Transfer:
        """What moving the original array's layout to the shown one moves: ``.received`` /
        ``.sent`` (device id -> bytes; the sender rule is in :mod:`shardwidget.cost.transfer`),
        ``.total``, ``.pairs``, ``.collectives`` (what XLA compiles for the reshard; the compile
        is cached per pair of layouts) and ``.estimate(hw)``. Holds no device memory."""
        axes = spec_mod.unreduced_of(getattr(self._path.source.sharding, "spec", None))
        if axes:  # the byte count follows blocks; partials are summed, which it does not model
            raise PartialSource(
                f"the original array holds partial sums over {', '.join(map(repr, axes))} "
                "(unreduced): any other layout first sums them (an all-reduce over those "
                "axes), which the transfer estimate does not model"
            )
        if self._transfer_of is None or self._transfer_of[0] != self._key:
            src = self._path.source
            self._transfer_of = (
                self._key,
                Transfer(src.sharding, self._sharding, tuple(src.shape), src.dtype),
            )
        return self._transfer_of[1]

    def _publish_transfer(self, compile_now: bool = False) -> None:
        """``_transfer`` for the layout shown: nothing for the original itself; a failure is
        shown in words (the cost is an extra: never lose the view over it).

        The bytes are computed now (a few ms). The reshard's compile (collectives, estimate)
        is done only while ``cost_open`` (else ``_transfer`` stays "pending", the bytes only),
        unless the pair was compiled before; in a kernel it is left to the event loop, after
        the update is answered."""
        if self._is_source:
            self._transfer = wire.no_transfer(self._key)
            return
        try:
            t = self.transfer
            ids = [d.id for d in t.new.devices]
            wait = not self.cost_open or _later(self)
            if not compile_now and t.compiled_now is None and wait:
                self._transfer = wire.transfer(t, key=self._key, device_ids=ids, est=None)
                return
            est = t.estimate(self.hardware)
            self._transfer = wire.transfer(t, key=self._key, device_ids=ids, est=est)
        except PartialSource as e:  # said in words by the transfer itself
            self._transfer = wire.no_transfer(self._key, "unavailable", str(e))
        except Exception as e:
            msg = f"transfer not computed: {e}"
            self._transfer = wire.no_transfer(self._key, "unavailable", msg)

    def _compile_transfer(self) -> None:
        """The deferred half of _publish_transfer, for the layout still shown."""
        if self._transfer.get("status") == "pending" and self._transfer.get("key") == self._key:
            self._publish_transfer(compile_now=True)

    def _cost_changed(self) -> None:
        self._publish_transfer()

    @traitlets.observe("cost_open")
    def _on_cost_open(self, change: Bunch) -> None:
        if change["new"] and not self._quiet:  # opened: the collectives it now shows
            self._publish_transfer()


def _later(view: TransferMixin) -> bool:
    """Compile the view's transfer soon on the kernel's event loop; False outside a kernel (the
    caller then does the work now). The loop holds only a weak reference: a view dropped
    meanwhile is freed, not kept for a callback."""
    if not in_kernel():
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    ref = weakref.ref(view)

    def compile_transfer() -> None:
        v = ref()
        if v is not None:
            v._compile_transfer()

    loop.call_soon(compile_transfer)
    return True
