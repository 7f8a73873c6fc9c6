"""Arrays with shards on another process: geometry whole, statistics for local blocks only."""

import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_on_loopback():
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src"), "JAX_PLATFORMS": "cpu"}
    env.pop("XLA_FLAGS", None)
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "multiprocess_worker.py"), str(i), str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.split("RESULT", 1)[1]))
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
        assert fn["in_spec"] == "P('y', 'x')"  # from Python on every process
        assert fn["outputs_ok"]
