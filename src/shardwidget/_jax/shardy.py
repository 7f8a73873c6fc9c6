"""Shardy's sharding propagation run in this process, in jaxlib's MLIR (private JAX: part of
the adapter, :mod:`shardwidget._jax`), with the debug records of where each sharding came from:
what the causes of collectives (:mod:`shardwidget.why.explain`) are read from."""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

import jax

SHARDY_PIPELINE = (
    "builtin.module(sdy-import-pipeline, sdy-user-priority-propagate{debug-sharding-origins=true"
    " propagation-strategy=STRATEGY}, func.func(sdy-sharding-constraint-to-reshard,"
    " sdy-sink-data-flow-edges{sink-debug-sharding-origins=true}), sdy-close-shardings)"
)
"""Shardy's propagation as XLA runs it, with the debug records of where each sharding came
from. ``STRATEGY``: ``basic`` reproduces XLA's own shardings on jax 0.10 for constraints,
``aggressive`` for gradients (found by experiment: so every result is checked against XLA's
dump, and the other strategy tried where the first disagrees, :mod:`shardwidget.why.explain`).
The propagation-edge records are left out: the causes do not read them, and through a loop's
data-flow edges (a scanned model's gradient) MLIR's verifier refuses them between passes
("'sdy.data_flow_edge' op expected a value ref to have an operand index in range")."""

SHARDY_DUMP = {"xla_dump_hlo_pass_re": "shardy-verbose", "xla_dump_hlo_module_re": "^$"}
"""Compiler options (with ``xla_dump_to``) under which XLA writes Shardy's own propagation
with its debug records (``shardy/module_*/02.after_propagation.mlir``) and nothing else."""

PEAK_DUMP = {**SHARDY_DUMP, "xla_dump_hlo_module_re": ".*", "xla_dump_hlo_as_text": True}
"""Compiler options (with ``xla_dump_to``) under which XLA also writes the compiled module's
memory reports (its live ranges and buffer assignment, beside the optimized HLO): what the
peak (:mod:`shardwidget.hlo.peak`) is read from. Only the one module a compile makes is
dumped; the Shardy record is written as under :data:`SHARDY_DUMP`."""


def shardy_ops(
    text: str, propagate: bool, strategy: str = "basic", keep: frozenset[str] | None = None
) -> list[dict[str, Any]]:
    """Every op of a module's text (StableHLO with ``sdy`` annotations), walked in program
    order, as plain data: ``op`` (its name), ``operands`` / ``results`` (value names as the
    text writes them, "%0", "%arg1", "%3#1"), ``types`` / ``operand_types`` (type text),
    ``attrs`` (attribute name → text), ``loc`` (its location's text), ``depth`` (nesting) and,
    for a function, ``args`` (name, type, attrs, loc per argument) and ``res_attrs``.
    ``propagate``: run :data:`SHARDY_PIPELINE` first (in jaxlib's MLIR, in this process)
    with this propagation ``strategy`` ("basic" or "aggressive"). ``keep``: only these
    attributes in ``attrs`` (their text is most of the walk's time), else all.
    Any failure of JAX's MLIR is raised as it comes."""
    from jax._src.lib.mlir import ir, passmanager  # type: ignore[attr-defined]  # (private: not in jaxlib's stubs)

    unsafe = shardy_missing(text) if propagate else ""
    if unsafe:  # never run what would take the kernel down
        raise RuntimeError(unsafe)
    with _SHARDY_LOCK, _shardy_context():
        module = ir.Module.parse(text)
        if propagate:
            pipeline = SHARDY_PIPELINE.replace("STRATEGY", strategy)
            passmanager.PassManager.parse(pipeline).run(module.operation)
        state = ir.AsmState(module.operation)
        out: list[dict[str, Any]] = []
        for op in module.body.operations:
            _walk_op(op.operation, state, 0, out, keep)
        del state, module  # (before the context is left)
        return out


_SHARDY_LOCK = threading.Lock()


@functools.cache
def _shardy_context() -> Any:
    """One MLIR context with JAX's dialects for every explanation (making one costs ~15 ms;
    :data:`_SHARDY_LOCK` keeps its users one at a time)."""
    from jax._src.interpreters import mlir

    return mlir.make_ir_context()


