"""A fourth kind of view is cheap (issue 34): tests/views/mesh_kind.py, one file, is a kind
that ``ShardView`` makes, with the base's validation, request boundary, busy, error, undo and
lifecycle; its device ids are checked against ``jax.make_mesh`` itself. A class that sets
``_KIND_RANK`` without the contract is refused when it is made."""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import numpy as np
import pytest

from shardwidget import ShardView
from shardwidget.views.base import ShardView as Base
from shardwidget.views.base import synced_traits
from tests.views.mesh_kind import MeshOf, MeshView


def ids_of(shape: tuple[int, ...]) -> list[Any]:
    """The device ids at each position of jax.make_mesh(shape), as JAX lays them out."""
    names = tuple(f"a{i}" for i in range(len(shape)))
    explicit = (jax.sharding.AxisType.Explicit,) * len(names)
    mesh = jax.make_mesh(shape, names, axis_types=explicit, devices=jax.devices()[:8])
    return np.vectorize(lambda d: d.id)(mesh.devices).tolist()


def test_shardview_makes_the_new_kind_and_it_shows_what_jax_lays_out() -> None:
    v = ShardView(MeshOf(8))
    assert isinstance(v, MeshView) and v._ids == ids_of((8,))
    v.mesh_shape = [2, 4]
    assert v._ids == ids_of((2, 4)) and v.error == "" and not v.busy
    v.set_layout(mesh_shape=[4, 2])
    assert v._ids == ids_of((4, 2))
    v.undo()
    assert v.mesh_shape == [2, 4] and v._ids == ids_of((2, 4))


def test_the_base_refuses_a_bad_state_for_the_new_kind_and_keeps_the_view() -> None:
    v = ShardView(MeshOf(8))
    v.mesh_shape = [2, 4]
    with pytest.raises(ValueError, match="a mesh of 8 devices"):
        v.mesh_shape = [3, 3]
    assert v.mesh_shape == [2, 4] and v._ids == ids_of((2, 4))
    sent: list[Any] = []
    v.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    v._on_custom_msg(v, {"type": "mesh_request", "seq": 1, "state": {"mesh_shape": [5]}}, [])
    assert "a mesh of 8 devices" in v.error and sent[-1]["error"] == v.error
    assert v._ids == ids_of((2, 4)) and not v.busy
    v._on_custom_msg(v, {"type": "mesh_request", "seq": 2, "state": {"mesh_shape": [8, 1]}}, [])
    assert v.error == "" and sent[-1]["error"] == "" and v._ids == ids_of((8, 1))


def test_a_failed_construction_of_the_new_kind_leaves_no_open_widget() -> None:
    from shardwidget._widgets import registry

    def open_views() -> set[str]:
        return {k for k, w in registry().items() if isinstance(w, Base)}

    before = open_views()
    with pytest.raises(ValueError, match="a mesh of 8 devices"):
        ShardView(MeshOf(8, (3, 3)))
    assert open_views() == before


def test_a_class_without_the_contract_is_refused_when_it_is_made() -> None:
    with pytest.raises(TypeError, match="_publish"):

        class Half(Base[Any, Any]):
            _KIND_RANK = 11
            STATE_TRAITS: ClassVar[tuple[str, ...]] = ("mesh_shape",)

            def _build(self, obj: Any, /, *args: Any, **kwargs: Any) -> None:
                pass

    assert all(k.__name__ != "Half" for k in Base._KINDS)


def test_a_kind_that_relists_the_base_s_traits_is_refused() -> None:
    """SYNCED holds a kind's own traits; its state traits, error and busy are the base's."""
    with pytest.raises(TypeError, match="lists in SYNCED what the base adds: mesh_shape, busy"):

        class Again(MeshView):
            _KIND_RANK = 12
            SYNCED: ClassVar[tuple[str, ...]] = ("mesh_shape", "_ids", "busy")

    assert all(k.__name__ != "Again" for k in Base._KINDS)
    assert synced_traits(MeshView) == ("mesh_shape", "error", "busy", "_ids")
