"""What the memory panel's payload costs at 20,000 instructions, and what its 600-point cap hides
(issue 36: the panel draws in <= 50 ms at 20,000 instructions).

The timeline is built so its answer is known: LAYERS forward ramps up and LAYERS backward ramps
down (activations saved, then freed), each instruction adding or freeing one buffer, with a
one-instruction temporary spike every 7th point. The script times ``wire.peak``'s downsample
(``hlo.peak_text.downsample``) against a baseline timed in the same run (copying the full
timeline, what sending it uncapped would cost at least), and prints what the cap costs: the
instructions one point stands for, whether the peak's bytes survive (they must: each point is the
largest of its run), and the largest dip one point hides (the bytes freed and reused within a run).
The panel's own draw is timed in headless Chromium by benchmarks/memory_panel_draw.py (a real
compile of 20,000 instructions against a 200-instruction panel), and by vitest
(js/tests/function/memory_panel.test.ts, "draws a 20,000-instruction timeline as one path").

    PYTHONPATH=src python benchmarks/memory_panel.py [INSTRUCTIONS [REPEATS]]
"""

from __future__ import annotations

import statistics
import sys
import time

from shardwidget.hlo import peak_text
from shardwidget.wire.peak import MAX_POINTS

MIB = 1 << 20


def timeline(n: int) -> list[int]:
    """Bytes live at each of n points: up over the first half, down over the second, with a
    one-point temporary of 8 MiB every 7th point (its answer: peak at the middle's spike)."""
    half = n // 2
    out = []
    for i in range(n):
        saved = i if i < half else n - 1 - i
        out.append(saved * MIB + (8 * MIB if i % 7 == 0 else 0))
    return out


def largest_dip(line: list[int], width: int) -> int:
    """The most bytes one capped point hides: max - min within one run."""
    n = len(line)
    runs = (
        line[i * n // width : max(i * n // width + 1, (i + 1) * n // width)] for i in range(width)
    )
    return max(max(r) - min(r) for r in runs)


def main(n: int, repeats: int) -> None:
    line = timeline(n)
    base, capped = [], []
    out: list[int] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        list(line)
        base.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = peak_text.downsample(line, MAX_POINTS)
        capped.append(time.perf_counter() - t0)
    b, c = statistics.median(base), statistics.median(capped)
    print(f"{n:,} instructions, {len(out)} points sent ({n / len(out):.1f} instructions a point)")
    print(f"copy of the full timeline (baseline): {b * 1e3:.3f} ms median of {repeats}")
    print(f"downsample to {MAX_POINTS}: {c * 1e3:.3f} ms median ({c / b:.1f}x the baseline)")
    print(f"peak kept: {max(out) == max(line)} ({max(line):,} B)")
    dip = largest_dip(line, MAX_POINTS)
    print(f"largest dip one point hides: {dip:,} B ({dip / max(line):.2%} of the peak)")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(args[0] if args else 20_000, args[1] if len(args) > 1 else 20)
