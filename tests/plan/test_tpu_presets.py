"""Hardware presets with a TPU name their topology family (what tpu_mesh takes)."""

from __future__ import annotations

import pytest

import shardwidget as sw
from shardwidget.plan import tpu


@pytest.mark.parametrize(
    ("name", "family"),
    [("tpu-v4", "v4"), ("tpu-v5e", "v5e"), ("tpu-v5p", "v5p"), ("tpu-v6e", "v6e"),
     ("tpu7x", "tpu7x")],
)  # fmt: skip
def test_tpu_presets_name_their_topology_family(name, family):
    hw = sw.hardware(name)
    assert tpu.family_of(f"{hw.topology}:2x2x1") == family
    assert 0.1e-6 <= hw.ici_latency < hw.dcn_latency and "https://" in hw.source


def test_the_tpu7x_preset_is_per_device_half_a_chip():
    hw = sw.hardware("tpu7x")
    # usable HBM the TPU compiler states for a tpu7x device (94.75 GiB) fits in the preset's
    assert tpu.HBM_GIB["tpu7x"] * 2**30 <= hw.hbm_bytes
    assert hw.peak_flops == pytest.approx(2307e12 / 2)


@pytest.mark.parametrize("name", ["h100", "a100"])
def test_other_hardware_names_no_topology(name):
    assert sw.hardware(name).topology == ""
