"""Where the TPU and GPU compilers run: a Python of their own, never the kernel's.

A compiler plugin (libtpu, jaxlib's CUDA plugin) that the kernel's JAX can import is one the
kernel's JAX loads: libtpu then prints its TPU-VM errors into the notebook, the CUDA plugin
tries to start CUDA. So each compiler runs in a helper process whose interpreter is, in order:

1. the one ``SHARDWIDGET_TPU_PYTHON`` / ``SHARDWIDGET_GPU_PYTHON`` names (tests, CI, your own);
2. the kernel's own, where the platform already put the plugin there (a Colab TPU runtime's
   libtpu, a GPU machine's CUDA plugin): it is the platform's, not ours;
3. a venv made for this compiler and the kernel's JAX version, by
   ``python -m shardwidget.compilers install tpu|gpu`` (or :func:`install`), kept in
   ``~/.cache/shardwidget/compilers/<compiler>-jax<version>`` (``SHARDWIDGET_COMPILERS_DIR``
   moves it). One per (JAX version, compiler): a module lowered by one JAX is read by the same.

Nothing is found: PlanError whose words give the command. Every failure of an install (no
venv module, pip's refusal, a JAX that pip changed, a plugin that does not import) is said in
words with the tail of what pip printed.

The kernel's side of both helpers is here too (:class:`CompilerHelper`, :func:`running`,
:func:`compile_request`, :class:`Results`): ``tpu.py`` and ``gpu.py`` add only what their
compiler asks and answers.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from jax.sharding import AbstractMesh, AxisType

from . import helper as _helper
from . import kept_on_disk, module_key
from .helper import PlanError

STAMP = ".shardwidget-compiler.json"
"""The file in a helper venv that says what it was made for (compiler, jax, requirements)."""


@dataclass(frozen=True)
class Compiler:
    """One compiler a helper runs."""

    name: str
    """"tpu" or "gpu"."""
    what: str
    """How messages name it."""
    module: str
    """The module whose presence says the plugin is there."""
    size: str
    """What an install downloads, in words."""

    @property
    def python_var(self) -> str:
        """The variable that names its interpreter: SHARDWIDGET_TPU_PYTHON."""
        return f"SHARDWIDGET_{self.name.upper()}_PYTHON"

    def requirements(self, jax: str, jaxlib: str) -> list[str]:
        """What pip installs into its venv for the kernel's jax / jaxlib versions."""
        if self.name == "tpu":
            # jax[tpu] pins the jaxlib and the libtpu made for that jax
            return [f"jax[tpu]=={jax}", f"jaxlib=={jaxlib}"]
        # the CUDA plugin at jaxlib's version; nvcc's wheel brings ptxas and libdevice, without
        # which a machine with no CUDA toolkit cannot compile ("No PTX compilation provider")
        return [
            f"jax=={jax}",
            f"jaxlib=={jaxlib}",
            f"jax-cuda12-plugin=={jaxlib}",
            f"jax-cuda12-pjrt=={jaxlib}",
            "nvidia-cuda-nvcc-cu12",
        ]


COMPILERS = {
    "tpu": Compiler("tpu", "the TPU compiler (libtpu)", "libtpu", "about 700 MB"),
    "gpu": Compiler(
        "gpu", "the GPU compiler (jaxlib's CUDA plugin)", "jax_cuda12_plugin", "about 1.2 GB"
    ),
}


def compiler(name: str) -> Compiler:
    """The compiler called ``name``; ValueError in words for another name."""
    if name not in COMPILERS:
        raise ValueError(f"no compiler {name!r}: the helpers run {' and '.join(COMPILERS)}")
    return COMPILERS[name]


def kernel_versions() -> tuple[str, str]:
    """(jax, jaxlib) of this Python: what a helper's venv must have."""
    return importlib.metadata.version("jax"), importlib.metadata.version("jaxlib")


def cache_dir() -> pathlib.Path:
    """Where helper venvs are made by default."""
    named = os.environ.get("SHARDWIDGET_COMPILERS_DIR", "")
    if named:
        return pathlib.Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "") or str(pathlib.Path.home() / ".cache")
    return pathlib.Path(base) / "shardwidget" / "compilers"


