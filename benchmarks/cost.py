"""How long the cost of a re-layout takes: the transfer plan, and the reshard compile (cached).

    python benchmarks/cost.py [--devices 4096] [--repeat N] [--size 4096] [--check]

In a subprocess with DEVICES simulated CPU devices (fixed when JAX starts), a SIZE×SIZE float32
layout on a near-square mesh (4096 → 64×64) moves between specs. Medians of N warm runs of:

- geometry:  ``layout_of_sharding`` of the new sharding, uncached: the geometry a view computes
             for every layout anyway, the baseline (in ms, and 1.00);
- plan:      ``cost.transfer.plan(old, new)`` on the two layouts: received, sent, pairs;
- 1st comp:  the first reshard compile of the pair in the process (``compile_reshard``);
- compile:   the same with our cache cleared (JAX's own caches then answer part of it);
- cached:    the same pair again (our cache per pair of shardings).

Layout pairs: P('x','y') → P('y','x') (a transpose of the mesh), P('x','y') → P('x',None) (an
all-gather over y), P('x',None) → P(None,'x') (all-to-all over x). Targets: plan ≤ 50 ms at
every pair; cached ≤ 0.1 × 1st comp. ``--check`` exits 1 when one is missed. Prints one "ratios"
line per pair, against geometry.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLAN_MS, CACHED_RATIO = 50.0, 0.1


def _median_ms(
    fn: Callable[[], Any], repeat: int, before: Callable[[], Any] | None = None
) -> float:
    samples = []
    for i in range(repeat + 1):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        if i:  # the first run warms up
            samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def worker(n: int, size: int, repeat: int) -> dict[str, Any]:
    import jax

    jax.config.update("jax_num_cpu_devices", n)
    jax.config.update("jax_platforms", "cpu")
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT / "src"))

    a = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    mesh = jax.make_mesh((a, n // a), ("x", "y"))
    pairs = {
        "transpose": (P("x", "y"), P("y", "x")),
        "all-gather y": (P("x", "y"), P("x", None)),
        "all-to-all x": (P("x", None), P(None, "x")),
    }
    rows = [
        _measure(name, NamedSharding(mesh, sa), NamedSharding(mesh, sb), (size, size), repeat)
        for name, (sa, sb) in pairs.items()
    ]
    return {"devices": n, "rows": rows}


def _measure(name: str, old: Any, new: Any, shape: tuple[int, int], repeat: int) -> dict[str, Any]:
    import numpy as np

    from shardwidget.cost import reshard, transfer
    from shardwidget.model import layout as layout_mod

    dt = np.dtype(np.float32)

    def clear() -> None:
        layout_mod.record_of.cache_clear()  # the sharding record (was the geometry cache)
        layout_mod.layout_of_sharding.cache_clear()

    geometry = _median_ms(lambda: layout_mod.layout_of_sharding(new, shape, dt), repeat, clear)
    lo = layout_mod.layout_of_sharding(old, shape, dt)
    ln = layout_mod.layout_of_sharding(new, shape, dt)
    plan = _median_ms(lambda: transfer.plan(lo, ln), repeat)
    p = transfer.plan(lo, ln)

    def comp() -> Any:
        return reshard.compile_reshard(old, new, shape, np.dtype(np.float32))

    t0 = time.perf_counter()
    comp()  # the first compile of this pair in the process
    first = (time.perf_counter() - t0) * 1e3
    cleared = _median_ms(comp, max(1, repeat // 2), reshard.clear_cache)
    comp()
    cached = _median_ms(comp, repeat)
    return {
        "pair": name,
        "geometry": geometry,
        "plan": plan,
        "first": first,
        "compile": cleared,
        "cached": cached,
        "pairs": len(p.pairs),
        "total": p.total,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--devices", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.devices, args.size, args.repeat)))
        return
    cmd = [sys.executable, __file__, "--worker", "--devices", str(args.devices)]
    cmd += ["--size", str(args.size), "--repeat", str(args.repeat)]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    n, ok = r["devices"], True
    print(f"{n} devices, {args.size}x{args.size} float32, medians of {args.repeat} (ms)")
    head = ["geometry", "plan", "1st comp", "compile", "cached", "pairs"]
    print(f"{'pair':<14}" + "".join(f"{h:>10}" for h in head))
    for row in r["rows"]:
        print(
            f"{row['pair']:<14}{row['geometry']:>10.2f}{row['plan']:>10.2f}{row['first']:>10.1f}"
            f"{row['compile']:>10.1f}{row['cached']:>10.4f}{row['pairs']:>10}"
        )
    for row in r["rows"]:
        g = row["geometry"]
        cached_ratio = row["cached"] / row["first"]
        good = row["plan"] <= PLAN_MS and cached_ratio <= CACHED_RATIO
        ok = ok and good
        print(
            f"ratios {n} {row['pair']}: plan/geometry {row['plan'] / g:.2f}, "
            f"cached/first compile {cached_ratio:.5f}; plan {row['plan']:.1f} ms "
            f"(target <= {PLAN_MS:.0f}) {'ok' if good else 'MISSED'}"
        )
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
