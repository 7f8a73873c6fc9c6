"""TPU and GPU plans that compile while the notebook goes on.

A TPU compile takes 30-60 s at 256 chips. A function view on a :func:`~.tpu.tpu_mesh` does not
wait for it: its layout is compiled by the CPU compiler at once (a few seconds) and shown with
a note saying the TPU compiler is at work, while a thread here waits on the TPU helper (the
compile runs in that process: this thread only waits, so cells run meanwhile). When the TPU
result arrives the view switches to it, if it still shows that layout; a result for a layout
the user has left is kept in the TPU cache (going back is instant) and never shown. One
compile per lowered module is in flight at a time, however many views ask for it. A
:func:`~.gpu.gpu_mesh`'s compiles (XLA's GPU compiler in its helper) go the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jax.sharding import AbstractMesh, Mesh

from . import gpu, tpu

TICK_S = 5.0
"""How often a view waiting on the TPU compiler updates how long it has waited."""


@dataclass
class _Flight:
    started: float
    done: list[Callable[[str], None]] = field(default_factory=list)


_FLIGHTS: dict[tuple[Any, ...], _Flight] = {}
_LOCK = threading.Condition()
_ACTIVE = [0]  # compiles started whose callbacks have not all returned


def start(
    text: str,
    mesh: Mesh | AbstractMesh,
    timeout: float,
    done: Callable[[str], None],
) -> float:
    """Compile ``text`` for the TPU mesh in a thread (unless that module is in flight already)
    and call ``done(error)`` when it is over ("" when the result is in the TPU cache; the
    error in words otherwise). Returns when the compile started (``time.monotonic()``)."""
    key = (gpu if gpu.is_gpu(mesh) else tpu).result_key(text, mesh)
    with _LOCK:
        flight = _FLIGHTS.get(key)
        if flight is not None:
            flight.done.append(done)
            return flight.started
        flight = _FLIGHTS[key] = _Flight(time.monotonic(), [done])
        _ACTIVE[0] += 1
    threading.Thread(
        target=_run, args=(key, text, mesh, timeout), daemon=True, name="shardwidget-tpu-plan"
    ).start()
    return flight.started


def _run(
    key: tuple[Any, ...],
    text: str,
    mesh: Mesh | AbstractMesh,
    timeout: float,
) -> None:
    error = ""
    try:
        (gpu if gpu.is_gpu(mesh) else tpu).compile_text(text, mesh, timeout)
    except Exception as e:  # said in words by whoever waits; this thread must not die loudly
        error = str(e) or type(e).__name__
    with _LOCK:
        flight = _FLIGHTS.pop(key)  # from here a new ask starts a new flight (or hits the cache)
    try:
        for done in flight.done:
            done(error)
    finally:
        with _LOCK:
            _ACTIVE[0] -= 1
            _LOCK.notify_all()


def in_flight() -> int:
    """TPU compiles running in the background now (their views not yet told)."""
    with _LOCK:
        return _ACTIVE[0]


def wait(timeout: float | None = None) -> bool:
    """Wait until no TPU compile runs in the background and every view it was for has been
    told (tests, scripts); False on timeout."""
    with _LOCK:
        return _LOCK.wait_for(lambda: _ACTIVE[0] == 0, timeout)


def ticker(started: float, still_waiting: Callable[[], bool], tick: Callable[[], None]) -> None:
    """Call ``tick()`` every TICK_S seconds in a thread while ``still_waiting()`` (a view's
    "the TPU compiler has worked for 25 s" line)."""

    def loop() -> None:
        while True:
            time.sleep(TICK_S)
            if not still_waiting():
                return
            tick()

    threading.Thread(target=loop, daemon=True, name="shardwidget-tpu-tick").start()


def elapsed_words(started: float) -> str:
    """ "12 s so far"."""
    return f"{time.monotonic() - started:.0f} s so far"
