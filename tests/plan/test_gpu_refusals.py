"""gpu_mesh refuses bad inputs in words, before any helper starts (so these run everywhere,
with or without the GPU compiler's venv): an unknown GPU (the known ones listed), a mesh that
does not use every GPU once, hosts the GPU count does not split over, counts that are not whole
numbers, axis names used twice, an NVLink domain that splits a host (one on GPUs without NVLink:
test_gpu_links.py).
"""

from __future__ import annotations

import re

import pytest

from shardwidget.plan import gpu

KNOWN = (
    "a100-40, a100-80, h100-sxm, h100-pcie, h200, b200, gb200, a100 (= a100-80), h100 (= h100-sxm)"
)


@pytest.fixture(autouse=True)
def _no_helper(monkeypatch):
    """A refusal comes before the helper: starting one fails the test."""

    def started():
        raise AssertionError("a GPU helper was started for an input gpu_mesh refuses")

    monkeypatch.setattr(gpu, "gpu_helper", started)


@pytest.mark.parametrize(
    ("args", "kwargs", "words"),
    [
        (("h800", (8,), ("data",)), {}, re.escape(f"unknown GPU 'h800'; gpu_mesh knows: {KNOWN}")),
        (("H100 ", (8,), ("data",)), {"hosts": 0}, "hosts must be at least 1; got 0"),
        (
            ("h100", (2, 8), ("data", "model")),
            {},
            r"mesh_shape \(2, 8\) has 16 positions, but 1 slice\(s\) × 1 host\(s\) × 8 GPUs per "
            r"host are 8 GPUs: the mesh must use every GPU once \(gpus_per_host=16 would\)",
        ),
        (
            ("h100", (12,), ("data",)),
            {"hosts": 2, "gpus_per_host": 6, "slices": 0},
            "slices must be at least 1",
        ),
        # 16 GPUs over 3 hosts: no whole number of GPUs per host
        (
            ("h100", (16,), ("data",)),
            {"hosts": 3},
            r"mesh_shape \(16,\) has 16 positions, which do not split evenly over 1 slice\(s\) × "
            r"3 host\(s\): every host holds the same number of GPUs",
        ),
        (
            ("b200", (4, 6), ("data", "model")),
            {"hosts": 5, "slices": 2},
            r"24 positions, which do not split evenly over 2 slice\(s\) × 5 host\(s\)",
        ),
        (("h100", (16,), ("data",)), {"hosts": 2.5}, "hosts must be a whole number; got 2.5"),
        (("h100", (8,), ("data",)), {"gpus_per_host": True}, "gpus_per_host must be a whole"),
        (("h100", (4.0, 2), ("a", "b")), {}, "every mesh_shape size must be a whole number"),
        (("h100", (2, 4), ("a", "a")), {}, "each mesh axis needs a name of its own"),
        (("h100", (2, 4), ("a",)), {}, r"mesh_shape \(2, 4\) has 2 axes; axis_names has 1"),
        (
            ("gb200", (20,), ("data",)),
            {"gpus_per_host": 5, "hosts": 4},
            "an NVLink domain of 72 GB200 GPUs joins whole hosts, but hosts of 5 GPUs do not "
            "divide it",
        ),
        (
            ("h100", (16,), ("data",)),
            {"hosts": 2, "nvlink_domain": 12},
            "an NVLink domain of 12 H100 SXM GPUs joins whole hosts, but hosts of 8 GPUs",
        ),
        (
            ("h100", (8,), ("data",)),
            {"memory_fraction": 1.5},
            r"memory_fraction must be in \(0, 1\]",
        ),
    ],
)
def test_bad_inputs_are_refused_in_words(args, kwargs, words):
    with pytest.raises(ValueError, match=words):
        gpu.gpu_mesh(*args, **kwargs)
