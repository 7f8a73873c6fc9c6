"""Parallel helpers: each worker thread owns a helper process of its own and compiles one
lowered module at a time; the threads only wait (the compiles run in the helpers), so the
kernel stays free, and one more thread reads the replies as they come. Idle helpers are kept
per target for the next search; cancelling stops the busy ones (a compile cannot be
interrupted otherwise; the next search starts new ones)."""

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
"""Called from the pool's results thread, one reply at a time: (job, the helper's reply or
None, the error in words or "", when the compile was sent: ``time.perf_counter()``)."""


_WORKER_ENDED = object()
"""What a worker puts on the results queue as it ends."""


class Pool:
    """``workers`` threads compiling jobs for one target; :meth:`put` queues, :meth:`close`
    lets them finish, :meth:`cancel` stops them now.

    A worker hands each reply to one results thread, which calls ``done`` (reading a reply
    takes ~0.1 s of Python at 256 chips) while the worker sends its helper the next job: a
    helper is not left idle while its last answer is read."""

    def __init__(self, target: Target, workers: int, timeout: float | None, done: Done) -> None:
        self.target = target
        self.timeout = timeout
        self.done = done
        self.cancelled = threading.Event()
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._busy: dict[int, helper_mod.Helper] = {}
        self._lock = threading.Lock()
        self._results: queue.Queue[Any] = queue.Queue()
        self._workers = [
            threading.Thread(target=self._work, daemon=True, name=f"shardwidget-search-{k}")
            for k in range(max(1, workers))
        ]
        reader = threading.Thread(target=self._read, daemon=True, name="shardwidget-search-read")
        self._threads = [*self._workers, reader]
        for t in self._threads:
            t.start()

    @property
    def running(self) -> bool:
        """Whether a compile runs, is queued, or a reply is still being read."""
        return any(t.is_alive() for t in self._threads)

    def put(self, job: Job) -> None:
        """Queue one compile."""
        self._jobs.put(job)

    def close(self) -> None:
        """No more jobs: each worker ends once the queue is empty."""
        for _ in self._workers:
            self._jobs.put(None)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the workers to end and their replies to be read."""
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

    def _read(self) -> None:
        """Call ``done`` for each reply, in the order they came, until every worker ended."""
        ended = 0
        while ended < len(self._workers):
            item = self._results.get()
            if item is _WORKER_ENDED:
                ended += 1
                continue
            job, reply, why, t0, came = item
            t0 += time.perf_counter() - came  # (the wait in this queue is no part of the compile)
            try:
                self.done(job, reply, why, t0)
            except Exception as e:  # a reply this reader cannot read: that candidate fails
                if reply is None:
                    raise
                self.done(job, None, f"its reply could not be read ({type(e).__name__}: {e})", t0)

    def _answer(self, job: Job, reply: dict[str, Any] | None, why: str, t0: float) -> None:
        self._results.put((job, reply, why, t0, time.perf_counter()))

    def _work(self) -> None:
        try:
            self._compile_jobs()
        finally:
            self._results.put(_WORKER_ENDED)

    def _compile_jobs(self) -> None:
        h: helper_mod.Helper | None = None
        me = threading.get_ident()
        while True:
            job = self._jobs.get()
            if job is None:
                break
            if self.cancelled.is_set():
                self._answer(job, None, "cancelled", time.perf_counter())
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
                self._answer(job, None, "cancelled" if self.cancelled.is_set() else str(e), t0)
                continue
            except (ValueError, OSError):  # a cancel stopped the helper mid-read: its
                # pipes closed under this thread ("I/O operation on closed file", CI at load)
                if not self.cancelled.is_set():
                    raise
                self._answer(job, None, "cancelled", t0)
                continue
            finally:
                with self._lock:
                    self._busy.pop(me, None)
            self._answer(job, reply, "", t0)
        if h is not None and not self.cancelled.is_set():
            _give(self.target, h)
        elif h is not None:
            h.stop()
