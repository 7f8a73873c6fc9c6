"""The why panel's messages (wire/why.py): a request's parse, and the view's answers for a
cause, its fixes and applying one, each checked against the view's own Python API."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget import _jax
from shardwidget.wire import why


def test_parse_requests() -> None:
    assert why.parse({"type": "why", "index": 2}) == (2, False, -1)
    assert why.parse({"type": "why", "index": 0, "fixes": True}) == (0, True, -1)
    assert why.parse({"type": "why", "index": 1, "apply": 3}) == (1, False, 3)
    for bad in ({"type": "why"}, {"type": "why", "index": True}, {"type": "history"}, [], None):
        assert why.parse(bad) is None


def test_answers_cause_fixes_apply_and_refusals() -> None:
    if _jax.shardy_missing():
        pytest.skip(_jax.shardy_missing())
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P("x", None)))
    w = jax.device_put(jnp.ones((32, 64)), NamedSharding(mesh, P(None, "x")))
    view = sw.ShardView(lambda x, w: x @ w, x, w)
    sent: list[dict] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    view._on_custom_msg(view, {"type": "why", "index": 0}, [])
    msg = sent[-1]
    cause = view.trace.collectives[0].cause
    assert msg["ok"] and msg["text"] == cause.text and msg["fixes"] is None
    assert [p["index"] for p in msg["inputs"]] == [p.index for p in cause.inputs]
    view._on_custom_msg(view, {"type": "why", "index": 0, "fixes": True}, [])
    fixes = sent[-1]["fixes"]
    assert [f["what"] for f in fixes] == [f.what for f in view.fixes(0)]
    before = view.trace.state
    view._on_custom_msg(view, {"type": "why", "index": 0, "apply": 0}, [])
    assert sent[-1]["applied"] == 0 and view.trace.state != before
    view.undo()
    assert view.trace.state == before
    view._on_custom_msg(view, {"type": "why", "index": 99}, [])
    assert not sent[-1]["ok"] and "not in the layout shown" in sent[-1]["error"]
