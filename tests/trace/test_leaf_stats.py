"""Per-shard statistics of a function view's leaves (issue 38 item 10): every leaf the view
draws has its data, checked against numpy over the blocks JAX's devices_indices_map gives; the
statistics of many leaves share the bytes a few took (bounded payload)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, wire

N_LEAVES = 12


@pytest.fixture
def batch() -> dict[str, Any]:
    """Twelve leaves of different shapes and layouts, each with its own values."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    specs = [P("x", "y"), P("y", None), P(None, "x"), P()]
    out = {}
    for i in range(N_LEAVES):
        shape = (8 * (1 + i % 3), 16)
        host = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * (i + 1) - 7 * i
        out[f"l{i:02d}"] = jax.device_put(host, NamedSharding(mesh, specs[i % 4]))
    return out


def _check_blocks(st: dict[str, Any], arr: jax.Array) -> None:
    """Each block's min, max and mean as numpy computes them over JAX's own index map."""
    host = np.asarray(arr)
    blocks: dict[tuple[tuple[int, int], ...], Any] = {}
    for idx in arr.sharding.devices_indices_map(arr.shape).values():
        key = tuple(s.indices(n)[:2] for s, n in zip(idx, arr.shape, strict=True))
        blocks.setdefault(key, host[idx])
    want = sorted((float(p.min()), float(p.max()), float(p.mean())) for p in blocks.values())
    got = sorted((b[0], b[1], b[2]) for b in st["blocks"])
    assert len(got) == len(want)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_every_leaf_of_a_twelve_leaf_input_has_its_data(batch: dict[str, Any]) -> None:
    """Before: "statistics are sent for the first 8 leaves": batch['l08'] on were drawn empty."""

    def step(b: dict[str, Any]) -> dict[str, Any]:
        return {k: v * 2 + 1 for k, v in b.items()}

    v = ShardView(step, batch)
    ins, outs = v._trace_stats["inputs"], v._trace_stats["outputs"]
    assert len(ins) == len(outs) == N_LEAVES
    placed, results = v.trace.inputs, jax.tree.leaves(v.outputs)
    for i, (arr, out) in enumerate(zip(placed, results, strict=True)):
        assert ins[i]["status"] == "ready", (i, ins[i]["message"])
        assert outs[i]["status"] == "ready", (i, outs[i]["message"])
        _check_blocks(ins[i], arr)
        _check_blocks(outs[i], out)
        assert out.sharding.is_equivalent_to(jax.jit(step)(batch)[f"l{i:02d}"].sharding, 2)


def test_many_leaves_share_the_bytes_of_a_few(batch: dict[str, Any]) -> None:
    """Thumbnails and raw values of all leaves together stay within what the first
    STATS_SHARES leaves could take each before: each leaf gets its share."""
    v = ShardView(lambda b: b, batch)
    n = len(jax.devices())
    bound = wire.STATS_SHARES * (wire.thumb_pixel_budget(n) + wire.values_budget(n))
    for side in ("inputs", "outputs"):
        sent = v._trace_stats[side]
        thumbs = sum(len(s["thumbs"] or b"") for s in sent)
        values = sum(len(s["values"] or b"") for s in sent)
        assert all(s["status"] == "ready" for s in sent)
        assert 0 < thumbs + values <= bound, (side, thumbs, values, bound)
    few = ShardView(lambda b: b, {k: batch[k] for k in list(batch)[:2]})
    # two leaves keep their whole budget (as before): at least as many pixels as any of twelve
    many = max(len(s["thumbs"] or b"") for s in v._trace_stats["inputs"][:2])
    assert max(len(s["thumbs"] or b"") for s in few._trace_stats["inputs"]) >= many
