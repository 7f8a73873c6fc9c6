"""Tests run on 8 simulated CPU devices, set before JAX starts its backend."""

import functools
import os
import pathlib
import tempfile

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

jax.config.update("jax_num_cpu_devices", 8)

N_DEVICES = 8


@pytest.fixture
def arr():
    """4x8 float32 on a 2x4 mesh, P('x', 'y'): the array most view tests start from."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    return jax.device_put(jax.numpy.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y")))


@functools.cache
def _no_png_converter() -> str | None:
    """Why ``to_png`` cannot convert on this machine, or None when it can: its own search
    (cairosvg, then a Chromium that Playwright starts), tried once on a tiny SVG."""
    from shardwidget.render import png

    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">'
        '<rect width="4" height="4" fill="#000"/></svg>'
    )
    with tempfile.TemporaryDirectory() as folder:
        try:
            png.svg_to_png(svg, pathlib.Path(folder) / "probe.png", scale=1)
        except RuntimeError as e:  # what svg_to_png raises when it has no converter
            return str(e)
    return None


@pytest.fixture
def png_converter() -> None:
    """For tests that call ``to_png``: skips them, saying why, on a machine with neither
    cairosvg nor a Chromium (``SHARDWIDGET_CHROMIUM``, ``chromium`` on PATH) for Playwright."""
    why = _no_png_converter()
    if why is not None:
        pytest.skip(f"to_png has no SVG -> PNG converter here: {why}")
