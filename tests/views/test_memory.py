"""Device memory: a view holds none of its own between updates, closed views are freed, no-op
changes do no device work, and work that would not fit is refused in words.

Measured with ``jax.live_arrays()`` on 8 simulated CPU devices."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model import free_memory
from shardwidget.trace import function as trace_mod
from tests.helpers import collect

SPECS = [["x", "y"], ["y", "x"], [None, "x"], ["y", None], [["x", "y"], None], [None, None]]


def live_bytes() -> int:
    """Bytes of live device buffers (each once: per-shard views share their array's), garbage
    collected first to the end (see helpers.collect: one pass is not enough on jax < 0.10)."""
    collect()
    return sum(free_memory.buffers(jax.live_arrays()).values())


@pytest.fixture
def arr() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(
        jnp.arange(64 * 32, dtype=jnp.float32).reshape(64, 32), NamedSharding(mesh, P("x", "y"))
    )
    return x


def test_array_view_holds_no_relaid_out_copy_between_updates(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(arr)
    for spec in SPECS * 2:
        v.spec = spec
        assert live_bytes() == before, spec
    assert v._stats["status"] == "ready"


def test_frontend_requests_hold_no_copy(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(arr)
    for i, spec in enumerate(SPECS):
        state = {
            k: getattr(v, k) for k in ("mesh_shape", "axis_names", "axis_types", "memory_kind")
        }
        v._on_custom_msg(v, {"type": "request", "seq": i, "state": {**state, "spec": spec}}, [])
        assert v.error == ""
        assert live_bytes() == before


def test_view_array_is_recreated_on_demand_and_held_only_by_the_caller(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(arr)
    v.spec = ["y", "x"]
    a = v.array
    assert a.sharding.spec == P("y", "x")
    np.testing.assert_array_equal(np.asarray(a), np.asarray(arr))
    assert v.array is a  # held by the caller: the same array
    ref = weakref.ref(a)
    del a
    assert live_bytes() == before and ref() is None
    assert v.array.sharding.spec == P("y", "x")  # made again
    assert live_bytes() == before
    v.reset()
    assert v.array is arr
    assert not arr.is_deleted()


def test_layout_summary_and_repr_hold_no_copy(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(arr)
    v.spec = [None, "x"]
    assert v.layout.spec_text == "P(None, 'x')"
    summ = v.summary
    assert summ.status == "ready" and len(summ.stats) == len(v.layout.blocks)
    assert "P(None, 'x')" in repr(v)
    v.view_dims = [1, 0]  # statistics again, over other dims
    assert v._stats["status"] == "ready"
    assert live_bytes() == before


def test_function_view_holds_no_inputs_or_outputs_after_20_layouts(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(lambda a: a * 2 + 1, arr, mesh_shape=[2, 4], axis_names=["x", "y"])
    specs = [[s] for s in SPECS] + [[[a, b]] for a in ("x", "y", None) for b in ("x", "y", None)]
    for in_specs in (specs * 2)[:20]:
        try:
            v.in_specs = in_specs
        except ValueError:
            continue
        assert live_bytes() == before, in_specs
    for res in v._traced._cache.values():  # executables and metadata only
        assert res.ran and not any(isinstance(x, jax.Array) for x in vars(res).values())
    assert len(v._traced._cache) <= trace_mod.CACHE_SIZE


def test_function_outputs_and_inputs_are_recreated_on_demand(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(lambda a: a * 2, arr)
    v.in_specs = [[None, "x"]]
    outs = v.outputs
    np.testing.assert_array_equal(np.asarray(outs[0]), 2 * np.asarray(arr))
    ins = v.trace.inputs
    assert ins[0].sharding.spec == P(None, "x")
    assert live_bytes() > before
    del outs, ins
    assert live_bytes() == before


def test_ten_closed_views_leave_no_extra_live_arrays(arr: Any) -> None:
    before = live_bytes()
    refs = []
    for spec in (SPECS * 2)[:10]:
        v = ShardView(arr, spec=spec)
        refs.append(weakref.ref(v))
        v.close()
        del v
    gc.collect()
    assert all(r() is None for r in refs)
    assert live_bytes() == before


def test_rerunning_a_cell_that_makes_a_view_does_not_leak_views(arr: Any) -> None:
    before = live_bytes()
    refs = []
    view = None
    for spec in SPECS:  # a cell `view = ShardView(arr, spec=...)` run again and again
        view = ShardView(arr, spec=spec)
        refs.append(weakref.ref(view))
    fview = None
    for _ in range(3):
        fview = ShardView(lambda a: a + 1, arr)
        refs.append(weakref.ref(fview))
    gc.collect()
    assert [r() is not None for r in refs] == [False] * 5 + [True] + [False] * 2 + [True]
    assert view is not None and fview is not None
    assert live_bytes() == before


def test_closed_function_views_are_freed(arr: Any) -> None:
    before = live_bytes()
    v = ShardView(lambda a: a.sum(0), arr)
    ref = weakref.ref(v)
    v.close()
    del v
    gc.collect()
    assert ref() is None
    assert live_bytes() == before


def test_assigning_a_layout_its_current_value_runs_no_device_put(
    arr: Any, monkeypatch: Any
) -> None:
    v = ShardView(arr)
    v.spec = ["y", "x"]
    calls: list[Any] = []
    real = jax.device_put

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(jax, "device_put", counting)
    before, key = live_bytes(), v._layout["key"]
    v.spec = ["y", "x"]
    v.set_layout(spec=["y", "x"])
    v.set_layout(**{k: getattr(v, k) for k in v.STATE_TRAITS})
    state = {k: getattr(v, k) for k in v.STATE_TRAITS}
    v._on_custom_msg(v, {"type": "request", "seq": 1, "state": state}, [])
    assert calls == []
    assert v._layout["key"] == key and v.error == ""
    assert live_bytes() == before


def test_function_view_assigning_current_layout_runs_nothing(arr: Any, monkeypatch: Any) -> None:
    v = ShardView(lambda a: a * 3, arr)
    v.in_specs = [[None, "x"]]
    runs: list[Any] = []
    real = v._traced.run
    monkeypatch.setattr(v._traced, "run", lambda res: runs.append(res) or real(res))
    v.set_layout(in_specs=[[None, "x"]])
    v.set_layout(**{k: getattr(v, k) for k in v.STATE_TRAITS})
    assert runs == []


def test_function_view_back_to_a_layout_seen_runs_nothing_and_holds_nothing(
    arr: Any, monkeypatch: Any
) -> None:
    before = live_bytes()
    v = ShardView(lambda a: a * 3, arr)
    v.in_specs = [[None, "x"]]
    runs: list[Any] = []
    real = v._traced.run
    monkeypatch.setattr(v._traced, "run", lambda res: runs.append(res) or real(res))
    v.in_specs = [["x", "y"]]  # seen: the first layout
    assert runs == [] and v._trace["ran"] and v._trace_stats["outputs"][0]["status"] == "ready"
    assert live_bytes() == before


def small_device(monkeypatch: Any, free: int) -> None:
    """Act out devices with `free` bytes of free memory each (and as much host memory)."""

    def fake(devices: Any) -> tuple[dict[int, int], int | None]:
        return {int(d.id): free for d in devices}, free

    monkeypatch.setattr(free_memory, "free_memory", fake)


def test_relayout_that_does_not_fit_is_refused_in_words(arr: Any, monkeypatch: Any) -> None:
    v = ShardView(arr)
    v.spec = ["x", "y"]
    key, spec = v._layout["key"], v.spec
    small_device(monkeypatch, 1024)  # 1 KiB free; a replicated copy needs 8 KiB per device
    before = live_bytes()
    with pytest.raises(
        ValueError,
        match=r"needs 7\.6e-06 GiB on device \d.*only 9\.5e-07 GiB is free.*nothing was changed",
    ):
        v.spec = [None, None]
    assert v.spec == spec and v._layout["key"] == key
    state = {k: getattr(v, k) for k in v.STATE_TRAITS}
    v._on_custom_msg(v, {"type": "request", "seq": 1, "state": {**state, "spec": [None, None]}}, [])
    assert "nothing was changed" in v.error and v.spec == spec
    assert live_bytes() == before and not arr.is_deleted()
    v.spec = ["y", "x"]  # a layout that shards as much still fits
    assert v.error == ""


def test_cpu_devices_share_host_memory(arr: Any, monkeypatch: Any) -> None:
    """On CPU the devices' needs add up against the host's available memory."""
    monkeypatch.setattr(free_memory, "host_available_bytes", lambda: 8 * 1024 * 8 - 1)
    v = ShardView(arr)
    with pytest.raises(ValueError, match=r"in all on 8 device.*share the host's memory"):
        v.spec = [None, None]  # 8 KiB on each of 8 devices: 64 KiB in all
    v.spec = ["y", "x"]  # 1 KiB on each: fits


def test_function_run_that_does_not_fit_is_refused(arr: Any, monkeypatch: Any) -> None:
    v = ShardView(lambda a: jnp.sin(a) * 2, arr)
    key = v._trace["key"]
    peak = v.trace.memory["peak"]
    small_device(monkeypatch, peak // 4)
    with pytest.raises(ValueError, match=r"running <lambda> for this layout needs .* GiB"):
        v.in_specs = [[None, "x"]]
    assert v._trace["key"] == key and v.in_specs == [["x", "y"]]
    with pytest.raises(ValueError, match="nothing was changed"):
        _ = v.outputs


def test_free_memory_reports_host_memory_for_cpu_devices() -> None:
    per_device, host = free_memory.free_memory(jax.devices())
    assert per_device == {}  # CPU devices report no memory_stats of their own
    assert host is None or host > 0
    assert free_memory.gib(3 << 30) == "3.00 GiB"


class FakeIPython:
    """Enough of IPython for views/rerun.py: an execution count and post_run_cell hooks."""

    def __init__(self) -> None:
        self.execution_count = 0
        self.hooks: list[Any] = []
        self.events = self

    def register(self, name: str, fn: Any) -> None:
        assert name == "post_run_cell"
        self.hooks.append(fn)

    def run_cell(self, body: Any) -> Any:
        self.execution_count += 1
        out = body()
        for fn in self.hooks:
            fn(None)
        return out


def test_rerunning_a_cell_in_a_kernel_closes_the_views_it_left(arr: Any, monkeypatch: Any) -> None:
    from shardwidget.views import rerun

    ip = FakeIPython()
    monkeypatch.setattr(rerun, "_ipython", lambda: ip)
    monkeypatch.setattr(rerun, "_no_front_end", lambda view: False)
    monkeypatch.setattr(rerun, "_views", [])
    before = live_bytes()
    ns: dict[str, Any] = {}
    refs = []

    def cell() -> None:  # `view = ShardView(arr)`, twice per run: both displayed
        for _ in range(2):
            ns["view"] = ShardView(arr, spec=["y", "x"])
            refs.append(weakref.ref(ns["view"]))

    for run in range(4):
        ip.run_cell(cell)
        if run == 1:  # another cell: `kept = view` (a notebook's variables live in a dict)
            ip.run_cell(lambda: ns.update(kept=ns["view"]))
    gc.collect()
    alive = [r() is not None for r in refs]
    assert alive == [False, False, False, True, False, False, True, True], alive
    assert ns["kept"].comm is not None  # the user keeps it: it stays open
    ns.clear()
    for r in refs:
        v = r()
        if v is not None:
            v.close()
    del v
    assert live_bytes() == before