def default_venv(name: str) -> pathlib.Path:
    """The venv :func:`install` makes for ``name`` and this kernel's JAX."""
    return cache_dir() / f"{name}-jax{kernel_versions()[0]}"


def _venv_python(venv: pathlib.Path) -> pathlib.Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _stamp_ok(venv: pathlib.Path, c: Compiler) -> bool:
    try:
        got = json.loads((venv / STAMP).read_text())
    except (OSError, ValueError):
        return False
    jax, jaxlib = kernel_versions()
    return bool(got.get("requirements") == c.requirements(jax, jaxlib))


def python_for(name: str) -> str:
    """The interpreter that runs ``name``'s helper (see the module's docstring for the order);
    PlanError in words, with the install command, where there is none."""
    c = compiler(name)
    named = os.environ.get(c.python_var, "")
    if named:
        if not os.access(named, os.X_OK):
            raise PlanError(f"{c.python_var}={named!r} is not a Python this kernel can run")
        return named
    if importlib.util.find_spec(c.module) is not None:
        return sys.executable  # the platform's own plugin (Colab TPU, a GPU machine)
    venv = default_venv(name)
    if _stamp_ok(venv, c):
        return str(_venv_python(venv))
    raise PlanError(missing(name))


def missing(name: str) -> str:
    """Why ``name``'s helper has no Python, and the one command that makes it."""
    c = compiler(name)
    jax = kernel_versions()[0]
    return (
        f"{c.what} is not installed for jax {jax}: run `python -m shardwidget.compilers "
        f"install {name}` once (a venv of its own in {default_venv(name)}, {c.size}, Linux "
        f"x86-64; the kernel's environment stays as it is), or set {c.python_var} to a Python "
        f"that has jax {jax} and the plugin. CPU plans (AbstractMesh) need none"
    )


def unavailable(name: str) -> str:
    """ "" where ``name``'s helper can start here, else why in one line."""
    try:
        python_for(name)
    except PlanError as e:
        return str(e)
    return ""


def _run(argv: Sequence[str], what: str, log: list[str]) -> str:
    """Run one install step; PlanError with the tail of its output when it fails."""
    log.append("$ " + " ".join(argv))
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as e:
        raise PlanError(f"could not {what}: {e}") from None
    out = (done.stdout + done.stderr).strip()
    log.append(out)
    if done.returncode != 0:
        tail = "\n".join(out.splitlines()[-12:])
        raise PlanError(f"could not {what} (exit {done.returncode}):\n{tail}")
    return done.stdout


def install(name: str, into: str | os.PathLike[str] | None = None, quiet: bool = False) -> str:
    """Make (or find current) the venv of ``name``'s helper, for this kernel's jax, in ``into``
    (default :func:`default_venv`); the interpreter's path. A venv already made for the same
    requirements is kept; one whose jax and plugin are already right (made by hand) is kept and
    stamped. PlanError in words for every failure."""
    c = compiler(name)
    if (sys.platform, platform.machine()) != ("linux", "x86_64"):
        raise PlanError(
            f"{c.what} is built for Linux x86-64 only (this is {sys.platform} {platform.machine()})"
        )
    venv = pathlib.Path(into).expanduser().absolute() if into else default_venv(name)
    jax, jaxlib = kernel_versions()
    reqs = c.requirements(jax, jaxlib)
    py = _venv_python(venv)
    say = _say(quiet)
    if _stamp_ok(venv, c) or (py.exists() and _has(py, c, jax)):
        _write_stamp(venv, c, reqs)
        say(f"{c.what} for jax {jax}: {py} (already installed)")
        return str(py)
    log: list[str] = []
    say(f"installing {c.what} for jax {jax} into {venv} ({c.size})")
    if venv.exists():
        shutil.rmtree(venv)
    _run([sys.executable, "-m", "venv", str(venv)], f"make a venv in {venv}", log)
    _run([str(py), "-m", "pip", "install", "-q", *reqs], f"install {' '.join(reqs)}", log)
    if not _has(py, c, jax):
        raise PlanError(
            f"the venv {venv} was installed but does not have jax {jax} with {c.module}: "
            f"pip chose other versions ({_versions(py)})"
        )
    _write_stamp(venv, c, reqs)
    say(f"done: {py}")
    return str(py)


