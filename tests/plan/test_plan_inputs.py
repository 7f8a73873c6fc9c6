"""plan() refuses bad input in words before any compile (issue 30, item 12): a mesh that is not
an AbstractMesh is a TypeError, a spec that does not fit an argument a ValueError naming it
(as the tree view says it), each answered at once."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

from shardwidget._jax import CompileCount
from shardwidget.plan import helper, plan

f32 = jnp.float32
PARAMS = {"w": jax.ShapeDtypeStruct((256, 512), f32)}
X = jax.ShapeDtypeStruct((64, 256), f32)
POD = AbstractMesh((16, 16), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def step(params, x):
    return x @ params["w"]


@pytest.mark.parametrize(
    ("kw", "error", "words"),
    [
        (
            {"mesh": (16, 16)},
            TypeError,
            r"takes a jax.sharding.AbstractMesh.*AbstractMesh\(\(16, 16\)",
        ),
        (
            {"mesh": POD, "in_specs": [P("data", "data"), None]},
            ValueError,
            r"argument 0\['w'\].*'data' is used by dimensions 0 and 1",
        ),
        (
            {"mesh": POD, "in_specs": [None, P("data", None, None)]},
            ValueError,
            r"argument 1 \(shape \(64, 256\)\).*3 entries",
        ),
        (
            {"mesh": POD, "in_specs": [{"w": P(None, "nope")}, None]},
            ValueError,
            r"argument 0\['w'\].*'nope' is not in the mesh",
        ),
        (
            {"mesh": POD, "in_specs": [None, P("data"), None]},
            ValueError,
            r"3 specs for 2 arguments",
        ),
    ],
)
def test_bad_plan_input_is_refused_in_words_at_once(kw, error, words):
    before = dict(helper._HELPERS)
    with CompileCount() as c, pytest.raises(error, match=words):
        plan(step, PARAMS, X, **kw)
    assert c.n == 0 and before == helper._HELPERS  # nothing compiled, no helper started
