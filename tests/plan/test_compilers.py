"""Where the TPU and GPU compilers' helpers find their Python (plan/compilers.py): an override,
the kernel's own plugin, the cached venv made by ``python -m shardwidget.compilers install``;
words with the command where there is none. No venv is installed here (that is ./dev's job):
an install's steps run against a fake pip."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shardwidget.plan import PlanError, compilers


@pytest.fixture
def bare(monkeypatch, tmp_path):
    """No override, an empty cache: as on a fresh machine."""
    for c in compilers.COMPILERS.values():
        monkeypatch.delenv(c.python_var, raising=False)
    monkeypatch.setenv("SHARDWIDGET_COMPILERS_DIR", str(tmp_path))
    return tmp_path


def test_no_compiler_is_said_with_the_one_command(bare):
    if compilers.importlib.util.find_spec("jax_cuda12_plugin"):
        pytest.skip("this kernel has the CUDA plugin itself (a GPU machine)")
    jax = compilers.kernel_versions()[0]
    with pytest.raises(PlanError) as e:
        compilers.python_for("gpu")
    assert str(e.value).startswith(
        f"the GPU compiler (jaxlib's CUDA plugin) is not installed for jax {jax}: run "
        "`python -m shardwidget.compilers install gpu` once (a venv of its own in "
        f"{bare / f'gpu-jax{jax}'}"
    )
    assert compilers.unavailable("gpu") == str(e.value)


def test_an_override_wins_and_a_wrong_one_is_said(bare, monkeypatch):
    monkeypatch.setenv("SHARDWIDGET_GPU_PYTHON", sys.executable)
    assert compilers.python_for("gpu") == sys.executable
    monkeypatch.setenv("SHARDWIDGET_TPU_PYTHON", "/nowhere/python")
    with pytest.raises(PlanError, match="SHARDWIDGET_TPU_PYTHON='/nowhere/python' is not a Python"):
        compilers.python_for("tpu")


def test_a_venv_is_found_by_its_stamp_for_this_jax_only(bare):
    jax, jaxlib = compilers.kernel_versions()
    venv = bare / f"gpu-jax{jax}"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    reqs = compilers.compiler("gpu").requirements(jax, jaxlib)
    assert reqs == [
        f"jax=={jax}",
        f"jaxlib=={jaxlib}",
        f"jax-cuda12-plugin=={jaxlib}",
        f"jax-cuda12-pjrt=={jaxlib}",
        "nvidia-cuda-nvcc-cu12",
    ]
    (venv / compilers.STAMP).write_text(json.dumps({"requirements": reqs[:-1]}))
    with pytest.raises(PlanError):  # made for other requirements: not this one
        compilers.python_for("gpu")
    (venv / compilers.STAMP).write_text(json.dumps({"requirements": reqs}))
    assert compilers.python_for("gpu") == str(venv / "bin" / "python")


def test_an_unknown_compiler_is_refused_in_words():
    with pytest.raises(ValueError, match="no compiler 'rocm': the helpers run tpu and gpu"):
        compilers.compiler("rocm")


def test_a_failed_install_says_what_pip_said(bare, monkeypatch):
    """pip refusing (here: a requirement no index has) is said with its last lines."""
    c = compilers.Compiler("gpu", "the test compiler", "no_such_module_xyz", "0 MB")
    monkeypatch.setitem(compilers.COMPILERS, "gpu", c)
    monkeypatch.setattr(
        compilers.Compiler,
        "requirements",
        lambda self, jax, jaxlib: ["--no-index", "nosuchpkg-xyz"],
    )
    with pytest.raises(PlanError, match=r"could not install --no-index nosuchpkg-xyz \(exit 1\):"):
        compilers.install("gpu", into=bare / "v", quiet=True)


def test_the_command_line_says_where_or_why(bare):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PYTHON")}
    env["SHARDWIDGET_COMPILERS_DIR"] = str(bare)
    done = subprocess.run(
        [sys.executable, "-m", "shardwidget.compilers", "where", "tpu"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if compilers.importlib.util.find_spec("libtpu"):
        assert done.returncode == 0
    else:
        assert done.returncode == 1
        assert done.stderr.startswith("error: the TPU compiler (libtpu) is not installed for jax")


def test_the_extras_put_no_compiler_plugin_beside_the_kernels_jax():
    """`pip install 'shardwidget[tpu]'` once brought jax[tpu] (libtpu) into the kernel's
    environment, where the kernel's JAX loaded it (issue 38 item 2): the extras stay empty."""
    import pathlib
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert extras["tpu"] == [] and extras["gpu"] == []
    plugins = ("libtpu", "jax[tpu]", "jax[cuda", "jax-cuda", "cuda12")
    assert not [d for ds in extras.values() for d in ds if any(p in d for p in plugins)]
