"""Tests run on 8 simulated CPU devices, set before JAX starts its backend."""

import os

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