def _say(quiet: bool) -> Callable[[str], None]:
    def say(message: str) -> None:
        if not quiet:
            print(message, file=sys.stderr, flush=True)

    return say


def _has(py: pathlib.Path, c: Compiler, jax: str) -> bool:
    """Whether ``py`` has this jax and the plugin (found, not imported: importing the CUDA
    plugin here would start CUDA's checks)."""
    code = (
        "import importlib.metadata as m, importlib.util as u, sys; "
        f"sys.exit(0 if m.version('jax') == {jax!r} and u.find_spec({c.module!r}) else 1)"
    )
    try:
        return (
            subprocess.run([str(py), "-c", code], capture_output=True, check=False).returncode == 0
        )
    except OSError:
        return False


def _versions(py: pathlib.Path) -> str:
    code = "import importlib.metadata as m; print(m.version('jax'), m.version('jaxlib'))"
    done = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=False)
    return f"jax, jaxlib: {done.stdout.strip() or done.stderr.strip()[-200:]}"


def _write_stamp(venv: pathlib.Path, c: Compiler, reqs: list[str]) -> None:
    (venv / STAMP).write_text(json.dumps({"compiler": c.name, "requirements": reqs}) + "\n")


# ---------------------------------------------------------------- the kernel's side of a helper
class CompilerHelper(_helper.Helper):
    """A helper process running one compiler's worker script (``_tpu_worker.py``,
    ``_gpu_worker.py``) in that compiler's Python (:func:`python_for`): compile-only clients,
    never an accelerator of this machine. One serves every topology of its compiler."""

    compiler = ""
    """Its compiler's name in :data:`COMPILERS`."""
    worker = pathlib.Path()
    """Its worker script."""
    log_level = "3"
    """``TF_CPP_MIN_LOG_LEVEL`` in the helper (the helper's stderr is a file)."""

    def _argv(self) -> list[str]:
        return [python_for(self.compiler), str(self.worker)]

    def _environ(self) -> dict[str, str]:
        env = dict(os.environ)
        flags = env.get("XLA_FLAGS", "").split()
        env["XLA_FLAGS"] = " ".join(f for f in flags if "host_platform_device_count" not in f)
        # never the kernel's accelerator: compile-only clients (JAX skips the CUDA plugin
        # without "cpu" among its platforms)
        env["JAX_PLATFORMS"] = "cpu"
        env["CUDA_VISIBLE_DEVICES"] = ""
        env.pop("JAX_NUM_CPU_DEVICES", None)
        env["TF_CPP_MIN_LOG_LEVEL"] = self.log_level
        return _helper.with_dump_dir(env)


H = TypeVar("H", bound=CompilerHelper)
T = TypeVar("T")


class Meshes(Generic[T]):
    """The meshes :func:`.tpu.tpu_mesh` or :func:`.gpu.gpu_mesh` made, each with what it
    stands for."""

    def __init__(self) -> None:
        self._info: dict[Any, T] = {}

    def add(self, mesh: AbstractMesh, info: T) -> None:
        self._info[mesh] = info

    def info(self, mesh: object) -> T | None:
        """What ``mesh`` stands for; None for any other mesh (an unhashable one too)."""
        try:
            return self._info.get(mesh)
        except TypeError:
            return None


def start(cls: type[H], nice: int = 0) -> H:
    """A new helper of ``cls`` (the search's parallel workers each start one, ``nice`` below
    the kernel); PlanError in words where its compiler has no Python here, it fails to start,
    or its jax differs from the kernel's (a module lowered by one is not read by the other)."""
    c = compiler(cls.compiler)
    python_for(c.name)  # the refusal in words before any process starts
    h = cls(0, nice)
    theirs, ours = h.ready.get("jax"), kernel_versions()[0]
    if theirs != ours:
        h.stop()
        raise PlanError(
            f"the {c.name.upper()} helper's Python has jax {theirs}, this kernel jax {ours}: a "
            "module lowered by one is not read by the other. Run `python -m "
            f"shardwidget.compilers install {c.name}` (a venv for jax {ours}) or point "
            f"{c.python_var} at a Python with jax {ours}"
        )
    return h


