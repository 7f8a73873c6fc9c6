"""The package's shape: no runtime import cycles, dependencies that point down its floors,
imports at module level, few modules at the top, no long files.

Runtime imports are every import statement, function-level ones included (they still tie the
modules together when they run); imports under ``if TYPE_CHECKING:`` are not. A cycle, an import
that runs up a floor (:data:`FLOORS`) or closes a cycle between packages, an import inside a
function that :data:`LAZY_IMPORTS` does not allow, a 13th module directly in src/shardwidget/ or
a file over 600 lines or a class over 400 fails here, hence in ./dev test.
"""

from __future__ import annotations

import ast
import pathlib
import re
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "shardwidget"
MAX_TOP_MODULES = 12
MAX_LINES = 600
MAX_CLASS_LINES = 400

FLOORS: dict[str, int] = {
    # the JAX adapter: every private JAX read and version difference
    "shardwidget._jax": 0,
    # pure: geometry, specs, rules, statistics; and the readers of compiled HLO text (no JAX):
    # its collectives, the FLOPs of its dots and gemms, the TPU compiler's layouts, the memory
    # peak from the compiler's own reports
    "shardwidget.model": 1,
    "shardwidget.hlo": 1,
    # what a layout or a program costs: bytes moved, time on a hardware preset (reads HLO); why
    # a collective is there (Shardy's record matched to the HLO) and the layouts that remove it
    # (it reads a trace's results by their attributes, typed under TYPE_CHECKING)
    "shardwidget.cost": 2,
    "shardwidget.why": 2,
    # tracing and compiling a function with JAX; its result estimates itself through cost
    "shardwidget.trace": 3,
    # plans: a program compiled for a mesh bigger than the kernel's, in a helper process
    "shardwidget.plan": 4,
    # the search for a layout: candidates, compiled by a target's compiler in plan's helpers
    "shardwidget.layout_search": 4,
    # pictures (SVG, PNG, the scene), then the payload the front end reads (which uses them)
    "shardwidget.render": 5,
    "shardwidget.wire": 6,
    # snippets and saved pages; ipywidgets' registry
    "shardwidget.export": 7,
    "shardwidget._widgets": 7,
    # the widgets, then the package's face and its doc writer
    "shardwidget.views": 8,
    "shardwidget._docs": 9,
    "shardwidget": 9,
}
"""The package's floors, bottom first: a module may import from its own floor or below, never
above. Each key is a group (a module or a package, whichever key is the longest prefix of a
module's name); groups on one floor must not import each other in a cycle."""

LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("_jax/__init__.py", "jax._src"): "private JAX modules move between versions: a missing one "
    "fails only the function that reads it",
    ("_jax/shardy.py", "jax._src"): "private JAX (jaxlib's MLIR and its pass manager): a missing "
    "one fails only the explanation that asks for it",
    ("_jax/compile.py", "jax._src"): "private JAX (its compiler, MLIR and AbstractDevice): a "
    "missing one fails only the plan that asks for it",
    ("plan/_tpu_worker.py", "jax"): "the TPU helper moves its stdout aside and has JAX use CPU "
    "platforms (libtpu compiles only) before JAX and its topologies load",
    ("_widgets.py", "anywidget._util"): "private, absent from older anywidget (try/except)",
    ("plan/_gpu_worker.py", "jax"): "the GPU helper moves its stdout aside and has JAX use CPU "
    "platforms (the CUDA plugin compiles only) before JAX and its topologies load",
    ("plan/_worker.py", "jax"): "the helper process sets XLA_FLAGS (its device count) first",
    ("render/png.py", "cairosvg"): "optional: PNG without a browser",
    ("render/png.py", "playwright"): "optional and heavy: PNG through headless Chromium",
    ("views/rerun.py", "comm"): "optional: older ipykernels have no comm package (try/except)",
}
"""Imports allowed inside functions, by file (relative to the package) and imported module,
each with why: an optional or heavy dependency, or one that must wait. Every other import sits
at module level, where this test (and a reader) sees the dependency."""


