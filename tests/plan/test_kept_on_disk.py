"""Compile results kept between runs where SHARDWIDGET_COMPILE_CACHE names a folder (./dev
test, for the example notebooks' kernels): a second run asks the helper nothing and gets the
reply the first run got; unset, every run asks; what cannot be kept is asked again."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from shardwidget.plan import compilers, kept_on_disk
from shardwidget.plan.helper import PlanError

KEY = ("digest", "v5e:16x16", 1, "", (0, 1, 2, 3))


class Helper:
    """Plays a compiler helper: counts the compiles asked of it."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.asked = 0
        self.reply = reply

    def __call__(self) -> dict[str, Any]:
        self.asked += 1
        return json.loads(json.dumps(self.reply))


def _run(h: Helper, key: tuple[Any, ...] = KEY) -> dict[str, Any]:
    """One run: a kernel's new Results (memory empty), answering key."""
    return compilers.Results().answer(key, h, lambda: None)


def test_a_second_run_asks_nothing(tmp_path: pathlib.Path, monkeypatch: Any) -> None:
    monkeypatch.setenv(kept_on_disk.ENV, str(tmp_path))
    h = Helper({"hlo": "HloModule m", "compile_s": 31.7, "memory": {"arguments": 4}})
    first = _run(h)
    assert h.asked == 1 and not list(tmp_path.glob("*.tmp*"))
    assert key_in(KEY)
    assert _run(h) == first and h.asked == 1  # the next run: from the folder
    assert _run(h, (*KEY[:-1], (3, 2, 1, 0))) and h.asked == 2  # another placement: compiled
    monkeypatch.delenv(kept_on_disk.ENV)
    assert not key_in(KEY)
    _run(h)
    assert h.asked == 3  # no folder: every run compiles


def key_in(key: tuple[Any, ...]) -> bool:
    return key in compilers.Results()


def test_what_cannot_be_kept_is_asked_again(tmp_path: pathlib.Path, monkeypatch: Any) -> None:
    monkeypatch.setenv(kept_on_disk.ENV, str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    h = Helper({"compile_s": 1.0})
    _run(h), _run(h)
    assert h.asked == 2  # the folder cannot be made: nothing kept, nothing raised
    monkeypatch.setenv(kept_on_disk.ENV, str(tmp_path / "kept"))
    _run(h)
    (kept,) = (tmp_path / "kept").glob("*.json")
    kept.write_text("{cut")  # a reply cut short: asked again
    _run(h)
    assert h.asked == 4

    def refuse() -> dict[str, Any]:
        raise PlanError("the compiler refused")

    with pytest.raises(PlanError):
        compilers.Results().answer(("other",), refuse, lambda: None)
    assert len(list((tmp_path / "kept").glob("*.json"))) == 1  # a refusal is not kept
