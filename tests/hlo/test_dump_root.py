"""Compile dumps go to memory (/dev/shm) where there is room: XLA writes 30-40 files per dumped
compile, read once and deleted, and on disk they cost time (``hlo.peak.dump_root``). The
kernel's compile (``why.explain.compile_with_dump``) and every helper's (``plan/_worker.py``,
told by ``SHARDWIDGET_DUMP_DIR``) make their folders there, and leave nothing behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from shardwidget import _jax
from shardwidget.hlo import peak as hlo_peak
from shardwidget.plan import _worker
from shardwidget.plan import helper as helper_mod
from shardwidget.why import explain


def test_dev_shm_with_room_takes_the_dumps(monkeypatch: Any) -> None:
    if not (os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK)):
        pytest.skip("this machine has no writable /dev/shm")
    free = shutil.disk_usage("/dev/shm").free
    expected = "/dev/shm" if free >= hlo_peak.FAST_DUMP_FREE else None
    assert hlo_peak.dump_root() == expected
    small = SimpleNamespace(free=hlo_peak.FAST_DUMP_FREE - 1, total=0, used=0)
    monkeypatch.setattr(hlo_peak.shutil, "disk_usage", lambda p: small)
    assert hlo_peak.dump_root() is None  # a container's 64 MB /dev/shm: the disk then


def test_the_kernels_compile_dumps_under_dump_root(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(hlo_peak, "dump_root", lambda: str(tmp_path))
    made: list[str] = []
    real = tempfile.mkdtemp

    def mkdtemp(**kw: Any) -> str:
        folder = real(**kw)
        made.append(folder)
        return folder

    monkeypatch.setattr(explain.tempfile, "mkdtemp", mkdtemp)
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    stage = jax.jit(lambda x: jnp.tanh(x) @ x.T).trace(jnp.ones((8, 8)))
    report: dict[str, str] = {}
    explain.compile_with_dump(stage, mesh, report)
    assert len(made) == 1 and Path(made[0]).parent == tmp_path
    if jax.__version_info__ >= (0, 10):  # (XLA:CPU writes no live-range report before)
        assert hlo_peak.LIVE_RANGE in report
    assert list(tmp_path.iterdir()) == []  # read and deleted


def test_a_helper_is_told_where_to_dump_and_does(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(hlo_peak, "dump_root", lambda: str(tmp_path))
    env = helper_mod._env(4)
    assert env[hlo_peak.DUMP_DIR_ENV] == str(tmp_path)
    assert _worker.DUMP_DIR_ENV == hlo_peak.DUMP_DIR_ENV  # (the worker imports no package)
    monkeypatch.setattr(hlo_peak, "dump_root", lambda: None)
    monkeypatch.setenv(hlo_peak.DUMP_DIR_ENV, "/somewhere")
    assert hlo_peak.DUMP_DIR_ENV not in helper_mod._env(4)  # no room: the system's temp

    monkeypatch.setenv(hlo_peak.DUMP_DIR_ENV, str(tmp_path))
    folders: list[str] = []

    def compile_(options: dict[str, Any]) -> object:
        folders.append(options["xla_dump_to"])
        return object()

    adapter = SimpleNamespace(PEAK_DUMP=_jax.PEAK_DUMP, SHARDY_DUMP=_jax.SHARDY_DUMP)
    _worker.compile_with_dump(compile_, adapter, {})
    assert len(folders) == 1 and Path(folders[0]).parent == tmp_path
    assert list(tmp_path.iterdir()) == []
