"""The TPU planning helper: a process with libtpu that compiles lowered modules for a TPU
topology it does not have (the TPU's own compiler, ahead of time, on a CPU host).

Run as a script (``python _tpu_worker.py``) by the interpreter that has libtpu (the kernel's
own, or ``SHARDWIDGET_TPU_PYTHON``), never imported by the package. One JSON request per line on
stdin, one JSON reply per line on the protocol pipe (the process's original stdout; fd 1 is
pointed at stderr so that nothing libtpu prints can break a reply). The kernel starts it with
``TPU_SKIP_MDS_QUERY=1`` and ``JAX_PLATFORMS=cpu``: no TPU is opened, no metadata server asked.
It ends when the kernel does (stdin closes, or its parent process changes).

Requests: ``{"id", "op": "describe", "topology", "num_slices", "chip_config_name",
"mesh_shape", "axis_names", "allow_split_physical_axes", "max_axes"}`` -> the topology's devices,
the mesh's devices in mesh order and the mesh shapes of as many devices (1 to max_axes axes)
that ``make_mesh`` places on the topology; ``{"id", "op": "compile", "module", same topology
keys, "devices": [ids in mesh order]}`` -> what the TPU compiler made, or ``"hbm"`` (the compiler's
words) when the program does not fit in HBM.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import pathlib
import sys
import time
from typing import Any

# the CPU helper's script, beside this one (the main loop, the adapter, XLA's dumps, the
# reply's fields): this script runs outside the package, so it is found by its folder
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
_cpu = importlib.import_module("_worker")


_TOPOLOGIES: dict[tuple[str, int, str], Any] = {}


def _topology(req: dict[str, Any]) -> Any:
    from jax.experimental import topologies

    key = (req["topology"], int(req.get("num_slices") or 1), req.get("chip_config_name") or "")
    if key not in _TOPOLOGIES:
        kw: dict[str, Any] = {"num_slices": key[1]} if key[1] > 1 else {}
        if key[2]:
            kw["chip_config_name"] = key[2]
        _TOPOLOGIES[key] = topologies.get_topology_desc(platform="tpu", topology_name=key[0], **kw)
    return _TOPOLOGIES[key]


def _device(d: Any) -> list[Any]:
    """[id, [x, y, z], core on chip, slice]"""
    return [
        int(d.id),
        [int(c) for c in d.coords],
        int(getattr(d, "core_on_chip", 0)),
        int(getattr(d, "slice_index", 0) or 0),
    ]


def _mesh_devices(req: dict[str, Any], devices: list[Any]) -> Any:
    """The devices in mesh order, placed as ``topologies.make_mesh`` places them
    (``mesh_utils.create_device_mesh``); across slices, the first axis that the slice count
    divides spans the slices (``create_hybrid_device_mesh``: ICI inside, DCN across)."""
    from jax.experimental import mesh_utils

    shape = [int(s) for s in req["mesh_shape"]]
    split = bool(req.get("allow_split_physical_axes"))
    slices = int(req.get("num_slices") or 1)
    if slices == 1:
        return mesh_utils.create_device_mesh(shape, devices, allow_split_physical_axes=split)
    k = next((i for i, s in enumerate(shape) if s % slices == 0), None)
    if k is None:
        raise ValueError(f"no axis of the mesh {tuple(shape)} spans the {slices} slices")
    dcn = [1] * len(shape)
    dcn[k] = slices
    ici = list(shape)
    ici[k] //= slices
    return mesh_utils.create_hybrid_device_mesh(ici, dcn, devices, allow_split_physical_axes=split)


def _factorizations(n: int, k: int) -> list[list[int]]:
    """Every ordered k-tuple of positive integers whose product is n (``model.mesh``'s own,
    which this script, never importing the package, cannot use)."""
    if k == 1:
        return [[n]]
    return [[d, *r] for d in range(1, n + 1) if n % d == 0 for r in _factorizations(n // d, k - 1)]


def _placed(req: dict[str, Any], devices: list[Any], shape: list[int]) -> bool:
    """Whether ``make_mesh`` places a mesh of this shape on the topology (it refuses, with a
    NotImplementedError, a logical axis that is no product of physical axes)."""
    try:
        _mesh_devices({**req, "mesh_shape": shape}, devices)
    except Exception:  # make_mesh's refusal, whatever its type: the shape is not held
        return False
    return True


_HELD: dict[tuple[Any, ...], dict[str, list[list[int]]]] = {}


def _held_shapes(req: dict[str, Any], devices: list[Any]) -> dict[str, list[list[int]]]:
    """The shapes of as many devices as the request's mesh that ``make_mesh`` accepts, by axis
    count (1 to ``max_axes``): what a view's mesh select may offer. Kept per topology and
    count: trying them all takes about a second on 256 chips, and each reshape asks again."""
    n = math.prod(int(s) for s in req["mesh_shape"])
    most = int(req.get("max_axes") or 0)
    key = (req["topology"], req.get("num_slices"), req.get("chip_config_name"), n, most,
           bool(req.get("allow_split_physical_axes")))  # fmt: skip
    if key not in _HELD:
        _HELD[key] = {
            str(k): [s for s in _factorizations(n, k) if _placed(req, devices, s)]
            for k in range(1, most + 1)
        }
    return _HELD[key]


def _describe(req: dict[str, Any]) -> dict[str, Any]:
    topo = _topology(req)
    try:
        mesh = _mesh_devices(req, list(topo.devices))
    except Exception as e:  # make_mesh's refusal: answered with the shapes the torus holds
        return _refused(req, list(topo.devices), e)
    d0 = topo.devices[0]
    return {
        "device_kind": str(d0.device_kind),
        "num_cores": getattr(d0, "num_cores", None),
        "platform_version": str(d0.client.platform_version),
        "devices": [_device(d) for d in topo.devices],
        "mesh": [int(d.id) for d in mesh.flat],
        "shapes": _held_shapes(req, list(topo.devices)),
    }


def _refused(req: dict[str, Any], devices: list[Any], e: Exception) -> dict[str, Any]:
    """A mesh the topology cannot hold: JAX's words, its device count, and the shapes of that
    many devices (as many axes as asked, at least 1) that ``make_mesh`` places on it."""
    whole = {**req, "mesh_shape": [len(devices)], "max_axes": max(len(req["mesh_shape"]), 1)}
    return {"refused": f"{type(e).__name__}: {e}", "n_devices": len(devices),
            "shapes": _held_shapes(whole, devices)}  # fmt: skip


def _compile(req: dict[str, Any], adapter: Any) -> dict[str, Any]:
    topo = _topology(req)
    by_id = {int(d.id): d for d in topo.devices}
    devs = [by_id[i] for i in req["devices"]]
    t0 = time.perf_counter()
    report: dict[str, str] = {}
    try:
        exe, dump = _cpu.compile_with_dump(
            lambda o: adapter.compile_module_for_devices(req["module"], devs, o), adapter, report
        )
    except Exception as e:  # an HBM overflow is an answer, not a failure
        text = str(e)
        if "RESOURCE_EXHAUSTED" in text and "HBM" in text.upper():
            # libtpu wrote its memory reports before refusing: what is over, explained
            return {"hbm": text, "compile_s": time.perf_counter() - t0, "memory_report": report}
        raise
    return dict(_cpu.answer(exe, adapter, time.perf_counter() - t0, dump, report))


def _ready() -> dict[str, object]:
    """The first reply: the versions (no libtpu: its lookup fails, said as fatal)."""
    libtpu = importlib.metadata.version("libtpu")
    return {"ready": 1, "jax": importlib.metadata.version("jax"), "libtpu": libtpu}


def main() -> None:
    ops = {"describe": lambda req, _adapter: _describe(req), "compile": _compile}
    _cpu.serve(_ready, ops)


if __name__ == "__main__":
    main()
