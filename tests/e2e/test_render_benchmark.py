"""benchmarks/render.py and benchmarks/memory_panel_draw.py (they drive Chromium) run end to end
on small pages: the browser-test half of tests/test_benchmark_smoke.py, with its
``run_benchmark``."""

from __future__ import annotations

import re

import pytest

from ..test_benchmark_smoke import ROOT, run_benchmark

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_render_benchmark_smoke() -> None:
    """benchmarks/render.py renders a real page in Chromium and prints its timing table: the
    first render (statistics in the page, and pending as a live kernel first sends them),
    re-render and hover; the grid, flush, thumbs and layout; a second view's first
    render; and from a traced load the render and the compile and GC time inside it."""
    out = run_benchmark(
        "render.py",
        "--devices",
        "8",
        "--rerenders",
        "2",
        "--loads",
        "2",
        "--traced",
        "1",
        PYTHONPATH=str(ROOT / "src"),
    )
    num = r"\s+([\d.]+)"
    row = re.search(r"^\s+8\s+8\s+dom\(8\)" + num * 12 + r"\s+[\d.]+–", out, re.M)
    assert row, out
    first, live, rerender, hover, grid, flush, thumbs, layout, second, traced, compile_ms, gc = (
        float(x) for x in row.groups()
    )
    assert min(first, live, rerender, hover, grid, flush, layout, second, traced) > 0, out
    # a first render compiles the functions it runs for the first time: some of its time
    assert 0 < compile_ms < traced, out
    assert thumbs >= 0 and 0 <= gc < traced, out


def test_render_benchmark_lab_smoke() -> None:
    """render.py --lab opens the view's notebook in a real JupyterLab and reads its first render
    there, and says whether the thumbnails came with it (a live kernel sends the geometry first
    and the statistics after the cell: they come later unless they reach the page before the
    widget's module has loaded, which a loaded machine can do)."""
    out = run_benchmark(
        "render.py",
        *("--devices", "8", "--rerenders", "1", "--loads", "1", "--traced", "0", "--lab"),
        PYTHONPATH=str(ROOT / "src"),
    )
    row = re.search(r"^\s+8\s+([\d.]+)\s+([\d.]+)–([\d.]+)\s+(\d+)\s+(.+)$", out, re.M)
    assert row and "in JupyterLab" in out, out
    first, lo, hi, renders = (float(x) for x in row.groups()[:4])
    assert 0 < lo <= first <= hi, out
    assert renders >= 1, out
    assert row.group(5) in ("after the first render (statistics pending)", "in the first render")


def test_memory_panel_draw_benchmark_smoke() -> None:
    """benchmarks/memory_panel_draw.py draws two real compiles' memory panels in Chromium: the
    100-layer view's (2 instructions a layer and the sum at the end) and a 300-layer compile's,
    whose 602 instructions the payload caps at 600 points, each one a vertex of the drawn path."""
    out = run_benchmark("memory_panel_draw.py", "--layers", "300", "--draws", "2")
    rows = re.findall(r"^\s+([\d,]+) instructions\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert len(rows) == 2, out
    (n_small, pts_small, rows_small, *_), (n_big, pts_big, rows_big, *_) = rows
    assert int(n_big.replace(",", "")) > 600 and int(pts_big) == 600, out
    assert int(pts_small) == int(n_small.replace(",", "")) < 600, out
    assert int(rows_small) > 0 and int(rows_big) > 0, out
    assert re.search(r"^draw at [\d,]+ instructions: [\d.]+ ms = [\d.]+x the", out, re.M), out
