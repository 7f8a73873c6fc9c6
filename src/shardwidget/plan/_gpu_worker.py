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

import functools
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import re
import sys
import tempfile
import threading
import time
from typing import Any


@functools.cache
def _cpu_worker() -> Any:
    """The CPU helper's script, loaded by its path (watching the parent, the adapter, the
    reply's fields)."""
    path = pathlib.Path(__file__).resolve().with_name("_worker.py")
    spec = importlib.util.spec_from_file_location("_shardwidget_worker", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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
    exe, dump = _cpu_worker().compile_with_dump(
        lambda o: adapter.compile_module_for_devices(req["module"], devs, o), adapter, report
    )
    return dict(_cpu_worker().answer(exe, adapter, time.perf_counter() - t0, dump, report))


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    worker = _cpu_worker()
    threading.Thread(target=worker._watch_parent, args=(os.getppid(),), daemon=True).start()
    try:
        import jax

        jax.config.update("jax_platforms", "cpu")  # type: ignore[no-untyped-call]
        plugin = importlib.metadata.version("jax-cuda12-plugin")
        nvcc = importlib.util.find_spec("nvidia.cuda_nvcc")
        adapter = worker._adapter()
    except Exception as e:  # no plugin, or a JAX without topologies: said in words
        proto.write(json.dumps({"fatal": f"{type(e).__name__}: {e}"}) + "\n")
        return
    ready = {
        "ready": 1,
        "jax": importlib.metadata.version("jax"),
        "jaxlib": importlib.metadata.version("jaxlib"),
        "plugin": plugin,
        "nvcc": str(list(nvcc.submodule_search_locations or [])[:1]) if nvcc else "",
    }
    proto.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        try:
            op = _describe(req) if req["op"] == "describe" else _compile(req, adapter)
            reply: dict[str, Any] = {"id": req["id"], **op}
        except Exception as e:  # the kernel shows it in words; the helper stays up
            words = str(e.args[0]) if e.args else str(e)
            reply = {"id": req["id"], "error": f"{type(e).__name__}: {words}"}
        proto.write(json.dumps(reply) + "\n")


if __name__ == "__main__":
    main()