def modules(pkg: pathlib.Path) -> dict[str, pathlib.Path]:
    """Dotted name -> file, for every module of the package rooted at pkg (packages by name)."""
    out = {}
    for p in pkg.rglob("*.py"):
        parts = list(p.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(sub) for sub in ast.walk(node))
    return skip


def _targets(name: str, is_pkg: bool, node: ast.AST, mods: dict[str, pathlib.Path]) -> set[str]:
    """The package's modules an import statement in module `name` loads."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            n = alias.name
            while n and n not in mods:
                n = n.rpartition(".")[0]
            if n:
                out.add(n)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        for alias in node.names:
            full = f"{mod}.{alias.name}"
            if full in mods:
                out.add(full)
            elif mod in mods:
                out.add(mod)
    return out


def import_graph(pkg: pathlib.Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports at runtime. A submodule importing its own
    parent package (or an ancestor) is left out: Python runs the parent first anyway."""
    mods = modules(pkg)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            for dep in _targets(name, is_pkg, node, mods):
                if dep != name and not name.startswith(dep + "."):
                    graph[name].add(dep)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def long_files() -> list[str]:
    files = list(PACKAGE.rglob("*.py"))
    files += [p for p in (ROOT / "js").rglob("*.ts") if "tests" not in p.relative_to(ROOT).parts]
    out = []
    for p in files:
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out.append(f"{p.relative_to(ROOT)}: {n} lines")
    return out


def test_no_runtime_import_cycles():
    assert cycles(import_graph(PACKAGE)) == []


def group_of(module: str, floors: dict[str, int] = FLOORS) -> str:
    """The key of FLOORS that is the longest prefix of module (by dotted parts)."""
    keys = [k for k in floors if module == k or module.startswith(k + ".")]
    if not keys:
        raise AssertionError(f"{module} is on no floor: add it to FLOORS")
    return max(keys, key=len)


def upward_imports(graph: dict[str, set[str]], floors: dict[str, int] = FLOORS) -> list[str]:
    """Every import from a module to one on a higher floor."""
    out = []
    for a, deps in sorted(graph.items()):
        for b in sorted(deps):
            fa, fb = floors[group_of(a, floors)], floors[group_of(b, floors)]
            if fb > fa:
                out.append(f"{a} (floor {fa}) imports {b} (floor {fb})")
    return out


def group_cycles(graph: dict[str, set[str]], floors: dict[str, int] = FLOORS) -> list[list[str]]:
    """Cycles between groups (packages, or the modules FLOORS names on their own)."""
    groups: dict[str, set[str]] = {group_of(m, floors): set() for m in graph}
    for a, deps in graph.items():
        for b in deps:
            ga, gb = group_of(a, floors), group_of(b, floors)
            if ga != gb and not ga.startswith(gb + ".") and not gb.startswith(ga + "."):
                groups[ga].add(gb)
    return cycles(groups)


