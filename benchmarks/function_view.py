"""How long a function view takes to show a new layout, against compiling and running f alone.

    python benchmarks/function_view.py [--devices 8] [--repeat N] [--size 1024] [--check]

On that many simulated CPU devices, f(a, b) = a @ b with a SIZE×SIZE and b SIZE×(SIZE/2)
float32 is viewed on a near-square mesh (8 → 2×4, Auto axes), and its in_specs cycle through
three layouts (a by rows, b by columns; the same with the axes swapped; a contraction over x,
which all-reduces). Each sample moves to the next layout:

- f:     ``jax.jit(f, in_shardings=...)`` lowered, compiled and run on the layout's inputs
         (``device_put`` of a and b included, as the view places them too), the baseline;
- view:  ``view.in_specs = [...]``: validation, compile, run, the synced payload and per-shard
         statistics of every input and output leaf, i.e. one whole function-view update.

Cold: a layout never seen. The baseline jits a fresh function object (no trace or compile cache
of JAX applies); the view's compile cache and every per-layout cache of shardwidget (layout
geometry, compiled statistics) are cleared first. What a view computes once from the user's
own arguments (the source tiles of its inputs) is kept: that is not per layout. Warm: layouts
seen before; the baseline calls its compiled executables, the view finds its compile and the
layout's statistics cached (host data: it keeps no device arrays, so it does not run f
again). Medians over interleaved rounds as in benchmarks/update.py.

Target: view ≤ 1.5 × f, cold and warm. The script prints the table and one "ratios" line; with
``--check`` it exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from update import Step, _medians_ms, mesh_shape  # the sibling benchmark

ROOT = Path(__file__).resolve().parents[1]
FACTOR = 1.5
# Auto axes, and XLA picks the matmul's output sharding
AUTO = {"axis_types": ["auto", "auto"], "out_specs": [None]}
LAYOUTS = [
    [["x", None], [None, "y"]],
    [["y", None], [None, "x"]],
    [[None, "x"], ["x", "y"]],
]


def worker(n_devices: int, size: int, repeat: int) -> dict[str, Any]:
    import jax

    jax.config.update("jax_num_cpu_devices", n_devices)  # before anything starts the backend
    jax.config.update("jax_platforms", "cpu")
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT / "src"))  # benchmark the working tree
    from shardwidget import ShardView
    from shardwidget.model import layout, summary

    shape = mesh_shape(n_devices)
    mesh = jax.make_mesh(shape, ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    rng = np.random.default_rng(0)
    a = jax.device_put(
        rng.standard_normal((size, size), dtype=np.float32), NamedSharding(mesh, P("x", "y"))
    )
    b = jax.device_put(rng.standard_normal((size, size // 2), dtype=np.float32))

    def f(a: Any, b: Any) -> Any:
        return a @ b

    def shardings(lay: list[list[str | None]]) -> tuple[Any, ...]:
        return tuple(NamedSharding(mesh, P(*s)) for s in lay)

    held: list[Any] = []  # each result lives until just before the next run, as in a view

    def run_f(compiled: Any, sh: tuple[Any, ...]) -> None:
        xa, xb = jax.device_put(a, sh[0]), jax.device_put(b, sh[1])
        held.append(jax.block_until_ready(compiled(xa, xb)))
        held.append((xa, xb))

    def f_compile(sh: tuple[Any, ...]) -> Any:
        def fresh(a: Any, b: Any) -> Any:  # a new function object: nothing cached by JAX
            return f(a, b)

        structs = [
            jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s)
            for x, s in zip((a, b), sh, strict=True)
        ]
        return jax.jit(fresh, in_shardings=sh).lower(*structs).compile()

    def make_view() -> Any:
        return ShardView(f, a, b, mesh_shape=list(shape), axis_names=["x", "y"], **AUTO)

    views = {"cold": make_view(), "warm": make_view()}

    def cycle_f(cold: bool) -> Step:
        lays = itertools.cycle(LAYOUTS)
        warm = {json.dumps(lay): f_compile(shardings(lay)) for lay in LAYOUTS}

        def step() -> None:
            lay = next(lays)
            sh = shardings(lay)
            run_f(f_compile(sh) if cold else warm[json.dumps(lay)], sh)

        return (f"f_{'cold' if cold else 'warm'}", step, held.clear)

    def cycle_view(cold: bool) -> Step:
        lays = itertools.cycle(LAYOUTS)
        view = views["cold" if cold else "warm"]
        for lay in LAYOUTS:  # every layout seen once (what the warm runs rely on)
            view.in_specs = lay

        def clear() -> None:
            if cold:
                view._traced._cache.clear()
                summary.clear_caches()
                layout.layout_of_sharding.cache_clear()
                layout.record_of.cache_clear()  # the sharding record (was the geometry cache)

        def step() -> None:
            view.in_specs = next(lays)

        return (f"view_{'cold' if cold else 'warm'}", step, clear)

    res: dict[str, Any] = {"devices": n_devices, "mesh": list(shape), "size": size}
    # Cold and warm apart: clearing the caches for one would make the other cold too.
    res.update(_medians_ms([cycle_f(True), cycle_view(True)], repeat))
    res.update(_medians_ms([cycle_f(False), cycle_view(False)], repeat))
    for v in views.values():
        st = v._trace_stats
        ready = [s["status"] for s in st["inputs"] + st["outputs"]]
        assert ready == ["ready"] * 3, st
    return res


def report(results: list[dict[str, Any]], repeat: int) -> bool:
    size = results[0]["size"]
    print(
        f"Function view update, f = a @ b, {size}x{size} @ {size}x{size // 2} float32, "
        f"three in_specs in turn, median of {repeat} runs, ms"
    )
    head = f"{'devices':>7} {'mesh':>6} {'layout':>6} {'f':>8} {'view':>8} {'view/f':>7}"
    print(head)
    print("-" * len(head))
    all_ok = True
    for r in results:
        ok, ratios = True, []
        mesh = "x".join(map(str, r["mesh"]))
        for kind in ("cold", "warm"):
            f, v = r[f"f_{kind}"], r[f"view_{kind}"]
            ok &= v <= FACTOR * f
            ratios.append(f"{kind} {v / f:.2f}")
            print(f"{r['devices']:>7} {mesh:>6} {kind:>6} {f:8.1f} {v:8.1f} {v / f:7.2f}")
        print()
        print(
            f"ratios {r['devices']:>4} devices: view/f {', '.join(ratios)} "
            f"(≤ {FACTOR:g}×: {'ok' if ok else 'MISSED'})"
        )
        all_ok &= ok
    return all_ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=8, help="simulated CPU devices")
    ap.add_argument("--repeat", type=int, default=12, help="timed runs per measurement")
    ap.add_argument("--size", type=int, default=1024, help="a is SIZE x SIZE, b SIZE x SIZE/2")
    ap.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = ap.parse_args(argv)
    a, b = mesh_shape(args.devices)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.size % a or args.size % b or (args.size // 2) % b:
        ap.error(f"--size {args.size} does not fit the {a}x{b} mesh of {args.devices} devices")
    t0 = time.perf_counter()
    ok = report([worker(args.devices, args.size, args.repeat)], args.repeat)
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
