"""``./dev demo``: what it prints before the URL is the set-up log, not a page of minified JS."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(
    not (VENV / "bin" / "jupyter").exists(), reason="needs the ./dev venv in .venv (./dev test)"
)
def test_dev_demo_prints_no_minified_js_before_the_url(tmp_path):
    port = _free_port()
    env = dict(os.environ, PORT=str(port), JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"))
    env.update(JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"), IPYTHONDIR=str(tmp_path / "ipy"))
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ROOT / "dev"), "demo"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/lab"
    try:
        deadline = time.monotonic() + 120
        while url not in log.read_text(errors="replace"):
            assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        time.sleep(3)  # JupyterLab's start-up checks (the yarn call) run around the URL
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.read_text(errors="replace")
    assert "Dynamic require" not in text and "Fail to get yarn configuration" not in text, text
    # No line is a minified bundle (its first line alone was ~12 KB).
    assert max(len(line) for line in text.splitlines()) < 2000, text[:2000]
    assert (VENV / "package.json").read_text().strip() == '{"type": "commonjs"}'
