"""A static picture of a layout (HTML + inline SVG, no script) for places with no widget manager:
GitHub, nbviewer, ``jupyter nbconvert --to html``. It goes into the display bundle as text/html.

Device colours come from :mod:`shardwidget.colors`, the live renderer's rule, so a device has the
same colour here as in the widget. The grid shows the first block position along non-drawn
dimensions.
"""

from __future__ import annotations

import html

from .colors import color_scheme, text_color_on
from .gspmd import CUSTOM
from .layout import Layout
from .text import EMPTY, devices_label, fmt_bytes


def render(
    lay: Layout, view_dims: tuple[int, ...] = (), width: int = 480, n_devices: int | None = None
) -> str:
    """The layout as HTML with an inline SVG (no script). ``n_devices``: the kernel's device count
    (default: ``jax.device_count()``), which the colours depend on, as in the live widget."""
    nd = len(lay.shape)
    dims = tuple(view_dims) if view_dims else ((0, 1) if nd >= 2 else (0,) if nd else ())
    r = dims[0] if len(dims) == 2 else None
    c = dims[-1] if dims else None
    other = [d for d in range(nd) if d not in dims]
    first = {d: min(b.index[d] for b in lay.blocks) for d in other}
    blocks = [b for b in lay.blocks if all(b.index[d] == first[d] for d in other)]
    rn = lay.shape[r] if r is not None else 1
    cn = lay.shape[c] if c is not None else 1
    height = max(40, min(width, round(width * rn / max(1, cn)))) if r is not None else 48
    n = lay.n_devices
    if n_devices is None:
        import jax

        n_devices = jax.device_count()
    ids = [*(lay.mesh.device_ids if lay.mesh else ()), *(d.id for d in lay.devices)]
    color_of = color_scheme(n_devices, ids)
    parts = []
    for b in blocks:
        # A dimension of size 0 (an empty array) has one block position: drawn whole.
        y0, y1 = b.index[r] if r is not None and rn else (0, 1)
        x0, x1 = b.index[c] if c is not None and cn else (0, 1)
        x, w = x0 / max(1, cn) * width, (x1 - x0) / max(1, cn) * width
        y, h = y0 / max(1, rn) * height, (y1 - y0) / max(1, rn) * height
        color = color_of(b.devices[0])
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{color}" '
            f'stroke="#fff" stroke-width="1"><title>{html.escape(_title(b.index, b.devices))}'
            "</title></rect>"
        )
        chars = max(1, int(w // 7))
        k = len(b.devices)
        label = devices_label(b.devices, chars - (len(f" ×{k}") if k > 1 else 0)) if h >= 12 else ""
        if label and k > 1 and not label.startswith("×") and "(" not in label:
            label += f" ×{k}"  # replicated: say how many hold it
        if label:
            parts.append(
                f'<text x="{x + w / 2:.1f}" y="{y + h / 2:.1f}" font-size="11" '
                f'text-anchor="middle" dominant-baseline="central" fill="{text_color_on(color)}" '
                f'font-family="monospace">{html.escape(label)}</text>'
            )
    head = html.escape(
        f"{lay.typeof} · {lay.sharding_type}"
        + (f" · {lay.spec_text}" if lay.spec_text else f" · {CUSTOM}" if lay.custom else "")
        + f" · {lay.memory_kind}"
    )
    info = html.escape(
        f"{len(lay.blocks)} blocks of {lay.shard_shape} on {n} devices · replication "
        f"{lay.replication} · {fmt_bytes(lay.bytes_per_device)} per device"
        + (f" · first block along dims {other}" if other else "")
        + (f" · {EMPTY}" if lay.empty else "")
        + (f" · {lay.partial_note}" if lay.partial else "")
    )
    return (
        '<div class="shardwidget-snapshot" style="font-family:system-ui,sans-serif;'
        'font-size:12px;line-height:1.4">'
        f'<div><b style="font-family:monospace">{head}</b></div><div>{info}</div>'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{head}">'
        + "".join(parts)
        + "</svg></div>"
    )


def _title(index: tuple[tuple[int, int], ...], devices: tuple[int, ...]) -> str:
    rng = ", ".join(f"[{a}:{b})" for a, b in index)
    return f"{rng} on device{'s' if len(devices) > 1 else ''} {', '.join(map(str, devices))}"
