"""Device colours: the same rule as the live renderer (js/shared/colors.ts), for the static picture.

A device's colour depends only on its id and the number of devices, so it is the same in the
widget, in the static picture of a notebook saved without widget state, and in a saved page.
At most 16 devices: a colour-blind-safe palette. More: OKLCH hue bands over contiguous
power-of-two id ranges (at most 12 bands), lightness = id mod the number of steps (at most 8).
The arithmetic follows the TypeScript line by line (IEEE doubles in both; JavaScript's
``Math.round`` is ``floor(x + 0.5)``); ``tests/wire/test_wire_contract.py`` writes these colours
into the TypeScript fixtures and vitest checks them against the renderer's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable

PALETTE16 = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#332288",
    "#CC6677",
    "#117733",
    "#88CCEE",
    "#DDCC77",
    "#AA4499",
    "#44AA99",
    "#999933",
    "#882255",
)
"""Okabe–Ito (black replaced by indigo) then Paul Tol's muted scheme: device i of at most 16."""

MAX_BANDS = 12
MAX_STEPS = 8
_L_DARK = 0.42
_L_LIGHT = 0.87
_CHROMA = 0.15
_HUE0 = 25.0


def _js_round(x: float) -> int:
    return math.floor(x + 0.5)


def _hex(r: float, g: float, b: float) -> str:
    return "#" + "".join(f"{max(0, min(255, _js_round(v))):02x}" for v in (r, g, b))


def _lms(L: float, a: float, b: float) -> tuple[float, float, float]:
    return (
        (L + 0.3963377774 * a + 0.2158037573 * b) ** 3,
        (L - 0.1055613458 * a - 0.0638541728 * b) ** 3,
        (L - 0.0894841775 * a - 1.291485548 * b) ** 3,
    )


def _linear(L: float, a: float, b: float) -> tuple[float, float, float]:
    l, m, s = _lms(L, a, b)  # noqa: E741
    return (
        4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
        -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
        -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s,
    )


def _gamma(c: float) -> float:
    c = max(0.0, min(1.0, c))
    return 12.92 * c if c <= 0.0031308 else 1.055 * math.pow(c, 1 / 2.4) - 0.055


def oklch_to_hex(L: float, C: float, h: float) -> str:
    """OKLCH (L 0..1, chroma, hue in degrees) to "#rrggbb", lowering chroma until it fits sRGB."""
    rad = h * math.pi / 180
    ca, sa = math.cos(rad), math.sin(rad)

    def in_gamut(c: float) -> bool:
        return all(-1e-4 <= v <= 1 + 1e-4 for v in _linear(L, c * ca, c * sa))

    c = C
    if not in_gamut(c):
        lo, hi = 0.0, C
        for _ in range(16):  # bisection to 2^-16 of C: far below one 8-bit step
            mid = (lo + hi) / 2
            if in_gamut(mid):
                lo = mid
            else:
                hi = mid
        c = lo
    r, g, b = _linear(L, c * ca, c * sa)
    return _hex(_gamma(r) * 255, _gamma(g) * 255, _gamma(b) * 255)


def band_size_for(n: int) -> int:
    """Ids per hue band: a power of two, at least 4, so that n ids fill at most 12 bands."""
    p = 1
    while p < math.ceil(n / MAX_BANDS):
        p *= 2
    return max(4, p)


@functools.lru_cache(maxsize=4096)  # a few hundred colours serve 65,536 devices
def band_color(band: int, bands: int, step: int, steps: int) -> str:
    """The colour of hue band ``band`` (of ``bands``) at lightness step ``step`` (of ``steps``)."""
    hue = _HUE0 + (360 * (band % bands)) / max(1, bands)
    t = step / (steps - 1) if steps > 1 else 0.5
    return oklch_to_hex(_L_DARK + (_L_LIGHT - _L_DARK) * t, _CHROMA, hue)


@functools.lru_cache(maxsize=64)
def _scheme_of(n: int) -> tuple[int, int, int]:
    """(band size, steps, bands) of the band scheme for n ids (n > 16)."""
    size = band_size_for(n)
    steps = min(MAX_STEPS, size)
    return size, steps, math.ceil(n / size)


@functools.lru_cache(maxsize=8192)
def _color_at(index: int, n: int) -> str:
    if n <= len(PALETTE16):
        return PALETTE16[index % len(PALETTE16)]
    size, steps, bands = _scheme_of(n)
    return band_color((index // size) % bands, bands, index % steps, steps)


def device_color(device_id: int, n_devices: int) -> str:
    """The colour of device ``device_id`` when the kernel has ``n_devices`` devices (ids 0..n-1),
    as the live renderer draws it (deviceColor in TypeScript)."""
    return _color_at(abs(int(device_id)), max(1, int(n_devices)))


def color_scheme(n_devices: int, ids: Iterable[int] = ()) -> Callable[[int], str]:
    """id -> colour, as colorScheme(n, ids) in TypeScript: when some of ``ids`` (every device id
    the view knows) fall outside 0..n-1 (several processes number their devices 0.., 2048..),
    colours follow each id's rank among them, so they stay as distinct as for dense ids."""
    n = max(1, int(n_devices))
    known = sorted(set(ids))
    if not any(i < 0 or i >= n for i in known):
        return lambda i: device_color(i, n)
    rank = {d: r for r, d in enumerate(known)}
    m = max(n, len(known))
    return lambda i: _color_at(rank.get(i, abs(int(i))), m)


def _luminance(hex_color: str) -> float:
    def lin(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else math.pow((c + 0.055) / 1.055, 2.4)

    r, g, b = (lin(int(hex_color[k : k + 2], 16)) for k in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def text_color_on(bg: str) -> str:
    """Black or white text, whichever contrasts more with ``bg`` (WCAG contrast ratio)."""
    y = _luminance(bg)
    return "#000000" if (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) else "#ffffff"


# The live renderer's heatmap ramp (js/shared/colors.ts), 9 points, linearly interpolated.
VIRIDIS = (
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
)


def heat_ramp(t: float) -> tuple[int, int, int]:
    """The heatmap colour at t in [0, 1] (JS ``ramp``, rounding as Math.round)."""
    t = 0.0 if not math.isfinite(t) else min(1.0, max(0.0, t))
    x = t * (len(VIRIDIS) - 1)
    i = min(len(VIRIDIS) - 2, math.floor(x))
    f = x - i
    a, b = VIRIDIS[i], VIRIDIS[i + 1]
    return (
        math.floor(a[0] + (b[0] - a[0]) * f + 0.5),
        math.floor(a[1] + (b[1] - a[1]) * f + 0.5),
        math.floor(a[2] + (b[2] - a[2]) * f + 0.5),
    )


HEAT_LUT = tuple(heat_ramp(v / 255) for v in range(256))
"""The ramp at the 256 levels of a uint8 thumbnail (``np.asarray(HEAT_LUT, np.uint8)[t]``)."""