def _walk_op(
    o: Any, state: Any, depth: int, out: list[dict[str, Any]], keep: frozenset[str] | None
) -> None:
    rec: dict[str, Any] = {
        "op": o.name,
        "operands": [v.get_name(state) for v in o.operands],
        "operand_types": [str(v.type) for v in o.operands],
        "results": [r.get_name(state) for r in o.results],
        "types": [str(r.type) for r in o.results],
        "attrs": _attr_texts(o.attributes, keep),
        "loc": str(o.location),
        "depth": depth,
    }
    if o.name != "func.func" and o.regions and o.regions[0].blocks:  # a loop's carried values
        rec["block_args"] = [a.get_name(state) for a in o.regions[-1].blocks[0].arguments]
    if o.name == "func.func" and o.regions and o.regions[0].blocks:
        block = o.regions[0].blocks[0]
        arg_attrs = list(o.attributes["arg_attrs"]) if "arg_attrs" in o.attributes else []
        res = list(o.attributes["res_attrs"]) if "res_attrs" in o.attributes else []
        rec["args"] = [
            {
                "name": a.get_name(state),
                "type": str(a.type),
                "attrs": _attr_texts(arg_attrs[i], keep) if i < len(arg_attrs) else {},
                "loc": str(a.location),
            }
            for i, a in enumerate(block.arguments)
        ]
        rec["res_attrs"] = [_attr_texts(r, keep) for r in res]
    out.append(rec)
    for region in o.regions:
        for block in region.blocks:
            for inner in block.operations:
                _walk_op(inner.operation, state, depth + 1, out, keep)


def _attr_texts(attrs: Any, keep: frozenset[str] | None = None) -> dict[str, str]:
    """Attribute name → text of an op's attributes or of a DictAttr (only keep's, if given)."""
    if keep is not None:
        return {k: str(attrs[k]) for k in keep if k in attrs}
    out = {}
    for i in range(len(attrs)):
        a = attrs[i]
        out[str(a.name)] = str(a.attr)
    return out


_CRASHES_09 = ("func.call", "stablehlo.while", "stablehlo.case")
"""Ops with which jaxlib 0.9's Shardy passes crash the process (a segmentation fault, measured
with jax 0.9.2 on a scan, a fori_loop and a nested jit; 0.7.2, 0.8.3 and 0.10.2 run them)."""


def shardy_missing(text: str = "") -> str:
    """Why Shardy's propagation cannot run in this process on a module's text ("" when it
    can): its debug records of sharding origins came with jaxlib 0.7 (the version matrix's
    oldest); the passes must be registered in jaxlib's MLIR; and jaxlib 0.9's crash the process
    on loops and nested calls (:data:`_CRASHES_09`), so those are not run there."""
    major_minor = tuple(int(v) for v in re.findall(r"\d+", jax.__version__)[:2])
    if major_minor < (0, 7):
        return f"jax {jax.__version__} predates Shardy's records of where shardings came from"
    if major_minor == (0, 9):  # (a plan's module without any loop crashed it too)
        return (
            f"jax {jax.__version__}'s Shardy passes crash the process (a segmentation fault, "
            "seen on loops, nested jit and plans), so they are not run here; jax 0.8 and 0.10 "
            "explain it"
        )
    crashing = [op for op in _CRASHES_09 if op in text] if major_minor == (0, 9) else []
    if crashing:
        return (
            f"jax {jax.__version__}'s Shardy passes crash the process on a program with "
            f"{crashing[0]} (a loop or a nested jit); jax 0.8 and 0.10 explain it"
        )
    try:
        from jax._src.lib.mlir import passmanager  # type: ignore[attr-defined]  # (private: not in jaxlib's stubs)  # noqa: F401
    except ImportError as e:
        return f"this jaxlib has no MLIR pass manager for Shardy ({e})"
    return ""


def shardy_beside_compiles() -> bool:
    """Whether Shardy's passes may run in a thread of their own while XLA compiles in another:
    from jax 0.10 (the whole test suite runs so, every function view explaining its collectives
    in the background); jaxlib 0.9 crashed the process so (a segmentation fault in the passes
    while the kernel's thread compiled), and 0.7-0.8 are not trusted with it: there the causes
    are worked out when first read, in the reader's thread."""
    return tuple(int(v) for v in re.findall(r"\d+", jax.__version__)[:2]) >= (0, 10)
