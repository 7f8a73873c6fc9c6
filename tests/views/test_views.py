"""The one core of every view kind: the family base, the change path, the public protocol that
saved pages use, the complete traced result."""

from __future__ import annotations

import gc
import json
import pathlib
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import traitlets
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget import ArrayView, FunctionView, ShardView, wire
from shardwidget.export import page as export
from shardwidget.model import units
from shardwidget.views import base
from shardwidget.views.base import synced_traits


@pytest.fixture
def arr() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))


def test_shard_view_is_the_family(arr: Any) -> None:
    v = ShardView(arr)
    f = ShardView(lambda a: a * 2, arr)
    assert isinstance(v, ArrayView) and isinstance(v, ShardView)  # (anywidget subclasses)
    assert isinstance(f, FunctionView) and isinstance(f, ShardView)
    assert not isinstance(v, FunctionView) and not isinstance(f, ArrayView)
    assert f.trace is not None and f.fn_name == "<lambda>"  # __init__ ran, once
    assert isinstance(ArrayView(arr), ShardView)
    assert {"ArrayView", "FunctionView", "ShardView", "compare"} <= set(shardwidget.__all__)


def test_bundle_is_text_so_views_can_be_freed(arr: Any) -> None:
    assert isinstance(ShardView._esm, str) and "\n" in ShardView._esm
    v = ShardView(arr, stats=False)
    ref = weakref.ref(v)
    v.close()
    del v
    gc.collect()
    assert ref() is None


def test_dev_mode_keeps_the_path(monkeypatch: Any) -> None:
    base._bundle.cache_clear()
    monkeypatch.setenv("SHARDWIDGET_DEV", "1")
    try:
        assert base._bundle() == base.BUNDLE
    finally:
        base._bundle.cache_clear()


def test_compute_runs_after_validation_and_a_failure_changes_nothing(arr: Any) -> None:
    v = ShardView(arr)
    seen: list[Any] = []
    compute = v._compute

    def spy(st: Any) -> Any:
        seen.append(list(v.spec))  # the trait holds the new value: validation is over
        return compute(st)

    v._compute = spy  # type: ignore[method-assign]
    v.spec = ["y", None]
    assert seen == [["y", None]]
    assert v.array.sharding.spec == P("y", None)

    def fail(st: Any) -> Any:
        raise ValueError("device_put failed")

    v._compute = fail  # type: ignore[method-assign]
    key, shown = v._layout["key"], v.array
    with pytest.raises(ValueError, match="device_put failed"):
        v.spec = [None, "x"]
    assert v.spec == ["y", None] and v.array is shown and v._layout["key"] == key
    with pytest.raises(ValueError, match="device_put failed"):
        v.set_layout(spec=[None, "x"])
    assert v.spec == ["y", None]


def test_invalid_values_never_reach_the_compute(arr: Any) -> None:
    v = ShardView(arr)
    calls: list[Any] = []
    v._compute = lambda st: calls.append(st)  # type: ignore[method-assign,assignment]
    with pytest.raises(ValueError, match="not in the mesh"):
        v.spec = ["q", None]
    assert calls == []


def test_function_view_mode_is_fixed(arr: Any) -> None:
    f = ShardView(lambda a: a + 1, arr)
    assert f.mode == "jit"
    with pytest.raises(traitlets.TraitError, match="read-only"):
        f.mode = "shard_map"


def test_options_are_published_once_per_construction(arr: Any, monkeypatch: Any) -> None:
    calls: list[int] = []
    real = wire.trace_options

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(wire, "trace_options", counting)
    ShardView(lambda a: a.sum(axis=0), arr, in_specs=[P(None, "y")])
    assert len(calls) == 1


def test_traced_result_is_complete(arr: Any) -> None:
    f = ShardView(lambda a: {"s": a.sum(axis=0), "d": a * 2}, arr)
    res = f.trace
    assert res is not None
    outs = res.output_leaves
    assert [o.path for o in outs] == ["out['d']", "out['s']"]
    assert [o.shape for o in outs] == [(8, 8), (8,)]
    assert [str(o.dtype) for o in outs] == ["float32", "float32"]
    assert outs[0].sharding.spec == P("x", "y") and outs[0].local_shape == (4, 2)
    assert len(outs[0].layout.blocks) == 8
    (inp,) = res.input_leaves
    assert inp.path == "a" and inp.shape == (8, 8) and inp.local_shape == (4, 2)
    assert [o["path"] for o in f._trace_options["outputs"]] == ["out['d']", "out['s']"]
    assert not hasattr(res, "out_tree") and not hasattr(f._traced, "out_tree")


def test_array_page_data_through_the_public_protocol(arr: Any) -> None:
    v = ShardView(arr)
    states = export.variant_states(v, [{"spec": ["x", None]}])
    data, n, skipped = export.array_page_data(v, states)
    assert (n, skipped) == (2, 0)
    assert set(data["state"]) == set(synced_traits(ArrayView))
    keys = data["state"]["_options"]["static_states"]
    assert keys == sorted(data["answers"]) and wire.state_key(v.layout_state) in keys
    other = data["answers"][wire.state_key(states[0])]
    assert other["state"]["spec"] == ["x", None] and len(other["layout"]["blocks"]) == 2
    assert set(data["state"]["_stats"]["values"]) == {"__b64__"}  # binary as base64
    json.dumps(data)  # JSON all through
    assert v.spec == ["x", "y"] and v.array is arr  # the view did not change
    with pytest.raises(ValueError, match="unknown key 'spce'"):
        export.variant_states(v, [{"spce": ["x"]}])


def test_function_page_data(arr: Any) -> None:
    f = ShardView(lambda a: a.sum(axis=0), arr)
    data = export.function_page_data(f)
    assert set(data["state"]) == set(synced_traits(FunctionView))
    assert data["state"]["_trace_options"]["static"] == export.NO_KERNEL
    assert data["answers"] == {}
    assert "static" not in f._trace_options  # the live view is untouched
    json.dumps(data)


def test_export_reads_no_private_field_of_a_view() -> None:
    src = (pathlib.Path(export.__file__)).read_text()
    assert "view._" not in src
    assert "static=" not in src


def test_one_byte_formatter() -> None:
    assert units.fmt_bytes(64) == "64 B"
    assert units.fmt_bytes(6144) == "6 KiB"
    assert units.fmt_bytes(3 << 30) == "3 GiB"
    assert units.fmt_bytes(2.5 * (1 << 40)) == "2.5 TiB"
    assert units.fmt_bytes(200 << 20) == "200 MiB"
    # the renderer's rule (js/shared/text.ts formatBytes): 3 significant digits, no trailing 0
    assert units.fmt_bytes(1.234 * (1 << 20)) == "1.23 MiB"
    assert units.fmt_bytes(12.34 * (1 << 10)) == "12.3 KiB"
    assert units.fmt_bytes(1.5 * (1 << 10)) == "1.5 KiB"


def test_unknown_kwargs_get_a_hint(arr: Any) -> None:
    with pytest.raises(TypeError, match="'view_dim'; did you mean 'view_dims'"):
        ShardView(arr, view_dim=[0, 1])
    with pytest.raises(TypeError, match="set_layout got 'spce'"):
        ShardView(arr).set_layout(spce=["x"])


def test_wire_builders_are_typed_like_the_json() -> None:
    a = np.zeros((4, 4), np.float32)
    v = ShardView(a)
    assert set(v._layout) == set(wire.LayoutWire.__annotations__)
    assert set(v._stats) == set(wire.Stats.__annotations__)
    assert set(v._options) == set(wire.Options.__annotations__) - {"static_states"}
