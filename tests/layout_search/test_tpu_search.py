"""The search on a TPU target: every candidate compiled by libtpu for the topology, its figures
equal to ``plan``'s direct compile on the same ``tpu_mesh``, ranked by its stated model on the
TPU's own preset. Needs libtpu (here or in SHARDWIDGET_TPU_PYTHON); skipped in words without."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType

import shardwidget as sw
from shardwidget.layout_search import run
from shardwidget.plan import plan, tpu

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

PARAMS = {
    "w1": jax.ShapeDtypeStruct((128, 256), jnp.bfloat16),
    "w2": jax.ShapeDtypeStruct((256, 128), jnp.bfloat16),
}
X = jax.ShapeDtypeStruct((16, 128), jnp.bfloat16)


def loss(p: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    return jnp.tanh(jax.nn.relu(x @ p["w1"]) @ p["w2"]).astype(jnp.float32).sum()


def test_tpu_candidates_equal_direct_tpu_compiles() -> None:
    run.clear_cache()
    target = sw.tpu_mesh("v5e:2x2", (4,), ("x",))
    found = sw.search(loss, PARAMS, X, mesh=target, workers=2)
    assert found.progress.state == "done" and not found.failed, found.failed
    assert found.hardware.name == "tpu-v5e"  # the TPU's own preset
    assert len(found.results) + len(found.dropped) == 10  # 4 one-role meshes, 6 pairs of 2 × 2
    assert found.results, found.dropped
    keys = [c.rank_key() for c in found.results]
    assert keys == sorted(keys)
    for cand in found.results:
        assert cand.plan.compiler == "tpu" and "libtpu" in cand.compiler
        types = (AxisType.Auto,) * len(cand.mesh_shape)
        mesh = sw.tpu_mesh("v5e:2x2", cand.mesh_shape, cand.axis_names, axis_types=types)
        direct = plan(loss, PARAMS, X, mesh=mesh, in_specs=list(cand.in_specs))
        assert cand.plan.memory == direct.memory, cand.name
        assert cand.plan.flops == direct.flops, cand.name
        kinds = sorted((c.kind, tuple(c.axes), c.bytes) for c in cand.collectives)
        assert kinds == sorted((c.kind, tuple(c.axes), c.bytes) for c in direct.collectives)
        assert cand.step_time == pytest.approx(direct.estimate("tpu-v5e").total_s, rel=1e-12)
        assert cand.peak == direct.peak_bytes, cand.name  # the compiler's peak where known
        assert cand.fits == (direct.peak_bytes <= 15.75 * 2**30)
