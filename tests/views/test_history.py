"""History (issue 14, item 8): undo/redo step through the layouts shown, besides Reset. Each
step back restores the controls (mesh, spec, memory kind) and an array whose geometry is JAX's
own for that layout."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView


@pytest.fixture
def x() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))


def _traits(v: Any) -> dict[str, Any]:
    return {k: getattr(v, k) for k in ("mesh_shape", "axis_names", "spec", "memory_kind")}


def _geometry(a: Any) -> dict[int, Any]:
    """JAX's own answer: device id -> index, from the array's sharding."""
    m = a.sharding.devices_indices_map(a.shape)
    return {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(idx, a.shape, strict=True))
        for d, idx in m.items()
    }


def _expected(x: Any, shape: tuple[int, ...], names: tuple[str, ...], spec: Any, kind: str) -> Any:
    """The layout made with JAX directly, not through the view."""
    mesh = jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))
    return jax.device_put(x, NamedSharding(mesh, P(*spec), memory_kind=kind))


def _view_geometry(v: Any) -> dict[int, Any]:
    lay = v.layout
    return {d: b.index for b in lay.blocks for d in b.devices}


def test_undo_and_redo_restore_spec_mesh_memory_kind_and_geometry(x: Any) -> None:
    v = ShardView(x)
    steps = [_traits(v)]
    geos = [_geometry(x)]
    kinds = [x.sharding.memory_kind]
    for change, want in (
        (lambda: setattr(v, "spec", ["y", None]), ((2, 4), ("x", "y"), ("y", None), "device")),
        (
            lambda: v.set_layout(mesh_shape=[8], axis_names=["x"], spec=["x", None]),
            ((8,), ("x",), ("x", None), "device"),
        ),
        (
            lambda: setattr(v, "memory_kind", "pinned_host"),
            ((8,), ("x",), ("x", None), "pinned_host"),
        ),
    ):
        change()
        want = _expected(x, *want)
        assert _view_geometry(v) == _geometry(want)
        steps.append(_traits(v))
        geos.append(_geometry(want))
        kinds.append(want.sharding.memory_kind)
    assert v.history_index == 3 and len(v.history) == 4
    assert v._history["undo"] == 3 and v._history["redo"] == 0
    for i in (2, 1, 0):
        v.undo()
        assert _traits(v) == steps[i]
        assert _geometry(v.array) == geos[i] == _view_geometry(v)
        assert v.array.sharding.memory_kind == kinds[i]
        assert v.layout.memory_kind == kinds[i]
    assert v.array is x  # back at the start: the user's own array, no copy
    with pytest.raises(ValueError, match="nothing to undo"):
        v.undo()
    assert _traits(v) == steps[0]
    for i in (1, 2, 3):
        v.redo()
        assert _traits(v) == steps[i] and _geometry(v.array) == geos[i]
    with pytest.raises(ValueError, match="nothing to redo"):
        v.redo()
    np.testing.assert_array_equal(np.asarray(v.array), np.asarray(x))  # values untouched


def test_a_change_after_undo_forgets_what_was_undone_and_reset_is_a_step(x: Any) -> None:
    v = ShardView(x)
    v.spec = ["y", None]
    v.spec = [None, "y"]
    v.undo()
    assert v.spec == ["y", None] and v._history["redo"] == 1
    v.spec = [None, None]  # a new branch
    assert v._history == {
        "undo": 2,
        "redo": 0,
        "undo_label": "mesh x=2 × y=4 · P('y', None)",
        "redo_label": "",
    }
    with pytest.raises(ValueError, match="nothing to redo"):
        v.redo()
    v.reset()
    assert _geometry(v.array) == _geometry(x)
    v.undo()  # undoes the reset
    assert v.spec == [None, None]
    assert [s.spec for s in v.history] == [
        (("x",), ("y",)),
        (("y",), ()),
        ((), ()),
        (("x",), ("y",)),  # the reset
    ]


def test_the_buttons_message_steps_and_shows_failures_in_error(x: Any) -> None:
    v = ShardView(x)
    v.spec = [None, "x"]
    v._on_custom_msg(v, {"type": "history", "step": -1}, [])
    assert v.spec == ["x", "y"] and v.error == "" and not v.busy
    v._on_custom_msg(v, {"type": "history", "step": -1}, [])  # nothing left: said, not raised
    assert v.error == "nothing to undo" and v.spec == ["x", "y"]
    v._on_custom_msg(v, {"type": "history", "step": 1}, [])
    assert v.spec == [None, "x"] and v.error == ""
    for bad in ({"type": "history", "step": 2}, {"type": "history", "step": True}, {"type": "x"}):
        v._on_custom_msg(v, bad, [])
        assert v.spec == [None, "x"]


def test_a_refused_change_is_not_a_step_and_undo_holds_no_device_memory(x: Any) -> None:
    v = ShardView(x)
    with pytest.raises(ValueError, match="used by dimensions 0 and 1"):
        v.spec = ["x", "x"]  # an axis twice
    assert len(v.history) == 1
    before = {id(a) for a in jax.live_arrays()}
    v.spec = ["y", "x"]
    v.undo()
    v.redo()
    v.undo()
    extra = [a for a in jax.live_arrays() if id(a) not in before]
    assert extra == []


def test_undo_after_the_original_was_deleted_says_so(x: Any) -> None:
    y = x + 0
    v = ShardView(y)
    v.spec = ["y", None]
    y.delete()
    with pytest.raises(ValueError, match="deleted or donated"):
        v.undo()
    assert v.spec == ["y", None] and v.history_index == 1


def test_function_view_undo_restores_its_specs(x: Any) -> None:
    f = ShardView(lambda a: a * 2, x)
    first = f.trace
    assert first is not None
    f.in_specs = [["y", None]]
    assert f.trace is not None and f.trace.in_shardings[0].spec == P("y", None)
    f.undo()
    t = f.trace
    assert t is not None and t.in_shardings[0].spec == first.in_shardings[0].spec
    assert f.in_specs == [["x", "y"]]
    f.redo()
    assert f.in_specs == [["y", None]]
    assert "→" in f._history["undo_label"]


def test_history_keeps_the_newest_layouts(x: Any) -> None:
    v = ShardView(x)
    v.HISTORY_LIMIT = 3  # type: ignore[misc]
    for spec in (["y", None], [None, "y"], [None, None], ["x", None]):
        v.spec = spec
    assert [s.spec for s in v.history] == [((), ("y",)), ((), ()), (("x",), ())]
    assert v.history_index == 2 and v._history["undo"] == 2
    v.undo()
    v.undo()
    with pytest.raises(ValueError, match="nothing to undo"):
        v.undo()  # the oldest were forgotten
    assert v.spec == [None, "y"]
