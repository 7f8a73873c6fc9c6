"""The planning helper: a process with N simulated CPU devices that compiles lowered modules.

Run as a script (``python _worker.py N``), not as part of the package, so that it imports only
JAX and numpy. It reads one JSON request per line on stdin and writes one JSON reply per line on
stdout. It never sees the kernel's accelerator (JAX_PLATFORMS=cpu), and it ends when the kernel
does: stdin reaches end of file, or its parent process changes (the kernel died without closing).
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any


def _lower_priority() -> None:
    """Run ``SHARDWIDGET_HELPER_NICE`` below the kernel (a search's helpers: on a machine
    with as many helpers as cores, the kernel still answers a cell at once). Called first,
    while this is the only thread: Linux keeps a niceness per thread, and the threads started
    later (XLA's) inherit it."""
    nice = int(os.environ.get("SHARDWIDGET_HELPER_NICE", "0") or 0)
    if nice > 0 and hasattr(os, "nice"):
        with contextlib.suppress(OSError):  # not allowed here: it runs as the kernel does
            os.nice(nice)


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def _adapter() -> Any:
    """shardwidget/_jax (the adapter package) loaded by its path: the package itself (widgets
    and all) stays out."""
    path = pathlib.Path(__file__).resolve().parents[1] / "_jax" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "_shardwidget_jax", path, submodule_search_locations=[str(path.parent)]
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its own submodules (from .shardy import ...) resolve under it
    spec.loader.exec_module(mod)
    return mod


def _compile(text: str, n: int, adapter: Any) -> dict[str, object]:
    t0 = time.perf_counter()
    report: dict[str, str] = {}
    exe, dump = compile_with_dump(
        lambda o: adapter.compile_module_text(text, n, o), adapter, report
    )
    return answer(exe, adapter, time.perf_counter() - t0, dump, report)


MEMORY_FILES = (
    "after_optimizations-live-range.txt",
    "after_optimizations-buffer-assignment.txt",
    "after_optimizations.txt",
)
"""The dump files the kernel reads the memory peak from (``shardwidget.hlo.peak.FILES``;
this script imports nothing of the package)."""

DUMP_DIR_ENV = "SHARDWIDGET_DUMP_DIR"
"""Where the kernel asks for dump folders (``shardwidget.hlo.peak.DUMP_DIR_ENV``)."""


def memory_report(folder: str) -> dict[str, str]:
    """The texts of :data:`MEMORY_FILES` in an XLA dump folder, by suffix (missing ones left
    out): what any helper (CPU, TPU, GPU) sends back as ``"memory_report"`` for the kernel to
    read the peak from (``shardwidget.hlo.peak.peak_of``)."""
    out: dict[str, str] = {}
    for suffix in MEMORY_FILES:
        found = sorted(glob.glob(os.path.join(folder, "*" + suffix)))
        if found:
            out[suffix] = pathlib.Path(found[-1]).read_text()
    return out


def compile_with_dump(
    compile_: Callable[[dict[str, Any]], Any], adapter: Any, report: dict[str, str] | None = None
) -> tuple[Any, str]:
    """(the executable ``compile_(options)`` makes, XLA's record of Shardy's propagation in that
    compile): the text the collectives' causes are checked by (the TPU helper's too).
    ``report``: a dict filled with the compile's memory reports (:func:`memory_report`), even
    when the compile fails (libtpu writes them before refusing a program too big for HBM)."""
    # in memory where the kernel found room (hlo.peak.dump_root: files on disk cost time)
    folder = tempfile.mkdtemp(prefix="shardwidget-plan-why-", dir=os.environ.get(DUMP_DIR_ENV))
    options = adapter.PEAK_DUMP if report is not None else adapter.SHARDY_DUMP
    try:
        exe = compile_({"xla_dump_to": folder, **options})
        dumps = sorted(glob.glob(os.path.join(folder, "shardy", "*", "*after_propagation.mlir")))
        dump = pathlib.Path(dumps[-1]).read_text() if dumps else ""
    finally:
        if report is not None:
            report.update(memory_report(folder))
        shutil.rmtree(folder, ignore_errors=True)
    return exe, dump


def answer(
    exe: Any,
    adapter: Any,
    compile_s: float,
    shardy_dump: str = "",
    report: dict[str, str] | None = None,
) -> dict[str, object]:
    """What the kernel gets of a compiled executable (the TPU helper's reply too);
    ``report``: the compile's memory reports (:func:`memory_report`), sent as
    ``"memory_report"``."""
    hlo = exe.hlo_modules()[0].to_string()
    m = exe.get_compiled_memory_stats()
    try:
        cost = exe.cost_analysis() or {}
    except Exception:  # the GPU compile-only client has none: "GetCostAnalysis is not supported"
        cost = {"flops": -1.0, "bytes accessed": -1.0}  # unknown: the kernel counts the HLO
    if isinstance(cost, list):
        cost = cost[0] if cost else {}
    outs = [adapter.hlo_sharding_text(s) for s in exe.get_output_shardings()]
    return {
        "hlo": hlo,
        "memory": {
            "arguments": int(m.argument_size_in_bytes),
            "outputs": int(m.output_size_in_bytes),
            "temporaries": int(m.temp_size_in_bytes),
            "aliased": int(m.alias_size_in_bytes),
            "code": int(m.generated_code_size_in_bytes),
        },
        "flops": float(cost.get("flops", 0.0)),
        "bytes_accessed": float(cost.get("bytes accessed", 0.0)),
        "output_shardings": outs,
        "compile_s": compile_s,
        "shardy_dump": shardy_dump,
        "memory_report": report or {},
    }


Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
"""One operation of a compiler helper: (the request, the adapter) -> the reply's fields."""


def serve(
    ready: Callable[[], dict[str, object]],
    ops: dict[str, Handler],
    words: Callable[[Exception], str] = str,
) -> None:
    """The TPU and GPU helpers' main loop. Replies go to the original stdout only: fd 1 then
    points at stderr, so nothing the compiler prints breaks a reply. JAX is told to use CPU
    platforms (compile-only clients) before ``ready()`` loads the plugin and says what the
    first reply holds (its failure said in words, as "fatal"); then one reply a request line,
    by its "op" (an error in words, ``words(exception)``: the helper stays up)."""
    _lower_priority()
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    try:
        import jax

        jax.config.update("jax_platforms", "cpu")
        first = ready()
        adapter = _adapter()
    except Exception as e:  # no plugin, or a JAX without topologies: said in words
        proto.write(json.dumps({"fatal": f"{type(e).__name__}: {e}"}) + "\n")
        return
    proto.write(json.dumps(first) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        try:
            reply: dict[str, object] = {"id": req["id"], **ops[req["op"]](req, adapter)}
        except Exception as e:  # the kernel shows it in words; the helper stays up
            reply = {"id": req["id"], "error": f"{type(e).__name__}: {words(e)}"}
        proto.write(json.dumps(reply) + "\n")


def main() -> None:
    n = int(sys.argv[1])
    _lower_priority()
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    import jax  # here, not at the top: JAX reads XLA_FLAGS (the device count) when imported

    if len(jax.devices()) < n:
        print(json.dumps({"fatal": f"asked for {n} devices, JAX made {len(jax.devices())}"}))
        return
    adapter = _adapter()
    print(json.dumps({"ready": n}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            reply: dict[str, object] = {"id": req["id"], **_compile(req["module"], n, adapter)}
        except Exception as e:  # the kernel shows it in words; the helper stays up
            reply = {"id": req["id"], "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