def function_imports(pkg: pathlib.Path) -> list[tuple[str, int, str]]:
    """(file relative to pkg, line, imported module) for every import inside a function."""
    out = []
    for p in sorted(pkg.rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        seen: set[int] = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for sub in ast.walk(fn):
                if id(sub) in seen or not isinstance(sub, ast.Import | ast.ImportFrom):
                    continue
                seen.add(id(sub))
                rel = p.relative_to(pkg).as_posix()
                if isinstance(sub, ast.ImportFrom) and sub.module:
                    mods = ["." * sub.level + sub.module]
                elif isinstance(sub, ast.ImportFrom):
                    mods = ["." * sub.level + a.name for a in sub.names]
                else:
                    mods = [a.name for a in sub.names]
                out.extend((rel, sub.lineno, m) for m in mods)
    return out


def unallowed_function_imports(
    pkg: pathlib.Path, allowed: dict[tuple[str, str], str] = LAZY_IMPORTS
) -> list[str]:
    def ok(rel: str, mod: str) -> bool:
        return any(rel == f and (mod == m or mod.startswith(m + ".")) for f, m in allowed)

    return [
        f"{rel}:{line} imports {mod}"
        for rel, line, mod in function_imports(pkg)
        if not ok(rel, mod)
    ]


def test_every_module_is_on_a_floor():
    for m in modules(PACKAGE):
        group_of(m)


def test_dependencies_point_down_the_floors():
    assert upward_imports(import_graph(PACKAGE)) == []


def test_no_cycle_between_packages():
    assert group_cycles(import_graph(PACKAGE)) == []


def test_imports_at_module_level():
    """A function-level import hides a dependency from this test and from a reader; only the
    ones LAZY_IMPORTS names (each with why) are allowed."""
    assert unallowed_function_imports(PACKAGE) == []


def _imported_names(name: str, is_pkg: bool, node: ast.AST) -> list[tuple[str, str]]:
    """(owner, name) for each name an import statement takes from a module or package: owner
    is the dotted module it is read from (relative imports resolved from module `name`)."""
    if isinstance(node, ast.Import):
        dotted = [a.name.rsplit(".", 1) for a in node.names if "." in a.name]
        return [(owner, item) for owner, item in dotted]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        owner = ".".join(base + ([node.module] if node.module else []))
    else:
        owner = node.module or ""
    return [(owner, a.name) for a in node.names]


def private_imports(pkg: pathlib.Path) -> list[str]:
    """Every private name (a leading underscore) of the package imported from outside the
    module or package that holds it: ``from ._compiled import _flops`` in a sibling module, or
    ``from ..trace import _specs`` in views/. A package's own private modules stay its own."""
    out = []
    root = pkg.name
    for name, path in sorted(modules(pkg).items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            for owner, item in _imported_names(name, path.name == "__init__.py", node):
                if not owner.startswith(root) or not item.startswith("_"):
                    continue
                if not (name == owner or name.startswith(owner + ".")):
                    out.append(f"{name} imports {owner}.{item}")
    return sorted(out)


def test_no_private_names_across_modules():
    assert private_imports(PACKAGE) == []


def reads_ipython(path: pathlib.Path) -> bool:
    """Whether a module's code (not its docstrings) imports or looks up IPython's shell."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n.split(".")[0] in ("IPython", "ipykernel") for n in names):
                return True
        if isinstance(node, ast.Constant) and node.value in ("IPython", "ipykernel"):
            return True
        if isinstance(node, ast.Name | ast.Attribute) and "get_ipython" in ast.unparse(node):
            return True
    return False


def test_only_the_views_read_ipython():
    """The running shell is the widgets' business: below views/ a module reads no IPython
    (the HLO readers name notebook cells through what views/cells.py registers)."""
    views = FLOORS["shardwidget.views"]
    low = [
        m for m, p in modules(PACKAGE).items() if FLOORS[group_of(m)] < views and reads_ipython(p)
    ]
    assert low == []


def test_the_checker_finds_private_names_and_ipython(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "_adapter.py": "X = 1\n",
            "a.py": "from . import _adapter\nfrom .sub import _hidden\nfrom .b import _f, g\n",
            "b.py": "import sys\n\ndef _f():\n    return sys.modules.get('IPython')\n\ng = 1\n",
            "sub/__init__.py": "from . import _hidden\n",
            "sub/_hidden.py": "",
        },
    )
    assert private_imports(pkg) == ["pkg.a imports pkg.b._f", "pkg.a imports pkg.sub._hidden"]
    assert reads_ipython(pkg / "b.py") and not reads_ipython(pkg / "a.py")


def test_few_modules_directly_in_the_package():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_MODULES, top


def test_no_file_over_600_lines():
    assert long_files() == []


def long_classes(pkg: pathlib.Path = PACKAGE) -> list[str]:
    out = []
    for p in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > MAX_CLASS_LINES:
                    out.append(f"{p.relative_to(pkg)}:{node.name}: {n} lines")
    return out


def test_no_class_over_400_lines():
    assert long_classes() == []


MAX_BARE_ANY_PERCENT = 6.0
"""Bare ``Any`` on named parameters may not grow back past this: 17.2 % before issue 34's
typing, 8.0 % after its first part, 5.3 % after its second (130 of 2449: JAX types for meshes,
shardings, arrays, dtypes and jaxprs); the anchors' figure is 5.8 % (Treescope, lonboard)."""


def bare_any(pkg: pathlib.Path = PACKAGE) -> tuple[int, int]:
    """(parameters annotated exactly ``Any``, named parameters), self and cls aside: the count
    ``shared/tools/structure.py`` prints, the anchors' way of counting."""
    bare = named = 0
    for p in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            if params and params[0].arg in ("self", "cls"):
                params = params[1:]
            for q in params:
                named += 1
                ann = q.annotation
                bare += (
                    (isinstance(ann, ast.Name) and ann.id == "Any")
                    or (isinstance(ann, ast.Constant) and ann.value == "Any")
                    or (isinstance(ann, ast.Attribute) and ann.attr == "Any")
                )
    return bare, named


def test_bare_any_does_not_grow_back():
    bare, named = bare_any()
    assert 100 * bare / named <= MAX_BARE_ANY_PERCENT, (
        f"bare Any on {bare} of {named} named parameters: type them (JAX types, object for "
        "what a function only checks or passes on, Protocols, TypedDicts for wire dicts)"
    )


def test_the_checker_counts_bare_any(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "m.py": """
            import typing
            from typing import Any

            def f(a: Any, b: int, c: "Any", d: typing.Any, e: list[Any], g: object) -> Any: ...

            class C:
                def m(self, x: Any) -> None: ...
            """
        },
    )
    assert bare_any(pkg) == (4, 7)


def js_tests_out_of_place(js: pathlib.Path = ROOT / "js") -> list[str]:
    """vitest files not in a folder of js/tests/ that mirrors one of js/ (js/tests/array/grid/
    for js/array/grid/): a test sits beside the twin of its subject's folder."""
    tests = js / "tests"
    out = []
    for p in sorted(tests.rglob("*.test.ts")):
        folder = p.parent.relative_to(tests)
        if folder == pathlib.Path(".") or not (js / folder).is_dir():
            out.append(str(p.relative_to(js)))
    return out


def test_js_tests_mirror_js():
    assert js_tests_out_of_place() == []


def test_the_checker_finds_a_js_test_out_of_place(tmp_path):
    for rel in ("array/grid/x.ts", "tests/array/grid/x.test.ts", "tests/y.test.ts",
                "tests/nope/z.test.ts", "tests/fixtures.ts"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert js_tests_out_of_place(tmp_path) == ["tests/nope/z.test.ts", "tests/y.test.ts"]


_IGNORE = re.compile(r"#\s*type:\s*ignore\b(\[[^\]]*\])?(?P<rest>.*)$")
_NOQA = re.compile(r"#\s*noqa\b[^#]*")
_REASON = re.compile(r"#[^#]*[A-Za-z]{3,}")


def unexplained_ignores(pkg: pathlib.Path = PACKAGE) -> list[str]:
    """``file:line`` of each ``# type: ignore`` with no comment after it that says why (a
    ``# noqa`` is no reason)."""
    out = []
    for p in sorted(pkg.rglob("*.py")):
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            m = _IGNORE.search(line)
            if m and not _REASON.search(_NOQA.sub("", m["rest"])):
                out.append(f"{p.relative_to(pkg)}:{n}")
    return out


def test_every_type_ignore_says_why():
    assert unexplained_ignores() == []


def test_the_checker_finds_a_type_ignore_without_a_reason(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "m.py": """
            a = f()  # type: ignore[misc]
            b = f()  # type: ignore[misc]  # (a mixin: the view defines it)
            c = f()  # type: ignore
            d = f()  # type: ignore[attr-defined]  # noqa: F401
            e = f()  # type: ignore[attr-defined]  # (private: not in the stubs)  # noqa: F401
            """
        },
    )
    assert unexplained_ignores(pkg) == ["m.py:2", "m.py:4", "m.py:5"]


def _package(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    pkg = tmp_path / "pkg"
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return pkg


def test_the_checker_finds_a_function_level_cycle(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from .sub import b\n",
            "sub/__init__.py": "",
            "sub/b.py": "def f():\n    from ..a import x\n",
        },
    )
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.sub.b"]]


@pytest.mark.parametrize(
    "b_text",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
        "from . import c\n",
        "import pkg\n",  # the parent package: run first by Python anyway
    ],
)
def test_the_checker_passes_what_is_no_cycle(tmp_path, b_text):
    pkg = _package(
        tmp_path,
        {"__init__.py": "", "a.py": "from . import b\n", "b.py": b_text, "c.py": "X = 1\n"},
    )
    assert cycles(import_graph(pkg)) == []


