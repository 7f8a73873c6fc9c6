"""Without libtpu, a TPU plan is refused in one line saying what to install and why (these run
everywhere: libtpu is made to look absent)."""

from __future__ import annotations

import pytest

from shardwidget.plan import PlanError, compilers, tpu


def test_without_libtpu_the_refusal_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv(tpu.TPU_PYTHON_VAR, raising=False)
    monkeypatch.setenv("SHARDWIDGET_COMPILERS_DIR", str(tmp_path))  # no cached venv
    monkeypatch.setattr(compilers.importlib.util, "find_spec", lambda name: None)
    tpu.stop()
    assert "`python -m shardwidget.compilers install tpu`" in tpu.unavailable()
    with pytest.raises(PlanError, match=r"libtpu.*about 700 MB"):
        tpu.tpu_mesh("v5e:2x2", (2, 2), ("a", "b"))


def test_a_tpu_python_that_cannot_run_is_refused_in_words(monkeypatch, tmp_path):
    monkeypatch.setenv(tpu.TPU_PYTHON_VAR, str(tmp_path / "no-python"))
    tpu.stop()
    with pytest.raises(PlanError, match="is not a Python this kernel can run"):
        tpu.tpu_mesh("v5e:2x2", (2, 2), ("a", "b"))


def test_hbm_words_read_the_compilers_figures():
    words = (
        "RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO "
        "temporaries (64.25G) exceeds available HBM (15.75G)."
    )
    assert tpu.hbm_figures(words) == (int(64.25 * 2**30), int(15.75 * 2**30))


def test_compile_with_says_why_not_in_one_line(monkeypatch, tmp_path):
    assert (
        tpu.compile_with("", 256)[1]
        == "this hardware is not a TPU: its plans are the CPU compiler's"
    )
    assert "no v5e topology has 12 devices" in tpu.compile_with("v5e", 12)[1]
    monkeypatch.delenv(tpu.TPU_PYTHON_VAR, raising=False)
    monkeypatch.setenv("SHARDWIDGET_COMPILERS_DIR", str(tmp_path))
    monkeypatch.setattr(compilers.importlib.util, "find_spec", lambda name: None)
    label, why = tpu.compile_with("v5e", 256)
    assert label == "" and "shardwidget.compilers install tpu" in why and "\n" not in why
    assert tpu.topology_for("v5e", 512) == ("v5e:16x16", 2, "")
    assert tpu.topology_for("v5", 1024) == ("v5:8x8x16", 1, "megacore")
