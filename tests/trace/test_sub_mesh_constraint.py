"""A with_sharding_constraint onto a sub-mesh inside jit: the function view shows what JAX
compiles (issue 29: on the GPU machine the view showed the constraint's P('x') with no
collective where JAX compiled P(None) and an all-gather). Every variant is checked against
jax.jit(...).lower(...).compile(): output shardings and collectives; and the reading of f's own
out_shardings does not depend on the private ``_jit_info`` (absent or renamed on a newer JAX)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import jax
import numpy as np
import pytest
from jax import lax
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, _jax

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")


def _kinds(text: str) -> Counter[str]:
    return Counter(k for line in text.splitlines() for k in KINDS if f" {k}(" in line)


def _mesh() -> Mesh:
    devs = np.array(jax.devices()[:2]).reshape(2, 1)
    return Mesh(devs, ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def _g(x: Any) -> Any:
    return lax.with_sharding_constraint(x + 1, NamedSharding(_mesh(), P("x", "y"))) * 2


def _variants() -> dict[str, Any]:
    rep = NamedSharding(_mesh(), P(None))
    return {
        "plain": _g,
        "jit": jax.jit(_g),
        "jit_in_out_replicated": jax.jit(_g, in_shardings=rep, out_shardings=rep),
        "jit_out_replicated": jax.jit(_g, out_shardings=rep),
    }


def _same_as_jax(v: Any, f: Any, x: np.ndarray, in_sh: Any = None) -> None:
    jf = f if hasattr(f, "lower") and in_sh is None else jax.jit(f, in_shardings=in_sh)
    c = jf.lower(x).compile()
    (want,) = jax.tree_util.tree_leaves(c.output_shardings)
    (got,) = v.trace.out_shardings
    assert got.is_equivalent_to(want, 2), (got, want)
    assert Counter(c.kind for c in v.trace.collectives) == _kinds(c.as_text())
    (out,) = v.outputs
    np.testing.assert_array_equal(np.asarray(out), (x + 1) * 2)


@pytest.mark.parametrize("variant", list(_variants()))
def test_a_constraint_on_a_sub_mesh_is_shown_as_jax_compiles_it(variant: str) -> None:
    f = _variants()[variant]
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    v = ShardView(f, x)
    assert v.error == "", v.error
    _same_as_jax(v, f, x)
    if variant in ("plain", "jit", "jit_out_replicated"):  # (f's own in_shardings refuse others)
        for specs in ([["x", None]], [[None, "x"]]):
            v.set_layout(in_specs=specs)
            assert v.error == "", v.error
            _same_as_jax(v, f, x, v.trace.in_shardings[0])


def test_f_s_out_shardings_are_read_without_the_private_jit_info(monkeypatch) -> None:
    """A JAX without ``_jit_info`` (jax 0.11 and later may rename it): f's own out_shardings
    come from its jaxpr's jit equation."""
    monkeypatch.setattr(_jax, "_jit_info_of", lambda f: None)
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    rep = NamedSharding(_mesh(), P(None))
    assert _jax.jit_has_out_shardings(jax.jit(_g, out_shardings=rep), (x,))
    assert _jax.jit_has_out_shardings(jax.jit(lambda a: (a, a), out_shardings=(rep, None)), (x,))
    assert not _jax.jit_has_out_shardings(jax.jit(_g), (x,))
    assert not _jax.jit_has_out_shardings(_g, (x,))
    f = jax.jit(_g, in_shardings=rep, out_shardings=rep)
    v = ShardView(f, x)
    assert v.error == ""
    _same_as_jax(v, f, x)
    assert Counter(c.kind for c in v.trace.collectives)["all-gather"] >= 1
