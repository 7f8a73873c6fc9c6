"""The kernel's side of the planning helper: start it for N devices, send it a lowered module,
read back what XLA compiled, and say in words when it dies or takes too long.

One helper per device count, reused across plans of that size; at most ``KEEP`` stay alive (a
1,024-device helper holds about 340 MB). Each ends with the kernel: ``atexit`` stops it, and the
helper itself exits when its stdin closes or its parent changes (see ``_worker.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import pathlib
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from ..hlo import peak as hlo_peak

WORKER = pathlib.Path(__file__).with_name("_worker.py")
NICE_VAR = "SHARDWIDGET_HELPER_NICE"
"""How much a helper lowers its own priority when it starts (read by ``_worker.py``)."""
KEEP = 2
START_TIMEOUT_S = 120.0
"""How long a helper may take to start (JAX import and N devices)."""
TIMEOUT_S = 300.0
"""How long one compile may take before the helper is stopped (on a quiet machine: see
:func:`busy`)."""
MAX_SLOWDOWN = 8.0


def busy(seconds: float) -> float:
    """A default time limit for this machine now: ``seconds`` (what a quiet machine needs) times
    the 1-minute load per core (1 to MAX_SLOWDOWN). On a busy machine a compile runs slower, not
    wrong, and it is stopped only when it passes what the load explains; a ``timeout=`` the
    user gives is kept as it is."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return seconds * min(MAX_SLOWDOWN, max(1.0, load / (os.cpu_count() or 1)))


class PlanError(RuntimeError):
    """The helper could not answer: it died, ran out of memory, passed its time limit, or XLA
    refused the module. The message says which, in words."""


def _env(n: int) -> dict[str, str]:
    env = dict(os.environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if "host_platform_device_count" not in f]
    # LLVM at -O0: the machine code is never run, and the HLO passes (partitioning, buffer
    # assignment: collectives and memory) are the same at every backend level
    flags = [f for f in flags if "xla_backend_optimization_level" not in f]
    flags += [f"--xla_force_host_platform_device_count={n}", "--xla_backend_optimization_level=0"]
    env["XLA_FLAGS"] = " ".join(flags)
    # the helper must never open the kernel's accelerator
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("JAX_NUM_CPU_DEVICES", None)
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["TPU_VISIBLE_CHIPS"] = ""
    return with_dump_dir(env)


def with_dump_dir(env: dict[str, str]) -> dict[str, str]:
    """env telling a helper where to make its compile dumps (:func:`hlo.peak.dump_root`)."""
    root = hlo_peak.dump_root()
    if root is None:
        env.pop(hlo_peak.DUMP_DIR_ENV, None)
    else:
        env[hlo_peak.DUMP_DIR_ENV] = root
    return env


_NOISE = ("TPU_ACCELERATOR_TYPE", "TPU_WORKER_HOSTNAMES", "Source Location Trace", "InitGoogle")


def _noise(line: str) -> bool:
    """A line libtpu prints at every start on a host that is not a TPU VM (harmless there)."""
    return any(w in line for w in _NOISE) or line.startswith("learning/")


def _death(code: int | None) -> str:
    if code is None:
        return "stopped"
    if code < 0:
        sig = -code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        why = " (most often: out of memory)" if sig == signal.SIGKILL else ""
        return f"was killed by {name}{why}"
    return f"exited with status {code}"


MAX_CPU_POSITIONS = 4095
"""The most positions a CPU plan can have: from 4,096 XLA's CPU client refuses to compile
("Multiprocess computations aren't implemented on the CPU backend"), in the helper and in a
process that really has that many devices."""


def check_cpu_size(n: int) -> None:
    """PlanError at once, in words, for a CPU plan past what the CPU helper can compile (no
    helper is started: one of 8,192 devices grows past 1 GB before XLA refuses)."""
    if n > MAX_CPU_POSITIONS:
        raise PlanError(
            f"a CPU plan of {n:,} positions is past what XLA's CPU compiler can compile (it "
            f"refuses 4,096 devices and more: \"Multiprocess computations aren't implemented "
            'on the CPU backend"). For a pod that large, plan with the TPU compiler: '
            'shardwidget.tpu_mesh("v5e:16x16", ...) (needs libtpu: python -m '
            "shardwidget.compilers install tpu), or plan a smaller mesh"
        )


