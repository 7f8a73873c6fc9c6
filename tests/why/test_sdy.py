"""Shardy's attribute and location texts read by why/sdy.py, checked against the module that
jaxlib's own MLIR propagates for a function (the forms the explanations rely on)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import _jax
from shardwidget.why import sdy


def test_shardings_origins_and_locations_forms() -> None:
    per_value = '#sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>, <@mesh, [{"x", ?}, {"x":(1)2}]>]>'
    a, b = sdy.parse_shardings(per_value)
    assert a.dims == (("y",), ()) and a.words() == "split over y on dim 0"
    assert b.dims == (("x",), ("x:(1)2",)) and b.spec() == (("x",), ("x",))
    assert sdy.parse_shardings("#sdy.sharding<@mesh, [{}, {}]>")[0].replicated
    assert sdy.parse_origins('{x = "self", "y" = "constraint_3"}') == [
        {"x": "self", "y": "constraint_3"}
    ]
    assert sdy.parse_origins('[{y = "input: 1"}, {}]') == [{"y": "input: 1"}, {}]
    loc = 'loc("jit(f)/dot_general"(callsite("f"("/a/b.py":8:8 to :13) at "<m>"("/c.py":3:1))))'
    assert sdy.parse_loc(loc) == ("jit(f)/dot_general", "/a/b.py", 8)
    assert sdy.parse_loc('loc("x")') == ("x", "", 0)
    assert sdy.origin_of("mc_2_output: 0") == ("shard_map", 2)
    assert sdy.origin_of("output: 1") == ("output", 1)


def test_module_of_a_propagated_function() -> None:
    if _jax.shardy_missing():
        pytest.skip(_jax.shardy_missing())
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def f(x, w):
        y = x @ w
        return jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("y", None)))

    args = [
        jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P("x", None))),
        jax.ShapeDtypeStruct((32, 64), jnp.float32, sharding=NamedSharding(mesh, P(None, "x"))),
    ]
    text = jax.jit(f).trace(*args).lower().as_text(debug_info=True)
    mod = sdy.build(_jax.shardy_ops(text, propagate=True))
    assert [a.sharding.dims for a in mod.args] == [(("x",), ()), ((), ("x",))]
    assert [a.loc_name for a in mod.args] == ["x", "w"]
    dot = next(o for o in mod.ops if o.op == "stablehlo.dot_general")
    assert dot.line == f.__code__.co_firstlineno + 1 and dot.name.endswith("dot_general")
    result = mod.value(dot, dot.results[0])
    assert result.sharding.dims == (("y",), ()) and result.origins == {"y": "constraint_0"}
    con = mod.constraints["constraint_0"]
    assert con.line == dot.line + 1
    assert sdy.resolve(mod, mod.args[0], "self")[:2] == ("input", 0)
    # an argument left open gets the sharding its uses want
    opened = sdy.build(_jax.shardy_ops(sdy.open_argument(text, 0), propagate=True))
    assert opened.args[0].sharding != mod.args[0].sharding


def test_unreadable_module_raises_mlirs_words() -> None:
    with pytest.raises(Exception, match="Unable to parse module assembly"):  # JAX's MLIR's error
        _jax.shardy_ops("not a module", propagate=False)
