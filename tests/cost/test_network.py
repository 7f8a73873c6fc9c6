"""Bytes over a network axis (across TPU slices, GPU hosts, out of an NVLink domain) move at
the preset's network bandwidth, not its ICI/NVLink's: the slowest link a collective's groups
cross sets its time (issue 37)."""

import math

import pytest

import shardwidget as sw
from shardwidget.cost import estimate as est_mod
from shardwidget.hlo import collectives as hlo

# per device, one direction: the figures the presets' sources give (cost/hardware.py)
NETWORK = {"h100": 50e9, "h200": 50e9, "b200": 50e9, "gb200": 50e9, "a100": 25e9,
           "a100-40": 25e9, "h100-pcie": 25e9, "tpu-v4": 6.25e9, "tpu-v5e": 6.25e9,
           "tpu-v5p": 6.25e9, "tpu-v6e": 6.25e9, "tpu7x": 3.125e9}  # fmt: skip


def _coll(kind, n, axes=("x",)):
    r = 1 << 20  # result bytes per device
    sent = {"all-reduce": 2 * (n - 1) * r / n, "reduce-scatter": (n - 1) * r}.get(
        kind, r if kind == "collective-permute" else (n - 1) * r / n
    )
    return hlo.Collective(kind, axes, (r // 4,), "f32", round(sent), n, 1, ())


@pytest.mark.parametrize("name", sorted(NETWORK))
@pytest.mark.parametrize("kind", ["all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                  "collective-permute"])  # fmt: skip
def test_a_collective_across_the_network_moves_at_its_bandwidth(name, kind):
    hw = sw.hardware(name)
    assert hw.dcn_bandwidth == NETWORK[name]
    assert "network" in hw.source or "DCN" in hw.source
    c = _coll(kind, 4)
    fast, f_words = est_mod.bandwidth_seconds(c, hw)
    slow, s_words = est_mod.bandwidth_seconds(c, hw, dcn_axes=("x",))
    assert slow / fast == pytest.approx(hw.ici_bandwidth / NETWORK[name], rel=1e-12)
    assert f_words.endswith(f"GB/s {hw.link}") and s_words.endswith(f"GB/s {hw.dcn_link}")
    # an axis the collective does not span changes nothing
    assert est_mod.bandwidth_seconds(c, hw, dcn_axes=("y",))[0] == fast


def test_the_slowest_link_sets_a_collective_over_two_axes():
    hw = sw.hardware("h100")
    c = _coll("all-gather", 16, axes=("data", "model"))
    e = est_mod.estimate(hw, flops=0, bytes_accessed=0, collectives=[c], peak_bytes=None,
                         dcn_axes=("data",))  # fmt: skip
    (t,) = e.collectives
    v = 1 << 20  # the gathered result
    assert t.bandwidth_s == pytest.approx(15 / 16 * v / 50e9, rel=1e-12)
    assert t.latency_s == pytest.approx(15 * hw.dcn_latency)
    assert "network" in t.formula and "NVLink" not in t.formula


def test_a_preset_of_ones_own_without_a_network_figure_says_so():
    hw = sw.hardware(name="net-less", peak_flops=1e12, hbm_bytes=1e9, hbm_bandwidth=1e11,
                     ici_bandwidth=1e10)  # fmt: skip
    assert hw.dcn_bandwidth == 0 and hw.network_bandwidth == hw.ici_bandwidth
    c = _coll("all-reduce", 8)
    secs, words = est_mod.bandwidth_seconds(c, hw, dcn_axes=("x",))
    assert secs == pytest.approx(est_mod.bandwidth_seconds(c, hw)[0])
    assert "no network bandwidth given" in words
    with pytest.raises(ValueError, match="dcn_bandwidth"):
        sw.hardware(name="bad-net", peak_flops=1.0, hbm_bytes=1.0, hbm_bandwidth=1.0,
                    ici_bandwidth=1.0, dcn_bandwidth=-1.0)  # fmt: skip
    assert math.isfinite(secs)
