"""The one check of a pinned twin's fixture (js/tests/wire/*.gen.json): Python writes what it
gives, vitest reads it; ``SHARDWIDGET_REGEN=1`` rewrites the fixture first."""

from __future__ import annotations

import os
import pathlib

FOLDER = pathlib.Path(__file__).resolve().parents[2] / "js" / "tests" / "wire"


def check(fixture: pathlib.Path, fresh: str) -> None:
    """The fixture holds ``fresh`` (what Python gives now), else the test fails as stale."""
    if os.environ.get("SHARDWIDGET_REGEN") == "1":
        fixture.write_text(fresh)
    assert fixture.read_text() == fresh, "stale: SHARDWIDGET_REGEN=1 rewrites it"
