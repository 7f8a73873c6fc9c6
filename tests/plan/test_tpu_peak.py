"""The memory peak of TPU plans (libtpu, ahead of time for a topology), read from the TPU
compiler's own reports: checked against the compiler's memory figures of the same compile,
against a direct ``jax.jit(...).lower(...).compile()`` on the topology's devices, and against
what the models hold by construction (their inputs' bytes per device, the activations a scan
saves for the backward pass). A v5e and a v6e topology; a model of several layers, scanned
and in a Python loop. Needs libtpu (skipped with the reason elsewhere)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import pytest

from shardwidget.hlo import peak as hlo_peak
from shardwidget.plan import plan, tpu
from tests.plan import tpu_direct, tpu_peak_direct

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

DIRECT = os.path.join(os.path.dirname(__file__), "tpu_peak_direct.py")
BATCH = 65536
"""Big enough that the activations leave VMEM for HBM (at 8192 the TPU compiler keeps every
temporary on chip: 0 B of HBM temporaries)."""


def direct(topology: str, model: str) -> dict:
    env = dict(
        os.environ, JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1", ALLOW_MULTIPLE_LIBTPU_LOAD="1"
    )
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "out.json")
        subprocess.run(
            [tpu.tpu_python(), DIRECT, topology, model, str(BATCH), out],
            capture_output=True,
            env=env,
            timeout=600,
            check=True,
        )
        with open(out, encoding="utf-8") as f:
            return dict(json.load(f))


def tpu_plan(topology: str, model: str):
    mesh = tpu.tpu_mesh(topology, (2, 4), ("data", "model"))
    args = tpu_peak_direct.args(BATCH)
    return plan(tpu_peak_direct.step(model), *args, mesh=mesh, in_specs=tpu_peak_direct.SPECS)


def leaf_bytes() -> dict[str, int]:
    """The input leaves' bytes per device on the (2, 4) mesh: ws (4, 2048, 2048) bf16 over
    (None, data, model), x (BATCH, 2048) bf16 over (data, None)."""
    layers, width = tpu_peak_direct.LAYERS, tpu_peak_direct.WIDTH
    return {
        "args[0]": layers * (width // 2) * (width // 4) * 2,
        "args[1]": (BATCH // 2) * width * 2,
    }


def check(pl) -> None:
    peak = pl.peak
    assert peak is not None, pl.peak_unknown
    m = pl.memory
    assert sum(b.bytes for b in peak.buffers) == peak.bytes == max(peak.timeline)
    assert peak.bytes <= m["arguments"] + m["outputs"] - m["aliased"] + m["temporaries"]
    args = sorted(b.bytes for b in peak.buffers if b.kind == "argument")
    assert args == sorted(leaf_bytes().values())
    assert peak.at.source.startswith("tpu_peak_direct.py:")


@pytest.mark.parametrize(
    ("topology", "model"), [("v5e:2x4", "scan"), ("v5e:2x4", "loop"), ("v6e:2x4", "scan")]
)
def test_tpu_plan_peak_agrees_with_the_tpu_compiler(topology, model):
    pl = tpu_plan(topology, model)
    check(pl)
    if model == "scan":  # the scan stacks each layer's activations: (LAYERS, B/2, W/4) bf16
        layers, width = tpu_peak_direct.LAYERS, tpu_peak_direct.WIDTH
        saved = f"bf16[{layers},{BATCH // 2},{width // 4}]"
        stacked = [b for b in pl.peak.buffers if b.kind == "temporary" and b.shape == saved]
        assert stacked and all(b.bytes == layers * BATCH // 2 * width // 4 * 2 for b in stacked)
        assert pl.peak.at.loop.startswith("in the body of ")


def test_tpu_plan_peak_is_a_direct_compiles_peak():
    got = direct("v5e:2x4", "scan")
    assert "error" not in got, got.get("error")
    want = hlo_peak.peak_of(got["report"])
    assert not isinstance(want, str), want
    a, o, t, al = got["memory"]
    assert want.bytes <= a + o + t - al
    pl = tpu_plan("v5e:2x4", "scan")
    assert pl.peak is not None
    assert (pl.peak.bytes, pl.peak.at.op_name) == (want.bytes, want.at.op_name)
    assert pl.peak.timeline == want.timeline


def test_a_step_that_does_not_fit_is_explained_by_its_peak():
    v5e = tpu.tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    pl = plan(tpu_direct.mlp, *tpu_direct.mlp_args(262144), mesh=v5e, in_specs=tpu_direct.SPECS)
    assert not pl.fits
    _need, have = tpu.hbm_figures(pl.hbm)
    assert pl.peak is not None, pl.peak_unknown
    assert have is not None and pl.peak.bytes > have  # over what the TPU compiler says it has
    w = 262144 * 262144 * 2 // 8  # the weights alone, per device (data x model = 8)
    assert max(b.bytes for b in pl.peak.buffers if b.kind == "argument") == w
