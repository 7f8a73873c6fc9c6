"""Device memory a view holds beyond the user's own arrays.

    python benchmarks/memory.py [--devices 8] [--size 4096] [--views 1 10 100] [--layouts 20]

On DEVICES simulated CPU devices, an array of SIZE×SIZE float32 (4096: 64 MiB) is put on a 2-D
mesh with P('x', 'y'). The script prints the device bytes held beyond the user's own arrays (the
distinct buffers of ``jax.live_arrays()``, per-shard views counted once, less the user's):

- by 1, 10 and 100 array views of it, each re-laid out three times (P('y', 'x'),
  P(('y', 'x'), None), P(None, ('y', 'x'))), with statistics;
- by a function view (``a * 2 + 1``) after LAYOUTS different input layouts (two meshes);

and how many views are still alive (weak references, after gc): of 10 closed views, and of 10
views made by re-running a cell ``view = ShardView(x)`` (one is expected: the newest, which
``view`` holds). Goal: 0 bytes held, 0 closed views alive.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time
import weakref
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20


def held(own: list[Any]) -> int:
    from shardwidget.model import free_memory

    gc.collect()
    return free_memory.held_bytes(own)


def layouts(mesh: tuple[int, int]) -> list[dict[str, Any]]:
    """Every input layout of a 2-d array on the mesh (each axis used at most once)."""
    entries: list[Any] = [None, "x", "y", ["x", "y"], ["y", "x"]]
    out = []
    for a, b in itertools.product(entries, repeat=2):
        used = [n for e in (a, b) if e for n in ([e] if isinstance(e, str) else e)]
        if len(used) == len(set(used)):
            out.append({"mesh_shape": list(mesh), "axis_names": ["x", "y"], "in_specs": [[a, b]]})
    return out


def run(n_devices: int, size: int, view_counts: list[int], n_layouts: int) -> list[tuple[str, str]]:
    import jax

    jax.config.update("jax_num_cpu_devices", n_devices)
    jax.config.update("jax_platforms", "cpu")
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    sys.path.insert(0, str(ROOT / "src"))  # measure the working tree
    from shardwidget import ShardView

    a_ax = max(d for d in range(1, int(n_devices**0.5) + 1) if n_devices % d == 0)
    mesh_shape = (a_ax, n_devices // a_ax)
    mesh = jax.make_mesh(mesh_shape, ("x", "y"))
    host = np.random.default_rng(0).standard_normal((size, size), dtype=np.float32)
    x = jax.device_put(host, NamedSharding(mesh, P("x", "y")))
    del host
    own = [x]
    rows: list[tuple[str, str]] = []

    def row(what: str, n: int) -> None:
        rows.append((what, f"{n:,} B ({n / MIB:.1f} MiB)"))

    specs = [["y", "x"], [["y", "x"], None], [None, ["y", "x"]]]
    for count in view_counts:
        views = []
        for _ in range(count):
            v = ShardView(x)
            for s in specs:
                v.spec = s
            views.append(v)
        row(f"{count} array view(s), 3 re-layouts each", held(own))
        for v in views:
            v.close()
        del views, v

    f = ShardView(lambda a: a * 2 + 1, x)
    choices = layouts(mesh_shape) + layouts(mesh_shape[::-1])
    done = 0
    for lay in choices:
        if done == n_layouts:
            break
        try:
            f.set_layout(**lay)
        except ValueError:
            continue
        done += 1
    row(f"function view, {done} layouts", held(own))
    f.close()
    del f

    refs = []
    for _ in range(10):
        v = ShardView(x, spec=specs[0])
        refs.append(weakref.ref(v))
        v.close()
        del v
    gc.collect()
    rows.append(("closed views still alive", f"{sum(r() is not None for r in refs)} of 10"))
    row("  bytes held after closing them", held(own))

    refs = []
    view = None
    for _ in range(10):  # a cell `view = ShardView(x, spec=...)` run ten times
        view = ShardView(x, spec=specs[0])
        refs.append(weakref.ref(view))
    gc.collect()
    alive = sum(r() is not None for r in refs)
    rows.append(("views left by 10 runs of a cell", f"{alive} of 10 (the newest is held)"))
    del view
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--size", type=int, default=4096, help="the array is SIZE x SIZE float32")
    ap.add_argument("--views", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--layouts", type=int, default=20, help="layouts of the function view")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(args.devices, args.size, args.views, args.layouts)
    mib = args.size * args.size * 4 / MIB
    print(
        f"device memory held beyond the user's arrays, {args.size}x{args.size} float32 "
        f"({mib:.1f} MiB), {args.devices} CPU devices"
    )
    width = max(len(w) for w, _ in rows)
    print(f"{'case':<{width}}  held")
    print("-" * (width + 24))
    for what, value in rows:
        print(f"{what:<{width}}  {value}")
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
