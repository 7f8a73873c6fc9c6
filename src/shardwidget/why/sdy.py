"""Shardy's propagated module as plain data: the shardings of every value, where each came from
(``sdy.sharding_origins``), and where each op sits in the user's code.

Pure text: reads the op records :func:`shardwidget._jax.shardy_ops` walks out of jaxlib's MLIR
(attribute and location texts), imports no JAX and no widget code. The forms read:

- shardings ``#sdy.sharding<@mesh, [{"x"}, {}]>`` (a value), ``#sdy.sharding_per_value<[<@mesh,
  [{"y"}, {}]>, ...]>`` (an op's results); ``{"x", ?}`` is an open dimension, ``"x":(1)2`` a
  sub-axis, ``replicated={...}`` / ``unreduced={...}`` follow the dimensions;
- origins ``{x = "self"}`` / ``[{y = "constraint_0"}]``: per mesh axis, ``self`` (the value's
  own annotation), ``input: N``, ``output: N``, ``constraint_N``, ``mc_N_input: M``,
  ``mc_N_output: M`` (shard_map N's in / out spec M);
- locations ``loc("jit(f)/dot_general"(callsite("f"("/a.py":8:8 to :13) at ...)))``: the op's
  name (the HLO's ``op_name``) and the innermost file and line (the HLO's stack frame).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_AXIS = re.compile(r'"([^"]+)"(?::\((\d+)\)(\d+))?')
_ORIGIN = re.compile(r'(?:"([^"]+)"|([\w.]+))\s*=\s*"([^"]*)"')
_FILE_LINE = re.compile(r'"([^"]+)":(\d+):\d+')
_TENSOR = re.compile(r"tensor<((?:\d+x)*)([a-z][a-z0-9]*)")


@dataclass(frozen=True)
class Sharding:
    """A value's sharding: the mesh axes each dimension is split over (major first)."""

    dims: tuple[tuple[str, ...], ...]
    """Per dimension, the axes ("x", or a sub-axis "x:(1)2") it is split over; () when whole."""

    @property
    def replicated(self) -> bool:
        """True when no dimension is split."""
        return not any(self.dims)

    def axes(self) -> set[str]:
        """Every axis the value is split over."""
        return {a for d in self.dims for a in d}

    def words(self) -> str:
        """ "split over x on dim 0 and y on dim 1", or "replicated"."""
        parts = [f"{'+'.join(d)} on dim {i}" for i, d in enumerate(self.dims) if d]
        return "split over " + " and ".join(parts) if parts else "replicated"

    def spec(self) -> tuple[tuple[str, ...], ...]:
        """The dims as a normalized spec (sub-axes dropped to their axis name)."""
        return tuple(tuple(a.split(":")[0] for a in d) for d in self.dims)


