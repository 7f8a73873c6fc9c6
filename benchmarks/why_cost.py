"""What explaining the collectives costs beside the view's compile (issue 31: <= 15 %), and a
fix's compile beside a plain one (<= 1.2x). Prints ratios against a baseline timed in the same
run: a plain ``lower().compile()`` of an MLP gradient (Python loop of LAYERS layers) on 8
simulated CPU devices.

- "compile with dump": what the view's compile pays on every layout (XLA's Shardy record);
- "attribution": each collective's leaves by dataflow through the compiled HLO (in the
  kernel's thread, after every compile: hlo/flow.py);
- "explanations": the causes of every collective (in-process Shardy, the dump read back, the
  join), timed in the kernel's thread and as the view runs them: in a background thread
  started right after the compile (the kernel's thread waits only to start it; a first read
  before they are ready waits for the rest). Figures: median and min of REPEATS (the min is
  the steadier on a shared machine).

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

from shardwidget import _jax  # noqa: E402
from shardwidget.hlo import collectives as hlo  # noqa: E402
from shardwidget.hlo import flow as hlo_flow  # noqa: E402
from shardwidget.why import explain as why  # noqa: E402

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
    plain, dumped, explain, blocked, ready, attrib = [], [], [], [], [], []
    plain_cpu: list[float] = []  # this process's CPU time (what other processes do aside)
    dumped_cpu: list[float] = []
    explain_cpu: list[float] = []
    alone: list[float] = []  # a piece of Python work in the kernel's thread, alone
    busy: list[float] = []  # the same while the explanations run in the background
    for _ in range(REPEATS):
        st, mesh = stage(layers)
        t0, c0 = time.perf_counter(), time.process_time()
        st.lower().compile()
        plain.append(time.perf_counter() - t0)
        plain_cpu.append(time.process_time() - c0)
        st, mesh = stage(layers)
        t0, c0 = time.perf_counter(), time.process_time()
        compiled, low, dump = why.compile_with_dump(st, mesh)
        dumped.append(time.perf_counter() - t0)
        dumped_cpu.append(time.process_time() - c0)
        txt = compiled.as_text()
        da = [d.id for d in mesh.devices.flat]
        coords = {int(d.id): (i // 4, i % 4) for i, d in enumerate(mesh.devices.flat)}
        colls = hlo.collectives(txt, da, coords, ("x", "y"), (2, 4))
        paths = [f"ws[{i}]" for i in range(layers)] + ["x"]
        kept = [k is not None for k in jax.tree.leaves(compiled.input_shardings[0])]
        t0 = time.perf_counter()
        colls = hlo_flow.attribute(colls, txt, kept, paths, ["out"])
        attrib.append(time.perf_counter() - t0)
        # in the kernel's thread, as when the view starts no thread (the work itself)
        t0, c0 = time.perf_counter(), time.process_time()
        ex = why.Explainer(low, dump, txt, in_paths=paths, out_paths=["out"])
        out = why.lazily(colls, ex, background=False)
        causes = [c.cause for c in out]
        explain.append(time.perf_counter() - t0)
        explain_cpu.append(time.process_time() - c0)
        # as the view does: started in the background right after the compile
        ex = why.Explainer(low, dump, txt, in_paths=paths, out_paths=["out"])
        t0 = time.perf_counter()
        out = why.lazily(colls, ex)
        blocked.append(time.perf_counter() - t0)  # what the kernel's thread waited for
        if not _jax.shardy_beside_compiles():  # no background thread on this JAX: on first read
            _ = [c.cause for c in out]
        while not ex.explain_ms:  # the kernel's thread meanwhile: the view's own Python work
            t1 = time.perf_counter()
            hlo.collectives(txt, da, coords, ("x", "y"), (2, 4))
            (busy if time.perf_counter() - t0 > why.START_DELAY_S else alone).append(
                time.perf_counter() - t1
            )
        ready.append(time.perf_counter() - t0)
    p, d, e, b, r, a = (
        statistics.median(v) * 1e3 for v in (plain, dumped, explain, blocked, ready, attrib)
    )
    pm, dm, em, am = (min(v) * 1e3 for v in (plain, dumped, explain, attrib))
    known = sum(c.known for c in causes)
    print(f"{layers}-layer gradient: {len(out)} collectives, {known} with a known cause")
    print("  checked:", Counter(c.checked[:44] for c in causes))
    print("  unknown:", Counter(c.reason[:70] for c in causes if not c.known).most_common(3))
    print("                            median      (min: less noise on a shared machine)")
    print(f"plain compile             {p:8.1f} ms  ({pm:6.1f} ms)")
    print(
        f"compile with Shardy dump  {d:8.1f} ms  ({dm:6.1f} ms)  {d / p - 1:+.1%} "
        f"({dm / pm - 1:+.1%}): every layout pays this"
    )
    pc, dc, ec = (statistics.median(v) * 1e3 for v in (plain_cpu, dumped_cpu, explain_cpu))
    print(
        f"  in CPU time of this process: {pc:.1f} ms, with the dump {dc:.1f} ms: "
        f"{dc / pc - 1:+.1%}; the explanations {ec:.1f} ms: {ec / pc:.1%} of a compile"
    )
    print(
        f"attribution (dataflow)    {a:8.1f} ms  ({am:6.1f} ms)  {a / p:.1%} of a compile: "
        "every layout pays this, in the kernel's thread"
    )
    print(
        f"explanations, in-thread   {e:8.1f} ms  ({em:6.1f} ms)  {e / p:.1%} of a compile "
        f"({em / pm:.1%}): what a synchronous first read costs"
    )
    print(
        f"explanations, background: the kernel's thread waits {b:.1f} ms to start them "
        f"({b / p:.1%}); ready {r:.1f} ms after the compile"
    )
    if alone and busy:
        slow = statistics.median(busy) / statistics.median(alone) - 1
        print(
            f"  the kernel's thread's own Python work while they run: {slow:+.0%} slower "
            f"(after the first {why.START_DELAY_S * 1e3:.0f} ms, which they leave free)"
        )
    print(
        f"what the user waits for   {d + a + b:8.1f} ms  {(d + a + b) / p - 1:+.1%} "
        f"(min {(dm + am + min(blocked) * 1e3) / pm - 1:+.1%}) (target <= +15 %)"
    )


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
