"""What reading the memory peak costs beside the compile it comes from (issue 36: <= 10 %).
Prints ratios against a baseline timed in the same run: the compile a view makes today (with
XLA's Shardy record, ``why.compile_with_dump``) of benchmarks/why_cost.py's gradient (a Python
loop of LAYERS layers on 8 simulated CPU devices), against the same compile with the memory
reports dumped too, and the reports' parse (``hlo.peak.peak_of``). Figures: median and min of
REPEATS (the min is the steadier on a shared machine), and the median of each back-to-back pair's
ratio (the two compiles of a pair alternate which runs first).

    PYTHONPATH=src python benchmarks/peak_cost.py [LAYERS [REPEATS]]

Where the extra goes (24 layers, jax 0.10.2, counted 2026-11-28): the Shardy record alone is 5
files (305 KB); asked for the memory reports, XLA:CPU writes 36 (929 KB): the live-range report
and buffer assignment read here, but also the HLO before and after optimization, the buffer
assignment's values, and for each of the 8 kernels its LLVM IR before and after optimization
and its object file (24 files never read; ``xla_dump_emitter_re`` does not stop them, and
``xla_dump_buffer_assignment_analysis=False`` drops the live-range report too). The parse is
3-4 % of the compile.
"""

from __future__ import annotations

import statistics
import sys
import time

import why_cost  # (this folder: the same gradient, made fresh each time)
from shardwidget.hlo import peak as hlo_peak
from shardwidget.why import explain as why

REPEATS = 5


def main(layers: int, repeats: int) -> None:
    why_cost.stage(layers)[0].lower().compile()  # warm the backend
    base, dumped, parse = [], [], []
    peak = None
    for i in range(repeats):
        order = ("base", "dumped") if i % 2 == 0 else ("dumped", "base")  # neither always first
        for kind in order:
            st, mesh = why_cost.stage(layers)
            report: dict[str, str] | None = {} if kind == "dumped" else None
            t0 = time.perf_counter()
            why.compile_with_dump(st, mesh, report)
            (dumped if report is not None else base).append(time.perf_counter() - t0)
            if report is not None:
                t0 = time.perf_counter()
                peak = hlo_peak.peak_of(report)
                parse.append(time.perf_counter() - t0)
    assert peak is not None and not isinstance(peak, str), peak
    paired = statistics.median((d + p) / b - 1 for b, d, p in zip(base, dumped, parse, strict=True))
    b, d, p = (statistics.median(v) * 1e3 for v in (base, dumped, parse))
    bm, dm, pm = (min(v) * 1e3 for v in (base, dumped, parse))
    print(f"{layers}-layer gradient: {peak.instructions} instructions, peak {peak.bytes} B")
    print("                                  median      (min)")
    print(f"compile (Shardy record)         {b:8.1f} ms  ({bm:6.1f} ms)")
    extra = f"{d / b - 1:+.1%} ({dm / bm - 1:+.1%})"
    print(f"compile + memory reports        {d:8.1f} ms  ({dm:6.1f} ms)  {extra}")
    print(
        f"parse the reports (peak_of)     {p:8.1f} ms  ({pm:6.1f} ms)  {p / b:.1%} ({pm / bm:.1%})"
    )
    over, over_min = (d + p) / b - 1, (dm + pm) / bm - 1
    print(f"report + parse over the compile {over:+.1%} ({over_min:+.1%}): target <= 10 %")
    print(f"  the same, median of the {repeats} pairs run back to back: {paired:+.1%}")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 24,
        int(sys.argv[2]) if len(sys.argv) > 2 else REPEATS,
    )
