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


def test_the_answer_lists_the_leaves_each_element_touches_and_whose_gradient() -> None:
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    rep, rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("d"))
    p = {
        "w1": jax.device_put(jnp.ones((64, 32)), rep),
        "w2": jax.device_put(jnp.ones((32, 8)), rep),
    }
    batch = jax.device_put(jnp.ones((32, 64)), rows)

    def step(p, x):
        grads = jax.grad(lambda p: jnp.mean(jnp.tanh(x @ p["w1"]) @ p["w2"]))(p)
        return jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)

    view = sw.ShardView(step, p, batch)
    sent: list[dict] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    (i,) = [i for i, c in enumerate(view.trace.collectives) if c.gradients]
    view._on_custom_msg(view, {"type": "why", "index": i}, [])
    c, msg = view.trace.collectives[i], sent[-1]
    assert [t["what"] for t in msg["touches"]] == [f"{e.dtype}{list(e.dims)}" for e in c.elements]
    assert [t["inputs"] for t in msg["touches"]] == [list(x) for x in c.element_in_leaves]
    assert [t["outputs"] for t in msg["touches"]] == [list(x) for x in c.element_out_leaves]
    # each gradient reaches only its own parameter's update: out['w1'] is p['w1'] - 0.1 g
    for t in msg["touches"]:
        assert t["outputs"] and all(o == "out" + t["gradient_of"][1:] for o in t["outputs"]), t
    assert sorted(t["gradient_of"] for t in msg["touches"]) == ["p['w1']", "p['w2']"]
