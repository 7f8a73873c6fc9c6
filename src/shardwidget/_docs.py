"""The API reference, docs/api.md, written from the docstrings.

    python -m shardwidget._docs            # write docs/api.md
    python -m shardwidget._docs --check    # exit 1 when docs/api.md is stale or a name is bare

Every public name of the package (``shardwidget.__all__``) and the types its views hand out
(``view.layout``, ``view.summary``, ``view.trace``, ``view.transfer``, ``memory_map()``, …) gets
a section: its signature, its docstring, then each public member: traits (their attribute
docstring: type, default, direction of sync), properties, methods and dataclass fields. A field
is documented by an attribute docstring, a comment on its line, or its name in the class
docstring (an ``Attributes:`` list). :func:`undocumented` lists what has none; tests/test_docs.py
fails on it, and on a docs/api.md that differs from :func:`render`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import pathlib
import re
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

import traitlets

import shardwidget

from . import (
    ArrayView,
    Comparison,
    Estimate,
    ExportReport,
    FunctionView,
    Hardware,
    Layout,
    LayoutState,
    MemoryMap,
    ShardView,
    TraceResult,
    TraceState,
    Transfer,
    TreeView,
    compare,
    hardware,
    memory_map,
    suggest_layouts,
)
from .cost.estimate import CollectiveTime
from .hlo.collectives import Collective, HloShape
from .hlo.peak import Buffer, Peak, Point
from .model.help import Suggestion
from .model.layout import Block, DeviceInfo, MeshInfo
from .model.layout_diff import BlockMove, DeviceChange, LayoutDiff
from .model.memory_map import ArrayEntry
from .model.summary import Summary
from .model.tree import StaticLeaf, TreeLeaf
from .plan import (
    Fit,
    GpuMeshInfo,
    Plan,
    PlanError,
    TpuMeshInfo,
    gpu_mesh,
    largest_fit,
    plan,
    tpu_mesh,
)
from .render.snapshot import Snapshot
from .trace.result import Constraint, Leaf, LeafResult
from .why.cause import Cause, Place
from .why.fixes import Fix
from .why.memory_fixes import MemoryFix

ROOT = pathlib.Path(__file__).resolve().parents[2]
API_MD = ROOT / "docs" / "api.md"


def sections() -> list[tuple[str, str, list[Any]]]:
    """(title, introduction, objects) of each section of the reference, in order."""

    secs: list[tuple[str, str, list[Any]]] = [
        (
            "Views",
            "`ShardView(x)`, `ShardView(f, *args)` (and `ShardView(tree)`, below): the widgets, "
            "their traits (synced with "
            "the front end) and their Python API.",
            [ShardView, ArrayView, FunctionView],
        ),
        (
            "Layout",
            "`view.layout`: the geometry of an array's sharding as plain data, and "
            "`view.layout_state`: the layout in the controls.",
            [Layout, Block, MeshInfo, DeviceInfo, LayoutState],
        ),
        ("Statistics", "`view.summary`: per-block statistics and thumbnails.", [Summary]),
        (
            "Whole models",
            "`ShardView(tree)`: a pytree's leaves (`view.leaves`), memory per device, partition "
            "rules and logical axis rules.",
            [TreeView, TreeLeaf, StaticLeaf],
        ),
        (
            "Functions",
            "`view.trace` of a function view: what XLA compiled for one layout of the inputs.",
            [TraceState, Leaf, TraceResult, LeafResult, Constraint, Collective, HloShape],
        ),
        (
            "Why this collective",
            "`view.trace.collectives[i].cause`: the shardings that met where XLA inserted it; "
            "`view.fixes(i)`: the layouts that remove it (`view.apply_fix(i, k)` applies one).",
            [Cause, Place, Fix],
        ),
        (
            "Cost",
            "`view.transfer`, `view.trace.estimate(...)` and the hardware presets.",
            [Transfer, Estimate, CollectiveTime, hardware, Hardware],
        ),
        (
            "Device memory",
            "`shardwidget.memory_map()`: device memory over every live array.",
            [memory_map, MemoryMap, ArrayEntry],
        ),
        (
            "Where the memory goes",
            "`view.trace.peak` and `plan.peak`: the most memory one device holds during the "
            "program, where, and what is live there, read from the compiler's own live-range "
            "report and buffer assignment (None where the compiler wrote none: "
            "`peak_unknown` says why). `shardwidget.plan.largest_fit(...)`: the largest size "
            "of an input's dimension that fits, by bisection over compiles "
            "(`view.largest_fit(input_path, dim)` on a function view's layout). "
            "`view.memory_fixes()`: layouts that lower the peak, each compiled "
            "(`view.apply_memory_fix(k)` applies one; undo restores).",
            [Peak, Point, Buffer, largest_fit, Fit, MemoryFix],
        ),
        (
            "Comparing",
            "`compare(...)`: function views side by side, or two array layouts as a diff.",
            [compare, Comparison, LayoutDiff, BlockMove, DeviceChange],
        ),
        (
            "Pictures and pages",
            "`view.snapshot()`: the view frozen now, to display; `view.save_html(...)`: one "
            "self-contained page whose controls work without a kernel.",
            [Snapshot, ExportReport],
        ),
        (
            "Plans",
            "`shardwidget.plan.plan(f, *args, mesh=AbstractMesh(...), in_specs=...)`: what XLA "
            "compiles for a mesh bigger than the kernel, in the planning helper.",
            [plan, Plan, PlanError],
        ),
        (
            "Plans by the TPU compiler",
            "`shardwidget.tpu_mesh(topology, mesh_shape, axis_names, ...)`: a mesh of a TPU "
            "topology's chips; plans on it are compiled by libtpu, the TPU's own compiler, in a "
            "helper process whose venv is its own (`python -m shardwidget.compilers install "
            "tpu`).",
            [tpu_mesh, TpuMeshInfo],
        ),
        (
            "Plans by the GPU compiler",
            "`shardwidget.gpu_mesh(gpu, mesh_shape, axis_names, hosts=..., ...)`: a mesh of "
            "GPUs on their hosts; plans on it are compiled by XLA's GPU compiler (jaxlib's CUDA "
            "plugin) from the GPU's target config, in a helper process whose venv is its own "
            "(`python -m shardwidget.compilers install gpu`); the kernel never loads the plugin.",
            [gpu_mesh, GpuMeshInfo],
        ),
        ("Help", "Layouts that fit a shape.", [suggest_layouts, Suggestion]),
    ]
    return secs + _others({o.__name__ for _, _, group in secs for o in group})


def _others(listed: set[str]) -> list[tuple[str, str, list[Any]]]:
    """A section for the public names no section lists (a name exported later), so the
    reference covers every name of ``shardwidget.__all__`` whatever the sections say."""
    rest = [
        getattr(shardwidget, n)
        for n in shardwidget.__all__
        if n not in listed and not n.startswith("__")
    ]
    return [("Other names", "Public names not grouped above.", rest)] if rest else []


# ---------------------------------------------------------------- reading the sources
@functools.cache
def _class_notes(cls: type) -> dict[str, tuple[str, bool]]:
    """Attribute name -> (its docstring (a string right after the assignment), True), or else
    (its comment on the same line, False), for the assignments in cls's own body."""
    try:
        src = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = src.splitlines()
    body = ast.parse(src).body[0]
    assert isinstance(body, ast.ClassDef)
    notes: dict[str, tuple[str, bool]] = {}
    stmts = body.body
    for i, node in enumerate(stmts):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            name = node.targets[0].id
        else:
            continue
        nxt = stmts[i + 1] if i + 1 < len(stmts) else None
        if (
            isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            notes[name] = (inspect.cleandoc(nxt.value.value), True)
            continue
        line = lines[(node.end_lineno or node.lineno) - 1]
        m = re.search(r"\s#\s*(.+)$", line)
        if m and not m.group(1).startswith(("type:", "noqa")):
            notes[name] = (m.group(1).strip(), False)
    return notes


def _own_doc(obj: Any) -> str:
    """obj's own docstring ("" for none; a dataclass's generated signature is none)."""
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    if not doc:
        return ""
    generated = isinstance(obj, type) and dataclasses.is_dataclass(obj)
    if generated and doc.startswith(obj.__name__ + "("):
        return ""
    return inspect.cleandoc(doc)


def _ours(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "shardwidget"


def _owners(cls: type, documented: set[type]) -> list[type]:
    """cls, then its shardwidget bases that have no section of their own (mixins): the classes
    whose members cls's section lists."""
    return [c for c in cls.__mro__ if c is cls or (_ours(c) and c not in documented)]


def _note(cls: type, name: str) -> str:
    """The attribute docstring (or line comment) of name, from the first class of cls's MRO
    that has one."""
    for c in cls.__mro__:
        if _ours(c) and name in _class_notes(c):
            return _class_notes(c)[name][0]
    return ""


def _mentioned(cls: type, name: str) -> bool:
    doc = _own_doc(cls)
    part = doc.split("Attributes", 1)[1] if "Attributes" in doc else doc
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", part) is not None


@functools.cache
def _attributes(cls: type) -> dict[str, str]:
    """name -> text from the ``Attributes:`` list of cls's docstring: "name: text" entries, one
    or more per line ("shape, dtype: ..." names several; "a: ...; b: ..." shares a line), with
    their more-indented continuation lines."""
    doc = _own_doc(cls)
    if "Attributes:" not in doc:
        return {}
    out: dict[str, str] = {}
    last: list[str] = []
    entry = re.compile(r"^(\w+(?:,\s*\w+)*):\s+(.*)$")
    for line in doc.split("Attributes:", 1)[1].splitlines():
        for part in re.split(r";\s+(?=[\w, ]+:\s)", line.strip()):
            m = entry.match(part)
            if m is None:  # more of the entries before
                for n in last:
                    out[n] = f"{out[n]} {part}".strip()
                continue
            last = [n.strip() for n in m.group(1).split(",")]
            for n in last:
                out[n] = m.group(2)
    return {n: t.rstrip(";").strip() for n, t in out.items()}


def _field_doc(cls: type, name: str) -> str:
    """A field's documentation: its attribute docstring, else its entry in the class's
    Attributes list, else its line comment, else "(see above)" when the class docstring names
    it, else ""."""
    for c in cls.__mro__:
        if _ours(c):
            note = _class_notes(c).get(name)
            if note is not None and note[1]:
                return note[0]
            if name in _attributes(c):
                return _attributes(c)[name]
            if note is not None:
                return note[0]
    return "(see above)" if _mentioned(cls, name) else ""


Member = tuple[str, str, str, str]  # kind, name, signature or type, doc


def members(cls: type, documented: set[type]) -> Iterator[Member]:
    """The public members that cls's section lists, in source order within each class."""
    seen: set[str] = set()
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    for name, f in fields.items():
        if not name.startswith("_"):
            seen.add(name)
            yield "field", name, _type_text(f.type), _field_doc(cls, name)
    for owner in _owners(cls, documented):
        for name, value in owner.__dict__.items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            yield from _member(cls, name, value)


def _member(cls: type, name: str, value: Any) -> Iterator[Member]:
    if isinstance(value, traitlets.TraitType):
        yield "trait", name, type(value).__name__, _note(cls, name)
    elif isinstance(value, property | functools.cached_property):
        fn = value.fget if isinstance(value, property) else value.func
        yield "property", name, _returns(fn), _own_doc(fn)
    elif isinstance(value, staticmethod | classmethod):
        yield "method", name, _signature(value.__func__), _own_doc(value.__func__)
    elif inspect.isfunction(value):
        yield "method", name, _signature(value, drop_self=True), _own_doc(value)
    elif isinstance(value, types.MemberDescriptorType):  # a __slots__ attribute
        yield "field", name, "", _field_doc(cls, name)
    elif name.isupper():
        yield "constant", name, type(value).__name__, _note(cls, name)


def _type_text(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "__name__", repr(t))


def _returns(fn: Any) -> str:
    ann = getattr(fn, "__annotations__", {}).get("return")
    return _type_text(ann) if ann is not None else ""


def _signature(fn: Callable[..., Any], drop_self: bool = False) -> str:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name in ("self", "cls"):
        params = params[1:]
    # Annotations are strings here (postponed evaluation): show them as written, unquoted.
    params = [p.replace(annotation=_written(p.annotation)) for p in params]
    return str(sig.replace(parameters=params, return_annotation=_written(sig.return_annotation)))


def _written(ann: Any) -> Any:
    return ann if ann is inspect.Parameter.empty else _Written(_type_text(ann))


class _Written:
    """An annotation shown as its source text (inspect shows an object by its repr)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


# ---------------------------------------------------------------- the checks
def undocumented() -> list[str]:
    """Every documented object, and every member its section lists, that has no docstring; and
    every name of ``shardwidget.__all__`` that no section covers."""
    objs = [o for _, _, group in sections() for o in group]
    documented = {o for o in objs if isinstance(o, type)}
    missing: list[str] = []
    names = {getattr(o, "__name__", "") for o in objs}
    for n in shardwidget.__all__:
        if n not in names and not n.startswith("__"):
            missing.append(f"{n}: in __all__ but not in the reference")
    for obj in objs:
        if not _own_doc(obj):
            missing.append(f"{obj.__name__}: no docstring")
        if isinstance(obj, type):
            for _kind, name, _sig, doc in members(obj, documented):
                if not doc:
                    missing.append(f"{obj.__name__}.{name}: no docstring")
    return missing


# ---------------------------------------------------------------- markdown
def _md_doc(doc: str) -> str:
    """A docstring as markdown: Sphinx roles to code spans; ``x`` stays a code span; a literal
    block (after ``::``) stays indented, which markdown shows as code (never run as an
    example: only fenced python blocks are)."""
    doc = re.sub(r":mod:`~?([^`]+)`", r"`\1`", doc)  # a module by its full name
    doc = re.sub(r":\w+:`~?(?:[\w.]+\.)?([^`<]+?)`", r"`\1`", doc)
    doc = doc.replace("::\n", ":\n")
    return doc


def _anchor(title: str) -> str:
    return re.sub(r"[^\w-]", "", title.lower().replace(" ", "-"))


def render() -> str:
    """The text of docs/api.md."""
    secs = sections()
    documented = {o for _, _, group in secs for o in group if isinstance(o, type)}
    out = [
        "# shardwidget API reference",
        "",
        "<!-- Written by `python -m shardwidget._docs` from the docstrings; do not edit. "
        "tests/test_docs.py fails when this file is stale. -->",
        "",
        shardwidget.__doc__.strip().split("\n\n")[0] if shardwidget.__doc__ else "",
        "",
        "Public names: " + ", ".join(f"`{n}`" for n in shardwidget.__all__) + ".",
        "",
    ]
    out += [f"- [{t}](#{_anchor(t)}): " + ", ".join(_name(o) for o in g) for t, _, g in secs]
    for title, intro, group in secs:
        out += ["", f"## {title}", "", intro]
        for obj in group:
            out += _section(obj, documented)
    return "\n".join(out).rstrip() + "\n"


def _name(obj: Any) -> str:
    return f"`{obj.__name__}`"


def _section(obj: Any, documented: set[type]) -> list[str]:
    where = f"{obj.__module__}.{obj.__qualname__}"
    if isinstance(obj, type):
        head = f"### class `{obj.__name__}`"
        sig = _signature(obj) if not issubclass(obj, traitlets.HasTraits) else ""
        if obj.__name__ == "ShardView":
            sig = "(obj, /, *args, **kwargs)"
        elif issubclass(obj, traitlets.HasTraits):  # a view kind's arguments are its _build's
            sig = _signature(getattr(obj, "_build", obj.__init__), drop_self=True)
    else:
        head = f"### `{obj.__name__}()`"
        sig = _signature(obj)
    sig = sig.removesuffix(" -> None") if isinstance(obj, type) else sig
    lines = ["", head, "", f"`{obj.__name__}{sig}` · `{where}`", "", _md_doc(_own_doc(obj))]
    if isinstance(obj, type):
        rows = list(members(obj, documented))
        if rows:
            lines += [""]
        for kind, name, sig_or_type, doc in rows:
            first, *rest = _md_doc(doc).split("\n") if doc else [""]
            if kind == "method":
                label = f"`{name}{sig_or_type}`"
            elif sig_or_type:
                label = f"`{name}`: `{sig_or_type}`"
            else:
                label = f"`{name}`"
            lines.append(f"- {kind} {label}: {first}".rstrip())
            lines += [f"  {r}".rstrip() for r in rest]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    missing = undocumented()
    for m in missing:
        print(f"undocumented: {m}", file=sys.stderr)
    if "--check" in args:
        stale = not API_MD.is_file() or API_MD.read_text(encoding="utf-8") != text
        if stale:
            print(f"{API_MD} is stale: run python -m shardwidget._docs", file=sys.stderr)
        return 1 if stale or missing else 0
    API_MD.parent.mkdir(exist_ok=True)
    API_MD.write_text(text, encoding="utf-8")
    print(f"wrote {API_MD} ({len(text):,} characters)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
