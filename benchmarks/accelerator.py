"""A check of shardwidget on whatever accelerator JAX sees: one short script, not in CI.

    python benchmarks/accelerator.py [--gib 1.0] [--gemm 8192] [--on-cpu]

On CPU it says so and exits 0 (``--on-cpu`` runs every part anyway, small, to try the script).
On a GPU or TPU (about a minute on one GPU; well within five), each part prints one block:

1. updates: an array of ``--gib`` GiB float32 on all devices, viewed, then re-laid out onto
   specs with the same shard shape and onto a new one: each update's time against JAX's own
   ``device_put`` of the same move, and the compiles of each (jax.monitoring, named: statistics,
   the cost estimate's reshard, other);
2. statistics cost: the first view's statistics compile (count and XLA seconds), a second view
   of another array with the same shard shape (no compile), and one fused jitted pass of the
   same statistics for reference;
3. held device memory: ``bytes_in_use`` of device 0 before, with ten views, after six
   re-layouts and memory-kind changes, and after closing them (a view keeps no copy);
4. pinned_host: an array put in ``pinned_host`` (where the backend has it), its view's
   statistics against numpy's;
5. estimate vs measured: ``jnp.tanh(a @ b).sum()`` with bf16 ``--gemm``² operands; the
   function view's estimate on the preset of this device kind (h100, h200, b200, gb200, a100,
   tpu-v5p, tpu7x, …; else the locally measured one) against the median run time, and where
   its FLOPs came from (XLA's GPU cost analysis leaves cuBLAS gemms out);
6. first render: a function view's first render against ``jax.jit``'s first trace + compile +
   run of the same function, on operands of different shapes so that neither inherits the
   other's gemm autotuning;
7. GPU-compiled plan vs the real compile (a GPU only): ``shardwidget.gpu_mesh`` for 1 host of
   this machine's GPUs (the preset whose target config names this device kind), the plan of a
   sharded MLP step compiled by XLA's GPU compiler without the GPU (in the helper) against
   ``jax.jit(...).lower(...).compile()`` on these GPUs: collectives by kind and replica groups,
   memory (arguments, outputs, temporaries) within 5 %. ``--gpu-plan`` runs this part alone.

Targets (printed, never an exit status): re-layout onto a seen shard shape ≤ 1.5 × device_put
with no statistics compile; first render ≤ 1.5 × jax.jit's; estimate within 2 × measured.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PRESET_OF_KIND = (  # device_kind substring -> preset (the most specific first)
    ("GB200", "gb200"), ("B200", "b200"), ("H200", "h200"), ("H100", "h100"),
    ("A100", "a100"), ("TPU7x", "tpu7x"), ("TPU v6", "tpu-v6e"), ("TPU v5p", "tpu-v5p"),
    ("TPU v5", "tpu-v5e"), ("TPU v4", "tpu-v4"),
)  # fmt: skip


def _median_s(fn: Callable[[], Any], n: int = 5) -> float:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def _kinds(names: list[str]) -> str:
    stats = sum("shardwidget_statistics" in n for n in names)
    est = sum(n == "jit(<lambda>)" for n in names)
    other = len(names) - stats - est
    parts = [f"stats {stats}" if stats else "", f"estimate {est}" if est else "",
             f"other {other}" if other else ""]  # fmt: skip
    return " ".join(p for p in parts if p) or "none"


def _section(title: str, body: Callable[[], None]) -> None:
    print(f"\n== {title}")
    try:
        body()
    except Exception:  # one failing part must not hide the others
        print("FAILED:\n" + traceback.format_exc(limit=6))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.0, help="size of the re-laid-out array")
    ap.add_argument("--gemm", type=int, default=8192, help="side of the bf16 gemm operands")
    ap.add_argument("--on-cpu", action="store_true", help="run on CPU anyway (small sizes)")
    ap.add_argument("--gpu-plan", action="store_true", help="part 7 alone (a GPU only)")
    args = ap.parse_args(argv)

    import jax

    if args.gpu_plan:
        _section("7. GPU-compiled plan against the real compile", gpu_plan_vs_real)
        return 0

    devs = jax.devices()
    backend = jax.default_backend()
    if backend == "cpu" and not args.on_cpu:
        print(f"no accelerator: JAX {jax.__version__} sees {len(devs)} CPU device(s) only; "
              "run this on a GPU or TPU machine (or pass --on-cpu to try it here)")  # fmt: skip
        return 0
    if backend == "cpu":
        args.gib, args.gemm = min(args.gib, 1 / 64), min(args.gemm, 512)

    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT / "src"))  # the working tree
    from shardwidget import ShardView
    from shardwidget._jax import CompileCount
    from shardwidget.model import summary

    kind = devs[0].device_kind
    print(f"JAX {jax.__version__}, backend {backend}, {len(devs)} × {kind}")
    n = len(devs)
    mesh = jax.make_mesh((n,), ("x",), axis_types=(AxisType.Explicit,))
    rows = max(n, int(args.gib * (1 << 30) / 4 / 4096) // n * n)
    host = np.random.default_rng(0).standard_normal((rows, 4096), dtype=np.float32)
    x = jax.device_put(host, NamedSharding(mesh, P("x"))).block_until_ready()
    print(f"array float32[{rows}, 4096] ({host.nbytes / (1 << 30):.2f} GiB) on mesh x={n}")

    def updates() -> None:
        summary.clear_caches()
        with CompileCount() as c:
            t0 = time.perf_counter()
            v = ShardView(x)
            dt = time.perf_counter() - t0
        print(f"first view {dt * 1e3:.1f} ms, compiles {_kinds(c.names)} ({c.seconds:.2f} s XLA)")
        # same shard shape as P('x'): P('x', None); on one device also P() and P(None, 'x')
        moves = [["x", None], ["x"]] + ([[], [None, "x"]] if n == 1 else [[None, "x"], ["x"]])
        print(f"{'spec':>14} {'compiles':>22} {'view ms':>8} {'device_put ms':>14} {'ratio':>6}")
        for spec in moves:
            target = NamedSharding(mesh, P(*spec))
            base = _median_s(lambda t=target: jax.device_put(x, t).block_until_ready())  # type: ignore[misc]
            with CompileCount() as c:
                t0 = time.perf_counter()
                v.spec = spec
                v.summary  # noqa: B018 (statistics of the layout shown)
                dt = time.perf_counter() - t0
            print(f"{spec!s:>14} {_kinds(c.names):>22} {dt * 1e3:8.1f} {base * 1e3:14.2f} "
                  f"{dt / base:6.2f}")  # fmt: skip
        v.close()

    def stats_cost() -> None:
        summary.clear_caches()
        from shardwidget.model.layout import layout_of

        lay = layout_of(x)
        plan = summary.plan_for(lay, (0, 1), 8192, 0)
        with CompileCount() as c:
            t0 = time.perf_counter()
            summary.summarize(x, lay, plan)
            first = time.perf_counter() - t0
        y = (x * 2).block_until_ready()
        with CompileCount() as c2:
            t0 = time.perf_counter()
            summary.summarize(y, layout_of(y), plan)
            second = time.perf_counter() - t0
        fused = jax.jit(lambda a: jnp.stack([a.min(), a.max(), a.mean(), a.std()]))
        fused(x).block_until_ready()
        one = _median_s(lambda: fused(x).block_until_ready())
        print(f"statistics, first: {first * 1e3:.1f} ms, {c.n} compile(s), {c.seconds:.3f} s XLA; "
              f"second array, same shard shape: {second * 1e3:.1f} ms, {c2.n} compile(s); "
              f"one fused jitted pass: {one * 1e3:.2f} ms")  # fmt: skip

    def held_memory() -> None:
        def in_use() -> str:
            st = devs[0].memory_stats() or {}
            b = st.get("bytes_in_use")
            return "n/a" if b is None else f"{b / (1 << 20):.1f} MiB"

        kinds = {m.kind for m in devs[0].addressable_memories()}
        before = in_use()
        views = [ShardView(x) for _ in range(10)]
        during = in_use()
        six = [(["x", None], None), (["x"], None), (["x"], "pinned_host"), (["x"], "device"),
               (["x", None], "pinned_host"), (["x"], "device")]  # fmt: skip
        for spec, mk in six:
            if mk is not None and mk not in kinds:
                continue
            views[0].set_layout(spec=spec, **({"memory_kind": mk} if mk else {}))
        moved = in_use()
        for v in views:
            v.close()
        del views
        print(f"bytes_in_use of device 0: before {before}, ten views {during}, after "
              f"re-layouts and memory kinds {moved}, closed {in_use()}")  # fmt: skip

    def pinned_host() -> None:
        if "pinned_host" not in {m.kind for m in devs[0].addressable_memories()}:
            print("this backend has no pinned_host memory")
            return
        small = host[: max(n, 1024 // n * n)]
        p = jax.device_put(small, NamedSharding(mesh, P("x"), memory_kind="pinned_host"))
        v = ShardView(p)
        s = v.summary
        worst = 0.0
        for blk, row in zip(v.layout.blocks, s.stats, strict=True):
            part = small[blk.slices]
            want = np.array([part.min(), part.max(), part.mean(), part.std()])
            worst = max(worst, float(np.max(np.abs(np.asarray(row)[:4] - want))))
        print(
            f"pinned_host view: status {s.status} {s.message}; largest |stat - numpy| {worst:.2e}"
        )
        v.close()

    def estimate() -> None:
        g = args.gemm
        ka, kb = jax.random.split(jax.random.key(0))
        a = jax.random.normal(ka, (g, g), jnp.bfloat16)
        b = jax.random.normal(kb, (g, g), jnp.bfloat16)

        def f(a: Any, b: Any) -> Any:
            return jnp.tanh(a @ b).sum()

        jf = jax.jit(f)
        jf(a, b).block_until_ready()
        measured = _median_s(lambda: jf(a, b).block_until_ready(), 20)
        preset = next((p for k, p in PRESET_OF_KIND if k.lower() in kind.lower()), "local")
        v = ShardView(f, a, b)
        est = v.trace.estimate(preset)
        print(f"tanh(a @ b).sum(), bf16 {g}x{g}: measured {measured * 1e3:.3f} ms; estimate on "
              f"{preset} {est.total_s * 1e3:.3f} ms ({est.bound}-bound; FLOPs {est.flops:.3g} "
              f"from {est.flops_source or 'cost_analysis'}); estimate / measured "
              f"{est.total_s / measured:.2f} (target within 2x)")  # fmt: skip
        v.close()

    def first_render() -> None:
        g = args.gemm // 2
        key = jax.random.key(1)

        def f(a: Any, b: Any) -> Any:
            return jnp.tanh(a @ b)

        # different shapes: neither inherits the other's gemm autotuning
        a1 = jax.random.normal(key, (g, g + 128), jnp.bfloat16)
        b1 = jax.random.normal(key, (g + 128, g), jnp.bfloat16)
        a2 = jax.random.normal(key, (g + 128, g), jnp.bfloat16)
        b2 = jax.random.normal(key, (g, g + 128), jnp.bfloat16)
        jax.block_until_ready((a1, b1, a2, b2))
        t0 = time.perf_counter()
        jax.jit(f)(a1, b1).block_until_ready()
        jit_s = time.perf_counter() - t0
        with CompileCount() as c:
            t0 = time.perf_counter()
            v = ShardView(f, a2, b2)
            view_s = time.perf_counter() - t0
        print(f"first render: view {view_s * 1e3:.0f} ms ({c.n} compiles: {_kinds(c.names)}), "
              f"jax.jit trace+compile+run {jit_s * 1e3:.0f} ms, ratio {view_s / jit_s:.2f} "
              "(target ≤ 1.5)")  # fmt: skip
        v.close()

    _section("1. updates (re-layouts) against device_put", updates)
    _section("2. statistics cost", stats_cost)
    _section("3. held device memory", held_memory)
    _section("4. pinned_host", pinned_host)
    _section("5. estimate against the measured run time", estimate)
    _section("6. a function view's first render against jax.jit", first_render)
    _section("7. GPU-compiled plan against the real compile", gpu_plan_vs_real)
    return 0


_COLL = re.compile(
    r"= [^=\n]*? (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\("
    r"[^\n]*?(replica_groups=(?:mesh\[[^\]]*\] \{[^}]*\}|\S+)|source_target_pairs=\S+)"
)


def _gpu_step(w: Any, x: Any) -> Any:
    """A bf16 layer, its gradient and an SGD update (all-gather, reduce-scatter, all-reduce
    where the GPUs are several)."""
    import jax
    import jax.numpy as jnp

    g = jax.grad(lambda w: jnp.tanh(x @ w).sum())(w)
    return w - 0.1 * g, g.sum()


def _preset_of(kind: str) -> str | None:
    """The gpu_mesh preset whose target config names this device kind."""
    from shardwidget.plan import gpu

    for name, p in gpu.PRESETS.items():
        if f'device_description_str: "{kind}"' in gpu.target_config(p):
            return name
    return None


def gpu_plan_vs_real() -> None:
    """Part 7 (see the module's docstring)."""
    import collections

    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT / "src"))
    from shardwidget.plan import compilers, gpu, plan

    devs = jax.devices()
    if devs[0].platform != "gpu":
        print(f"skipped: no GPU here (JAX sees {devs[0].platform})")
        return
    kind, n = devs[0].device_kind, len(devs)
    name = _preset_of(kind)
    if name is None:
        print(f"skipped: no gpu_mesh preset has the target config of {kind!r}")
        return
    print(f"{n} × {kind}: preset {name}; GPU compiler's Python {compilers.python_for('gpu')}")
    shapes = [jax.ShapeDtypeStruct((4096, 4096), jnp.bfloat16),
              jax.ShapeDtypeStruct((1024 * n, 4096), jnp.bfloat16)]  # fmt: skip
    specs = [P(None, "x"), P("x", None)]
    planned = gpu.gpu_mesh(name, (n,), ("x",), gpus_per_host=n)
    t0 = time.perf_counter()
    pl = plan(_gpu_step, *shapes, mesh=planned, in_specs=specs)
    plan_s = time.perf_counter() - t0
    real_mesh = jax.make_mesh((n,), ("x",), axis_types=(AxisType.Auto,))
    sds = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(real_mesh, s))
           for a, s in zip(shapes, specs, strict=True)]  # fmt: skip
    t0 = time.perf_counter()
    exe = jax.jit(_gpu_step).lower(*sds).compile()
    real_s = time.perf_counter() - t0
    m = exe.memory_analysis()
    real = {"arguments": m.argument_size_in_bytes, "outputs": m.output_size_in_bytes,
            "temporaries": m.temp_size_in_bytes}  # fmt: skip
    got = collections.Counter(_COLL.findall(pl.hlo_text))
    want = collections.Counter(_COLL.findall(exe.as_text()))
    print(f"plan {plan_s:.2f} s (helper included), real compile {real_s:.2f} s")
    print(f"collectives (kind, groups): plan {dict(got)}")
    print(f"                            real {dict(want)}  same: {got == want}")
    for k, v in real.items():
        mine = pl.memory[k]
        off = abs(mine - v) / v if v else float(mine != 0)
        print(f"{k:>12}: plan {mine:,} B, real {v:,} B, off {off:.1%} "
              f"({'within' if off <= 0.05 else 'PAST'} 5 %)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
