"""How two plans of the same layout differ, in one line: the TPU compiler's beside the CPU
compiler's (``tpu_plan.versus(cpu_plan)``), or any two plans."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..model.units import fmt_bytes


def _who(p: Any) -> str:
    mi = p.topology
    return f"TPU ({mi.family})" if p.compiler == "tpu" and mi is not None else "CPU"


def _ratio(a: float, b: float) -> str:
    return f" ({a / b:.2f}×)" if a and b else ""


def delta_line(a: Any, b: Any) -> str:
    """ "TPU (v5e) vs CPU compiler, per device: temporaries 134 MiB vs 421.5 MiB (0.32×); peak …;
    bytes accessed …; all-gather 6 vs 1, all-reduce 4 vs 4; FLOPs 1.00×" for plans ``a`` and
    ``b``; "does not fit" where ``a`` or ``b`` overflowed HBM."""
    head = f"{_who(a)} vs {_who(b)} compiler, per device:"
    if not a.fits or not b.fits:
        which = a if not a.fits else b
        return f"{head} {_who(which)} does not fit in HBM: {which.note.split('. ', 1)[-1]}"
    parts = []
    for key in ("temporaries", "peak"):
        x, y = a.memory.get(key, 0), b.memory.get(key, 0)
        parts.append(f"{key} {fmt_bytes(x)} vs {fmt_bytes(y)}{_ratio(x, y)}")
    x, y = a.bytes_accessed, b.bytes_accessed
    parts.append(f"bytes accessed {fmt_bytes(x)} vs {fmt_bytes(y)}{_ratio(x, y)}")
    ka, kb = Counter(c.kind for c in a.collectives), Counter(c.kind for c in b.collectives)
    kinds = sorted(set(ka) | set(kb))
    parts.append(", ".join(f"{k} {ka[k]} vs {kb[k]}" for k in kinds) or "no collectives")
    parts.append(f"FLOPs {a.flops / b.flops:.2f}×" if a.flops and b.flops else "FLOPs —")
    return f"{head} " + "; ".join(parts)
