"""How long a plan takes: a small transformer's training step planned for N devices.

    python benchmarks/plan.py [--devices 256,1024] [--repeat 3] [--check]

This process (the kernel: whatever devices JAX has here) plans the step of
``benchmarks/_transformer.py`` on an AbstractMesh of N devices, FSDP (N/8) × TP 8:

- cold:     the first plan of that size: the helper's start (JAX and N devices), the lowering
            here, the compile there;
- start:    the helper's start alone;
- warm:     the median of REPEAT more plans (the helper reused);
- compile:  the same step lowered and compiled (``jax.jit(step).lower(...).compile()``) in a
            process that already has N devices (its own start not counted), median of REPEAT;
- overhead: warm / compile, side by side in this run;
- view:     ``ShardView(step, params, tokens, mesh=AbstractMesh(...), in_specs=...)``, the
            function view of the same plan (warm helper: its compile, the view's layouts and
            payload), median of REPEAT, against warm.

Targets: warm <= 3 s at 256 and <= 6 s at 1,024 devices; cold - start <= warm + 1 s (a cold
helper adds only its start); overhead <= 1.5. ``--check`` exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]
WARM_S = {256: 3.0, 1024: 6.0}
OVERHEAD = 1.5

REAL = """
import json, statistics, sys, time
import jax
from jax.sharding import AxisType, NamedSharding
import _transformer as T
n, repeat = int(sys.argv[1]), int(sys.argv[2])
mesh = jax.make_mesh((n // 8, 8), ("fsdp", "tp"), axis_types=(AxisType.Auto,) * 2)
params, tokens = T.shapes(n)
pspec, tspec = T.specs("fsdp", "tp")
sds = lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s))
args = (jax.tree.map(sds, params, pspec), sds(tokens, tspec))
times = []
for _ in range(repeat + 1):
    t0 = time.perf_counter()
    jax.jit(lambda p, t: T.step(p, t)).lower(*args).compile()
    times.append(time.perf_counter() - t0)
print(json.dumps({"compile_s": statistics.median(times[1:]), "first_s": times[0]}))
"""


def real_compile(n: int, repeat: int) -> dict[str, float]:
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={n}",
           "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(ROOT / "benchmarks")}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", REAL, str(n), str(repeat)], env=env,
                         capture_output=True, text=True, check=True, timeout=900)  # fmt: skip
    res: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return res


def bench(n: int, repeat: int) -> dict[str, float]:
    from jax.sharding import AbstractMesh

    import _transformer as T
    from shardwidget import ShardView
    from shardwidget.plan import helper, plan

    am = AbstractMesh((n // 8, 8), ("fsdp", "tp"))
    params, tokens = T.shapes(n)
    specs = T.specs("fsdp", "tp")
    helper.stop_all()
    t0 = time.perf_counter()
    plan(lambda p, t: T.step(p, t), params, tokens, mesh=am, in_specs=specs)
    cold = time.perf_counter() - t0
    start = helper.helper(n).started_s
    warm = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        pl = plan(lambda p, t: T.step(p, t), params, tokens, mesh=am, in_specs=specs)
        warm.append(time.perf_counter() - t0)
    view_s = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        view = ShardView(lambda p, t: T.step(p, t), params, tokens, mesh=am, in_specs=tuple(specs))
        view_s.append(time.perf_counter() - t0)
        assert view.error == "", view.error
        view.close()
    real = real_compile(n, repeat)
    w = statistics.median(warm)
    return {"devices": n, "cold_s": cold, "start_s": start, "warm_s": w,
            "compile_s": real["compile_s"], "overhead": w / real["compile_s"],
            "collectives": len(pl.collectives), "view_s": statistics.median(view_s)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="256,1024")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    missed = []
    for n in (int(x) for x in a.devices.split(",")):
        r = bench(n, a.repeat)
        print(f"{n:>5} devices: cold {r['cold_s']:.2f} s (helper start {r['start_s']:.2f} s), "
              f"warm {r['warm_s']:.2f} s, compile in a {n}-device process {r['compile_s']:.2f} s, "
              f"{r['collectives']} collectives")  # fmt: skip
        print(f"ratios {n}: warm/compile {r['overhead']:.2f} (target <= {OVERHEAD}); "
              f"(cold-start)/warm {(r['cold_s'] - r['start_s']) / r['warm_s']:.2f}")  # fmt: skip
        print(f"function view {n}: {r['view_s']:.2f} s, view/warm plan "
              f"{r['view_s'] / r['warm_s']:.2f}")  # fmt: skip
        if n in WARM_S and r["warm_s"] > WARM_S[n]:
            missed.append(f"warm {r['warm_s']:.2f} s > {WARM_S[n]} s at {n}")
        if r["overhead"] > OVERHEAD:
            missed.append(f"overhead {r['overhead']:.2f} > {OVERHEAD} at {n}")
        if r["cold_s"] - r["start_s"] > r["warm_s"] + 1.0:
            missed.append(f"cold adds more than the start at {n}")
    for m in missed:
        print("MISSED:", m)
    if a.check and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