def running(held: list[H], cls: type[H]) -> H:
    """The running helper kept in ``held``, else a new one (:func:`start`) kept there."""
    if held and held[0].alive:
        return held[0]
    stop_held(held)
    h = start(cls)
    held.append(h)
    return h


def stop_held(held: list[H]) -> None:
    """End the helpers kept in ``held`` (nothing if none runs)."""
    while held:
        held.pop().stop()


def compile_request(
    h: _helper.Helper, req: dict[str, Any], timeout: float, title: str, refused: str
) -> dict[str, Any]:
    """Helper ``h``'s reply to a compile request for ``title``, uncached; PlanError in words
    (``refused``, then the compiler's first line) where the compiler refuses: ``h`` then ends
    (its state is unknown)."""
    reply = h.request(req, timeout, f"a compile for {title}")
    if "error" in reply:
        h.stop()
        raise PlanError(f"{refused}: {first_line(reply['error'])}")
    return dict(reply)


def module_digest(text: str) -> str:
    """What a compile result is cached by, of a lowered module: its text without source
    locations (:func:`.module_key.without_locations`), hashed."""
    return hashlib.sha256(module_key.without_locations(text).encode()).hexdigest()


class Results:
    """Compiles kept by key (a module's :func:`module_digest` and its target), at most
    ``keep``, the least recently used dropped first: showing a planned layout again asks the
    helper nothing (a compile at 256 chips takes 30-60 s)."""

    def __init__(self, keep: int = 32) -> None:
        self.keep = keep
        self._kept: dict[tuple[Any, ...], dict[str, Any]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._kept or (isinstance(key, tuple) and kept_on_disk.has(key))

    def clear(self) -> None:
        self._kept.clear()

    def answer(
        self, key: tuple[Any, ...], ask: Callable[[], dict[str, Any]], stop: Callable[[], None]
    ) -> dict[str, Any]:
        """The kept result for ``key`` (now the most recently used), else the one a folder
        keeps between runs (:mod:`.kept_on_disk`), else ``ask()``'s, kept;
        a PlanError of ``ask`` calls ``stop`` first (the ended helper is forgotten: the next
        plan starts a new one)."""
        if key in self._kept:
            self._kept[key] = self._kept.pop(key)
            return self._kept[key]
        reply = kept_on_disk.read(key)  # where a folder keeps results between runs
        if reply is None:
            try:
                reply = ask()
            except PlanError:
                stop()
                raise
            kept_on_disk.write(key, reply)
        while len(self._kept) >= self.keep:
            self._kept.pop(next(iter(self._kept)))
        self._kept[key] = reply
        return reply


def mesh_axis_types(axis_types: Any, n: int) -> tuple[AxisType, ...]:
    """A :func:`.tpu.tpu_mesh` / :func:`.gpu.gpu_mesh`'s ``axis_types=``: None (Auto), one
    AxisType for every axis, or one per axis; ValueError in words for anything else."""
    if axis_types is None:
        return (AxisType.Auto,) * n
    types = tuple(axis_types) if isinstance(axis_types, list | tuple) else (axis_types,) * n
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise ValueError(f"axis_types must be {n} jax.sharding.AxisType values; got {axis_types}")
    return types


def first_line(text: object) -> str:
    """A compiler's message's first line (the whole text where it is blank)."""
    return str(text).strip().splitlines()[0] if str(text).strip() else str(text)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m shardwidget.compilers install tpu|gpu [--into DIR]`` and
    ``... where tpu|gpu``: the interpreter a helper would use, or why there is none."""
    p = argparse.ArgumentParser(
        prog="python -m shardwidget.compilers",
        description="The TPU and GPU compilers' helper venvs (never the kernel's environment).",
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    ins = sub.add_parser("install", help="make the compiler's venv for this jax")
    ins.add_argument("compiler", choices=sorted(COMPILERS))
    ins.add_argument("--into", default=None, help="the venv's folder (default: the cache)")
    whr = sub.add_parser("where", help="the Python a helper would use")
    whr.add_argument("compiler", choices=sorted(COMPILERS))
    args = p.parse_args(argv)
    try:
        if args.cmd == "install":
            print(install(args.compiler, args.into))
        else:
            print(python_for(args.compiler))
    except PlanError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
