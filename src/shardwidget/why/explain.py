"""The explanations of one compile: Shardy's propagation run in this process on the lowered
module, and XLA's own record of it (its ``shardy-verbose`` dump, written during the same compile
into a temporary folder that is removed at once). See :mod:`.cause`.

A compile pays only for the dump (XLA writes five small files); the causes of every collective
of the compile are worked out at once in a background thread started right after it
(:meth:`Explainer.start`: the kernel's thread stays free), and kept (:class:`Explainer`); the first
read (``collective.cause``, the picture, the widget's "why" column) waits for that thread when it
has not finished yet.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .. import _jax
from ..hlo import collectives as hlo
from ..hlo import peak as hlo_peak
from . import cause, sdy

STRATEGIES = ("basic", "aggressive")

START_DELAY_S = 0.1
"""How long the background thread leaves the kernel's thread alone after a compile: Python runs
one thread at a time, and MLIR's calls keep the others waiting, so the view is published first
(its front end asks for a cause only when a collective is clicked)."""

NO_SHARDY = (
    "the lowered module carries no Shardy annotations (compiled with GSPMD: "
    "jax_use_shardy_partitioner is off)"
)


def compile_with_dump(
    stage: Any, mesh: Any, report: dict[str, str] | None = None
) -> tuple[Any, Any, str | None]:
    """(compiled, lowered, XLA's Shardy dump text or None) of a traced stage lowered and
    compiled under mesh, XLA asked to record Shardy's propagation (the same shardings and
    collectives as a plain compile: the dump is a side output). ``report``: a dict filled with
    the compile's memory reports too (:func:`shardwidget.hlo.peak.dump_texts`; XLA writes them
    when asked, :data:`_jax.PEAK_DUMP`), even when the compile fails. Errors are JAX's own."""
    folder = tempfile.mkdtemp(prefix="shardwidget-why-", dir=hlo_peak.dump_root())
    options = _jax.PEAK_DUMP if report is not None else _jax.SHARDY_DUMP
    try:
        with _jax.mesh_context(mesh):
            lowered = stage.lower()
            compiled = lowered.compile(compiler_options={"xla_dump_to": folder, **options})
        return compiled, lowered, read_dump(folder)
    finally:
        if report is not None:
            report.update(hlo_peak.dump_texts(folder))
        shutil.rmtree(folder, ignore_errors=True)


def read_dump(folder: str) -> str | None:
    """The after-propagation module XLA wrote under folder (the last one), None when none."""
    found = sorted(glob.glob(os.path.join(folder, "shardy", "*", "*after_propagation.mlir")))
    if not found:
        return None
    with open(found[-1], encoding="utf-8") as f:
        return f.read()


class Explainer:
    """The causes of one compile's collectives, worked out on first use and kept.

    ``module``: the lowered module's text (with debug info), or a ``jax.stages.Lowered`` whose
    text is taken when first needed; ``dump``: XLA's Shardy dump of the same compile (None:
    unchecked, ``unchecked`` says why); ``traced`` and ``state``: the function's leaves and
    outputs (a :class:`~.traced.Traced`), or give ``in_paths`` / ``out_paths``."""

    def __init__(
        self,
        module: Any,
        dump: str | None,
        hlo_text: str,
        traced: Any = None,
        state: Any = None,
        constraints: Sequence[Any] = (),
        *,
        in_paths: Sequence[str] = (),
        out_paths: Sequence[str] = (),
        unchecked: str = cause.UNCHECKED,
    ) -> None:
        self._module = module
        self.dump = dump
        self.hlo_text = hlo_text
        self.in_paths = [lf.path for lf in traced.leaves] if traced is not None else list(in_paths)
        self.out_paths = traced.out_paths(state) if traced is not None else list(out_paths)
        outs = getattr(state, "out_specs", ()) or ()
        self.out_given = [s is not None for s in outs]
        """Per output: whether its layout was given (out_shardings, out_specs) rather than
        left to XLA."""
        self.constraints = list(constraints)
        self.unchecked = unchecked
        self.colls: list[hlo.Collective] = []
        self._causes: dict[str, cause.Cause] | None = None
        self.module: sdy.Module | None = None
        """Shardy's module the causes read (None until worked out, or where there is none)."""
        self._lock = threading.Lock()
        self._asked = False
        self.explain_ms = 0.0
        """Milliseconds the causes took (0 until worked out)."""

    @property
    def ready(self) -> bool:
        """Whether a cause was read already (so the causes are worked out, and the text view
        shows them; worked out in the background but never read: False, so what the text view
        shows does not depend on the background thread's timing)."""
        return self._asked and self._causes is not None

    def start(self, delay: float = START_DELAY_S) -> None:
        """Work the causes out in a background thread (daemon), after ``delay`` seconds, so
        that the first read finds them ready; a read before it finishes waits for it (a read
        before it starts works them out at once)."""
        if not _jax.shardy_beside_compiles():  # (jaxlib 0.9 crashed so): on first read
            return
        args = (float(delay),)
        threading.Thread(
            target=self._quietly, args=args, name="shardwidget-why", daemon=True
        ).start()

    def _quietly(self, delay: float) -> None:
        time.sleep(delay)  # (the GIL: the kernel's thread publishes the view meanwhile)
        with contextlib.suppress(Exception):  # the first read works them out again, says why
            self._work()

    @property
    def module_text(self) -> str:
        """The lowered module's text, with its sharding annotations and source locations."""
        if not isinstance(self._module, str):
            self._module = str(self._module.as_text(debug_info=True))
        return self._module

    def __call__(self, c: hlo.Collective) -> cause.Cause:
        self._work()
        self._asked = True
        assert self._causes is not None
        return self._causes.get(c.name) or cause.unknown("not a collective of this compile")

    def _work(self) -> None:
        """The causes of every collective, worked out once (the lock: one at a time)."""
        with self._lock:
            if self._causes is None:
                t0 = time.perf_counter()
                ctx = context(
                    self.module_text,
                    self.dump,
                    self.hlo_text,
                    self.in_paths,
                    self.out_paths,
                    self.constraints,
                    self.unchecked,
                )
                ctx.out_given = self.out_given
                found = cause.causes(self.colls, ctx)
                self.module = ctx.module  # (the fixes read the op where shardings met)
                self._causes = {k.name: v for k, v in zip(self.colls, found, strict=True)}
                self.explain_ms = (time.perf_counter() - t0) * 1e3


