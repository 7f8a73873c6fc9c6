"""The memory panel's row labels: JAX's op, never a fragment of a fused op name's list or
XLA's tuple index (seen: "dot_general)", "wrapped_reduce-window{}"). Read from a plain
``jax.jit(...).lower().compile()`` of a gradient step, whose fusions carry op-name lists."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.hlo import peak_text
from tests.hlo.test_peak import compile_peak, mesh


def step(params, batch):
    def loss(p):
        h = jnp.tanh(batch["x"] @ p["w1"])
        return ((h @ p["w2"] - batch["y"]) ** 2).mean()

    value, g = jax.value_and_grad(loss)(params)
    return value, jax.tree.map(lambda a, b: a - 0.1 * b, params, g)


def test_labels_name_the_op() -> None:
    m = mesh()
    put = lambda a, s: jax.device_put(a, NamedSharding(m, s))  # noqa: E731
    params = {"w1": put(jnp.ones((64, 128)), P(None, "y")), "w2": put(jnp.ones((128, 64)), P("y"))}
    batch = {"x": put(jnp.ones((32, 64)), P("x")), "y": put(jnp.ones((32, 64)), P("x"))}
    peak, _ = compile_peak(  # (skips where XLA:CPU writes no live-range report: before 0.10)
        step, params, batch, in_paths=["w1", "w2", "x", "y"]
    )
    for b in peak.buffers:
        text = peak_text.label(b)
        what = text.split(" (")[0]
        assert text.count("(") == text.count(")") and "{" not in text, text
        if b.kind != "argument" and b.op_name:
            assert re.fullmatch(r"[\w\-.]+", what), (text, b.op_name)
            assert what in b.op_name


def test_op_word_of_a_fusions_op_name_list() -> None:
    assert peak_text.op_word("jit(f)/(jvp()/reduce_sum:transpose(jvp())/dot_general)") == (
        "dot_general"
    )
    assert peak_text.op_word("jit(step)/jvp()/tanh") == "tanh"
