"""Parallel helpers: each worker thread owns a helper process of its own and compiles one
lowered module at a time; the threads only wait (the compiles run in the helpers), so the
kernel stays free. Idle helpers are kept per target for the next search; cancelling stops the
busy ones (a compile cannot be interrupted otherwise; the next search starts new ones)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..plan import helper as helper_mod
from .target import Target

_IDLE: dict[tuple[Any, ...], list[helper_mod.Helper]] = {}
_IDLE_LOCK = threading.Lock()
KEEP_IDLE = 4
"""Idle helpers kept per target (a 256-device CPU helper holds ~100-340 MB)."""


def _take(target: Target) -> helper_mod.Helper:
    with _IDLE_LOCK:
        idle = _IDLE.get(target.key, [])
        while idle:
            h = idle.pop()
            if h.alive:
                return h
    return target.new_helper()


def _give(target: Target, h: helper_mod.Helper) -> None:
    with _IDLE_LOCK:
        idle = _IDLE.setdefault(target.key, [])
        if h.alive and len(idle) < KEEP_IDLE:
            idle.append(h)
            return
    h.stop()


def stop_idle() -> None:
    """Stop every idle helper (at the kernel's exit, and for tests)."""
    with _IDLE_LOCK:
        helpers = [h for hs in _IDLE.values() for h in hs]
        _IDLE.clear()
    for h in helpers:
        h.stop()


helper_mod.ON_STOP_ALL.append(stop_idle)


@dataclass(frozen=True)
class Job:
    """One lowered module to compile for ``mesh``; ``tag`` is the caller's."""

    text: str
    mesh: Any
    tag: Any


Done = Callable[[Job, dict[str, Any] | None, str, float], None]
"""Called from a worker thread: (job, the helper's reply or None, the error in words or "",
when the compile was sent: ``time.perf_counter()``)."""


class Pool:
    """``workers`` threads compiling jobs for one target; :meth:`put` queues, :meth:`close`
    lets them finish, :meth:`cancel` stops them now."""

    def __init__(self, target: Target, workers: int, timeout: float | None, done: Done) -> None:
        self.target = target
        self.timeout = timeout
        self.done = done
        self.cancelled = threading.Event()
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._busy: dict[int, helper_mod.Helper] = {}
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._work, daemon=True, name=f"shardwidget-search-{k}")
            for k in range(max(1, workers))
        ]
        for t in self._threads:
            t.start()

    def put(self, job: Job) -> None:
        """Queue one compile."""
        self._jobs.put(job)

    def close(self) -> None:
        """No more jobs: each worker ends once the queue is empty."""
        for _ in self._threads:
            self._jobs.put(None)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the workers to end."""
        end = None if timeout is None else time.monotonic() + timeout
        for t in self._threads:
            t.join(None if end is None else max(0.0, end - time.monotonic()))

    def cancel(self) -> None:
        """Stop now: queued jobs are answered "cancelled", busy helpers are stopped."""
        self.cancelled.set()
        with self._lock:
            busy = list(self._busy.values())
        for h in busy:
            h.stop()
        self.close()

    def _work(self) -> None:
        h: helper_mod.Helper | None = None
        me = threading.get_ident()
        while True:
            job = self._jobs.get()
            if job is None:
                break
            if self.cancelled.is_set():
                self.done(job, None, "cancelled", time.perf_counter())
                continue
            t0 = time.perf_counter()
            try:
                if h is None or not h.alive:
                    h = _take(self.target)
                with self._lock:
                    self._busy[me] = h
                t0 = time.perf_counter()
                # no timeout given: a quiet machine's limit scaled by the load now
                limit = self.timeout or helper_mod.busy(helper_mod.TIMEOUT_S)
                reply = self.target.request(h, job.text, job.mesh, limit)
            except helper_mod.PlanError as e:
                self.done(job, None, "cancelled" if self.cancelled.is_set() else str(e), t0)
                continue
            except (ValueError, OSError):  # a cancel stopped the helper mid-read: its
                # pipes closed under this thread ("I/O operation on closed file", CI at load)
                if not self.cancelled.is_set():
                    raise
                self.done(job, None, "cancelled", t0)
                continue
            finally:
                with self._lock:
                    self._busy.pop(me, None)
            self.done(job, reply, "", t0)
        if h is not None and not self.cancelled.is_set():
            _give(self.target, h)
        elif h is not None:
            h.stop()
