"""How a compiled collective finds the op of Shardy's module it came from (:mod:`.cause`): the
ops by name, their shapes and shardings, whether shardings met there, their twins in XLA's dump,
and the compiled HLO's data flow back to an entry parameter. Pure text over :mod:`.sdy`'s
records; no JAX, no widget code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..hlo import collectives as hlo
from ..hlo import concat
from ..hlo.program import source_of
from . import sdy
from .cause_text import nothing_met, reduced_axes

BODIES = (
    "stablehlo.reduce",
    "stablehlo.reduce_window",
    "stablehlo.scatter",
    "stablehlo.sort",
    "stablehlo.select_and_scatter",
    "stablehlo.all_reduce",
    "stablehlo.reduce_scatter",
)
NOT_OPS = ("stablehlo.return", "sdy.return", "func.return", "stablehlo.constant", "sdy.constant")


def by_name(mod: sdy.Module) -> dict[str, list[sdy.Op]]:
    """The candidate ops by name (worked out once per module)."""
    if "by_name" not in mod.memo:
        index: dict[str, list[sdy.Op]] = {}
        for o in mod.ops:
            if candidate(o):
                index.setdefault(sdy.full_name(mod, o), []).append(o)
        mod.memo["by_name"] = index
    return mod.memo["by_name"]  # type: ignore[no-any-return]  # (memo's values are typed Any)


def where(mod: sdy.Module, op: sdy.Op) -> str:
    """Where op is, as the compiled HLO writes a source ("file.py:12"), once per line."""
    key = ("where", op.file, op.line)
    if key not in mod.memo:
        mod.memo[key] = hlo.where(op.file, op.line)
    return str(mod.memo[key])


def candidate(op: sdy.Op) -> bool:
    """Whether op can be where shardings meet (not a reduction's body, not a terminator)."""
    return op.parent not in BODIES and op.op not in NOT_OPS


def shapes_fit(mod: sdy.Module, op: sdy.Op, local: tuple[int, ...]) -> bool:
    """Whether a collective's per-device shape can be a piece of one of op's values."""
    key = ("fit", op.index, local)
    if key not in mod.memo:
        mod.memo[key] = fits(mod, op, local)
    return bool(mod.memo[key])


def fits(mod: sdy.Module, op: sdy.Op, local: tuple[int, ...]) -> bool:
    """Whether local (a per-device shape) divides one of op's values of the same rank."""
    for name in op.operands + op.results:
        v = mod.value(op, name)
        if v is None or len(v.shape) != len(local):
            continue
        if all(g % max(s, 1) == 0 or s == g for g, s in zip(v.shape, local, strict=True)):
            return True
    return not local


def partial(mod: sdy.Module, op: sdy.Op) -> bool:
    """Whether op leaves partial results (a contraction or reduction over a split dim)."""
    key = ("partial", op.index)
    if key not in mod.memo:
        vals = [mod.value(op, n) for n in op.operands]
        labels = [f"operand {i}" for i in range(len(vals))]
        mod.memo[key] = "partial" in reduced_axes(op, vals, labels)
    return bool(mod.memo[key])


def from_scalars(mod: sdy.Module, op: sdy.Op) -> bool:
    """Whether op builds its result from scalars only (a constant, a broadcast scalar)."""
    vals = [mod.value(op, n) for n in op.operands]
    return not any(v is not None and v.shape for v in vals)


def agreeing(mod: sdy.Module, op: sdy.Op) -> bool:
    """Whether op's shardings agree (nothing met there)."""
    key = ("agree", op.index)
    if key not in mod.memo:
        ops = [mod.value(op, n) for n in op.operands]
        res = [mod.value(op, n) for n in op.results]
        mod.memo[key] = bool(nothing_met(op, ops, res))
    return bool(mod.memo[key])


def signature(mod: sdy.Module, op: sdy.Op) -> tuple[Any, ...]:
    """The (shape, sharding) of op's operands and results, once per op."""
    key = ("sig", op.index)
    if key not in mod.memo:
        vals = [mod.value(op, n) for n in op.operands + op.results]
        mod.memo[key] = tuple((v.shape, v.sharding) if v is not None else None for v in vals)
    return mod.memo[key]  # type: ignore[no-any-return]  # (memo's values are typed Any)


def agrees(mod: sdy.Module, op: sdy.Op, dump: sdy.Module) -> bool:
    """Whether XLA's dump has the same shardings as the in-process module where it matters:
    the main function's arguments and results, and op's operands and results."""

    def sh(vs: Sequence[sdy.Value]) -> list[Any]:
        return [v.sharding for v in vs]

    key = ("agrees", op.index, id(dump))
    if key not in mod.memo:  # (the layers of a loop ask it of the same op many times)
        ends = sh(mod.args) == sh(dump.args) and sh(mod.results) == sh(dump.results)
        mod.memo[key] = ends and twin(mod, op, dump, exact=True) is not None
    return bool(mod.memo[key])


def in_loop(mod: sdy.Module, op: sdy.Op) -> bool:
    """Whether op runs inside a loop: in a loop's region, or in a function called (through
    any calls) from inside one; a function only ever called outside loops (a nested jit) is
    a call, not a loop."""
    if "loop scopes" not in mod.memo:
        scope_of = {name: sc for sc, name in mod.func_names.items()}
        calls = [o for o in mod.ops if o.op == "func.call"]
        looped: set[int] = set()
        for _ in range(len(calls) + 1):  # (to a fixed point through nested calls)
            more = {
                scope_of.get(o.attrs.get("callee", "").lstrip("@"), -1)
                for o in calls
                if o.parent in LOOPS or o.scope in looped
            }
            if more <= looped:
                break
            looped |= more
        mod.memo["loop scopes"] = looped
    return op.parent in LOOPS or op.scope in mod.memo["loop scopes"]


LOOPS = ("stablehlo.while",)


def reach(mod: sdy.Module, op: sdy.Op, names: Sequence[str]) -> frozenset[int]:
    """The main function's arguments (their positions) that flow into op's values ``names``,
    through the ops between (a loop's carried values and a called function's arguments stop
    the walk)."""
    key = ("reach", op.index, tuple(names))
    if key in mod.memo:
        return mod.memo[key]  # type: ignore[no-any-return]  # (memo's values are typed Any)
    args = {id(a): i for i, a in enumerate(mod.args)}
    out: set[int] = set()
    stack = [(op, n) for n in names]
    seen: set[tuple[int, str]] = set()
    while stack:
        o, n = stack.pop()
        if (o.index, n) in seen:
            continue
        seen.add((o.index, n))
        v = mod.value(o, n)
        if v is not None and id(v) in args:
            out.add(args[id(v)])
            continue
        made = mod.made_by(o, n)
        if made is not None and made.index != o.index:
            stack.extend((made, m) for m in made.operands)
    mod.memo[key] = frozenset(out)
    return mod.memo[key]  # type: ignore[no-any-return]  # (memo's values are typed Any)


def by_flow(
    mod: sdy.Module, ops: Sequence[sdy.Op], coll_kind: str, want: frozenset[int]
) -> list[sdy.Op]:
    """The ops among ``ops`` (sharing a line) whose inputs are exactly the arguments (their
    positions) the compiled collective touches (by dataflow through the compiled HLO): an
    operand for a collective that moves an operand, all operands for one that sums partial
    results."""
    if coll_kind in ("all-reduce", "reduce-scatter"):
        return [o for o in ops if reach(mod, o, o.operands) == want]
    return [o for o in ops if any(reach(mod, o, (n,)) == want for n in o.operands)]


def by_outputs(mod: sdy.Module, ops: Sequence[sdy.Op], want: frozenset[int]) -> list[sdy.Op]:
    """The ops among ``ops`` whose results flow into exactly the main function's results
    (positions) ``want``, the outputs the compiled collective reaches by dataflow: of two
    backward matmuls alike in shapes and shardings, the one whose gradient updates w1."""
    return [o for o in ops if feeds(mod, o) == want]


def feeds(mod: sdy.Module, op: sdy.Op) -> frozenset[int]:
    """The main function's results (positions) that op's results flow into, through the ops
    between (worked out once per module: each result's ops, walking back from it)."""
    if "feeds" not in mod.memo:
        into: dict[int, set[int]] = {}
        for k, ret in enumerate(mod.returns):
            stack, seen = ([ret] if ret is not None else []), set()
            while stack:
                o = stack.pop()
                if o.index in seen:
                    continue
                seen.add(o.index)
                into.setdefault(o.index, set()).add(k)
                made = (mod.made_by(o, n) for n in o.operands)
                stack.extend(m for m in made if m is not None and m.index not in seen)
        mod.memo["feeds"] = {i: frozenset(ks) for i, ks in into.items()}
    return mod.memo["feeds"].get(op.index, frozenset())  # type: ignore[no-any-return]  # (memo's values are typed Any)


def called_from(mod: sdy.Module, op: sdy.Op, source: str) -> bool:
    """Whether op's function is called (directly or through calls) from a call at source
    ("file.py:12"): jnp.take's inner jit, whose ops carry the library's lines."""
    scopes: set[int] = {op.scope}
    seen: set[int] = set()
    while scopes - seen:
        seen |= scopes
        names = {mod.func_names.get(sc, "") for sc in scopes}
        calls = [
            o
            for o in mod.ops
            if o.op == "func.call" and o.attrs.get("callee", "").lstrip("@") in names
        ]
        if any(o.file and where(mod, o) == source for o in calls):
            return True
        scopes = {o.scope for o in calls}
    return False


def twin(
    mod: sdy.Module,
    op: sdy.Op,
    dump: sdy.Module,
    exact: bool = False,
    body: bool = False,
    call: bool = False,
) -> sdy.Op | None:
    """The dump's op with op's shapes (and, exact: op's shardings); None unless one fits
    (several of the same shardings count as one). ``body``: only an op of op's kind in a
    loop of the dump; ``call``: only one of op's kind outside every loop (an inlined call)."""
    want = signature(mod, op)
    shapes = tuple(s[0] if s else None for s in want)
    if "by_shapes" not in dump.memo:
        index: dict[Any, list[sdy.Op]] = {}
        for d in dump.ops:
            index.setdefault(tuple(s[0] if s else None for s in signature(dump, d)), []).append(d)
        dump.memo["by_shapes"] = index
    found = []
    alike = dump.memo["by_shapes"].get(shapes, [])
    if not alike and not (exact or body or call):
        alike = _swapped(mod, op, shapes, dump)
        want = signature(dump, alike[0]) if len(alike) == 1 else want
    for d in alike:
        if body and (d.parent != "stablehlo.while" or kind(d, dump) != kind(op, mod)):
            continue  # a loop body's op: only an op of the same kind in a loop of the dump
        if call and (in_loop(dump, d) or kind(d, dump) != kind(op, mod)):
            continue  # an inlined call's op: of the same kind, outside the dump's loops
        sig = signature(dump, d)
        if exact and sig != want:
            continue
        found.append((sig, d))
    if not found or len({s for s, _ in found}) > 1 or (body and len(found) > 1):
        return None  # (a loop body's op: only where the dump has exactly one such op)
    twin: sdy.Op = found[0][1]
    return twin


def _swapped(
    mod: sdy.Module, op: sdy.Op, shapes: tuple[Any, ...], dump: sdy.Module
) -> list[sdy.Op]:
    """The dump's matmuls that are op with its operands swapped and its 2-d result transposed
    (XLA folds a backward pass's transpose into the dot before it on the GPU: ``(b^T a^T)`` for
    ``(a b)^T``), where op is a matmul: the same contraction, operands swapped."""
    if not op.op.startswith("stablehlo.dot") or len(shapes) != 3 or shapes[2] is None:
        return []
    if len(shapes[2]) != 2:
        return []
    key = (shapes[1], shapes[0], tuple(reversed(shapes[2])))
    m = re.fullmatch(r"dot lhs\[(.*)\] rhs\[(.*)\] batch\[(.*)\] batch\[(.*)\]", kind(op, mod))
    if m is None:
        return []
    swapped = f"dot lhs[{m.group(2)}] rhs[{m.group(1)}] batch[{m.group(4)}] batch[{m.group(3)}]"
    return [d for d in dump.memo["by_shapes"].get(key, []) if kind(d, dump) == swapped]


def kind(op: sdy.Op, mod: sdy.Module) -> str:
    """The op's kind, across the dump's forms (its round trip through HLO writes a plain
    matmul's dot_general as dot), with a contraction's dimension numbers."""
    if op.op == "stablehlo.dot":
        lhs = mod.value(op, op.operands[0]) if op.operands else None
        return f"dot lhs[{len(lhs.shape) - 1 if lhs else -1}] rhs[0] batch[] batch[]"
    if op.op == "stablehlo.dot_general":
        dn = op.attrs.get("dot_dimension_numbers", "")
        nums = [
            (m.group(1) if (m := re.search(k + r" = \[([\d, ]*)\]", dn)) else "").replace(" ", "")
            for k in ("lhs_contracting_dimensions", "rhs_contracting_dimensions",
                      "lhs_batching_dimensions", "rhs_batching_dimensions")
        ]  # fmt: skip
        return f"dot lhs[{nums[0]}] rhs[{nums[1]}] batch[{nums[2]}] batch[{nums[3]}]"
    return op.op


def hlo_params(hlo_text: str) -> dict[str, Any]:
    """HLO instruction name → (op, operand names, entry parameter number or None, the fused
    computation it calls or its own computation, element type)."""
    out: dict[str, Any] = {}
    entry, comp = False, ""
    for line in hlo_text.splitlines():
        head = re.match(r"(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if head and not line.startswith(" "):
            entry, comp = bool(head.group(1)), head.group(2)
        for name, shape, op, text in hlo.instructions(line):
            body = text.split(op + "(", 1)[1] if op + "(" in text else ""
            param = re.match(r"(\d+)\)", body) if op == "parameter" and entry else None
            walked = op in THROUGH or op in _DOTS or op.removesuffix("-start") in hlo.KINDS
            args = re.findall(r"%([\w.\-]+)", body.split(")", 1)[0]) if walked else []
            calls = re.search(r"calls=%?([\w.\-]+)", text) if op == "fusion" else None
            where = calls.group(1) if calls else comp
            out[name] = (op, args, int(param.group(1)) if param else None, where, shape)
            if entry and (on := _OP_NAME.search(text)):  # (where each element comes from)
                out.setdefault(" meta", {})[name] = (on.group(1), source_of(text))
            if op in _DOTS and (dk := _dot_kind(op, text)):
                out.setdefault(" dots", {})[name] = (comp, dk)
            elif op == "while" and (trips := _TRIPS.search(text)) and (on := _OP_NAME.search(text)):
                out.setdefault(" trips", {})[on.group(1)] = int(trips.group(1))
            elif op == "constant" and (v := re.search(r"\bconstant\((\d+)\)", text)):
                out.setdefault(" ints", {})[name] = int(v.group(1))
            elif op == "compare" and (on := _OP_NAME.search(text)) and on.group(1).endswith(_COND):
                names = re.findall(r"%([\w.\-]+)", body.split(")", 1)[0])
                out.setdefault(" conds", {})[on.group(1).removesuffix("/cond/lt")] = names
    return out


_DOTS = ("dot", "convolution")
_COND = "/while/cond/lt"
"""The op name of a scan's loop test (``i < length``, i from 0): the TPU compiler's program
writes no trip count on its loops, their test's constant is it."""

_TRIPS = re.compile(r'"known_trip_count":\{"n":"(\d+)"')
_OP_NAME = re.compile(r'op_name="([^"]*)"')


def element_origins(name: str, graph: dict[str, Any], hlo_text: str) -> list[tuple[str, str]]:
    """Per operand of a collective of the entry computation, the op name and source of the
    instruction that makes it (what XLA combined into one collective: each element's own op);
    [] where an operand's maker has no record. A flat all-reduce of a concatenate
    (:mod:`..hlo.concat`): each part's maker, ("", "") for one that has no op_name."""
    parts = concat.concatenated(hlo_text, name)
    if parts:
        return [(p.op_name, p.source if p.op_name else "") for p in parts]
    meta: dict[str, tuple[str, str]] = graph.get(" meta", {})
    out = []
    for a in (graph.get(name) or ("", []))[1]:
        if a not in meta:
            return []
        op_name, src = meta[a]
        if src.startswith("frame "):
            if " frames" not in graph:
                graph[" frames"] = hlo.stack_frames(hlo_text)
            src = graph[" frames"].get(int(src.split()[1]), "")
        out.append((op_name, src))
    return out


def _dot_kind(op: str, text: str) -> str:
    """A compiled dot's kind in :func:`kind`'s words (its contracting and batch dims); the TPU
    compiler's matmul is a convolution with 2-d labels ("bf_io->bf": lhs[1] rhs[0]); ""
    for any other convolution."""
    if op == "convolution":
        m = re.search(r"dim_labels=([bf]{2})_([io]{2})->", text)
        if m is None or "window=" in text or "_group_count" in text:
            return ""
        return f"dot lhs[{m.group(1).index('f')}] rhs[{m.group(2).index('i')}] batch[] batch[]"

    def dims(key: str) -> str:
        m = re.search(key + r"=\{([\d,]*)\}", text)
        return m.group(1) if m else ""

    lc, rc = dims("lhs_contracting_dims"), dims("rhs_contracting_dims")
    return (
        f"dot lhs[{lc}] rhs[{rc}] batch[{dims('lhs_batch_dims')}] batch[{dims('rhs_batch_dims')}]"
    )


def compiled_dot(name: str, coll_kind: str, graph: dict[str, Any]) -> str:
    """The kind (:func:`kind`) of the one compiled dot a collective is for, through copies and
    fusions (a fusion: the dot it calls): the dot that makes its operand (an all-reduce or
    reduce-scatter of partial sums), else the dot it feeds; "" where not exactly one."""
    dots: dict[str, tuple[str, str]] = graph.get(" dots", {})
    if " users" not in graph:
        users: dict[str, list[str]] = {}
        for k, v in graph.items():
            if not k.startswith(" "):
                for a in v[1]:
                    users.setdefault(a, []).append(k)
        graph[" users"] = users

    def found(n: str) -> set[str]:
        node = graph.get(n)
        if n in dots:
            return {dots[n][1]}
        if node is not None and node[0] == "fusion":
            return {k for comp, k in dots.values() if comp == node[3]}
        return set()

    def step(n: str) -> list[str]:
        if coll_kind in ("all-reduce", "reduce-scatter"):
            return list((graph.get(n) or ("", []))[1][:1])
        return list(graph[" users"].get(n, []))

    frontier, kinds = step(name), set()
    for _ in range(4):  # a few copies and bitcasts away, no further
        kinds = set().union(*(found(n) for n in frontier)) if frontier else set()
        if kinds:
            break
        frontier = [m for n in frontier for m in step(n)]
    return kinds.pop() if len(kinds) == 1 else ""


def trips(op_name: str, graph: dict[str, Any]) -> int:
    """How many times the loop whose body holds an op named op_name runs (the compiled
    while's known trip count), 0 where unknown."""
    loop = op_name.split("/body/", 1)[0] if "/body/" in op_name else ""
    if loop in graph.get(" trips", {}):
        return int(graph[" trips"][loop])
    ints = graph.get(" ints", {})
    bounds = [ints[n] for n in graph.get(" conds", {}).get(loop, []) if n in ints]
    return bounds[0] if len(bounds) == 1 else 0


MOVES = {
    "parameter",
    "copy",
    "bitcast",
    "reshape",
    "transpose",
    "dynamic-slice",
    "slice",
    "constant",
    "convert",
    "partition-id",
    "tuple",
    "get-tuple-element",
}


def moves_only(node: Any, graph: dict[str, Any]) -> bool:
    """Whether a fusion only moves data (its float values pass through copies, slices and
    reshapes; index arithmetic on integers aside)."""
    if " by computation" not in graph:
        index: dict[str, list[Any]] = {}
        for k, v in graph.items():
            if not k.startswith(" "):  # (" by computation", " dots", …: the indexes)
                index.setdefault(v[3], []).append(v)
        graph[" by computation"] = index
    inner = [v for v in graph[" by computation"].get(node[3], []) if v is not node]
    return bool(inner) and all(v[0] in MOVES or re.match(r"\(?[su]\d+\[", v[4]) for v in inner)


THROUGH = {
    "fusion",
    "copy",
    "bitcast",
    "reshape",
    "transpose",
    "convert",
    "dynamic-slice",
    "slice",
    "all-gather",
    "all-to-all",
    "collective-permute",
    "all-gather-start",
    "collective-permute-start",
    "all-gather-done",
    "collective-permute-done",
}


def layer_of(
    shape: Sequence[int], op_name: str, stacks: Sequence[tuple[str, Sequence[int]]]
) -> str | None:
    """In a loop's body (``op_name`` of a scan's), the one input leaf of ``stacks`` ((path,
    shape) per input) shaped as a stack of ``shape`` (it with a leading, scanned dim): the
    cause says "shaped as one layer of" it, which the shapes prove, not that the data is its
    slice, which the module does not say there. None where no leaf or more than one is."""
    if "/while/body/" not in op_name or not shape:
        return None
    fits = {p for p, s in stacks if len(s) == len(shape) + 1 and tuple(s[1:]) == tuple(shape)}
    return fits.pop() if len(fits) == 1 else None
