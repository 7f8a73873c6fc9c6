"""The docs: docs/api.md is what ``python -m shardwidget._docs`` writes from the docstrings, every
public name and field has a docstring, and every ```python example in docs/*.md runs (on the
8 simulated CPU devices of the test session), top to bottom, one namespace per file."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from shardwidget import _docs
from shardwidget.plan import compilers, tpu

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def test_api_reference_is_fresh() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert text == _docs.render(), "docs/api.md is stale: run python -m shardwidget._docs"


def test_every_public_name_and_field_has_a_docstring() -> None:
    assert _docs.undocumented() == []


def test_the_reference_covers_what_the_views_hand_out() -> None:
    """The names the issue asks for: traits, layout, summary, trace, transfer, hardware,
    memory_map; and every name of shardwidget.__all__."""
    import shardwidget

    text = _docs.render()
    for name in [n for n in shardwidget.__all__ if not n.startswith("__")]:
        assert re.search(rf"^### (class )?`{name}(\(\))?`", text, re.M), name
    for member in ["layout", "summary", "trace", "transfer", "spec", "mesh_shape", "hardware"]:
        assert re.search(rf"^- (property|trait) `{member}`", text, re.M), member
    for field in ["blocks", "collectives", "per_device", "arrays", "received"]:
        assert re.search(rf"^- (field|property) `{field}`", text, re.M), field


def test_a_bare_name_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a public function without a docstring, a field without one."""
    import dataclasses

    def bare() -> None:
        pass

    @dataclasses.dataclass
    class Bare:
        """A class whose field says nothing."""

        silent: int

    real = _docs.sections
    monkeypatch.setattr(_docs, "sections", lambda: [*real(), ("Extra", "", [bare, Bare])])
    missing = _docs.undocumented()
    assert "bare: no docstring" in missing
    assert "Bare.silent: no docstring" in missing


def test_check_mode_fails_on_a_stale_file(tmp_path: pathlib.Path, monkeypatch) -> None:
    stale = tmp_path / "api.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(_docs, "API_MD", stale)
    assert _docs.main(["--check"]) == 1
    monkeypatch.setattr(_docs, "API_MD", ROOT / "docs" / "api.md")
    assert _docs.main(["--check"]) == 0


def test_there_are_docs_with_examples() -> None:
    names = {p.name for p in DOCS}
    assert {"api.md", "hosts.md", "teaching.md"} <= names
    assert any(FENCE.search(p.read_text(encoding="utf-8")) for p in DOCS)


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_python_examples_run(path: pathlib.Path, tmp_path: pathlib.Path, monkeypatch) -> None:
    """Each ```python block of the file, in order, in one namespace (as a reader would paste
    them into one notebook), in a scratch folder (examples write pages)."""
    blocks = FENCE.findall(path.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"{path.name}[{i}]", "exec"), ns)
        except Exception as e:
            raise AssertionError(f"{path.name}: example {i + 1} failed:\n{code}") from e


def test_readme_python_examples_run(tmp_path: pathlib.Path, monkeypatch) -> None:
    """Every ```python block of README.md, in order, in one namespace, as one session of a
    reader pasting them into a notebook (8 simulated CPU devices; plans on the planning helper).
    ``to_png`` without a converter on this machine refuses in words (RuntimeError): that block
    goes on past it, as the reader's would."""
    from tests.conftest import _no_png_converter

    blocks = FENCE.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 9
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {"__name__": "readme"}
    no_png = _no_png_converter()
    no_tpu = tpu.unavailable()  # (./dev test has libtpu: .venvs/tpu)
    no_gpu = compilers.unavailable("gpu")  # (./dev test has the CUDA plugin: .venvs/gpu)
    skipped = []
    for i, code in enumerate(blocks):
        if no_png and "to_png(" in code:
            code = code.replace("view.to_png(", "(lambda *a, **k: None)(")
        if (no_tpu and "tpu_mesh(" in code) or (no_gpu and "gpu_mesh(" in code):
            skipped.append(i + 1)
            continue
        try:
            exec(compile(code, f"README.md[{i}]", "exec"), ns)
        except Exception as e:
            raise AssertionError(f"README.md: example {i + 1} failed:\n{code}") from e
    assert "AbstractMesh (16, 16)" in ns["view"].planned  # type: ignore[attr-defined]
    if skipped:  # every other block ran
        pytest.skip(f"README blocks {skipped} need the TPU or GPU compiler: {no_tpu or no_gpu}")


