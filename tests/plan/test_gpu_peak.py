"""The memory peak of GPU plans (XLA's GPU compiler in the GPU helper, read from its own
reports): the same agreement as on the CPU and TPU compilers (buffers sum to it, no more than
the compiler's argument + output - alias + temp, the input leaves' bytes per device at it).
Needs the GPU compiler's venv (skipped with the reason elsewhere)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from shardwidget.plan import compilers, gpu, plan

pytestmark = pytest.mark.skipif(
    bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or ""
)


def test_a_gpu_plans_peak_agrees_with_the_gpu_compiler():
    mesh = gpu.gpu_mesh("h100", (2, 4), ("data", "model"))
    w = jax.ShapeDtypeStruct((4096, 4096), jnp.bfloat16)
    x = jax.ShapeDtypeStruct((8192, 4096), jnp.bfloat16)

    def train(w, x):
        g = jax.grad(lambda w: jnp.tanh(x @ w).astype(jnp.float32).sum())(w)
        return w - 0.1 * g

    pl = plan(train, w, x, mesh=mesh, in_specs=[("data", "model"), ("data", None)])
    peak = pl.peak
    assert peak is not None, pl.peak_unknown
    m = pl.memory
    assert sum(b.bytes for b in peak.buffers) == peak.bytes == max(peak.timeline)
    assert peak.bytes <= m["arguments"] + m["outputs"] - m["aliased"] + m["temporaries"]
    args = sorted(b.bytes for b in peak.buffers if b.kind == "argument")
    assert args == sorted([4096 // 2 * 4096 // 4 * 2, 8192 // 2 * 4096 * 2])
