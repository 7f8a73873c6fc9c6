"""Units as the kernel and the widget write them: one byte formatter for every line and table.
Pure: no JAX, no widget code."""


def fmt_bytes(n: float) -> str:
    """The one byte formatter: "512 B", "1.5 KiB", "1.23 MiB", "120 MiB" (binary units; 3
    significant digits, at most 2 decimals, no trailing zeros: the renderer's formatBytes in
    js/shared/text.ts, so the kernel's lines and the widget's tables write the same bytes)."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            v = n / size
            digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2
            s = f"{v:.{digits}f}"
            return f"{s.rstrip('0').rstrip('.') if '.' in s else s} {unit}"
    return f"{int(n)} B"
