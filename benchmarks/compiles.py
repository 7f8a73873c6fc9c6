"""What an update compiles, counted with jax.monitoring, beside its time against JAX's own work.

    python benchmarks/compiles.py [--devices 8] [--size 1024] [--repeat 5] [--device-stats]
                                  [--check]

Every XLA compile is counted from JAX's own monitoring event (``_jax.CompileCount``: the
backend compile duration event, once per compile), and named: ``stats`` the statistics program
(``jit(shardwidget_statistics)``), ``estimate`` a re-layout's cost estimate (the reshard
compiled for its collectives: only when asked for, ``cost_open`` or ``view.transfer``'s
collectives read), ``f`` the function's own programs, ``other`` anything else.

- summaries: ``model.summary.summarize`` of one array laid out P('a'), P('b'), P('c') on a
  2 × 2 × 2 mesh (one shard shape): statistics compiles per layout (issue 29: 1, 1, 1 before,
  1, 0, 0 now);
- array view: a view of that array re-laid out P('a') → P('b') → P('c') → P('a'): compiles per
  update, and the update's time against ``jax.device_put`` of the same move (which compiles
  nothing); then with its re-layout section open (``cost_open``): the reshard compiled once per
  pair of layouts, none for a pair seen before;
- function view: f(a, b) = tanh(a @ b) on a 2 × 4 mesh (Auto axes), in_specs in turn, each
  update against a view of the same f with ``stats=False`` (what jax.jit compiles for it) and
  against ``jax.jit`` of a fresh f lowered, compiled and run (its trace + compile + run): the
  compiles of each, and view / jit times.

``--device-stats`` computes every statistic on the devices, as on an accelerator (on CPU the
function view otherwise reads its outputs' shards in place with numpy and compiles nothing).

Targets (``--check`` exits 1 when missed): an array re-layout onto a shard shape seen before
compiles nothing of ours (no statistics program, no reshard unless its cost is asked for);
with the cost open, a pair of layouts seen before compiles no reshard; a function-view update
compiles what the view without statistics compiles, with no statistics compile once its shard
shapes were seen; the function view with statistics stays ≤ 1.5 × jax.jit's trace + compile +
run (cold: layouts never seen by either; the median over the layouts, each timed once).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FACTOR = 1.5
LAYOUTS = [
    [["x", None], [None, "y"]],
    [["y", None], [None, "x"]],
    [[None, "x"], ["x", "y"]],
    [["x", "y"], ["y", None]],
]


def _kinds(names: list[str]) -> dict[str, int]:
    out = {"stats": 0, "estimate": 0, "f": 0, "other": 0}
    for n in names:
        if "shardwidget_statistics" in n:
            out["stats"] += 1
        elif n == "jit(<lambda>)":
            out["estimate"] += 1
        elif "fresh" in n or "_named" in n or n.startswith("jit(f"):
            out["f"] += 1
        else:
            out["other"] += 1
    return out


def _fmt(k: dict[str, int]) -> str:
    return " ".join(f"{name} {n}" for name, n in k.items() if n) or "none"


def run(n_devices: int, size: int, repeat: int, device_stats: bool) -> bool:
    import jax

    jax.config.update("jax_num_cpu_devices", n_devices)
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT / "src"))  # benchmark the working tree
    from shardwidget import ShardView
    from shardwidget._jax import CompileCount
    from shardwidget.model import summary
    from shardwidget.model.layout import layout_of

    if device_stats:
        summary.HOST_STATS_BYTES = -1
    ok = True
    mesh3 = jax.make_mesh((2, 2, 2), ("a", "b", "c"), axis_types=(AxisType.Explicit,) * 3)
    host = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)

    # ------------------------------------------------------------ summaries, one per layout
    summary.clear_caches()
    per = []
    for ax in ("a", "b", "c"):
        arr = jax.device_put(host, NamedSharding(mesh3, P(ax)))
        lay = layout_of(arr)
        with CompileCount() as c:
            summary.summarize(arr, lay, summary.plan_for(lay, (0, 1), 8192, 0))
        per.append(_kinds(c.names)["stats"])
    print(f"summaries of P('a'), P('b'), P('c') ({size}x{size} float32, 2x2x2 mesh): "
          f"statistics compiles {per}")  # fmt: skip
    ok &= per[1:] == [0, 0]

    # ------------------------------------------------------------ array view re-layouts
    summary.clear_caches()
    x = jax.device_put(host, NamedSharding(mesh3, P("a"))).block_until_ready()
    with CompileCount() as c:
        v = ShardView(x)
    print(f"array view, first view: compiles {_fmt(_kinds(c.names))}")
    print(f"{'update':>12} {'compiles (ours)':>28} {'view ms':>8} {'device_put ms':>14} "
          f"{'ratio':>6}")  # fmt: skip
    for ax in ("b", "c", "a", "b"):
        with CompileCount() as c:
            t0 = time.perf_counter()
            v.spec = [ax]
            v.summary  # noqa: B018 (statistics of the layout shown)
            dt = time.perf_counter() - t0
        k = _kinds(c.names)
        target = NamedSharding(mesh3, P(ax))
        puts = []
        for _ in range(repeat):
            t1 = time.perf_counter()
            jax.device_put(x, target).block_until_ready()
            puts.append(time.perf_counter() - t1)
        base = statistics.median(puts)
        print(f"{'-> P(' + repr(ax) + ')':>12} {_fmt(k):>28} {dt * 1e3:8.1f} {base * 1e3:14.2f} "
              f"{dt / base:6.1f}")  # fmt: skip
        ok &= k["stats"] == 0 and k["estimate"] == 0
    ok &= _relayouts_with_cost_open(v, CompileCount, _kinds)

    # ------------------------------------------------------------ function view vs jax.jit
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    rng = np.random.default_rng(1)
    a = jax.device_put(rng.standard_normal((size, size), dtype=np.float32))
    b = jax.device_put(rng.standard_normal((size, size // 2), dtype=np.float32))

    def f(a: Any, b: Any) -> Any:
        return jnp.tanh(a @ b)

    kw: dict[str, Any] = {"mesh_shape": [2, 4], "axis_names": ["x", "y"],
                          "axis_types": ["auto", "auto"], "out_specs": [None]}  # fmt: skip
    with_stats = ShardView(f, a, b, **kw)

    def f_nostats(a: Any, b: Any) -> Any:  # the same f, its own object: no cache shared
        return jnp.tanh(a @ b)

    plain = ShardView(f_nostats, a, b, stats=False, **kw)

    def jit_cold(lay: list[list[str | None]]) -> float:
        def fresh(a: Any, b: Any) -> Any:  # a new function object: nothing cached by JAX
            return f(a, b)

        sh = tuple(NamedSharding(mesh, P(*s)) for s in lay)
        t0 = time.perf_counter()
        xa, xb = jax.device_put(a, sh[0]), jax.device_put(b, sh[1])
        jax.block_until_ready(jax.jit(fresh, in_shardings=sh)(xa, xb))
        return time.perf_counter() - t0

    print(f"function view, f = tanh(a @ b), {size}x{size} @ {size}x{size // 2} float32, 2x4 "
          f"mesh{', statistics on the devices' if device_stats else ''}")  # fmt: skip
    head = (f"{'in_specs':>24} {'view compiles':>20} {'stats=False':>20} {'jit':>4} "
            f"{'view ms':>8} {'jit ms':>7} {'ratio':>6}")  # fmt: skip
    print(head)
    seen: set[tuple[int, ...]] = set()
    ratios = []
    for lay in LAYOUTS + LAYOUTS[:1]:
        with CompileCount() as cp:
            plain.in_specs = lay
            plain.trace  # noqa: B018
        with CompileCount() as cv:
            t0 = time.perf_counter()
            with_stats.in_specs = lay
            res = with_stats.trace
            dv = time.perf_counter() - t0
        with CompileCount() as cj:
            dj = jit_cold(lay)
        shapes = {layout_of(o).shard_shape for o in res.inputs + res.outputs}
        kv = _kinds(cv.names)
        cold = not shapes <= seen
        seen |= shapes
        if not cold:
            ok &= kv["stats"] == 0 and cv.n == cp.n
        if cp.n:  # a layout the views had not compiled: compare with jax.jit's cold path
            ratios.append(dv / dj)
        name = ",".join("".join(str(e)[0] for e in s) for s in lay)
        print(f"{name:>24} {_fmt(kv):>20} {_fmt(_kinds(cp.names)):>20} {cj.n:>4} "
              f"{dv * 1e3:8.1f} {dj * 1e3:7.1f} {dv / dj:6.2f}")  # fmt: skip
    med = statistics.median(ratios) if ratios else 0.0
    ok &= med <= FACTOR
    print(f"ratios {n_devices} devices: function view / jit trace+compile+run "
          f"{', '.join(f'{r:.2f}' for r in ratios)}, median {med:.2f} (≤ {FACTOR:g}×); "
          f"{'ok' if ok else 'MISSED'}")  # fmt: skip
    return ok


def _relayouts_with_cost_open(v: Any, counter: Any, kinds: Any) -> bool:
    """The re-layout section open (``cost_open``): each new pair of layouts compiles its
    reshard once (in a kernel: after the update is answered), a pair seen before none."""
    from shardwidget.cost import reshard

    reshard.clear_cache()
    with counter() as c:
        v.cost_open = True  # P('a') -> P('b'), the layout shown
    per = [kinds(c.names)["estimate"]]
    for ax in ("c", "b", "c"):
        with counter() as c:
            v.spec = [ax]
        per.append(kinds(c.names)["estimate"])
    print(f"cost open: reshard compiles on open (P('b')), -> P('c'), -> P('b'), -> P('c'): {per}")
    v.cost_open = False
    return per == [1, 1, 0, 0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--device-stats", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    ok = run(args.devices, args.size, args.repeat, args.device_stats)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
