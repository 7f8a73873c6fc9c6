"""Keep Python's full garbage collections short while a search runs in the kernel.

A search's coordinating thread lowers one layout after another and parses every helper's
reply: enough allocation to set off Python's generation-2 collections, and each of those holds
the GIL while it walks every tracked object in the process (JAX's own modules, the user's
data): measured at 145-153 ms a collection at 256 chips on an idle machine, and the kernel's
``1 + 1`` waited through them (``benchmarks/search.py``). ``gc.freeze()`` moves the objects that
exist when the search starts to a generation the collector never walks, so a collection during
the search walks only what the search made; ``gc.unfreeze()`` puts them back, unchanged, when
the last running search ends. Nothing is lost: an object frozen is only not looked at until
then (garbage among them is collected at the next full collection after).

A kernel that froze its own objects (``gc.get_freeze_count()`` > 0 before any search) is left
as it is: a search then neither freezes nor unfreezes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_RUNNING = 0
"""Searches running under our freeze (the first freezes, the last unfreezes)."""


@contextmanager
def old_objects_frozen() -> Iterator[None]:
    """Run the block with the process's existing objects frozen (see the module's doc)."""
    mine = enter()
    try:
        yield
    finally:
        leave(mine)


def enter() -> bool:
    """Freeze (or join the running searches' freeze); whether to :func:`leave` it after."""
    global _RUNNING
    with _LOCK:
        if _RUNNING == 0:
            if gc.get_freeze_count():  # the kernel froze its own: leave them as they are
                return False
            gc.freeze()
        _RUNNING += 1
        return True


def leave(mine: bool) -> None:
    """End what :func:`enter` began (nothing when it returned False)."""
    global _RUNNING
    if not mine:
        return
    with _LOCK:
        _RUNNING -= 1
        if _RUNNING == 0:
            gc.unfreeze()


def referrers(obj: object) -> list[object] | None:
    """``gc.get_referrers(obj)`` with the frozen objects counted too (``gc.get_referrers``
    does not look at them: a user's namespace would not show as holding a view while a search
    runs): under a search's freeze, the objects are thawed for the call and frozen again; None
    where the kernel froze its own objects (what refers to obj is then unknown)."""
    with _LOCK:
        if _RUNNING:
            gc.unfreeze()
            try:
                return gc.get_referrers(obj)
            finally:
                gc.freeze()
        if gc.get_freeze_count():
            return None
        return gc.get_referrers(obj)