def test_the_module_runs_as_a_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "shardwidget._docs", "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_a_name_exported_later_gets_a_section(monkeypatch: pytest.MonkeyPatch) -> None:
    import shardwidget

    def newly_exported() -> None:
        """A function exported after the sections were written."""

    monkeypatch.setattr(shardwidget, "newly_exported", newly_exported, raising=False)
    monkeypatch.setattr(shardwidget, "__all__", [*shardwidget.__all__, "newly_exported"])
    text = _docs.render()
    assert "## Other names" in text and "### `newly_exported()`" in text
    assert _docs.undocumented() == []


def test_course_page_script_builds_the_course(tmp_path: pathlib.Path) -> None:
    """examples/course_page.py (docs/teaching.md): an index that links and frames every step's
    saved page, each self-contained, with the step's code; the user's array never moves."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_page", ROOT / "examples/course_page.py")
    assert spec is not None and spec.loader is not None
    course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(course)
    index, *steps = course.build(tmp_path / "course")
    assert [p.name for p in steps] == [f"step-{i}.html" for i in range(1, len(course.STEPS) + 1)]
    text = index.read_text(encoding="utf-8")
    for i, (title, _change, _text) in enumerate(course.STEPS, start=1):
        assert f'<iframe src="step-{i}.html"' in text and title in text
    # one frozen picture per step (view.snapshot()), each of its own layout
    pictures = re.findall(r'<figure><div class="shardwidget-snapshot".*?</figure>', text, re.S)
    assert len(pictures) == len(course.STEPS)
    heads = [re.search(r"<b[^>]*>(.*?)</b>", pic).group(1) for pic in pictures]
    assert heads[0].startswith("float32[8@x,8@y]") and heads[1].startswith("float32[8@y,8@x]")
    assert heads[2].startswith("float32[8@x,8]")
    assert [pic.count("<area ") for pic in pictures] == [8, 8, 2, 8]  # a hover area per block
    assert "P(&#x27;x&#x27;, None)" in text  # step 3's code, escaped into the page
    assert "mesh = jax.make_mesh((4, 2)" in text  # step 4 makes its own mesh
    for page in [index, *steps]:
        assert not re.search(r"""(src|href)=["']https?:""", page.read_text(encoding="utf-8"))


def test_slots_attributes_are_fields() -> None:
    class Slotted:
        """A class with slots.

        Attributes:
            told: said here.
            a, b: both said here; c: on the same line,
                and on the next.
        """

        __slots__ = ("a", "b", "c", "told", "untold")

    Slotted.__module__ = "shardwidget.example"  # documented like the package's own
    rows = {name: doc for kind, name, _t, doc in _docs.members(Slotted, set()) if kind == "field"}
    assert rows == {
        "told": "said here.",
        "a": "both said here",
        "b": "both said here",
        "c": "on the same line, and on the next.",
        "untold": "",
    }


def test_cited_tests_exist() -> None:
    """Every test a doc cites as its evidence (``tests/...py`` or ``tests/...py::name``) exists,
    so a claim does not outlive the check behind it."""
    cited = 0
    for path in DOCS:
        for m in re.finditer(r"(tests/[\w/]+\.py)(?:::(\w+))?", path.read_text(encoding="utf-8")):
            file = ROOT / m.group(1)
            assert file.is_file(), f"{path.name} cites {m.group(0)}, which does not exist"
            if m.group(2):
                assert re.search(rf"^def {m.group(2)}\(", file.read_text(), re.M), m.group(0)
            cited += 1
    assert cited >= 8
