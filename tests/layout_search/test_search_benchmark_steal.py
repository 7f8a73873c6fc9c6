"""benchmarks/search.py's reading of the host's steal time: the window arithmetic on readings
whose answer is known, and the reader against /proc/stat read directly."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Any

import pytest

from ..test_benchmark_smoke import load_benchmark

bench = load_benchmark("search.py")


def _steal(rows: list[tuple[float, list[int]]]) -> Any:
    s = object.__new__(bench.Steal)
    s.ok, s._rows, s._tick_ms, s._proc = True, rows, 10.0, None
    return s


ROWS = [(0.0, [0, 0]), (0.1, [0, 0]), (0.2, [5, 0]), (0.3, [5, 1]), (1.0, [5, 1])]


def test_stolen_reads_the_readings_around_the_window() -> None:
    s = _steal(ROWS)
    # [0.1, 0.2]: CPU 0 lost 5 ticks of 10 ms; 50 ms of the 2 CPUs' 200 ms is 25 %
    assert s.stolen(0.1, 0.2) == pytest.approx((50.0, 25.0))
    # [0.15, 0.25] lies between readings: those at 0.1 and 0.3 enclose it
    assert s.stolen(0.15, 0.25) == pytest.approx((50.0, 60.0 / (1000 * 0.2 * 2) * 100))
    assert s.stolen(0.0, 1.0) == pytest.approx((50.0, 3.0))
    assert _steal(ROWS[:1]).stolen(0.0, 1.0) is None


def test_steal_line_counts_the_waits_the_host_took() -> None:
    probe = SimpleNamespace(waits=[0.01, 0.08], at=[0.02, 0.15], worst_at=(0.10, 0.23))
    line = bench.steal_line(probe, _steal(ROWS), 0.0, 1.0)
    assert line == (
        "steal: the host held 3.0 % of the CPUs; during the worst 1+1, up to 50 ms of one CPU; "
        "1 of 1 waits over 50 ms lost half their length or more to it"
    )


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="no /proc/stat here")
def test_reader_agrees_with_proc_stat() -> None:
    def direct() -> list[int]:
        with open("/proc/stat") as f:
            f.readline()
            return [int(line.split()[8]) for line in f if line.startswith("cpu")]

    before = direct()
    s = bench.Steal()
    time.sleep(0.3)
    s.stop()
    after = direct()
    assert len(s._rows) >= 5  # read every 5 ms (a busy machine reads fewer)
    assert len(s._rows[0][1]) == len(before)
    first, last = s._rows[0][1], s._rows[-1][1]
    # the reader's readings lie between the two direct ones, CPU by CPU
    assert all(b <= x <= y <= a for b, x, y, a in zip(before, first, last, after, strict=True))
    got = s.stolen(s._rows[0][0], s._rows[-1][0])
    assert got is not None
    assert got[0] == (
        max(y - x for x, y in zip(first, last, strict=True)) * 1000.0 / os.sysconf("SC_CLK_TCK")
    )
