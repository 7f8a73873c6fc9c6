"""The largest batch that fits, found by bisection over plans, checked by compiling the two
sizes it names directly (plain jax.jit on this kernel's 8 CPU devices, the peak read from the
compiler's own report): the answer fits, the next size does not."""

from __future__ import annotations

import shutil
import tempfile

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import _jax
from shardwidget.hlo import peak as hlo_peak
from shardwidget.plan.largest_fit import MAX_COMPILES, largest_fit

pytestmark = pytest.mark.skipif(jax.__version_info__ < (0, 10), reason=hlo_peak.NO_LIVE_RANGE)


def step(w, x):
    return jax.grad(lambda w: jnp.tanh(x @ w).sum())(w)


SPECS = [P(None, "model"), P("data", None)]


def direct_peak(batch: int) -> int:
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    w = jax.ShapeDtypeStruct((512, 512), jnp.float32, sharding=NamedSharding(mesh, SPECS[0]))
    x = jax.ShapeDtypeStruct((batch, 512), jnp.float32, sharding=NamedSharding(mesh, SPECS[1]))
    folder = tempfile.mkdtemp()
    try:
        jax.jit(step).lower(w, x).compile(
            compiler_options={"xla_dump_to": folder, **_jax.PEAK_DUMP}
        )
        peak = hlo_peak.peak_of(hlo_peak.dump_texts(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert not isinstance(peak, str), peak
    return peak.bytes


def test_the_largest_batch_that_fits_and_the_next_that_does_not():
    mesh = AbstractMesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    w = jax.ShapeDtypeStruct((512, 512), jnp.float32)
    x = jax.ShapeDtypeStruct((256, 512), jnp.float32)
    hbm = 3 * 2**20  # 3 MiB per device: somewhere between batch 256 and 16384
    seen = []
    fit = largest_fit(
        step, w, x, mesh=mesh, in_specs=SPECS, arg=1, dim=0, hbm=hbm,
        progress=lambda i, of, n, ok: seen.append((i, n, ok)),
    )  # fmt: skip
    assert fit.compiles <= MAX_COMPILES and len(seen) == fit.compiles
    assert fit.step == 2 and fit.fits > 256 and fit.over is not None
    assert direct_peak(fit.fits) <= hbm < direct_peak(fit.over)  # the compiler agrees
    assert fit.peak == direct_peak(fit.fits)
    assert fit.fits < fit.over <= fit.fits + 2 ** (MAX_COMPILES - 1) * fit.step
