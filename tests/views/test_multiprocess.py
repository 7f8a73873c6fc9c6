"""Arrays with shards on another process: geometry whole, statistics for local blocks only."""

import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

HERE = pathlib.Path(__file__).resolve().parents[1]  # tests/, where the workers are


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pair(worker: str, timeout: float) -> list[dict]:
    """Run a worker script as two JAX processes on loopback; each one's RESULT JSON. Both are
    killed when one fails or runs past timeout (no process left hanging)."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src"), "JAX_PLATFORMS": "cpu"}
    env.pop("XLA_FLAGS", None)
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / worker), str(i), str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            assert p.returncode == 0, err[-3000:]
            results.append(json.loads(out.split("RESULT", 1)[1]))
    finally:
        for p in procs:
            p.kill()
    return results


@pytest.mark.slow
def test_two_processes_on_loopback():
    results = run_pair("multiprocess_worker.py", timeout=240)
    x = np.arange(64.0).reshape(8, 8)
    for r in results:
        assert r["local_process"] == r["pid"]
        assert len(r["blocks"]) == 8
        procs_seen = set(r["process"].values())
        assert procs_seen == {0, 1}
        for (index, devs), st in zip(r["blocks"], r["stats"], strict=True):
            (r0, r1), (c0, c1) = index
            owner = r["process"][str(devs[0])]
            if owner == r["pid"]:
                block = x[r0:r1, c0:c1]
                np.testing.assert_allclose(
                    st[:4], [block.min(), block.max(), block.mean(), block.std()], rtol=1e-6
                )
            else:
                assert st is None  # another process's block: no data here
        assert "several processes" in r["disabled"]
        assert "several processes" in r["error"]
        assert "in 2 processes" in r["text"]
    assert results[0]["blocks"] == results[1]["blocks"]
    for r in results:  # function views: front-end re-compiles refused in words, at once
        fn = r["fn"]
        assert "several processes" in fn["static"] and "every process" in fn["static"]
        assert fn["result"]["seq"] == 1 and not fn["result"]["ok"]
        assert "several processes" in fn["result"]["error"]
        assert fn["refused_s"] < 1.0
        assert fn["in_spec"] == str(P("y", "x"))  # from Python on every process (JAX's repr)
        assert fn["outputs_ok"]


@pytest.mark.slow
def test_front_end_requests_on_one_process_then_the_same_call_on_all():
    """The front end talks to process 0 only: its request, trait change and undo step are
    refused there without device work or half-state, and the following identical
    set_layout on both processes completes (it hung in device_put, then aborted)."""
    results = run_pair("multiprocess_frontend_worker.py", timeout=120)
    for r in results:
        assert r["unchanged"] and r["values_ok"] and r["error"] == ""
        assert r["in_specs"] == [["x", "y"], ["y", None]] and r["mesh_shape"] == [4, 2]
    r0 = results[0]
    assert r0["refused_s"] < 5  # refused at once, no collective started
    assert r0["messages"] and all("several processes" in str(m) for m in r0["messages"])
