"""How IPython shows a view, whichever ipywidgets is installed (7.7.1 on Colab, 8.x elsewhere):
through the view's own ``_repr_mimebundle_`` (the widget, its whole terminal text, the picture
where no kernel shows it beside), never ipywidgets 7's ``_ipython_display_``; compare() and a
closed view alike. The differences live in shardwidget/_widgets.py."""

from __future__ import annotations

from typing import Any

import ipywidgets
import jax
import jax.numpy as jnp
from IPython.core.formatters import DisplayFormatter
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, _widgets, compare

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _format(obj: Any) -> dict[str, Any]:
    """What IPython would display for obj as a cell's result (its data)."""
    data, _meta = DisplayFormatter().format(obj)
    return data


def _x() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    return jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))


def test_a_view_is_displayed_through_its_own_mimebundle() -> None:
    v = ShardView(_x())
    data = _format(v)
    assert data[WIDGET_MIME]["model_id"] == v.model_id
    assert data["text/plain"] == repr(v)  # whole: ipywidgets 7's display cut it at 110
    assert 'class="shardwidget-snapshot"' in data["text/html"]  # no kernel: the picture rides
    v.close()
    data = _format(v)
    assert WIDGET_MIME not in data and data["text/plain"] == repr(v)


def test_compare_is_displayed_as_one_box_with_its_table() -> None:
    x = _x()
    c = compare(ShardView(lambda a: a.sum(axis=0), x), ShardView(lambda a: a * 2, x))
    data = _format(c)
    box = _widgets.registry()[data[WIDGET_MIME]["model_id"]]
    assert isinstance(box, ipywidgets.VBox)
    assert data["text/plain"] == repr(c)
    assert "shardwidget-compare" in data["text/html"]


def test_any_widget_has_a_bundle() -> None:
    """An ipywidgets widget's bundle as its version displays it (ipywidgets 7's own widgets
    have no ``_repr_mimebundle_``); a closed one has none."""
    w = ipywidgets.HTML("hi")
    data, _meta = _widgets.mimebundle(w)
    assert data[WIDGET_MIME]["model_id"] == w.model_id
    assert data["text/plain"].startswith("HTML(")
    w.close()
    assert not _widgets.is_open(w)
    assert _widgets.mimebundle(w) is None


def test_route_messages_catches_trait_sync_and_custom_messages_without_a_kernel() -> None:
    """Without a kernel ipywidgets 8 syncs through its DummyComm and ipywidgets 7 not at all;
    routed, both hand every message over."""
    v = ShardView(_x())
    sent: list[Any] = []
    _widgets.route_messages(v, lambda msg, buffers=None: sent.append(msg))
    v.spec = ["y", "x"]
    assert any("_layout" in m.get("state", {}) for m in sent if m.get("method") == "update")
    v.send({"type": "ping"})
    assert sent[-1] == {"method": "custom", "content": {"type": "ping"}}
    v.close()
