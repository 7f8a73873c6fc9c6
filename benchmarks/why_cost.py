"""What explaining the collectives costs beside the view's compile (issue 31: <= 15 %), and a
fix's compile beside a plain one (<= 1.2x). Prints ratios against a baseline timed in the same
run: a plain ``lower().compile()`` of an MLP gradient (Python loop of LAYERS layers) on 8
simulated CPU devices.

- "compile with dump": what the view's compile pays on every layout (XLA's Shardy record);
- "explanations": the causes of every collective, worked out on first read (in-process
  Shardy, the dump read back, the join), which the view pays only when they are asked for.

    PYTHONPATH=src python benchmarks/why_cost.py [LAYERS [REPEATS]]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections import Counter
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax

jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from shardwidget.trace import hlo, why  # noqa: E402

REPEATS = 5


def stage(layers: int) -> tuple[Any, Any]:
    """A fresh traced stage of the gradient (nothing cached), and its mesh."""
    jax.clear_caches()
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def loss(ws: list[jax.Array], x: jax.Array) -> jax.Array:
        for w in ws:
            x = jnp.tanh(x @ w)
        return (x**2).mean()

    w = jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, P("x", "y")))
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=NamedSharding(mesh, P("y", None)))
    return jax.jit(jax.grad(loss)).trace([w] * layers, x), mesh


def main(layers: int) -> None:
    stage(layers)[0].lower().compile()  # warm the backend
    plain, dumped, explain = [], [], []
    for _ in range(REPEATS):
        st, mesh = stage(layers)
        t0 = time.perf_counter()
        st.lower().compile()
        plain.append(time.perf_counter() - t0)
        st, mesh = stage(layers)
        t0 = time.perf_counter()
        compiled, low, dump = why.compile_with_dump(st, mesh)
        dumped.append(time.perf_counter() - t0)
        txt = compiled.as_text()
        da = [d.id for d in mesh.devices.flat]
        coords = {int(d.id): (i // 4, i % 4) for i, d in enumerate(mesh.devices.flat)}
        colls = hlo.collectives(txt, da, coords, ("x", "y"), (2, 4))
        paths = [f"ws[{i}]" for i in range(layers)] + ["x"]
        t0 = time.perf_counter()
        out = why.lazily(colls, why.Explainer(low, dump, txt, in_paths=paths, out_paths=["out"]))
        causes = [c.cause for c in out]
        explain.append(time.perf_counter() - t0)
    p, d, e = (statistics.median(v) * 1e3 for v in (plain, dumped, explain))
    known = sum(c.known for c in causes)
    print(f"{layers}-layer gradient: {len(out)} collectives, {known} with a known cause")
    print("  checked:", Counter(c.checked[:44] for c in causes))
    print("  unknown:", Counter(c.reason[:70] for c in causes if not c.known).most_common(3))
    print(f"plain compile             {p:8.1f} ms")
    print(f"compile with Shardy dump  {d:8.1f} ms  ({d / p - 1:+.1%}: every layout pays this)")
    print(f"explanations (first read) {e:8.1f} ms  ({e / p:+.1%} of a compile, when asked for)")
    print(f"both                      {d + e:8.1f} ms  ({(d + e) / p - 1:+.1%})")


def fixes_cost() -> None:
    """Each fix's compile (view.fixes: Shardy with the input left open, then the view's own
    compile) against a plain compile of the same function and layout."""
    import shardwidget as sw

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def f(x: jax.Array, w: jax.Array) -> jax.Array:
        y = jnp.tanh(x @ w)
        return jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("y", None)))

    x = jax.device_put(jnp.ones((256, 512)), NamedSharding(mesh, P("x", None)))
    w = jax.device_put(jnp.ones((512, 512)), NamedSharding(mesh, P(None, "x")))
    ratios = []
    for _ in range(REPEATS):
        jax.clear_caches()
        view = sw.ShardView(f, x, w)
        fixes = view.fixes(0)
        jax.clear_caches()
        t0 = time.perf_counter()
        jax.jit(f).lower(x, w).compile()
        plain = (time.perf_counter() - t0) * 1e3
        ratios += [fx.compile_ms / plain for fx in fixes if fx.compile_ms]
    median = statistics.median(ratios)
    print(f"a fix (Shardy + the view's compile) / a plain compile: median {median:.2f}x")


if __name__ == "__main__":
    REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else REPEATS
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
    fixes_cost()
