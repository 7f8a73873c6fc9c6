"""What reading the memory peak costs beside the TPU compile (issue 36: <= 10 %): the 06
notebook's step (benchmarks/_transformer.py) compiled by libtpu ahead of time on TOPOLOGY, FSDP
(N/16) x TP 16. Prints, against a baseline timed in the same run (the plain
``jax.jit(step).lower(...).compile()``), the same compile with the memory reports dumped as a plan
asks for them (``_jax.PEAK_DUMP``), and the reports' read and parse (``hlo.peak.dump_texts`` +
``peak_of``); median and min of REPEATS (the two compiles alternate which runs first), wall time
and the compiling process's CPU time.
The compiles run in libtpu's interpreter (SHARDWIDGET_TPU_PYTHON, a child process: it has no
widget stack), the parse here, on the reports the child leaves:

    SHARDWIDGET_TPU_PYTHON=... PYTHONPATH=src python benchmarks/peak_cost_tpu.py [TOPO [REPEATS]]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def lowered(topology: str) -> object:
    """The 06 step lowered on the topology's mesh (abstract inputs: nothing is run)."""
    import jax
    from jax.experimental import topologies
    from jax.sharding import NamedSharding

    import _transformer as T  # (the child only: JAX with libtpu)

    topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
    n = len(topo.devices)
    mesh = topologies.make_mesh(topo, (n // 16, 16), ("fsdp", "tp"))
    params, tokens = T.shapes(n)
    pspec, tspec = T.specs("fsdp", "tp")
    shard = jax.tree.map(lambda s: NamedSharding(mesh, s), (pspec, tspec))
    args = jax.tree.map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), (params, tokens), shard
    )
    return jax.jit(T.step).lower(*args)


def child(topology: str, repeats: int, folder: str, options: str) -> None:
    """In libtpu's interpreter: the compile times (wall and this process's CPU time), as JSON;
    the last reports left in folder. ``options``: the dumped compile's options as JSON (the
    package's ``PEAK_DUMP``: what a plan compiles with), ``xla_dump_to`` added here."""
    lowered(topology).compile()  # libtpu's first compile (its start) kept out of the figures
    out: dict[str, list[float]] = {"base": [], "dumped": [], "base_cpu": [], "dumped_cpu": []}
    for i in range(repeats):
        for kind in ("base", "dumped") if i % 2 == 0 else ("dumped", "base"):
            opts = None
            if kind == "dumped":
                shutil.rmtree(folder)  # the last compile's reports only (it has subfolders)
                opts = {"xla_dump_to": folder, **json.loads(options)}
            lo = lowered(topology)
            t0, c0 = time.perf_counter(), time.process_time()
            lo.compile() if opts is None else lo.compile(compiler_options=opts)  # type: ignore[attr-defined]
            out[kind].append(time.perf_counter() - t0)
            out[kind + "_cpu"].append(time.process_time() - c0)
    print(json.dumps(out))


def main(topology: str, repeats: int) -> None:
    from shardwidget import _jax
    from shardwidget.hlo import peak as hlo_peak

    tpu = os.environ.get("SHARDWIDGET_TPU_PYTHON")
    if not tpu:
        print("skipped: SHARDWIDGET_TPU_PYTHON is not set (libtpu's interpreter)")
        return
    with tempfile.TemporaryDirectory() as d:
        argv = [tpu, __file__, "--child", topology, str(repeats), d, json.dumps(_jax.PEAK_DUMP)]
        env = dict(os.environ, PYTHONPATH="")
        out = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
        if out.returncode:  # libtpu's own words (e.g. another process holds its lock)
            sys.exit(f"the TPU compile failed:\n{out.stderr[-2000:]}")
        t = json.loads(out.stdout.strip().splitlines()[-1])
        parse = []
        peak: object = None
        for _ in range(repeats):
            t0 = time.perf_counter()
            peak = hlo_peak.peak_of(hlo_peak.dump_texts(d))
            parse.append(time.perf_counter() - t0)
    b, m, p = (statistics.median(x) for x in (t["base"], t["dumped"], parse))
    bc, mc = (statistics.median(x) for x in (t["base_cpu"], t["dumped_cpu"]))
    print(f"06 step on {topology}: peak {getattr(peak, 'bytes', peak)} B per device")
    print("                           wall (median, min)     CPU time of the compiling process")
    print(f"compile (plain)            {b:8.2f} s  ({min(t['base']):.2f})     {bc:8.2f} s")
    print(f"compile + memory reports   {m:8.2f} s  ({min(t['dumped']):.2f})     {mc:8.2f} s")
    print(f"read + parse the reports   {p * 1e3:8.1f} ms ({p / b:.1%} of the compile)")
    over, over_cpu = (m + p) / b - 1, (mc + p) / bc - 1
    print(f"report + parse over the compile {over:+.1%} wall, {over_cpu:+.1%} CPU:")
    print("  target <= 10 % (the CPU time moves less with the machine's load than the wall)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        args = sys.argv[1:]
        main(args[0] if args else "v5e:16x16", int(args[1]) if len(args) > 1 else 2)
