"""The GPU planning helper: a process with jaxlib's CUDA plugin that compiles lowered modules for
GPUs it does not have (XLA's GPU compiler, ahead of time, from a target config).

Run as a script (``python _gpu_worker.py``) by the interpreter of the GPU compiler's own venv
(``plan/compilers.py``), never imported by the package. One JSON request per line on stdin, one
JSON reply per line on the protocol pipe (the original stdout; fd 1 points at stderr so that
nothing XLA prints breaks a reply). The kernel starts it with ``JAX_PLATFORMS=cpu`` (else the
plugin's CUDA check fails and JAX skips it) and no visible GPU: only compile-only devices.
ptxas and libdevice come from the venv's ``nvidia-cuda-nvcc`` wheel (JAX passes its folder
as ``xla_gpu_cuda_data_dir``). It ends when the kernel does.

Requests: ``{"id", "op": "describe", "target_config", "topology", "mesh_shape"}`` -> the
devices ([id, process_index]), the mesh's device ids in mesh order (``topologies.make_mesh``),
the device kind and the target config's fields this jaxlib refused (removed);
``{"id", "op": "compile", "module", "target_config", "topology", "devices"}`` -> what the GPU
compiler made (the CPU helper's reply fields; flops -1 where there is no cost analysis).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pathlib
import re
import sys
import tempfile
import time
from typing import Any

# the CPU helper's script, beside this one (the main loop, the adapter, XLA's dumps, the
# reply's fields): this script runs outside the package, so it is found by its folder
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
_cpu = importlib.import_module("_worker")


_REFUSED = re.compile(r'has no field named "([A-Za-z0-9_]+)"')
_TOPOLOGIES: dict[tuple[str, str], tuple[Any, list[str]]] = {}


def _with_stderr(call: Any) -> tuple[Any, str]:
    """(call(), what was written to fd 2 meanwhile, the parser's words included), or the
    exception re-raised with that text kept on it."""
    with tempfile.TemporaryFile("w+b") as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            out = call()
            err = None
        except Exception as e:
            out, err = None, e
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode(errors="replace")
    if err is not None:
        err.args = (*err.args, text)
        raise err
    return out, text


def _topology(req: dict[str, Any]) -> tuple[Any, list[str]]:
    """The topology of ``req`` and the target config's fields removed because this jaxlib's
    proto refuses them (each refusal names one field: it is dropped and the parse retried)."""
    from jax.experimental import topologies

    key = (req["target_config"], req["topology"])
    if key in _TOPOLOGIES:
        return _TOPOLOGIES[key]
    text, dropped = req["target_config"], []
    for _ in range(20):
        try:
            topo, _err = _with_stderr(
                lambda t=text: topologies.get_topology_desc(
                    platform="cuda", target_config=t, topology=req["topology"]
                )
            )
            break
        except Exception as e:
            found = _REFUSED.search(str(e.args[-1]) if e.args else "")
            if found is None or "GpuTargetConfigProto" not in str(e):
                raise
            dropped.append(found.group(1))
            text = _drop_field(text, found.group(1))
    else:
        raise ValueError(f"the target config was refused after removing {dropped}")
    _TOPOLOGIES[key] = (topo, dropped)
    return topo, dropped


def _drop_field(text: str, name: str) -> str:
    """The text-format proto without field ``name`` (a scalar line, or a block ``name {…}``)."""
    out, depth = [], 0
    for line in text.splitlines():
        s = line.strip()
        if depth:
            depth += s.count("{") - s.count("}")
            continue
        if s.startswith(name + ":") or s.startswith(name + " {") or s == name + "{":
            depth = s.count("{") - s.count("}")
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def _describe(req: dict[str, Any]) -> dict[str, Any]:
    from jax.experimental import topologies

    topo, dropped = _topology(req)
    names = tuple(f"a{i}" for i in range(len(req["mesh_shape"])))
    mesh = topologies.make_mesh(topo, tuple(int(s) for s in req["mesh_shape"]), names)
    d0 = topo.devices[0]
    return {
        "device_kind": str(d0.device_kind),
        "devices": [[int(d.id), int(d.process_index)] for d in topo.devices],
        "mesh": [int(d.id) for d in mesh.devices.flat],
        "dropped": dropped,
    }


def _compile(req: dict[str, Any], adapter: Any) -> dict[str, Any]:
    topo, _ = _topology(req)
    by_id = {int(d.id): d for d in topo.devices}
    devs = [by_id[i] for i in req["devices"]]
    t0 = time.perf_counter()
    report: dict[str, str] = {}  # the compiler's memory reports: the kernel reads the peak
    exe, dump = _cpu.compile_with_dump(
        lambda o: adapter.compile_module_for_devices(req["module"], devs, o), adapter, report
    )
    return dict(_cpu.answer(exe, adapter, time.perf_counter() - t0, dump, report))


def _ready() -> dict[str, object]:
    """The first reply: the versions (no CUDA plugin: its lookup fails, said as fatal)."""
    plugin = importlib.metadata.version("jax-cuda12-plugin")
    nvcc = importlib.util.find_spec("nvidia.cuda_nvcc")
    return {
        "ready": 1,
        "jax": importlib.metadata.version("jax"),
        "jaxlib": importlib.metadata.version("jaxlib"),
        "plugin": plugin,
        "nvcc": str(list(nvcc.submodule_search_locations or [])[:1]) if nvcc else "",
    }


def _words(e: Exception) -> str:
    """An error's words without the parser's text that :func:`_with_stderr` keeps on it."""
    return str(e.args[0]) if e.args else str(e)


def main() -> None:
    ops = {"describe": lambda req, _adapter: _describe(req), "compile": _compile}
    _cpu.serve(_ready, ops, _words)


if __name__ == "__main__":
    main()
