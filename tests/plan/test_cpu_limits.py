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


def test_default_time_limits_scale_with_the_machine_s_load(monkeypatch):
    """A compile on a busy machine runs slower, not wrong: the helper's default limits are the
    quiet machine's times the 1-minute load per core (1 to 8x); a limit the user gives is kept
    (issue 38: the 06 notebook's TPU compiles took 4x their quiet time at load 9-14)."""
    monkeypatch.setattr(helper.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(helper.os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    assert helper.busy(helper.TIMEOUT_S) == helper.TIMEOUT_S
    monkeypatch.setattr(helper.os, "getloadavg", lambda: (9.0, 1.0, 1.0))
    assert helper.busy(helper.TIMEOUT_S) == 4.5 * helper.TIMEOUT_S
    monkeypatch.setattr(helper.os, "getloadavg", lambda: (100.0, 1.0, 1.0))
    assert helper.busy(helper.TIMEOUT_S) == helper.MAX_SLOWDOWN * helper.TIMEOUT_S
    am = AbstractMesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x = jax.ShapeDtypeStruct((64, 64), jnp.float32)
    with pytest.raises(PlanError, match=r"longer than 0\.001 s"):  # the user's own limit
        plan(lambda x: x * 2, x, mesh=am, in_specs=[P("data")], timeout=1e-3)
