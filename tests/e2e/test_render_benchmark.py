"""benchmarks/render.py (it drives Chromium) runs end to end on a small page: the browser-test
half of tests/test_benchmark_smoke.py, with its ``run_benchmark``."""

from __future__ import annotations

import re

import pytest

from ..test_benchmark_smoke import ROOT, run_benchmark

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_render_benchmark_smoke() -> None:
    """benchmarks/render.py renders a real page in Chromium and prints its timing table."""
    out = run_benchmark(
        "render.py", "--devices", "8", "--rerenders", "2", PYTHONPATH=str(ROOT / "src")
    )
    row = re.search(r"^\s+8\s+8\s+dom\(8\)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert row, out
    assert all(float(x) > 0 for x in row.groups())
