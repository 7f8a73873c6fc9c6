"""How often one spec change crosses the JAX boundary: calls from shardwidget's own code into
the adapter ``shardwidget._jax`` during ``view.spec = ...`` on an array view (issue 34).

    python benchmarks/boundary.py [--devices 8] [--size 512]

An array of SIZE×SIZE float32 on a 2-axis mesh is shown with statistics off; after a warm-up
change (compiles, caches) the spec is changed to a layout never seen before, under
``sys.setprofile``, which counts every Python call whose function lives in ``src/shardwidget/_jax/``
and whose caller lives elsewhere in the package: one crossing per call, whatever the import
form (``_jax.f(...)`` or ``from .._jax import f``). Calls inside the adapter are not counted.
Prints the total, then the count per adapter function and per calling module.
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import sys
from types import FrameType
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = str(ROOT / "src" / "shardwidget")
ADAPTER = os.path.join(PACKAGE, "_jax") + os.sep


def counting(calls: collections.Counter[tuple[str, str]]) -> Any:
    """A profile function that counts (adapter function, calling module) per crossing."""

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not frame.f_code.co_filename.startswith(ADAPTER):
            return
        caller = frame.f_back
        where = caller.f_code.co_filename if caller is not None else ""
        if where.startswith(PACKAGE) and not where.startswith(ADAPTER):
            rel = os.path.relpath(where, PACKAGE)
            calls[(frame.f_code.co_name, rel)] += 1

    return profile


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--size", type=int, default=512)
    args = ap.parse_args()
    flags = f"--xla_force_host_platform_device_count={args.devices}"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import jax
    import numpy as np

    import shardwidget as sw

    n = args.devices
    a = next(k for k in range(int(n**0.5), 0, -1) if n % k == 0)
    mesh = jax.make_mesh((a, n // a), ("x", "y"))
    x = jax.device_put(
        np.arange(args.size * args.size, dtype=np.float32).reshape(args.size, args.size),
        jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x", "y")),
    )
    view = sw.ShardView(x, stats=False)
    view.spec = ["y", "x"]  # warm-up: compiles and caches of a first change
    view.spec = ["x", "y"]
    calls: collections.Counter[tuple[str, str]] = collections.Counter()
    sys.setprofile(counting(calls))
    try:
        view.spec = [None, ("x", "y")]  # a layout never seen: nothing cached
    finally:
        sys.setprofile(None)
    per_fn: collections.Counter[str] = collections.Counter()
    per_mod: collections.Counter[str] = collections.Counter()
    for (fn, mod), k in calls.items():
        per_fn[fn] += k
        per_mod[mod] += k
    print(f"{n} devices, {args.size}x{args.size} float32: view.spec = [None, ('x', 'y')]")
    print(f"crossings into shardwidget._jax: {sum(calls.values())}")
    print("by adapter function: " + ", ".join(f"{f} {k}" for f, k in per_fn.most_common()))
    print("by calling module: " + ", ".join(f"{m} {k}" for m, k in per_mod.most_common()))


if __name__ == "__main__":
    main()
