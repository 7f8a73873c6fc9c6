"""A helper may be stopped by two threads at once (a search's cancel, and the worker thread that
owned the helper, at a budget's end): one stops it and the other finds it stopped. Before, both
closed the error file at once, and the worker thread died with "ValueError: I/O operation on
closed file" (benchmarks/search.py, 256 chips, budget 60 s)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from shardwidget.plan import helper as helper_mod


class _SlowFile:
    """An error file whose close takes a while and refuses to be closed twice at once."""

    def __init__(self) -> None:
        self.closed = False
        self._closing = False
        self.closes = 0

    def close(self) -> None:
        if self._closing:
            raise ValueError("I/O operation on closed file")
        self._closing = True
        time.sleep(0.05)
        self.closes += 1
        self.closed = True
        self._closing = False


def _stand_in() -> helper_mod.Helper:
    """A Helper on a process that only sleeps (the stop path is all this test runs)."""
    h = helper_mod.Helper.__new__(helper_mod.Helper)
    h.proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.PIPE
    )
    h._err = _SlowFile()  # type: ignore[assignment]  # the stand-in for its TemporaryFile
    h._stop_lock = threading.Lock()
    return h


def test_two_threads_stop_one_helper_at_once() -> None:
    h = _stand_in()
    go = threading.Barrier(2)
    errors: list[BaseException] = []

    def stop() -> None:
        go.wait()
        try:
            h.stop()
        except BaseException as e:  # what the thread would have died of
            errors.append(e)

    threads = [threading.Thread(target=stop) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert errors == []
    assert h.proc.poll() is not None  # the process ended
    assert h._err.closes == 1  # type: ignore[attr-defined]


def test_stop_again_is_nothing() -> None:
    h = _stand_in()
    h.stop()
    h.stop()
    assert h.proc.poll() is not None
    assert h._err.closes == 1  # type: ignore[attr-defined]
