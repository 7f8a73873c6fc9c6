"""Units as the kernel and the widget write them: one byte formatter for every line and table.
Pure: no JAX, no widget code."""

import math
from decimal import ROUND_HALF_UP, Decimal

_BYTE_UNITS = (
    ("PiB", 1 << 50),
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
)


def fmt_bytes(n: float) -> str:
    """The one byte formatter: "512 B", "1.5 KiB", "1.23 MiB", "120 MiB" (binary units up to PiB;
    3 significant digits, at most 2 decimals, no trailing zeros: the renderer's formatBytes in
    js/shared/text.ts, pinned by js/tests/wire/bytes.gen.json)."""
    if not math.isfinite(n):  # formatBytes writes String(n); Decimal cannot round these
        return "NaN" if math.isnan(n) else ("Infinity" if n > 0 else "-Infinity")
    for unit, size in _BYTE_UNITS:
        if abs(n) >= size:
            v = n / size
            digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2
            s = _fixed(v, digits)
            return f"{s.rstrip('0').rstrip('.') if '.' in s else s} {unit}"
    return f"{int(n)} B"


def _fixed(v: float, digits: int) -> str:
    """v with `digits` decimals, an exact tie rounded away from zero: JavaScript's toFixed (Python's
    format rounds half to even, so 1.125 KiB would read 1.12 here and 1.13 in the widget)."""
    return str(Decimal(v).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
