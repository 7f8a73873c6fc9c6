"""Axis-type defaults per JAX version live in _jax.py (issue 29: on jax 0.11 an AbstractMesh
made without axis_types is Explicit, and every plan test failed), and nothing in the tests,
the notebooks or the README's code depends on a version's default."""

from __future__ import annotations

import ast
import json
import re
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest
from jax.sharding import AbstractMesh, AxisType, Mesh

from shardwidget import _jax

ROOT = Path(__file__).resolve().parent.parent


def _version() -> tuple[int, int]:
    major, minor = jax.__version__.split(".")[:2]
    return int(major), int(minor)


def test_default_axis_types_are_what_this_jax_makes() -> None:
    with warnings.catch_warnings():  # jax 0.8 warns that make_mesh's default will change
        warnings.simplefilter("ignore", DeprecationWarning)
        made = jax.make_mesh((1,), ("a",), devices=jax.devices()[:1])
        assert _jax.default_axis_type("make_mesh") == made.axis_types[0]
        assert _jax.default_axis_type("AbstractMesh") == AbstractMesh((1,), ("a",)).axis_types[0]
        mesh = Mesh(np.array(jax.devices()[:1]), ("a",))
        assert _jax.default_axis_type("Mesh") == mesh.axis_types[0]
    # measured: 0.7.2 and 0.8.3 Auto, 0.9.2 and 0.10.2 Explicit
    want_make = AxisType.Explicit if _version() >= (0, 9) else AxisType.Auto
    assert _jax.default_axis_type("make_mesh") == want_make
    v = _version()
    want = AxisType.Explicit if v >= (0, 11) else AxisType.Auto
    assert _jax.default_axis_type("AbstractMesh") == want
    with pytest.raises(ValueError, match="constructor must be one of"):
        _jax.default_axis_type("mesh")


def test_axis_types_spelled_for_every_kind() -> None:
    assert _jax.axis_types("auto", 2) == (AxisType.Auto, AxisType.Auto)
    assert _jax.axis_types("explicit", 3) == (AxisType.Explicit,) * 3
    am = AbstractMesh((2, 4), ("x", "y"), axis_types=_jax.axis_types("auto", 2))
    assert am.axis_types == (AxisType.Auto, AxisType.Auto)
    with pytest.raises(ValueError, match="kind must be one of"):
        _jax.axis_types("Auto", 2)


def _calls_without_axis_types(src: str) -> list[str]:
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        typed = any(k.arg in ("axis_types", None) for k in node.keywords)
        if name in ("make_mesh", "AbstractMesh") and len(node.args) < 3 and not typed:
            out.append(ast.get_source_segment(src, node) or name)
    return out


def _sources() -> list[tuple[str, str]]:
    here = Path(__file__).resolve()  # (this file makes meshes with the defaults on purpose)
    tests = [p for p in sorted(ROOT.glob("tests/**/*.py")) if p.resolve() != here]
    out = [(str(p.relative_to(ROOT)), p.read_text()) for p in tests]
    for p in sorted(ROOT.glob("examples/*.ipynb")):
        for i, cell in enumerate(json.loads(p.read_text())["cells"]):
            if cell["cell_type"] == "code":
                out.append((f"{p.name} cell {i}", "".join(cell["source"])))
    readme = (ROOT / "README.md").read_text()
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", readme, re.S)):
        out.append((f"README.md block {i}", block))
    return out


def test_no_mesh_in_tests_notebooks_or_readme_relies_on_a_default_axis_type() -> None:
    missing = [(where, c) for where, src in _sources() for c in _calls_without_axis_types(src)]
    assert missing == [], missing
