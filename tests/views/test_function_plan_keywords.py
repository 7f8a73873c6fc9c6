"""A function view's own keywords and its plan badge (issue 30, items 7 and 10): ``hardware=``
is the view's keyword, never passed to the function; the "planned on AbstractMesh (…)" badge,
repr and picture name the mesh shown, after ``mesh_shape`` changes as before."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

f32 = jnp.float32
PARAMS = {"w": jax.ShapeDtypeStruct((256, 512), f32)}
X = jax.ShapeDtypeStruct((64, 256), f32)


def step(params, x):
    return jnp.tanh(x @ params["w"])


def test_the_plan_badge_follows_the_mesh_shown():
    pod = AbstractMesh((32, 8), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    view = ShardView(step, PARAMS, X, mesh=pod, in_specs=[P(None, "model"), P("data")])
    assert "AbstractMesh (32, 8)" in view._trace_options["planned"]
    view.mesh_shape = [16, 16]
    assert view.error == "" and view.trace.state.mesh_shape == (16, 16)
    for said in (view.planned, view._trace_options["planned"], repr(view), view.to_svg()):
        assert "AbstractMesh (16, 16)" in said
        assert "(32, 8)" not in said
    assert "AbstractMesh((16, 16)" in view.code


def test_hardware_is_the_views_keyword_not_the_functions():
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    x = jnp.ones((8, 16))
    view = ShardView(lambda a: a * 2, x, mesh_shape=[4, 2], hardware="tpu-v5e")
    assert view.error == "" and view.hardware == "tpu-v5e"
    assert view._estimate["hardware"] == "tpu-v5e"
    pod = AbstractMesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    plan = ShardView(step, PARAMS, X, mesh=pod, hardware="tpu-v5p")
    assert plan.error == "" and plan.hardware == "tpu-v5p"
    assert [lf.path for lf in plan.trace.input_leaves]  # the inputs were laid out
    with pytest.raises(ValueError, match="hardware"):
        ShardView(lambda a: a, x, hardware="no-such-chip")
    del mesh


def test_a_spec_longer_than_an_input_names_the_input():
    params, x = {"w": jnp.ones((16, 8))}, jnp.ones((4, 16))
    view = ShardView(step, params, x, mesh_shape=[4, 2], axis_names=["data", "model"])
    before = view.in_specs
    with pytest.raises(ValueError, match=r"input params\['w'\]: spec has 3 entries"):
        view.in_specs = [P("data", None, None), P()]
    assert view.in_specs == before and view.error == ""


@pytest.mark.parametrize("in_specs", [None, [P(None, "model"), P("data")]])
def test_hardware_other_than_the_default_sets_up_a_planned_view(in_specs):
    """hardware= other than the default on an AbstractMesh (issue 38, item 1: the estimate's
    re-publish ran before the view was made: AttributeError '_original')."""
    pod = AbstractMesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    kw = {"in_specs": in_specs} if in_specs else {}
    view = ShardView(step, PARAMS, X, mesh=pod, hardware="tpu-v5e", **kw)
    assert view.error == "" and view.hardware == "tpu-v5e"
    assert view._estimate["hardware"] == "tpu-v5e"
    view.hardware = "h100"  # after the view is made, a change re-publishes at once
    assert view._estimate["hardware"] == "h100"


def test_a_tpu_mesh_view_estimates_for_its_own_tpu():
    """A function view on a tpu_mesh estimates for that TPU, as the tree view on the same mesh
    says (issue 38, item 3: it said the default, tpu-v5p); hardware= still wins."""
    from shardwidget import tpu_mesh
    from shardwidget.plan import tpu

    if tpu.unavailable():
        pytest.skip(tpu.unavailable())
    v5e = tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    view = ShardView(step, PARAMS, X, mesh=v5e, in_specs=[P(None, "model"), P("data")])
    tree = ShardView(PARAMS, mesh=v5e)
    assert view.hardware == tree.hardware == "tpu-v5e"
    assert view._estimate["hardware"] == "tpu-v5e"
    chosen = ShardView(step, PARAMS, X, mesh=v5e, hardware="h100")
    assert chosen.hardware == "h100" and chosen._estimate["hardware"] == "h100"