class Helper:
    """One helper process with ``n`` simulated CPU devices (a subclass runs another worker:
    :meth:`_argv`, :meth:`_environ`, :attr:`what`)."""

    what = "the planning helper for {n} devices"
    """How messages name it (formatted with ``n``)."""

    def _argv(self) -> list[str]:
        return [sys.executable, str(WORKER), str(self.n)]

    def _environ(self) -> dict[str, str]:
        return _env(self.n)

    def __init__(self, n: int, nice: int = 0) -> None:
        """Start the worker for ``n`` devices, ``nice`` below the kernel (``os.nice``; 0: the
        same priority)."""
        self.n = n
        self.started_s = 0.0
        """Seconds its start took (JAX import, n devices)."""
        self._ids = itertools.count()
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._stop_lock = threading.Lock()
        t0 = time.perf_counter()
        # a file, not a pipe: XLA's warnings must never fill a pipe nobody reads
        self._err = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by stop)
        self.proc = subprocess.Popen(
            self._argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env={**self._environ(), NICE_VAR: str(nice)},
            text=True,
            bufsize=1,
        )
        threading.Thread(target=self._read, daemon=True).start()
        first = self._next(busy(START_TIMEOUT_S), "start")
        if "ready" not in first:
            self.stop()
            why = first.get("fatal", first)
            raise PlanError(f"{self.name} could not start: {why}")
        self.ready = first
        """The worker's first reply (versions, for a TPU helper)."""
        self.started_s = time.perf_counter() - t0

    @property
    def name(self) -> str:
        """How messages name this helper."""
        return self.what.format(n=self.n)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self._lines.put(line)
        self._lines.put(None)

    def _next(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise PlanError(
                f"{self.name} took longer than {timeout:g} s to {what}; it was stopped (the "
                "kernel goes on)"
            ) from None
        if line is None:
            code = self.proc.wait(timeout=5)
            err: list[str] = []
            with self._stop_lock:  # not while another thread's stop() closes it
                if not self._err.closed:
                    self._err.seek(0)
                    err = [ln for ln in self._err.read().strip().splitlines() if not _noise(ln)]
            tail = f": {err[-1]}" if err else ""
            raise PlanError(
                f"{self.name} {_death(code)} during {what}{tail}; "
                "the kernel goes on, and the next plan starts a new helper"
            )
        out: dict[str, Any] = json.loads(line)
        return out

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, req: dict[str, Any], timeout: float, what: str) -> dict[str, Any]:
        """Send one request, wait for its reply (PlanError in words when the helper dies or
        passes ``timeout``); a reply with "error" is returned as it is."""
        with self._lock:
            rid = next(self._ids)
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(json.dumps({"id": rid, **req}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass  # _next reports how it died
            return self._next(timeout, what)

    def compile(self, module: str, timeout: float | None = None) -> dict[str, Any]:
        """What XLA compiled for the lowered module (StableHLO text) on n devices: "hlo",
        "memory", "flops", "bytes_accessed", "output_shardings", "compile_s". A helper whose
        compile failed is ended (a large one holds a GB), and the next plan starts another."""
        reply = self.request({"module": module}, timeout or busy(TIMEOUT_S), "a compile")
        if "error" in reply:
            self.stop()
            raise PlanError(
                f"XLA could not compile the plan for {self.n} devices: {reply['error']}"
            )
        return reply

    def stop(self) -> None:
        """End the process (nothing if it has ended). Any thread may call it, and two may at
        once (a search's cancel and the worker that owned the helper): one stops it, the other
        waits and finds it stopped (two closes of the error file at once raised ValueError)."""
        with self._stop_lock:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):  # a request the dead process never read
                    self.proc.stdin.close()
            if not self._err.closed:
                self._err.close()


_HELPERS: dict[int, Helper] = {}


def helper(n: int) -> Helper:
    """The helper for ``n`` devices: the running one, else a new one (the oldest beyond KEEP
    stopped)."""
    check_cpu_size(n)
    h = _HELPERS.get(n)
    if h is not None and h.alive:
        _HELPERS[n] = _HELPERS.pop(n)  # most recently used last
        return h
    if h is not None:
        _HELPERS.pop(n).stop()
    while len(_HELPERS) >= KEEP:
        _HELPERS.pop(next(iter(_HELPERS))).stop()
    h = _HELPERS[n] = Helper(n)
    return h


ON_STOP_ALL: list[Any] = []
"""Other helpers' stop functions (the TPU helper's), called by :func:`stop_all`."""


@atexit.register
def stop_all() -> None:
    """Stop every helper (at the kernel's exit, and for tests)."""
    while _HELPERS:
        _HELPERS.popitem()[1].stop()
    for stop in ON_STOP_ALL:
        stop()
