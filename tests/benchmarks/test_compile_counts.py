"""benchmarks/compiles.py meets its compile-count targets on CPU (statistics compiled once per
shard shape), and benchmarks/accelerator.py says it has no accelerator and exits 0 on CPU."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
        check=False,
    )


def test_accelerator_check_says_there_is_none_on_cpu() -> None:
    proc = _run("accelerator.py")
    assert proc.returncode == 0, proc.stderr
    assert "no accelerator" in proc.stdout and "CPU" in proc.stdout


@pytest.mark.slow
def test_compile_counts_on_cpu() -> None:
    proc = _run("compiles.py", "--size", "256", "--repeat", "1", "--device-stats")
    out = proc.stdout
    assert proc.returncode == 0, f"{out}\n{proc.stderr}"
    assert "statistics compiles [1, 0, 0]" in out, out
    rows = re.findall(r"^\s+-> P\('[abc]'\)\s+(.*?)\s+\d+\.\d", out, re.M)
    assert len(rows) == 4 and not any("stats" in r or "estimate" in r for r in rows), rows
    assert "-> P('c'): [1, 1, 0, 0]" in out, out  # the cost open: once per pair of layouts
    assert re.search(r"^ratios 8 devices: function view / jit", out, re.M), out
