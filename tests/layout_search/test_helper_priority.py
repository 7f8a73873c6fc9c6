"""A search's helpers run below the kernel (``os.nice``), every thread of them, so that on a
machine with as many compiling helpers as cores the kernel still gets a core when a cell runs;
a plan's helper, which the user waits on, runs as the kernel does."""

from __future__ import annotations

import os
import pathlib

import pytest
from jax.sharding import AbstractMesh, AxisType

from shardwidget.layout_search import target as target_mod
from shardwidget.plan import helper as helper_mod

pytestmark = pytest.mark.skipif(
    not hasattr(os, "getpriority") or not pathlib.Path("/proc/self/task").exists(),
    reason="niceness is read per thread from /proc (Linux)",
)


def _nice_of_threads(pid: int) -> set[int]:
    """The niceness of each thread of process ``pid`` (Linux keeps one per thread)."""
    tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    return {os.getpriority(os.PRIO_PROCESS, t) for t in tids}


def test_a_searchs_helper_and_all_its_threads_run_below_the_kernel() -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert target_mod.HELPER_NICE > 0
    t = target_mod.target_of(AbstractMesh((2,), ("x",), axis_types=(AxisType.Auto,)))
    h = t.new_helper()
    try:
        threads = os.listdir(f"/proc/{h.proc.pid}/task")
        assert len(threads) > 1  # XLA's threads, started after the helper lowered itself
        assert _nice_of_threads(h.proc.pid) == {min(19, ours + target_mod.HELPER_NICE)}
        assert h.compile(_module(), 120)["compile_s"] >= 0  # and it still compiles
    finally:
        h.stop()


def test_a_plans_helper_runs_as_the_kernel_does() -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    h = helper_mod.Helper(2)
    try:
        assert _nice_of_threads(h.proc.pid) == {ours}
    finally:
        h.stop()


def _module() -> str:
    import jax
    import jax.numpy as jnp

    return jax.jit(lambda x: x * 2).lower(jnp.zeros((4,), jnp.float32)).as_text()
