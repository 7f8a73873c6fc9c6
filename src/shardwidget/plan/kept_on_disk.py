"""Compile results kept between runs, in a folder, where ``SHARDWIDGET_COMPILE_CACHE`` names
one (``./dev test`` does, for the example notebooks it runs: a TPU compile of a v5e-256's step
takes 30-40 s of a 2-core machine, every run). Unset, as in every notebook a reader runs, the
results live in memory only, for the kernel's life (:class:`.compilers.Results`).

A result is the helper's reply as it came (JSON), filed under its key (the module's digest
and its target), the kernel's JAX version and the helper scripts' own text: a change to
either compiles again. Nothing here is ever an error: a folder that cannot be read or written
is a result not kept.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import pathlib
import tempfile
from typing import Any

ENV = "SHARDWIDGET_COMPILE_CACHE"
_WORKERS = ("_worker.py", "_tpu_worker.py", "_gpu_worker.py")


@functools.cache
def _scripts_digest() -> str:
    """The helpers' scripts, hashed: what turns a compiled program into a reply."""
    h = hashlib.sha256()
    here = pathlib.Path(__file__).parent
    for name in _WORKERS:
        h.update((here / name).read_bytes())
    return h.hexdigest()


def _file(key: tuple[Any, ...]) -> pathlib.Path | None:
    folder = os.environ.get(ENV, "")
    if not folder:
        return None
    # the versions as installed (the adapter alone reads JAX's own attributes): a result of
    # another jax or jaxlib is not this one's
    versions = tuple(importlib.metadata.version(p) for p in ("jax", "jaxlib"))
    name = hashlib.sha256(repr((key, versions, _scripts_digest())).encode()).hexdigest()
    return pathlib.Path(folder) / f"{name}.json"


def has(key: tuple[Any, ...]) -> bool:
    """Whether a reply is kept for ``key``."""
    path = _file(key)
    return path is not None and path.is_file()


def read(key: tuple[Any, ...]) -> dict[str, Any] | None:
    """The reply kept for ``key``, or None (no folder, none kept, or unreadable)."""
    path = _file(key)
    if path is None or not path.is_file():
        return None
    try:
        reply = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) else None


def write(key: tuple[Any, ...], reply: dict[str, Any]) -> None:
    """Keep ``reply`` for ``key`` (whole or not at all: written aside, then renamed)."""
    path = _file(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as f:
            json.dump(reply, f)
        os.replace(f.name, path)
    except (OSError, TypeError, ValueError):
        return
