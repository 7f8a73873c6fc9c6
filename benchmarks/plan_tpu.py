"""How long a TPU plan takes: the 06 notebook's step compiled by the TPU compiler (libtpu).

    python benchmarks/plan_tpu.py [--topology v5e:16x16] [--repeat 1] [--check]

Needs libtpu here or in SHARDWIDGET_TPU_PYTHON (./dev test makes .venvs/tpu). This process (the
kernel) plans the step of ``benchmarks/_transformer.py`` on ``tpu_mesh(TOPOLOGY, ...)``, FSDP
(N/16) × TP 16:

- start:    the TPU helper's start alone (an interpreter with JAX; libtpu loads on first use);
- mesh:     ``tpu_mesh(...)``: the topology's devices and their placement, from the helper;
- cold:     the first plan (libtpu's first compile included);
- warm:     the median of REPEAT more plans, the result cache cleared before each (lowering
            here, the compile there, the reply read back);
- compile:  ``jax.jit(step).lower(...).compile()`` on the same topology in a process that
            already has libtpu loaded (a small compile first), median of REPEAT;
- overhead, again, 1 + 1: as ``_plan_timing.py`` says.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]

import _plan_timing as timing  # noqa: E402 (found through the path above)

REAL = """
topology, shape, repeat = sys.argv[1], tuple(map(int, sys.argv[2].split("x"))), int(sys.argv[3])
topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
mesh = topologies.make_mesh(topo, shape, ("fsdp", "tp"))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topology", default="v5e:16x16")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()

    # (here, not at the top: sys.path above points them at this checkout)
    import _transformer as T
    from shardwidget.plan import plan, tpu

    if tpu.unavailable():
        print(f"skipped: {tpu.unavailable()}")
        return 0
    tpu.stop()
    t0 = time.perf_counter()
    h = tpu.tpu_helper()
    start = time.perf_counter() - t0
    n = 1
    for d in a.topology.split(":", 1)[1].split("x"):
        n *= int(d)
    shape = (n // 16, 16)
    t0 = time.perf_counter()
    mesh = tpu.tpu_mesh(a.topology, shape, ("fsdp", "tp"))
    mesh_s = time.perf_counter() - t0
    params, tokens = T.shapes(n)
    pspec, tspec = T.specs("fsdp", "tp")

    def one() -> float:
        t0 = time.perf_counter()
        plan(T.step, params, tokens, mesh=mesh, in_specs=[pspec, tspec])
        return time.perf_counter() - t0

    t = timing.plan_timings(one, tpu._RESULTS.clear, a.repeat)
    print(f"TPU plan of the 06 step on {a.topology} (FSDP {shape[0]} × TP {shape[1]}):")
    print(f"  helper start {start:.2f} s; tpu_mesh {mesh_s:.2f} s; cold plan {t.cold:.1f} s")
    print(
        f"  again (cached) {t.again * 1e3:.0f} ms; 1 + 1 during a compile: {t.worst * 1e3:.2f} ms"
    )
    argv = [a.topology, f"{shape[0]}x{shape[1]}", str(a.repeat)]
    env = {"ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "TPU_SKIP_MDS_QUERY": "1"}
    compile_s = timing.real_compile(h._argv()[0], REAL, argv, env)
    ratio = t.warm / compile_s
    print(f"  warm plan {t.warm:.1f} s vs raw lower+compile {compile_s:.1f} s: {ratio:.2f}×")
    return 1 if a.check and not timing.ok(t, compile_s) else 0


if __name__ == "__main__":
    sys.exit(main())
