"""Geometry first, statistics after the cell; results of other threads handed to the kernel's
thread (issue 34). In a stand-in kernel: ``in_kernel`` says yes and an asyncio loop runs the
"cell" as a coroutine, as ipykernel runs cells; the statistics are checked against numpy's
own per-block numbers of the array JAX placed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.views import array_cost, boundary


@pytest.fixture
def kernel(monkeypatch: Any) -> Any:
    monkeypatch.setattr(boundary, "in_kernel", lambda: True)
    monkeypatch.setattr(array_cost, "in_kernel", lambda: True)
    # In the whole suite an earlier test leaves a loop marked running in this thread (ipykernel's
    # and IPython's machinery do so in-process); a cell runs here as on a kernel's own loop, so
    # that mark is set aside for the test and put back after.
    leaked = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()
    asyncio.events._set_running_loop(leaked)


def _big() -> jax.Array:
    """An array whose statistics need the copy (more than 64 elements a block)."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    host = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    return jax.device_put(host, NamedSharding(mesh, P("x", "y")))


def _block_means(arr: jax.Array) -> dict[tuple[tuple[int, int], ...], float]:
    """Each block's mean by numpy, keyed by its index ranges (JAX's devices_indices_map)."""
    host = np.asarray(arr)
    out = {}
    for idx in arr.sharding.devices_indices_map(arr.shape).values():
        key = tuple(
            (s.start or 0, s.stop if s.stop is not None else n)
            for s, n in zip(idx, arr.shape, strict=True)
        )
        out[key] = float(host[idx].mean())
    return out


def test_a_spec_assignment_returns_with_the_geometry_and_the_statistics_follow(kernel: Any) -> None:
    x = _big()

    async def cell() -> tuple[str, int]:
        v = ShardView(x)
        v.spec = ["y", "x"]
        seen = (v._stats["status"], v._stats["key"])
        views.append(v)
        return seen

    views: list[Any] = []
    status, key = kernel.run_until_complete(cell())
    v = views[0]
    assert status == "pending" and key == v._layout["key"]  # returned with the geometry
    kernel.run_until_complete(asyncio.sleep(0))  # the kernel's loop after the cell
    assert v._stats["status"] == "ready" and v._stats["key"] == v._layout["key"]
    want = _block_means(jax.device_put(x, v.array.sharding))
    got = {tuple(tuple(r) for r in b.index): b for b in v.layout.blocks}
    for rng, row in zip(got, v._stats["blocks"], strict=True):
        assert row is not None and row[2] == pytest.approx(want[rng], rel=1e-5)  # (min, max, mean…)


def test_reading_the_summary_publishes_the_statistics_at_once(kernel: Any) -> None:
    x = _big()
    views: list[Any] = []

    async def cell() -> None:
        v = ShardView(x)
        v.spec = [None, "x"]
        assert v._stats["status"] == "pending"
        s = v.summary  # read in the same cell
        assert v._stats["status"] == "ready" and s.status == "ready"
        views.append(v)

    kernel.run_until_complete(cell())
    assert views[0]._stats["key"] == views[0]._layout["key"]


def test_a_newer_layout_drops_the_older_statistics(kernel: Any) -> None:
    x = _big()
    views: list[Any] = []

    async def cell() -> None:
        v = ShardView(x)
        v.spec = ["y", "x"]
        v.spec = [None, "y"]
        views.append(v)

    kernel.run_until_complete(cell())
    kernel.run_until_complete(asyncio.sleep(0))
    v = views[0]
    assert v._stats["key"] == v._layout["key"] and v._stats["status"] == "ready"


def test_work_of_another_thread_runs_on_the_kernels_thread(kernel: Any) -> None:
    x = _big()
    ran_on: list[int] = []
    views: list[Any] = []

    async def cell() -> None:
        views.append(ShardView(lambda a: a * 2, x))

    kernel.run_until_complete(cell())
    v = views[0]

    def work() -> None:
        ran_on.append(threading.get_ident())
        v.error = "from the thread's result"

    t = threading.Thread(target=lambda: v._later(work))
    t.start()
    t.join()
    assert ran_on == [] and v.error == ""  # nothing touched off the kernel's thread
    kernel.run_until_complete(asyncio.sleep(0))
    assert ran_on == [threading.get_ident()] and v.error == "from the thread's result"
    assert not v.busy


def test_without_a_kernel_work_of_another_thread_waits_for_the_next_read() -> None:
    v = ShardView(lambda a: a + 1, jnp.ones(8))
    ran_on: list[int] = []
    t = threading.Thread(target=lambda: v._later(lambda: ran_on.append(threading.get_ident())))
    t.start()
    t.join()
    assert ran_on == []
    assert v.trace is not None  # a read takes it
    assert ran_on == [threading.get_ident()]
