"""The legend in words (issue 14, item 3), checked against layouts made with JAX: the number of
ways a dimension is split and the number of copies are counted from devices_indices_map."""

from __future__ import annotations

import collections
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model.layout import layout_of
from shardwidget.render.legend import MARKS, legend_of
from tests.helpers import require_unreduced


def _put(shape: tuple[int, ...], names: tuple[str, ...], spec: P) -> Any:
    mesh = jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))
    return jax.device_put(jnp.zeros((8, 8, 4)), NamedSharding(mesh, spec))


def _jax_counts(a: Any) -> tuple[list[int], int]:
    """Per dimension, how many distinct ranges; and how many devices hold each block."""
    idx = {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(ix, a.shape, strict=True))
        for d, ix in a.sharding.devices_indices_map(a.shape).items()
    }
    ways = [len({ix[d] for ix in idx.values()}) for d in range(a.ndim)]
    copies = set(collections.Counter(idx.values()).values())
    assert len(copies) == 1
    return ways, copies.pop()


@pytest.mark.parametrize(
    ("mesh", "names", "spec", "want"),
    [
        (
            (2, 4),
            ("x", "y"),
            P("x"),
            ["dimension 0 split 2 ways over x", "replicated over y: 4 copies"],
        ),
        (
            (2, 4),
            ("x", "y"),
            P(None, ("y", "x")),
            ["dimension 1 split 8 ways over y+x", "no copies: each element on one device"],
        ),
        (
            (1, 8),
            ("x", "y"),
            P("x", "y"),
            [
                "dimension 1 split 8 ways over y",
                "x has size 1: not split",
                "no copies: each element on one device",
            ],
        ),
        (
            (2, 2, 2),
            ("a", "b", "c"),
            P(None, None, "b"),
            [
                "dimension 2 split 2 ways over b",
                "replicated over a: 2 copies",
                "replicated over c: 2 copies",
                "each element on 4 devices",
            ],
        ),
        ((8,), ("x",), P(), ["replicated over x: 8 copies"]),
    ],
)
def test_replication_in_words_matches_jax(mesh: Any, names: Any, spec: P, want: list[str]) -> None:
    a = _put(mesh, names, spec)
    lines = legend_of(layout_of(a)).replication
    assert list(lines) == want
    ways, copies = _jax_counts(a)
    for d, w in enumerate(ways):  # every split the words name is the split JAX made
        said = [ln for ln in lines if ln.startswith(f"dimension {d} split")]
        assert said == (
            [f"dimension {d} split {w} ways" + said[0].split(" ways")[1]] if w > 1 else []
        )
    named = [int(ln.split(": ")[1].split()[0]) for ln in lines if ln.startswith("replicated over")]
    total = [
        int(ln.split()[3]) for ln in lines if ln.startswith("each element on") and "devices" in ln
    ]
    assert (total or named or [1])[0] == copies


def test_single_device_and_marks() -> None:
    a = jax.device_put(jnp.ones(4), SingleDeviceSharding(jax.devices()[3]))
    lg = legend_of(layout_of(a))
    assert lg.replication == ("on one device: not split, no copies",)
    assert [m for m, _ in lg.marks] == ["border", "inner heatmap", "stripes", "labels"]
    assert lg.marks == MARKS


def test_the_legend_is_on_the_wire() -> None:
    a = _put((2, 4), ("x", "y"), P("x"))
    v = ShardView(a)
    assert v._layout["legend"] == {
        "replication": ["dimension 0 split 2 ways over x", "replicated over y: 4 copies"],
        "marks": [list(m) for m in MARKS],
    }
    v.spec = ["x", "y", None]
    assert v._layout["legend"]["replication"] == [
        "dimension 0 split 2 ways over x",
        "dimension 1 split 4 ways over y",
        "no copies: each element on one device",
    ]


def test_unreduced_axes_are_partial_values_not_copies() -> None:
    """P('y', unreduced={'x'}) (a reduce left unreduced): the holders over x hold partial sums."""
    require_unreduced()
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))
    with jax.set_mesh(mesh):
        y = jax.lax.reduce_sum(x, [0], out_sharding=P("y", unreduced={"x"}))
    assert y.sharding.spec.unreduced == {"x"}
    lines = legend_of(layout_of(y)).replication
    assert lines == (
        "dimension 0 split 4 ways over y",
        "partial sums over x: 2 partials per block, added up",
        "no copies: each element on one device",
    )
    stripes = dict(legend_of(layout_of(y)).marks)["stripes"]
    assert "partial sum" in stripes and stripes != dict(MARKS)["stripes"]
    # devices_indices_map refuses unreduced shardings: the partitions are those of P('y')
    _, holders = _jax_counts(jax.device_put(jnp.zeros(8), NamedSharding(mesh, P("y"))))
    assert holders == 2  # two devices over x hold each block: partial sums, not copies