def test_the_checker_reads_import_forms(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import pkg.b\nfrom pkg import c\nfrom .d import thing\n",
            "b.py": "",
            "c.py": "",
            "d.py": "thing = 1\n",
        },
    )
    assert import_graph(pkg)["pkg.a"] == {"pkg.b", "pkg.c", "pkg.d"}


_FLOORS = {"pkg.low": 0, "pkg.mid": 1, "pkg.midb": 1, "pkg": 2}


def test_the_checker_finds_an_import_up_a_floor(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "",
            "low/a.py": "def f():\n    from ..mid import b\n",
            "mid/__init__.py": "",
            "mid/b.py": "X = 1\n",
            "midb/__init__.py": "",
        },
    )
    graph = import_graph(pkg)
    assert upward_imports(graph, _FLOORS) == ["pkg.low.a (floor 0) imports pkg.mid.b (floor 1)"]
    assert upward_imports({"pkg.mid.b": {"pkg.low.a"}}, _FLOORS) == []


def test_the_checker_finds_a_cycle_between_packages_on_one_floor(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "",
            "mid/__init__.py": "",
            "mid/a.py": "from ..midb import c\n",
            "midb/__init__.py": "",
            "midb/c.py": "X = 1\n",
            "midb/d.py": "from ..mid import a\n",
        },
    )
    graph = import_graph(pkg)
    assert cycles(graph) == []  # no cycle between modules...
    assert group_cycles(graph, _FLOORS) == [["pkg.mid", "pkg.midb"]]  # ...but between packages


