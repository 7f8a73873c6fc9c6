"""benchmarks/render.py's reading of a Chrome trace: the time the renderer's main thread spends
compiling and collecting garbage inside the first ``shardwidget:render`` measure, on events whose
answer is known (the browser half runs in tests/e2e/test_render_benchmark.py)."""

from __future__ import annotations

import math

import pytest

from ..test_benchmark_smoke import load_benchmark

bench = load_benchmark("render.py")

MAIN = {"pid": 1, "tid": 10}
OTHER = {"pid": 1, "tid": 11}


def _thread(where: dict[str, int], name: str) -> dict:
    return {"name": "thread_name", "ph": "M", **where, "args": {"name": name}}


def _x(name: str, ts: float, dur: float, where: dict[str, int] = MAIN) -> dict:
    return {"name": name, "ph": "X", "ts": ts, "dur": dur, **where}


def _measure(t0: float, t1: float) -> list[dict]:
    return [
        {"name": "shardwidget:render", "ph": "b", "ts": t0, **MAIN},
        {"name": "shardwidget:render", "ph": "e", "ts": t1, **MAIN},
    ]


def test_costs_count_main_thread_events_wholly_inside_the_first_render() -> None:
    events = [
        _thread(MAIN, "CrRendererMain"),
        _thread(OTHER, "ThreadPoolForegroundWorker"),
        *_measure(1_000, 21_000),  # 20 ms
        _x("V8.CompileCode", 2_000, 1_500),
        _x("V8.CompileCode", 5_000, 500),
        _x("MinorGC", 8_000, 2_500),
        _x("MajorGC", 12_000, 1_000),
        _x("V8.CompileCode", 3_000, 9_000, OTHER),  # another thread: a background compile
        _x("MinorGC", 500, 1_000),  # starts before the measure
        _x("V8.CompileCode", 20_500, 1_000),  # ends after it
        _x("V8.Execute", 1_000, 20_000),  # neither compile nor GC
        # a later render (a resize) is not the first
        *_measure(30_000, 40_000),
        _x("V8.CompileCode", 31_000, 4_000),
    ]
    costs = bench.render_window_costs(events)
    assert costs == pytest.approx({"render": 20.0, "compile": 2.0, "gc": 3.5})


def test_costs_are_unknown_without_the_measure() -> None:
    events = [_thread(MAIN, "CrRendererMain"), _x("V8.CompileCode", 2_000, 1_500)]
    assert all(math.isnan(v) for v in bench.render_window_costs(events).values())


def test_costs_without_a_named_main_thread_count_nothing() -> None:
    # No thread_name record for the renderer's main thread: nothing is attributed to it.
    events = [*_measure(0, 10_000), _x("V8.CompileCode", 1_000, 1_000)]
    assert bench.render_window_costs(events) == pytest.approx(
        {"render": 10.0, "compile": 0.0, "gc": 0.0}
    )
