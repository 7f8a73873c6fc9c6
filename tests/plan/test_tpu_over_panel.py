"""The memory of TPU plan views, against libtpu. A layout the TPU compiler refuses for not
fitting in HBM shows, beside the error, the memory panel of that refused compile
(``_trace.over``): its peak read from libtpu's own report (written before it refused), the HBM
the compiler says it has, and the input leaf that is over, checked against a direct plan of the
same step and the weights' bytes per device by construction. A donated input reaches the TPU
compiler: its alias bytes are those of ``jax.jit(mlp, donate_argnums=0)`` compiled directly
with libtpu. Needs libtpu (skipped with the reason elsewhere)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from shardwidget import ShardView
from shardwidget.plan import background, plan, tpu
from tests.plan import tpu_direct

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

BIG = 262144  # w is 128 GiB of bf16: 16 GiB per chip over 8, past a v5e's 15.75 GiB


def test_a_layout_that_does_not_fit_shows_what_is_over():
    v5e = tpu.tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    args = tpu_direct.mlp_args(BIG)
    v = ShardView(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    assert background.wait(600)
    assert v.trace is not None  # the TPU's answer taken (no kernel loop here)
    assert "does not fit" in v.error
    direct = plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    _need, have = tpu.hbm_figures(direct.hbm)
    assert not direct.fits and direct.peak is not None and have is not None
    over = v._trace["over"]
    assert over["bytes"] == direct.peak.bytes > have == over["hbm"]
    assert over["hbm_name"] == "the TPU compiler's" and "over" in over["title"]
    rows = [r for g in over["groups"] for r in g["rows"]]
    w = next(r for r in rows if r["path"] == "w")
    assert w["bytes"] == BIG * BIG * 2 // 8  # the weights per chip, by construction
    text = repr(v).split("the layout asked for: ")[1]  # the text view's compact form
    assert (
        text.startswith(over["title"])
        and "parameters and inputs 16.3 GiB: w 16 GiB, x 256 MiB" in text
    )


def test_a_donated_input_reaches_the_tpu_compiler():
    v5e = tpu.tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))
    v = ShardView(tpu_direct.mlp, *tpu_direct.mlp_args(), mesh=v5e, in_specs=tpu_direct.SPECS)
    v.donate = ["w"]
    assert background.wait(600)
    assert v.trace is not None and v.trace.state.donate == (0,) and not v.error
    env = dict(os.environ, JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1", DONATE="0")
    env["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
    direct = os.path.join(os.path.dirname(__file__), "tpu_direct.py")
    out = subprocess.run(
        [tpu.tpu_python(), direct, "v5e:2x4", "4096", "2x4", "1", ""],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    )  # fmt: skip
    a, o, t, alias = json.loads(out.stdout)["memory"]
    m = v.trace.memory
    assert alias == 4096 * 4096 * 2 // 8  # w's bytes per chip: the new w is written into it
    assert [m["argument"], m["output"], m["temp"], m["alias"]] == [a, o, t, alias]