def test_the_checker_finds_imports_inside_functions(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import json\n\ndef f():\n    import re\n    from . import b\n",
            "b.py": "def g():\n    try:\n        import cairosvg\n    except ImportError:\n"
            "        pass\n",
        },
    )
    allowed = {("b.py", "cairosvg"): "optional"}
    assert unallowed_function_imports(pkg, allowed) == ["a.py:4 imports re", "a.py:5 imports .b"]


JS_MAY_NOT_IMPORT: dict[str, tuple[str, ...]] = {
    "wire": ("shared", "cost", "array", "function", "tree"),
    "shared": ("cost", "array", "function", "tree"),
    "cost": ("array", "function", "tree"),
    "array": ("function", "tree"),
    "tree": ("function",),
    "search": ("array", "function", "tree"),
}
"""js/'s folders and those they must not import: what array/ and function/ share lives in
shared/ (the function view and the tree view embed array/'s view; array/ knows neither)."""


def js_upward_imports(js: pathlib.Path) -> list[str]:
    out = []
    for folder, banned in JS_MAY_NOT_IMPORT.items():
        for p in sorted((js / folder).rglob("*.ts")):
            text = p.read_text(encoding="utf-8")
            for m in re.finditer(r"""from\s+["'](\.\.?/[^"']+)["']""", text):
                target = (p.parent / m.group(1)).resolve().relative_to(js.resolve()).parts[0]
                if target in banned:
                    out.append(f"{p.relative_to(js)} imports {m.group(1)}")
    return out


def test_js_folders_share_through_shared():
    assert js_upward_imports(ROOT / "js") == []


def test_the_js_checker_finds_an_import_across(tmp_path):
    (tmp_path / "array").mkdir()
    (tmp_path / "function").mkdir()
    (tmp_path / "array" / "view.ts").write_text('import { x } from "../function/styles";\n')
    (tmp_path / "function" / "view.ts").write_text('import { y } from "../array/view";\n')
    assert js_upward_imports(tmp_path) == ["array/view.ts imports ../function/styles"]
