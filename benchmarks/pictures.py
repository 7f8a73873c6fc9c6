"""Sizes of the pictures a view saves into a notebook or a page, against the 512 KiB budget.

    python benchmarks/pictures.py [--check]

Three views that drew unbounded pictures (issue 30, item 9): a tree plan on an AbstractMesh of
65,536 positions, a function plan of notebook 06's step on 256 positions, and a tree of 5,000
leaves. For each: ``to_svg()``, the display bundle's picture (``_static_html``, what
``snapshot()`` holds), and a saved page's ``<noscript>`` picture (the same HTML), in bytes,
with the time of ``to_svg`` at 65,536 positions. Prints a table and the ratio of each size to
the budget; with ``--check`` exits 1 when one is over.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", 8)

import jax.numpy as jnp  # noqa: E402
from jax.sharding import AbstractMesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from shardwidget import ShardView  # noqa: E402
from shardwidget.render.snapshot import PICTURE_BUDGET  # noqa: E402


def tree_plan() -> ShardView:
    f32 = jnp.float32
    tree = {f"layer{i}": {"w": jax.ShapeDtypeStruct((4096, 4096), f32)} for i in range(4)}
    pod = AbstractMesh((256, 256), ("data", "model"))
    return ShardView(tree, mesh=pod, rules=[("w", P("data", "model"))])


def function_plan() -> ShardView:
    import _transformer as tf

    params, tokens = tf.shapes(256)
    pod = AbstractMesh((32, 8), ("data", "model"))
    return ShardView(tf.step, params, tokens, mesh=pod, in_specs=tf.specs("data", "model"))


def big_tree() -> ShardView:
    f32 = jnp.float32
    tree = {
        f"layer{i:04d}": {
            "w": jax.ShapeDtypeStruct((64, 64), f32),
            "b": jax.ShapeDtypeStruct((64,), f32),
        }
        for i in range(2500)
    }
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    return ShardView(tree, mesh=mesh, rules=[("w", P("data", "model"))])


def measure(name: str, view: ShardView) -> list[tuple[str, int, float]]:
    t0 = time.perf_counter()
    svg = view.to_svg()
    t_svg = time.perf_counter() - t0
    html = view._static_html()
    snap = view.snapshot().html
    return [
        (f"{name}: to_svg", len(svg.encode()), t_svg),
        (f"{name}: display picture", len(html.encode()), 0.0),
        (f"{name}: snapshot()", len(snap.encode()), 0.0),
    ]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    rows: list[tuple[str, int, float]] = []
    for name, make in (
        ("tree plan 65,536", tree_plan),
        ("function plan 256", function_plan),
        ("tree 5,000 leaves", big_tree),
    ):
        rows += measure(name, make())
    over = 0
    print(f"{'picture':40} {'bytes':>12} {'/ budget':>9} {'seconds':>8}")
    for what, n, t in rows:
        ratio = n / PICTURE_BUDGET
        over += ratio > 1
        secs = f"{t:8.2f}" if t else ""
        print(f"{what:40} {n:12,d} {ratio:9.2f} {secs}")
    print(
        f"ratios: worst {max(n for _, n, _ in rows) / PICTURE_BUDGET:.2f} of {PICTURE_BUDGET:,d} B"
    )
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
