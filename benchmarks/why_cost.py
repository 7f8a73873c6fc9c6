"""What explaining the collectives costs beside the view's compile (issue 31: <= 15 %), and a
fix's compile beside a plain one (<= 1.2x). Prints ratios against a baseline timed in the same
run: a plain ``lowered.compile()`` of a 24-layer MLP gradient on 8 simulated CPU devices.

    PYTHONPATH=src python benchmarks/why_cost.py
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from shardwidget.trace import hlo, why  # noqa: E402

LAYERS, REPEATS = 24, 5


def lowered(layers: int) -> tuple[jax.stages.Lowered, jax.sharding.Mesh]:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def loss(ws: list[jax.Array], x: jax.Array) -> jax.Array:
        for w in ws:
            x = jnp.tanh(x @ w)
        return (x**2).mean()

    ws = [jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, P("x", "y")))] * layers
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=NamedSharding(mesh, P("y", None)))
    return jax.jit(jax.grad(loss)).trace(ws, x).lower(), mesh


def main() -> None:
    low, mesh = lowered(LAYERS)
    low.compile()  # warm the backend
    plain, with_dump, explain = [], [], []
    for _ in range(REPEATS):
        jax.clear_caches()
        low, mesh = lowered(LAYERS)
        t0 = time.perf_counter()
        low.compile()
        plain.append(time.perf_counter() - t0)
        jax.clear_caches()
        low, mesh = lowered(LAYERS)
        t0 = time.perf_counter()
        compiled, dump = why.compile_with_dump(low)
        with_dump.append(time.perf_counter() - t0)
        txt = compiled.as_text()
        da = [d.id for d in mesh.devices.flat]
        coords = {int(d.id): (i // 4, i % 4) for i, d in enumerate(mesh.devices.flat)}
        colls = hlo.collectives(txt, da, coords, ("x", "y"), (2, 4))
        t0 = time.perf_counter()
        out, _ = why.explain(colls, low.as_text(debug_info=True), dump, txt, [f"ws[{i}]" for i in range(LAYERS)] + ["x"], ["out"])
        explain.append(time.perf_counter() - t0)
    p, d, e = (statistics.median(v) * 1e3 for v in (plain, with_dump, explain))
    known = sum(c.cause.known for c in out)
    from collections import Counter

    print(Counter(c.cause.reason[:60] for c in out if not c.cause.known).most_common(3))
    print(f"{LAYERS}-layer gradient, {len(out)} collectives, {known} with a known cause")
    print(f"plain compile            {p:8.1f} ms")
    print(f"compile with Shardy dump {d:8.1f} ms  ({d / p:.2f}x)")
    print(f"explanations             {e:8.1f} ms")
    print(f"dump + explanations      {d + e - p:8.1f} ms over the compile = {(d + e) / p - 1:+.1%}")


if __name__ == "__main__":
    main()
