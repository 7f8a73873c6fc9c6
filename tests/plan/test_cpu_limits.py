"""CPU plans past what XLA's CPU compiler can compile are refused at once (issue 30)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget._jax import CompileCount
from shardwidget.plan import PlanError, helper, plan


@pytest.mark.parametrize("n", [4096, 8192, 65536])
def test_a_cpu_plan_past_the_cpu_compiler_is_refused_at_once(n):
    mesh = AbstractMesh(
        (n // 64, 64), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2
    )
    before = dict(helper._HELPERS)
    with CompileCount() as c, pytest.raises(PlanError, match=r"tpu_mesh") as e:
        plan(
            lambda x: x * 2,
            jax.ShapeDtypeStruct((n, 64), jnp.float32),
            mesh=mesh,
            in_specs=[P("data", "model")],
        )
    assert c.n == 0  # refused before any compile (counted: a time bound fails when busy)
    assert f"{n:,} positions" in str(e.value)
    assert before == helper._HELPERS  # no helper started


def test_a_function_view_past_the_cpu_compiler_says_so_at_once():
    mesh = AbstractMesh((128, 64), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    before = dict(helper._HELPERS)
    with CompileCount() as c:
        v = shardwidget.ShardView(
            lambda x: x * 2,
            jax.ShapeDtypeStruct((8192, 64), jnp.float32),
            mesh=mesh,
            in_specs=[P("data", "model")],
        )
    assert c.n == 0  # said before any compile
    assert "8,192 positions" in v.error and "tpu_mesh" in v.error
    assert before == helper._HELPERS


def test_plan_refuses_a_mesh_that_is_not_one():
    with pytest.raises(TypeError, match="AbstractMesh"):
        plan(lambda x: x, jax.ShapeDtypeStruct((8,), jnp.float32), mesh=(16, 16))