def lazily(
    colls: Sequence[hlo.Collective], explainer: Explainer, background: bool = True
) -> list[hlo.Collective]:
    """The collectives, each giving its cause through explainer: worked out in a background
    thread started now (``background``), else on first use."""
    explainer.colls = list(colls)
    out = [replace(c, explainer=explainer) for c in colls]
    if background and out:
        explainer.start()
    return out


def context(
    module_text: str,
    dump_text: str | None,
    hlo_text: str,
    in_paths: Sequence[str],
    out_paths: Sequence[str],
    constraints: Sequence[Any] = (),
    unchecked: str = cause.UNCHECKED,
) -> cause.Context:
    """What :func:`cause.causes` reads, from the lowered module's text (with debug info) and the
    dump's; a missing piece is said in the context's ``missing``, never raised."""
    ctx = cause.Context(None, None, hlo_text, list(in_paths), list(out_paths), list(constraints))
    ctx.checked = unchecked
    if "sdy." not in module_text:
        ctx.missing = NO_SHARDY
        return ctx
    missing = _jax.shardy_missing(module_text)
    if missing:
        ctx.missing = missing
        return ctx
    # The strategy that reproduced XLA on such modules first (measured): basic where the user
    # pinned shardings (constraints), aggressive elsewhere (gradients); the other one only
    # where the first disagrees with XLA's dump on the inputs or outputs.
    first, second = STRATEGIES if "sharding_constraint" in module_text else STRATEGIES[::-1]
    try:
        ctx.module = sdy.build(_jax.shardy_ops(module_text, True, first, sdy.ATTRS))
    except Exception as e:  # JAX's MLIR refused the module or the passes: say it
        ctx.missing = f"Shardy's propagation could not run in this process ({e})"
        return ctx
    if dump_text:
        try:
            recs = _jax.shardy_ops(dump_text, False, keep=sdy.ATTRS)
            for r in recs:  # the dump's locations are lines of the dump file itself
                r["loc"] = "loc(unknown)"
            ctx.dump = sdy.build(recs)
        except Exception:  # an unreadable dump: unchecked, as without one
            ctx.dump = None
    if ctx.dump is not None and not _same_ends(ctx.module, ctx.dump):
        try:  # the other strategy, where the first disagrees with XLA on inputs or outputs
            other = sdy.build(_jax.shardy_ops(module_text, True, second, sdy.ATTRS))
            ctx.module = other if _same_ends(other, ctx.dump) else ctx.module
        except Exception:  # keep the first: each cause is checked against the dump anyway
            pass
    if ctx.dump is not None:
        ctx.dump.constraints = ctx.module.constraints  # where the user's code asked
    sdy.mark_jit_outputs(ctx.module, ctx.dump)
    return ctx


def _same_ends(a: sdy.Module, b: sdy.Module) -> bool:
    """Whether two propagations agree on the main function's arguments and results."""
    return [v.sharding for v in a.args] == [v.sharding for v in b.args] and [
        v.sharding for v in a.results
    ] == [v.sharding for v in b.results]