@dataclass(frozen=True)
class Value:
    """One value of the module: its name, global shape, dtype, sharding and origins."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    sharding: Sharding | None
    origins: dict[str, str] = field(default_factory=dict, compare=False)
    """Mesh axis → where its sharding along that axis came from (see the module docstring)."""
    loc_name: str = ""
    """For a function argument, the name JAX gave it (the leaf's path)."""


@dataclass(frozen=True)
class Op:
    """One op of the module, with its place in the user's code."""

    index: int
    """Position in program order."""
    op: str
    """The MLIR op ("stablehlo.dot_general", "sdy.reshard", …)."""
    name: str
    """Its location's name: the HLO's op_name ("jit(f)/dot_general"), "" when none."""
    file: str
    line: int
    operands: tuple[str, ...]
    results: tuple[str, ...]
    attrs: dict[str, str] = field(compare=False, repr=False)
    scope: int = 0
    """Which function of the module it is in (value names are per function)."""
    parent: str = ""
    """The op whose region holds it ("stablehlo.reduce" for a reduction's body), "" at top."""

    @property
    def short(self) -> str:
        """The JAX primitive the op came from ("dot_general"), else the MLIR op's own name."""
        last = self.name.rsplit("/", 1)[-1] if self.name else self.op.split(".")[-1]
        return re.sub(r"^(?:\w+\()+|\)+$", "", last)


@dataclass
class Module:
    """Shardy's propagated module: values by (scope, name), ops in program order, the main
    function's arguments and results, and the constraints by origin name."""

    values: dict[tuple[int, str], Value]
    ops: list[Op]
    args: list[Value]
    results: list[Value]
    constraints: dict[str, Op]
    """"constraint_N" → the reshard / sharding_constraint op that carries it."""
    manual: dict[str, Op] = field(default_factory=dict)
    """"mc_N" → the shard_map (manual computation) op N."""
    defined_by: dict[tuple[int, str], Op] = field(default_factory=dict)
    """(scope, value name) → the op whose result it is."""
    func_names: dict[int, str] = field(default_factory=dict)
    """Scope → the name of its function ("main", "closed_call_1")."""
    callers: dict[str, list[str]] = field(default_factory=dict)
    """A function's name → the names of the calls of it (a scan's body: the op name of its
    ``closed_call``, which prefixes the names of the body's ops in the compiled HLO)."""
    returns: list[Op | None] = field(default_factory=list)
    """Per output of the main function, the op that makes it (its place in the user's code);
    an output that is an argument has none (the list stops short or holds None)."""
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    """What the explanations computed once per op (signatures, agreement)."""
    bound: dict[tuple[int, str], tuple[Value | None, Op | None]] = field(
        default_factory=dict, repr=False
    )
    """(op index, operand name) → the value and its defining op as they were where op is: the
    text reuses a name once a region closes (a loop body's "%18" and main's later "%18" in
    XLA's dump, where the body is inlined), so an operand is resolved when its op is read."""

    def value(self, op: Op, name: str) -> Value | None:
        """The value an op's operand or result names (None: a block argument of a loop,
        unknown)."""
        got = self.bound.get((op.index, name))
        return got[0] if got is not None else self.values.get((op.scope, name))

    def made_by(self, op: Op, name: str) -> Op | None:
        """The op whose result op's operand name is (None: an argument, unknown)."""
        got = self.bound.get((op.index, name))
        return got[1] if got is not None else self.defined_by.get((op.scope, name))


def parse_shardings(text: str) -> list[Sharding]:
    """Every sharding in an attribute's text, in order (one for a value, one per result)."""
    out = []
    for m in re.finditer(r"<\s*(?:@[\w.]+|mesh<[^>]*>)\s*,\s*\[", text):
        start = m.end() - 1
        depth, i = 0, start
        while i < len(text):
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        body = text[start + 1 : i]
        dims = tuple(
            tuple(a if not pre else f"{a}:({pre}){size}" for a, pre, size in _AXIS.findall(g))
            for g in re.findall(r"\{([^}]*)\}", body)
        )
        out.append(Sharding(dims))
    return out


def parse_origins(text: str) -> list[dict[str, str]]:
    """Per value, mesh axis → origin, from ``{x = "self"}`` or ``[{x = "input: 0"}, ...]``."""
    groups = re.findall(r"\{([^{}]*)\}", text)
    return [{(q or b): o for q, b, o in _ORIGIN.findall(g)} for g in groups]


def parse_loc(text: str) -> tuple[str, str, int]:
    """(name, file, line) of a location's text: its outermost name (the op name JAX gave it)
    and the innermost file and line; ("", "", 0) for what is missing."""
    m = re.match(r'loc\("([^"]*)"', text)
    name = m.group(1) if m and not _FILE_LINE.match(text, m.start() + 4) else ""
    f = _FILE_LINE.search(text)
    return name, (f.group(1) if f else ""), (int(f.group(2)) if f else 0)


def parse_type(text: str) -> tuple[tuple[int, ...], str]:
    """(shape, dtype) of a ``tensor<16x32xf32>`` type; ((), text) for anything else."""
    m = _TENSOR.match(text.strip())
    if m is None:
        return (), text
    return tuple(int(d) for d in m.group(1).split("x") if d), m.group(2)


def _value(name: str, type_text: str, sharding: Sharding | None, origins: dict[str, str]) -> Value:
    """A value; a tensor without a sharding is replicated (Shardy closes every sharding)."""
    shape, dtype = parse_type(type_text)
    if sharding is None and type_text.startswith("tensor<"):
        sharding = Sharding(((),) * len(shape))
    return Value(name, shape, dtype, sharding, origins)


ATTRS = frozenset(
    {
        "sdy.sharding",
        "sharding",
        "sdy.sharding_origins",
        "sdy.sharding_origin_name",
        "callee",
        "sym_name",
        "function_type",
        "dot_dimension_numbers",
        "dimensions",
    }
)
"""The attributes the explanations read (``shardy_ops(..., keep=ATTRS)``: writing every
attribute as text, the dump's propagation edges among them, was most of reading a module)."""


def build(records: Sequence[dict[str, Any]]) -> Module:
    """The module of :func:`shardwidget._jax.shardy_ops`'s records. The main function is the
    public one (``main``), else the first."""
    mod = Module({}, [], [], [], {})
    scope = -1
    stack: list[str] = []  # the op at each nesting depth
    mains = [r for r in records if r["op"] == "func.func"]
    main = next((r for r in mains if '"main"' in r["attrs"].get("sym_name", "")), None)
    for rec in records:
        if rec["op"] == "func.func":
            del stack[rec["depth"] :]
            stack.append(rec["op"])
            scope += 1
            mod.func_names[scope] = rec["attrs"].get("sym_name", "").strip('"')
            _add_func(mod, rec, scope, rec is main or (main is None and scope == 0))
            continue
        del stack[rec["depth"] :]
        stack.append(rec["op"])
        if scope < 0:
            continue
        parent = stack[-2] if len(stack) > 1 and stack[-2] != "func.func" else ""
        _add_op(mod, rec, scope, parent)
        if rec["op"] == "func.return" and rec is main_return(records, main) and not parent:
            mod.returns = [mod.defined_by.get((scope, n)) for n in rec["operands"]]
    return mod


def main_return(records: Sequence[dict[str, Any]], main: dict[str, Any] | None) -> Any:
    """The main function's own return record (the first top-level one after it)."""
    seen = main is None
    for rec in records:
        if rec is main:
            seen = True
        elif seen and rec["op"] == "func.return" and rec["depth"] == 1:
            return rec
        elif seen and rec["op"] == "func.func" and main is not None:
            return None
    return None


def _add_func(mod: Module, rec: dict[str, Any], scope: int, is_main: bool) -> None:
    for a in rec.get("args", []):
        sh = parse_shardings(a["attrs"].get("sdy.sharding", ""))
        orig = parse_origins(a["attrs"].get("sdy.sharding_origins", ""))
        v = _value(a["name"], a["type"], sh[0] if sh else None, orig[0] if orig else {})
        name, _, _ = parse_loc(a.get("loc", ""))
        v = Value(v.name, v.shape, v.dtype, v.sharding, v.origins, name)
        mod.values[(scope, a["name"])] = v
        if is_main:
            mod.args.append(v)
    if not is_main:
        return
    ftype = rec["attrs"].get("function_type", "")
    outs = ftype.split("->", 1)[1] if "->" in ftype else ""
    types = re.findall(r"tensor<[^>]*>", outs)
    res_attrs = rec.get("res_attrs", [])
    for i, t in enumerate(types):  # a result without attributes (XLA's dump) is replicated
        attrs = res_attrs[i] if i < len(res_attrs) else {}
        sh = parse_shardings(attrs.get("sdy.sharding", ""))
        orig = parse_origins(attrs.get("sdy.sharding_origins", ""))
        mod.results.append(_value(f"result {i}", t, sh[0] if sh else None, orig[0] if orig else {}))


def _add_op(mod: Module, rec: dict[str, Any], scope: int, parent: str) -> None:
    attrs = rec["attrs"]
    name, file, line = parse_loc(rec["loc"])
    op = Op(
        len(mod.ops),
        rec["op"],
        name,
        file,
        line,
        tuple(rec["operands"]),
        tuple(rec["results"]),
        attrs,
        scope,
        parent,
    )
    mod.ops.append(op)
    for n in op.operands:  # as they are here (a name is reused once a region closes)
        mod.bound[(op.index, n)] = (mod.values.get((scope, n)), mod.defined_by.get((scope, n)))
    text = attrs.get("sdy.sharding") or attrs.get("sharding", "")
    shardings = parse_shardings(text)
    origins = parse_origins(attrs.get("sdy.sharding_origins", ""))
    for i, (r, t) in enumerate(zip(rec["results"], rec["types"], strict=False)):
        sh = shardings[i] if i < len(shardings) else None
        mod.values[(scope, r)] = _value(r, t, sh, origins[i] if i < len(origins) else {})
        mod.defined_by[(scope, r)] = op
        mod.bound[(op.index, r)] = (mod.values[(scope, r)], op)
    if rec["op"] == "stablehlo.while":  # the body's carried values are laid out as the results
        for arg, res in zip(rec.get("block_args", []), rec["results"], strict=False):
            mod.values[(scope, arg)] = mod.values[(scope, res)]
    if rec["op"] == "func.call" and name:
        mod.callers.setdefault(attrs.get("callee", "").lstrip("@"), []).append(name)
    origin = attrs.get("sdy.sharding_origin_name", "").strip('"')
    if origin.startswith("constraint_"):
        mod.constraints[origin] = op
    elif origin.startswith("mc_"):
        mod.manual[origin] = op


def origin_of(origin: str) -> tuple[str, int | None]:
    """("input" / "output" / "constraint" / "shard_map" / "self" / "other", N) of an origin."""
    m = re.fullmatch(r"(input|output): (\d+)", origin)
    if m:
        return m.group(1), int(m.group(2))
    m = re.fullmatch(r"constraint_(\d+)", origin)
    if m:
        return "constraint", int(m.group(1))
    m = re.fullmatch(r"mc_(\d+)_(?:input|output): \d+", origin)
    if m:
        return "shard_map", int(m.group(1))
    return ("self", None) if origin == "self" else ("other", None)


def resolve(mod: Module, v: Value, origin: str) -> tuple[str, int | None, str]:
    """(kind, N, origin name) of one of v's origins, "self" read as what v is: a main
    argument's own sharding is input N, a reshard's is its constraint ("constraint_N")."""
    if origin == "self":
        if v in mod.args:
            return "input", mod.args.index(v), f"input: {mod.args.index(v)}"
        if "made" not in mod.memo:  # each value's own op (names are reused, values are not)
            mod.memo["made"] = {
                id(val): o for (_, n), (val, o) in mod.bound.items() if o and n in o.results
            }
        op = mod.memo["made"].get(id(v))
        name = op.attrs.get("sdy.sharding_origin_name", "").strip('"') if op is not None else ""
        if name:
            kind, n = origin_of(name)
            return kind, n, name
    kind, n = origin_of(origin)
    k = mod.memo.get(JIT_OUTPUTS, {}).get(origin) if kind == "constraint" else None
    if k is not None:  # a jitted function's out_shardings: that output's layout
        return "output", k, f"output: {k}"
    return kind, n, origin


JIT_OUTPUTS = "jit outputs"
"""In a module's memo: constraint origin name -> the main result whose out_shardings it is."""


def mark_jit_outputs(mod: Module, *others: Module | None) -> None:
    """Find the constraints that are a jitted function's out_shardings (:func:`jit_output`) in
    mod, the propagation in this process (the dump has its calls inlined and no lines), and
    have mod and others (the dump, which names mod's constraints) read them as outputs."""
    found = {
        name: k for name, op in mod.constraints.items() if (k := jit_output(mod, op)) is not None
    }
    for m in (mod, *others):
        if m is not None:
            m.memo[JIT_OUTPUTS] = found


def jit_output(mod: Module, op: Op) -> int | None:
    """The main function's result a constraint is the layout of, where it is a jitted
    function's out_shardings (JAX writes it with no name nor line, as the value its function
    returns, and the main function returns that function's call as result N); None
    otherwise."""
    if not op.results or not ((not op.file and not op.name) or op.name == "jit:"):
        return None  # (jax 0.7-0.8 name it "jit:", at the line that calls the function)
    rets = [o for o in mod.ops if o.op == "func.return" and o.scope == op.scope]
    returned = any(mod.made_by(r, n) is op for r in rets for n in r.operands)
    fn = mod.func_names.get(op.scope, "")
    found = [
        k
        for k, r in enumerate(mod.returns)
        if returned and fn and r is not None and r.op == "func.call"
        and r.attrs.get("callee", "").lstrip("@") == fn
    ]  # fmt: skip
    return found[0] if len(found) == 1 else None


def open_argument(text: str, i: int) -> str:
    """The module's text with the main function's argument i left open (``{?}`` on every
    dimension): Shardy then gives it the sharding its uses want."""
    m = re.search(r"%arg" + str(i) + r": tensor<[^>]*>\s*\{", text)
    if m is None:
        return text
    s = text.find("sdy.sharding = #sdy.sharding<", m.end())
    nxt = text.find("%arg" + str(i + 1) + ":", m.end())
    if s < 0 or (0 <= nxt < s):
        return text
    start = text.index("[", s)
    depth, j = 0, start
    while j < len(text):
        depth += {"[": 1, "]": -1}.get(text[j], 0)
        if depth == 0:
            break
        j += 1
    ndim = len(re.findall(r"\{[^}]*\}", text[start : j + 1]))
    return text[: start + 1] + ", ".join(["{?}"] * ndim) + text[j:]


def full_name(mod: Module, op: Op) -> str:
    """op's name as the compiled HLO writes it: inside a function called from one place (a
    scan's body), prefixed by that call's name; "" where the callers disagree."""
    fn = mod.func_names.get(op.scope, "")
    callers = set(mod.callers.get(fn, []))
    if not callers:
        return op.name
    return f"{callers.pop()}/{op.name}" if len(callers) == 1 and op.name else ""
