"""The package's shape: no runtime import cycles, few modules at the top, no long files.

Runtime imports are every import statement, function-level ones included (they still tie the
modules together when they run); imports under ``if TYPE_CHECKING:`` are not. A cycle, a 13th
module directly in src/shardwidget/ or a file over 700 lines fails here, hence in ./dev test.
"""

from __future__ import annotations

import ast
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "shardwidget"
MAX_TOP_MODULES = 12
MAX_LINES = 700


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


def test_few_modules_directly_in_the_package():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_MODULES, top


def test_no_file_over_700_lines():
    assert long_files() == []


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
