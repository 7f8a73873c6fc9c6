"""Tests run on 8 simulated CPU devices, set before JAX starts its backend."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

jax.config.update("jax_num_cpu_devices", 8)

N_DEVICES = 8
