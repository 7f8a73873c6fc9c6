"""PNG without an imaging library: a small encoder (the heatmaps inside pictures), and SVG -> PNG
for ``view.to_png`` with what this machine has.

SVG -> PNG tries, in order: ``cairosvg`` (``pip install cairosvg``; it needs the system's
libcairo), then headless Chromium through Playwright (``playwright`` with a Chromium at
``SHARDWIDGET_CHROMIUM``, ``/usr/bin/chromium`` or Playwright's own). With neither, a
RuntimeError says what to install. Both are imported lazily: they are heavy and optional.
"""

from __future__ import annotations

import base64
import os
import pathlib
import re
import shutil
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def encode_rgb(pixels: np.ndarray) -> bytes:
    """A PNG of ``pixels`` (uint8[rows, cols, 3])."""
    rows, cols, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[r].astype(np.uint8).tobytes() for r in range(rows))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", cols, rows, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        PNG_MAGIC
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG, from its header; ValueError when data is no PNG."""
    if data[:8] != PNG_MAGIC or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def svg_to_png(svg: str, path: str | pathlib.Path, scale: float = 2.0) -> tuple[int, int]:
    """Write ``svg`` as a PNG at ``scale`` times its size; returns (width, height) in pixels.
    RuntimeError naming what to install when no converter is available."""
    path = pathlib.Path(path)
    errors = []
    for convert in (_cairosvg, _chromium):
        try:
            data = convert(svg, scale)
        except ImportError as e:
            errors.append(str(e))
            continue
        path.write_bytes(data)
        return png_size(data)
    raise RuntimeError(
        "to_png needs an SVG converter and none is available here: "
        + "; ".join(errors)
        + ". Install one (pip install cairosvg, or pip install playwright with a Chromium), "
        "or save view.to_svg() and convert it elsewhere"
    )


def _cairosvg(svg: str, scale: float) -> bytes:
    try:
        import cairosvg  # type: ignore[import-not-found,unused-ignore]  # optional
    except (ImportError, OSError) as e:
        raise ImportError(f"cairosvg is not importable ({e})") from None
    out: bytes = cairosvg.svg2png(bytestring=svg.encode("utf-8"), scale=scale)
    return out


def chromium_path() -> str | None:
    """The Chromium the PNG path uses: $SHARDWIDGET_CHROMIUM, else chromium on PATH."""
    env = os.environ.get("SHARDWIDGET_CHROMIUM")
    if env:
        return env
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(svg: str, scale: float) -> bytes:
    try:
        import playwright.sync_api  # noqa: F401  (optional, heavy: only for to_png)
    except ImportError as e:
        raise ImportError(f"playwright is not importable ({e})") from None

    # Playwright's sync API refuses a thread with a running event loop (a Jupyter kernel's).
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_chromium_shot, svg, scale).result()


def _chromium_shot(svg: str, scale: float) -> bytes:
    from playwright.sync_api import sync_playwright

    m = re.search(r'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"', svg)
    if not m:
        raise ValueError("the SVG has no width and height")
    w, h = float(m.group(1)), float(m.group(2))
    exe = chromium_path()
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        except Exception as e:  # no browser playwright can start
            raise ImportError(f"no Chromium could start ({str(e).splitlines()[0]})") from None
        try:
            page = browser.new_page(
                viewport={"width": max(1, round(w)), "height": max(1, round(h))},
                device_scale_factor=scale,
            )
            page.set_content(
                "<!doctype html><html><body style='margin:0;background:#fff'>"
                + svg
                + "</body></html>"
            )
            data: bytes = page.locator("svg").first.screenshot(type="png")
        finally:
            browser.close()
    return data


def png_data_uri(rgb: np.ndarray) -> str:
    """An RGB uint8 image (rows, cols, 3) as a data: URI of a PNG (no imaging library needed)."""
    return "data:image/png;base64," + base64.b64encode(encode_rgb(rgb)).decode("ascii")
