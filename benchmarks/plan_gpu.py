"""How long a GPU plan takes: the 06 notebook's step compiled by XLA's GPU compiler (jaxlib's
CUDA plugin) for hosts of GPUs this machine does not have.

    python benchmarks/plan_gpu.py [--gpu h100] [--hosts 2] [--repeat 3] [--check]

Needs the GPU compiler's venv (``python -m shardwidget.compilers install gpu``; ./dev test makes
.venvs/gpu and sets SHARDWIDGET_GPU_PYTHON). This process (the kernel) plans the step of
``benchmarks/_transformer.py`` on ``gpu_mesh(GPU, (HOSTS, 8), ("fsdp", "tp"), hosts=HOSTS)``:

- start:    the GPU helper's start alone (an interpreter with JAX and the CUDA plugin);
- mesh:     ``gpu_mesh(...)``: the topology's devices and their placement, from the helper;
- cold:     the first plan;
- warm:     the median of REPEAT more plans, the result cache cleared before each (lowering
            here, the compile there, the reply read back);
- compile:  ``jax.jit(step).lower(...).compile()`` on the same topology in a process that has
            the plugin loaded (a small compile first), median of REPEAT;
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
spec, topology, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = "\\n".join(l for l in open(spec).read().splitlines()
                 if not l.strip().startswith("collective_memory_granularity"))
topo = topologies.get_topology_desc(platform="cuda", target_config=text, topology=topology)
s, h, g = map(int, topology.split("x"))
shape = (s * h, g)
mesh = topologies.make_mesh(topo, shape, ("fsdp", "tp"))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()

    # (here, not at the top: sys.path above points them at this checkout)
    import _transformer as T
    from shardwidget.plan import compilers, gpu, plan

    if compilers.unavailable("gpu"):
        print(f"skipped: {compilers.unavailable('gpu')}")
        return 0
    gpu.stop()
    t0 = time.perf_counter()
    h = gpu.gpu_helper()
    start = time.perf_counter() - t0
    shape = (a.hosts, 8)
    t0 = time.perf_counter()
    mesh = gpu.gpu_mesh(a.gpu, shape, ("fsdp", "tp"), hosts=a.hosts)
    mesh_s = time.perf_counter() - t0
    params, tokens = T.shapes(shape[0] * shape[1])
    pspec, tspec = T.specs("fsdp", "tp")

    def one() -> float:
        t0 = time.perf_counter()
        plan(T.step, params, tokens, mesh=mesh, in_specs=[pspec, tspec])
        return time.perf_counter() - t0

    t = timing.plan_timings(one, gpu._RESULTS.clear, a.repeat)
    mi = gpu.info(mesh)
    print(f"GPU plan of the 06 step on {mi.title} (FSDP {shape[0]} × TP {shape[1]}):")
    print(f"  helper start {start:.2f} s; gpu_mesh {mesh_s:.2f} s; cold plan {t.cold:.2f} s")
    print(
        f"  again (cached) {t.again * 1e3:.1f} ms; 1 + 1 during a compile: {t.worst * 1e3:.2f} ms"
    )
    spec = str(gpu.SPECS / gpu.preset(a.gpu).spec)
    argv = [spec, mi.topology, str(a.repeat)]
    compile_s = timing.real_compile(h._argv()[0], REAL, argv, {})
    ratio = t.warm / compile_s
    print(f"  warm plan {t.warm:.2f} s vs raw lower+compile {compile_s:.2f} s: {ratio:.2f}×")
    return 1 if a.check and not timing.ok(t, compile_s) else 0


if __name__ == "__main__":
    sys.exit(main())
