"""ShardView.send_state: the message is ipywidgets' own, byte for byte, though it does not search
PLAIN_TRAITS (the array view's geometry and transfer) for binary buffers and searches
TOP_BUFFER_TRAITS (the statistics) at their top level only; and those traits keep that promise."""

from __future__ import annotations

from typing import Any

import ipywidgets
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, _widgets


def _messages(view: Any, send_state: Any) -> tuple[Any, list[bytes]]:
    """The message send_state hands over, caught where ipywidgets 7 and 8 both hand it
    (_widgets.route_messages; without a kernel, ipywidgets 7's comm would drop it)."""
    sent: list[tuple[Any, list[bytes]]] = []
    _widgets.route_messages(view, lambda msg, buffers=None: sent.append((msg, list(buffers or []))))
    send_state(view)
    (msg,) = sent
    return msg[0], [bytes(b) for b in msg[1]]


def _no_bytes(v: Any, path: str = "") -> None:
    assert not isinstance(v, bytes | bytearray | memoryview), path
    if isinstance(v, dict):
        for k, x in v.items():
            _no_bytes(x, f"{path}.{k}")
    elif isinstance(v, list | tuple):
        for i, x in enumerate(v):
            _no_bytes(x, f"{path}[{i}]")


def test_array_view_message_equals_ipywidgets() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(
        jnp.asarray(np.random.default_rng(0).standard_normal((64, 32)), jnp.float32),
        NamedSharding(mesh, P("x", "y")),
    )
    view = ShardView(x)
    try:
        assert view.PLAIN_TRAITS == ("_layout", "_transfer")
        assert view.TOP_BUFFER_TRAITS == ("_stats",)
        view.spec = ["y", "x"]  # a transfer to send (the original layout has none)
        fview = ShardView(lambda a: a * 2, x)
        tview = ShardView({"w": x, "b": jnp.ones(8)})
        assert tview.TOP_BUFFER_TRAITS == ("_stats",)
        for v in [view, fview, tview]:
            ours, ours_buffers = _messages(v, type(v).send_state)
            theirs, their_buffers = _messages(v, ipywidgets.Widget.send_state)
            assert ours == theirs
            assert ours_buffers == their_buffers
        fview.close()
        tview.close()
        data, buffers = _messages(view, type(view).send_state)
        assert buffers  # the statistics' thumbnails went as binary buffers
        assert "_layout" in data["state"] and data["buffer_paths"]
        assert ["_stats", "thumbs"] in data["buffer_paths"]
        for name in view.PLAIN_TRAITS:  # what PLAIN_TRAITS promises
            _no_bytes(getattr(view, name), name)
        for k, v in view._stats.items():  # what TOP_BUFFER_TRAITS promises: bytes on top only
            if not isinstance(v, bytes | bytearray | memoryview):
                _no_bytes(v, f"_stats.{k}")
    finally:
        view.close()
