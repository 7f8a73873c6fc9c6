"""The explanations' inputs for one compile: Shardy's propagation run in this process on the
lowered module, and XLA's own record of it (its ``shardy-verbose`` dump, written during the
same compile into a temporary folder that is removed at once). See :mod:`.cause`.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from .. import _jax
from . import cause, hlo, sdy

NO_SHARDY = (
    "the lowered module carries no Shardy annotations (compiled with GSPMD: "
    "jax_use_shardy_partitioner is off)"
)


def compile_with_dump(lowered: Any) -> tuple[Any, str | None]:
    """(the compiled executable, XLA's Shardy dump text or None) of ``lowered.compile()``
    asked to record Shardy's propagation (same shardings and collectives as a plain compile:
    the dump is a side output). Errors of the compile are JAX's own."""
    folder = tempfile.mkdtemp(prefix="shardwidget-why-")
    try:
        compiled = lowered.compile(compiler_options={"xla_dump_to": folder, **_jax.SHARDY_DUMP})
        return compiled, read_dump(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def read_dump(folder: str) -> str | None:
    """The after-propagation module XLA wrote under folder (the last one), None when none."""
    found = sorted(glob.glob(os.path.join(folder, "shardy", "*", "*after_propagation.mlir")))
    if not found:
        return None
    with open(found[-1], encoding="utf-8") as f:
        return f.read()


def context(
    module_text: str,
    dump_text: str | None,
    hlo_text: str,
    in_paths: Sequence[str],
    out_paths: Sequence[str],
    constraints: Sequence[Any] = (),
    unchecked: str = cause.UNCHECKED,
) -> cause.Context:
    """What :func:`cause.attach` reads, from the lowered module's text (with debug info) and the
    dump's; a missing piece is said in the context's ``missing``, never raised."""
    ctx = cause.Context(None, None, hlo_text, list(in_paths), list(out_paths), list(constraints))
    ctx.checked = unchecked
    if "sdy." not in module_text:
        ctx.missing = NO_SHARDY
        return ctx
    missing = _jax.shardy_missing()
    if missing:
        ctx.missing = missing
        return ctx
    try:
        ctx.module = sdy.build(_jax.shardy_ops(module_text, propagate=True))
    except Exception as e:  # JAX's MLIR refused the module or the passes: say it
        ctx.missing = f"Shardy's propagation could not run in this process ({e})"
        return ctx
    if dump_text:
        try:
            recs = _jax.shardy_ops(dump_text, propagate=False)
            for r in recs:  # the dump's locations are lines of the dump file itself
                r["loc"] = "loc(unknown)"
            ctx.dump = sdy.build(recs)
            ctx.dump.constraints = ctx.module.constraints  # where the user's code asked
        except Exception:  # an unreadable dump: unchecked, as without one
            ctx.dump = None
    return ctx


def explain(
    colls: Sequence[hlo.Collective],
    module_text: str,
    dump_text: str | None,
    hlo_text: str,
    in_paths: Sequence[str],
    out_paths: Sequence[str],
    constraints: Sequence[Any] = (),
    unchecked: str = cause.UNCHECKED,
) -> tuple[list[hlo.Collective], float]:
    """(the collectives with their causes, milliseconds it took)."""
    t0 = time.perf_counter()
    if not colls:
        return list(colls), 0.0
    ctx = context(module_text, dump_text, hlo_text, in_paths, out_paths, constraints, unchecked)
    out = cause.attach(colls, ctx)
    return out, (time.perf_counter() - t0) * 1e3
