"""ShardView(step, *args, mesh=AbstractMesh(...)): a function view compiled for a plan's mesh in
the planning helper. On this 8-device kernel a plan of 8 positions must read exactly as the same
view compiled on a real mesh of that shape (collectives, output layouts, argument and output
bytes); 256 positions read as ``shardwidget.plan.plan`` says (tests/plan/test_plan.py checks that
against a process with 256 devices)."""

from __future__ import annotations

import gc

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.plan import plan
from shardwidget.plan.shardings import spec_of

f32 = jnp.float32


def loss(params, x):
    h = jax.nn.relu(x @ params["w1"])
    return jnp.mean((h @ params["w2"]) ** 2)


def step(params, x):
    value, grads = jax.value_and_grad(loss)(params, x)
    return value, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)


PARAMS = {"w1": jax.ShapeDtypeStruct((256, 512), f32), "w2": jax.ShapeDtypeStruct((512, 128), f32)}
X = jax.ShapeDtypeStruct((64, 256), f32)
IN_SPECS = [P("data", "model"), P("model", "data"), P("data")]


def _colls(trace):
    return sorted((c.kind, c.axes, c.bytes) for c in trace.collectives)


@pytest.mark.parametrize("out_specs", [None, [P(), P("data", None), P(None, "data")]])
def test_a_plan_of_8_positions_reads_as_the_real_compile(out_specs):
    kw = {"in_specs": IN_SPECS} | ({"out_specs": out_specs} if out_specs else {})
    planned = ShardView(
        step,
        PARAMS,
        X,
        mesh=AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
        **kw,
    )
    real = ShardView(step, PARAMS, X, mesh_shape=[4, 2], axis_names=["data", "model"], **kw)
    assert planned.error == "" and real.error == ""
    assert planned.planned and not real.planned
    assert _colls(planned.trace) == _colls(real.trace)
    assert _colls(planned.trace)  # the step has collectives to compare
    specs = [lf.layout.spec for lf in planned.trace.output_leaves]
    assert specs == [lf.layout.spec for lf in real.trace.output_leaves]
    for k in ("argument", "output"):
        assert planned.trace.memory[k] == real.trace.memory[k]
    assert planned.trace.local_shapes == real.trace.local_shapes
    assert planned.trace.flops == pytest.approx(real.trace.flops)


def test_shard_map_mode_plans_too():
    def body(a):
        return jax.lax.psum(a, "data")

    kw = {"mode": "shard_map", "in_specs": [P("data", None)], "out_specs": [P(None, None)]}
    planned = ShardView(
        body, X, mesh=AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2), **kw
    )
    real = ShardView(body, X, mesh_shape=[4, 2], axis_names=["data", "model"], **kw)
    assert planned.error == ""
    assert _colls(planned.trace) == _colls(real.trace) != []
    assert planned.trace.local_shapes == {"in": [(16, 256)], "out": [(16, 256)]}


def test_256_positions_plan_as_plan_does_and_allocate_nothing():
    pod = AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    gc.collect()  # arrays earlier tests left in cycles: freed now, not during the count
    before = len(jax.live_arrays())
    view = ShardView(step, PARAMS, X, mesh=pod, in_specs=IN_SPECS)
    assert view.error == ""
    per_arg = [{"w1": IN_SPECS[0], "w2": IN_SPECS[1]}, IN_SPECS[2]]  # plan(): one per argument
    pl = plan(step, PARAMS, X, mesh=pod, in_specs=per_arg)
    assert _colls(view.trace) == sorted((c.kind, c.axes, c.bytes) for c in pl.collectives)
    assert view.trace.memory["peak"] == pl.memory["peak"]
    assert view.trace.flops == pl.flops
    shapes = [lf.shape for lf in view.trace.output_leaves]
    names, sizes = ("data", "model"), (32, 8)
    for lf, text, shape in zip(view.trace.output_leaves, pl.output_shardings, shapes, strict=True):
        assert lf.layout.spec == spec_of(text, shape, names, sizes)
        assert lf.layout.n_devices == 256
    est = view.trace.estimate("tpu-v5p")
    assert est.total_s > 0 and est.fits
    opts = view._trace_options
    assert opts["n_devices"] == 256 and opts["platform"] == "planned"
    assert [32, 8] in opts["factorizations"]["2"]
    assert "planned on AbstractMesh (32, 8) · no devices" in opts["planned"]
    assert "256 simulated devices" in repr(view)
    assert "planned on AbstractMesh (32, 8)" in view.to_svg()
    assert view._trace_stats["outputs"][0]["message"].startswith("planned: no data")
    assert "AbstractMesh((32, 8)" in view.code
    assert len(jax.live_arrays()) == before


def test_a_planned_layout_changes_and_refuses_in_words():
    pod = AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    view = ShardView(step, PARAMS, X, mesh=pod, in_specs=IN_SPECS)
    view.in_specs = [P(None, "model"), P("model", None), P("data")]
    assert view.trace.state.in_specs[0] == ((), ("model",))
    with pytest.raises(ValueError, match=r"divide"):
        view.in_specs = [P("data", "model"), P("model", "data"), P(("data", "model"))]
    view.mesh_shape = [16, 16]
    assert view.error == "" and view.trace.state.mesh_shape == (16, 16)
    with pytest.raises(ValueError, match="the plan has 256 devices"):
        view.mesh_shape = [4, 2]


def test_jax_array_inputs_are_planned_as_shapes():
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.ones((64, 256)), NamedSharding(mesh, P("data", "model")))
    view = ShardView(
        lambda a: a.sum(0),
        x,
        mesh=AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
    )
    assert view.error == ""
    assert view.trace.state.in_specs == ((("data",), ("model",)),)  # its own spec kept
    assert view.trace.inputs is None and view.outputs is None  # never run


def test_a_plan_the_helper_refuses_is_shown_in_words():
    """4,096 positions: XLA's CPU client refuses the compile (README, Planning a pod); the
    view is made, says why at once (pointing to the TPU compiler), and the kernel goes on."""
    pod = AbstractMesh((64, 64), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    view = ShardView(lambda w, x: (x @ w).sum(), PARAMS["w1"], X, mesh=pod)
    assert view.trace is None
    assert "a CPU plan of 4,096 positions is past what XLA's CPU compiler" in view.error
    assert "tpu_mesh" in view.error and "4,096 positions" in repr(view)


def test_explicit_axes_plan_as_they_compile():
    """Code for Explicit axes (reshard) traces under the AbstractMesh as under jax.set_mesh."""
    from jax.sharding import AxisType

    def f(a):
        return jax.sharding.reshard(a, P(None, "model")) * 2

    explicit = (AxisType.Explicit,) * 2
    pod = AbstractMesh((4, 2), ("data", "model"), explicit)
    planned = ShardView(f, X, mesh=pod, in_specs=[P("data", None)])
    if "into a mesh context via `jax.set_mesh`" in planned.error:
        pytest.skip(  # (the view shows JAX's words; the kernel goes on)
            f"jax {jax.__version__} lowers Explicit shardings only inside a concrete mesh: "
            "plans on Explicit axes of an AbstractMesh from jax 0.8"
        )
    real = ShardView(
        f, X, mesh_shape=[4, 2], axis_names=["data", "model"], axis_types=["explicit"] * 2,
        in_specs=[P("data", None)],
    )  # fmt: skip
    assert planned.error == "" and planned.trace.state.axis_types == ("explicit", "explicit")
    assert _colls(planned.trace) == _colls(real.trace) != []
    assert [lf.layout.spec for lf in planned.trace.output_leaves] == [((), ("model",))]
