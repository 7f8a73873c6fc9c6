"""The benchmarks run end to end on small inputs and print their tables and ratio lines
(benchmarks/render.py, which drives Chromium, is in tests/e2e/test_render_benchmark.py)."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
from types import ModuleType

import jax
import pytest

from shardwidget import _jax

OLD_JAX = tuple(int(v) for v in jax.__version__.split(".")[:2]) < (0, 10)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/NAME imported as a module (to test its pieces), leaving benchmarks/ off
    sys.path: a benchmark may put its folder first (search.py, for _transformer), and the
    folder's plan.py, tree.py and memory.py would shadow other modules."""
    folder = str(ROOT / "benchmarks")
    spec = importlib.util.spec_from_file_location(f"_benchmark_{name[:-3]}", f"{folder}/{name}")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    while folder in sys.path:
        sys.path.remove(folder)
    return module


def run_benchmark(name: str, *args: str, **env: str) -> str:
    """The output of benchmarks/NAME with args, on CPU, from the repository root (five minutes
    at most), which must exit 0."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=dict(os.environ, JAX_PLATFORMS="cpu", **env),
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.slow
def test_update_benchmark_smoke() -> None:
    out = run_benchmark("update.py", "--devices", "8", "--repeat", "2", "--size", "512")
    assert "512x512 float32" in out, out
    assert re.search(r"^\s+8\s+2x4\s+\d", out, re.M), f"no table row for 8 devices:\n{out}"
    ratios = re.search(
        r"^ratios\s+8 devices: geometry/device_put (\d+\.\d+) .*"
        r"stats/device_put (\d+\.\d+) .*payload (\d+)% of budget",
        out,
        re.M,
    )
    assert ratios, f"no ratio line:\n{out}"
    assert all(float(g) > 0 for g in ratios.groups()), ratios.group(0)
    # our share of the wait for the grid: to grid = JAX's device_put + ours
    ours = re.search(
        r"^ours\s+8 devices: to grid (\d+\.\d+) ms = JAX device_put (\d+\.\d+) ms "
        r"\+ ours (\d+\.\d+) ms \((\d+)%; no target\); bare device_put (\d+\.\d+) ms",
        out,
        re.M,
    )
    assert ours, f"no 'ours' line:\n{out}"
    grid, put, mine, share, bare = (float(g) for g in ours.groups())
    assert grid > 0 and put > 0 and bare > 0 and 0 < mine < grid
    # the printed ms are rounded to 0.1: the share recomputed from them may differ by that much
    slack = 1 + 100 * 0.05 * (1 / grid + mine / grid**2)
    assert abs(grid - put - mine) < 0.11 and abs(100 * mine / grid - share) <= slack, ours.group(0)


@pytest.mark.slow
def test_function_view_benchmark_smoke() -> None:
    """benchmarks/function_view.py times view updates against f alone and prints the ratios."""
    out = run_benchmark("function_view.py", "--devices", "8", "--repeat", "3", "--size", "256")
    assert "256x256 @ 256x128 float32" in out, out
    for kind in ("cold", "warm"):
        row = re.search(rf"^\s+8\s+2x4\s+{kind}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
        assert row, f"no {kind} row:\n{out}"
        assert all(float(x) > 0 for x in row.groups()), row.group(0)
    ratios = re.search(r"^ratios\s+8 devices: view/f cold (\d+\.\d+), warm (\d+\.\d+) ", out, re.M)
    assert ratios, f"no ratio line:\n{out}"


@pytest.mark.slow
def test_memory_benchmark_smoke() -> None:
    """benchmarks/memory.py prints its table, and views hold no device bytes of their own."""
    out = run_benchmark(
        "memory.py", "--devices", "8", "--size", "256", "--views", "1", "3", "--layouts", "6"
    )
    assert "256x256 float32" in out, out
    for case in ("1 array view(s)", "3 array view(s)", "function view, 6 layouts"):
        row = re.search(rf"^{re.escape(case)}.*?\s(\d[\d,]*) B ", out, re.M)
        assert row, f"no row {case!r}:\n{out}"
        assert row.group(1) == "0", row.group(0)
    assert re.search(r"^closed views still alive\s+0 of 10", out, re.M), out
    assert re.search(r"^views left by 10 runs of a cell\s+1 of 10", out, re.M), out


@pytest.mark.slow
def test_cost_benchmark_smoke() -> None:
    """benchmarks/cost.py: the transfer plan and the cached reshard compile, one ratio line per
    layout pair (a small run: 8 devices)."""
    out = run_benchmark("cost.py", "--devices", "8", "--repeat", "1", "--size", "64")
    lines = re.findall(
        r"^ratios 8 (.+?): plan/geometry (\d+\.\d+), cached/first compile", out, re.M
    )
    assert [name for name, _ in lines] == ["transpose", "all-gather y", "all-to-all x"], out
    assert all(float(r) > 0 for _, r in lines), out


@pytest.mark.slow
def test_tree_benchmark_smoke() -> None:
    """benchmarks/tree.py: a small tree (10 layers, 80 leaves) prints its table and ratios, and
    the view holds no device bytes of its own."""
    out = run_benchmark("tree.py", "--layers", "10", "--repeat", "2")
    assert "80 leaves on 8 devices" in out, out
    ratios = re.search(
        r"^ratios: view/1s (\d+\.\d+)\s+rules/100ms (\d+\.\d+)\s+tree/device_put (\d+\.\d+) "
        r"\(target <= 1.2\)\s+held (\d+) B",
        out,
        re.M,
    )
    assert ratios, f"no ratio line:\n{out}"
    assert all(float(g) > 0 for g in ratios.groups()[:3]), ratios.group(0)
    assert ratios.group(4) == "0", ratios.group(0)


@pytest.mark.slow
def test_why_cost_benchmark_smoke() -> None:
    if _jax.shardy_missing():  # jax 0.9: no Shardy, so no cause to time
        pytest.skip(_jax.shardy_missing())
    out = run_benchmark("why_cost.py", "2", "1", PYTHONPATH=str(ROOT / "src"))
    known = re.search(r"2-layer gradient: (\d+) collectives, (\d+) with a known cause", out)
    assert known and int(known.group(1)) > 0, out
    if not OLD_JAX:  # (0.8 names some ops apart from Shardy; 0.9 runs no Shardy: unknown, said)
        assert known.group(1) == known.group(2), out
    assert re.search(
        r"compile with Shardy dump\s+\d+\.\d ms\s+\(\s*\d+\.\d ms\)\s+[+-]\d+\.\d%", out
    ), out
    assert re.search(r"what the user waits for\s+\d+\.\d ms\s+[+-]\d+\.\d%", out), out
    assert re.search(r"a fix .* median \d+\.\d\dx", out), out


def test_boundary_benchmark_counts_few_crossings_per_spec_change() -> None:
    """One ``view.spec = ...`` reads its new sharding through the adapter's one record
    (issue 34 item 3: nine crossings into shardwidget._jax before, four after)."""
    out = run_benchmark("boundary.py", "--devices", "8", "--size", "64")
    m = re.search(r"^crossings into shardwidget\._jax: (\d+)$", out, re.M)
    assert m, out
    assert 1 <= int(m.group(1)) <= 5, out
    assert "record_of 1" in out, out


def test_memory_panel_benchmark_smoke() -> None:
    """benchmarks/memory_panel.py: the 600-point cap keeps the timeline's peak (built so its
    bytes are known: 998 MiB saved + the 8 MiB spike at point 1001 = 1006 MiB) and prints what
    one point hides."""
    out = run_benchmark("memory_panel.py", "2000", "2", PYTHONPATH=str(ROOT / "src"))
    assert "2,000 instructions, 600 points sent" in out, out
    assert "peak kept: True (1,054,867,456 B)" in out, out
    assert re.search(r"largest dip one point hides: [\d,]+ B", out), out


@pytest.mark.slow
def test_peak_cost_benchmark_smoke() -> None:
    if OLD_JAX:  # XLA:CPU writes no live-range report before jaxlib 0.10: no peak to time
        pytest.skip("no live-range report before jaxlib 0.10 (the peak is None, said in words)")
    out = run_benchmark("peak_cost.py", "2", "1", PYTHONPATH=str(ROOT / "src"))
    assert re.search(r"2-layer gradient: \d+ instructions, peak \d+ B", out), out
    assert re.search(r"report \+ parse over the compile [+-]\d+\.\d%", out), out
