"""The request boundary's parts every view kind shares, apart from the change path itself
(views/base.py): ``error`` and ``busy``, the one way a result computed on another thread reaches
the traits (:meth:`Boundary._later`: handed to the kernel's thread first; ipywidgets is not
thread-safe), work left for after the cell (:meth:`Boundary._soon`), the refusal type, and the
buffer split of ``send_state``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import traitlets
from ipywidgets.widgets.widget import _binary_types, _separate_buffers

from .. import wire
from ._source import in_kernel


class InvalidValue(ValueError, traitlets.TraitError):
    """A bad value for a view: a ValueError, as the README promises, and a TraitError, so that
    ``hold_trait_notifications`` (and ipywidgets' ``set_state``) roll the traits back."""


SUPERSEDED = "superseded by a newer request"


def kernel_loop() -> asyncio.AbstractEventLoop | None:
    """The kernel's event loop, running in this thread (None outside a kernel: a script, a
    test; other running loops, such as one a library left set, may never come back)."""
    if not in_kernel():
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Boundary(traitlets.HasTraits):
    """``error``, ``busy`` and the hand-over of work to the kernel's thread (a view's part)."""

    error = traitlets.Unicode("").tag(sync=True)
    """str, default "": why the last request was refused or the layout failed ("" when it did
    not). Python → JS."""
    busy = traitlets.Bool(False).tag(sync=True)
    """bool, default False: True while the kernel computes a requested layout. Python → JS."""

    def _init_boundary(self) -> None:
        self._busy_depth = 0  # requests being handled (re-entrant handling nests them)
        self._arrivals: collections.deque[Callable[[], None]] = collections.deque()
        self._loop = kernel_loop()  # the kernel's event loop, where results of threads go
        self._taking = False  # True while _take_later runs

    def _later(self, work: Callable[[], None]) -> None:
        """Hand ``work`` (which touches traits) from another thread to the kernel's thread: on
        the kernel's event loop, else (no kernel: a script, a test) when the view is next read
        (:meth:`_take_later`). ipywidgets is not thread-safe: no trait is set off that thread.
        The loop holds the view weakly (a view dropped meanwhile is freed, its work dropped)."""
        self._arrivals.append(work)
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: the next read takes it
                self._loop.call_soon_threadsafe(self._taker())

    def _soon(self, work: Callable[[], None]) -> bool:
        """Run ``work`` (on this, the kernel's thread) after the cell, on the kernel's event
        loop, or at once when the view is read (:meth:`_take_later`); outside a kernel, now.
        Whether it was left for later."""
        loop = kernel_loop()
        if loop is None:
            work()
            return False
        self._arrivals.append(work)
        loop.call_soon(self._taker())
        return True

    def _taker(self) -> Callable[[], None]:
        """:meth:`_take_later` of this view for an event loop, which holds the view weakly."""
        ref = weakref.ref(self)

        def take() -> None:
            v = ref()
            if v is not None:
                v._take_later()

        return take

    def _take_later(self) -> None:
        """Run the work other threads handed over, in order, on this (the kernel's) thread; a
        failure is said in ``error`` (never raised into whoever reads). Not re-entrant: work
        that reads the view takes nothing more meanwhile."""
        arrivals = self.__dict__.get("_arrivals")  # (none before the widget is open)
        if not arrivals or self._taking:
            return
        self._taking = True
        try:
            while arrivals:
                work = arrivals.popleft()
                with self._handling():
                    work()
        finally:
            self._taking = False

    @contextlib.contextmanager
    def _busy(self) -> Iterator[None]:
        """``busy`` while a request, a step or a result is handled (re-entrant handling nests:
        False once the outermost is over)."""
        self._busy_depth += 1
        self.busy = True
        try:
            yield
        finally:
            self._busy_depth -= 1
            if self._busy_depth == 0:
                self.busy = False

    @contextlib.contextmanager
    def _handling(self) -> Iterator[None]:
        """:meth:`_busy`, and what fails in it is said in ``error``, never raised into the
        kernel (the boundary of everything the front end or another thread starts)."""
        with self._busy():
            try:
                yield
            except Exception as e:  # the boundary: shown, never raised into the kernel
                self.error = wire.cap_message(str(e) or type(e).__name__)


def split_buffers(
    state: dict[str, Any], plain: Sequence[str], top: Sequence[str]
) -> tuple[dict[str, Any], list[list[Any]], list[Any]]:
    """(state without its binary values, their paths, the values), as ipywidgets' own
    ``_remove_buffers`` makes them, in the same order; traits in ``plain`` are not searched,
    those in ``top`` (dicts) at their top level only."""
    buffer_paths: list[list[Any]] = []
    buffers: list[Any] = []
    out: dict[str, Any] = {}
    for name, value in state.items():  # in order, as ipywidgets walks the state
        if isinstance(value, _binary_types):
            buffers.append(value)
            buffer_paths.append([name])
        elif name in plain or not isinstance(value, dict | list | tuple):
            out[name] = value
        elif name in top and isinstance(value, dict):
            out[name] = {k: v for k, v in value.items() if not isinstance(v, _binary_types)}
            for k, v in value.items():
                if isinstance(v, _binary_types):
                    buffers.append(v)
                    buffer_paths.append([name, k])
        else:
            out[name] = _separate_buffers(value, [name], buffer_paths, buffers)
    return out, buffer_paths, buffers


def capped(e: BaseException) -> InvalidValue:
    """e as an InvalidValue with its message capped (wire.cap_message)."""
    return InvalidValue(wire.cap_message(str(e)))
