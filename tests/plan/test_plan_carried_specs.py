"""A function planned with ``mesh=`` on arrays the user already laid out: each input keeps its
own spec where the plan's mesh has its axes and they divide its dims (another mesh shape with
the same names is the usual question: "this layout, on the pod?"), else it is shown replicated
with a note saying why. Checked against plain ``jax.jit(f, in_shardings=...)`` compiled on a real
mesh of the plan's shape (8 devices here)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

AUTO2 = (AxisType.Auto,) * 2


def f(w, x):
    return jnp.tanh(x @ w).sum()


def _arrays():
    """w and x laid out on a 2 x 4 mesh of this kernel's devices."""
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=AUTO2)
    w = jax.device_put(jnp.ones((64, 128)), NamedSharding(mesh, P(None, "model")))
    x = jax.device_put(jnp.ones((32, 64)), NamedSharding(mesh, P("data", None)))
    return w, x


def _plain(specs, shape=(4, 2)):
    """(argument bytes per device, collective kinds) of jax.jit with those specs, compiled."""
    mesh = jax.make_mesh(shape, ("data", "model"), axis_types=AUTO2)
    w, x = _arrays()
    shardings = tuple(NamedSharding(mesh, s) for s in specs)
    sds = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s)
        for a, s in zip((w, x), shardings, strict=True)
    ]
    compiled = jax.jit(f, in_shardings=shardings).lower(*sds).compile()
    text = compiled.as_text()
    kinds = sorted(k for k in ("all-reduce", "all-gather", "reduce-scatter") if f" {k}(" in text)
    return compiled.memory_analysis().argument_size_in_bytes, kinds


def test_the_inputs_own_specs_carry_onto_a_plan_of_another_shape():
    w, x = _arrays()
    view = ShardView(f, w, x, mesh=AbstractMesh((4, 2), ("data", "model"), axis_types=AUTO2))
    assert view.error == ""
    assert view.in_specs == [[None, "model"], ["data", None]]
    args, kinds = _plain((P(None, "model"), P("data", None)))
    assert view.trace.memory["argument"] == args
    assert sorted({c.kind for c in view.trace.collectives}) == kinds
    assert kinds  # the contracted dim is split over model: a partial sum to all-reduce
    assert not any(view.trace.notes.get("in", []))  # nothing to say: carried as laid out


def test_a_spec_the_plan_cannot_take_is_replicated_and_says_why():
    w, x = _arrays()
    flat = AbstractMesh((8,), ("data",), axis_types=(AxisType.Auto,))
    view = ShardView(f, w, x, mesh=flat)
    assert view.error == ""
    assert view.in_specs == [[None, None], ["data", None]]  # w names 'model': not the plan's
    note = view.trace.notes["in"][0]
    assert "names 'model', not an axis of the plan's mesh (data)" in note
    assert "shown replicated" in note and view.trace.notes["in"][1] == ""
    assert "not an axis of the plan's mesh" in repr(view)
    # replicated w: its whole 32 KiB on each position, as jax.jit lays out an unsharded input
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    sds = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s))
        for a, s in zip((w, x), (P(), P("data")), strict=True)
    ]
    plain = jax.jit(f).lower(*sds).compile().memory_analysis().argument_size_in_bytes
    assert view.trace.memory["argument"] == plain
    # once w is laid out on the plan's axes, the note goes
    view.in_specs = [[None, "data"], ["data", None]]
    assert view.error == "" and not any(view.trace.notes.get("in", []))


def test_a_dim_the_plans_axes_do_not_divide_is_replicated_and_says_why():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=AUTO2)
    w = jax.device_put(jnp.ones((6, 128)), NamedSharding(mesh, P("data", "model")))
    view = ShardView(
        lambda w: (w * 2).sum(), w, mesh=AbstractMesh((4, 4), ("data", "model"), axis_types=AUTO2)
    )
    assert view.error == ""
    assert view.in_specs == [[None, None]]
    assert "splits dim 0 (6) 4 ways" in view.trace.notes["in"][0]
