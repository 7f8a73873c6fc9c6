"""The saved page's state key, one rule in two languages (issue 34, item 5).

A saved array page (``view.save_html``) carries its answers by ``wire.state_key`` of each layout
(export/page.py); the page looks a request up by the renderer's ``stateKey`` (js/array/state.ts)
of the state its controls built. ``js/tests/wire/state_key.gen.json`` holds Python's key for
layouts chosen to differ where the two texts could (field order, spacing, entries as None / a
name / a list, names outside ASCII or with quotes and backslashes, memory kinds, device sets),
and vitest (js/tests/wire/state_key.test.ts) checks stateKey against it, given the fields in
another order too. ``SHARDWIDGET_REGEN=1`` rewrites it.
"""

from __future__ import annotations

import json
from typing import Any

from shardwidget import wire
from shardwidget.model.state import LayoutState

from . import pinned

FIXTURE = pinned.FOLDER / "state_key.gen.json"

LAYOUTS: list[dict[str, Any]] = [
    {"mesh_shape": [2, 4], "axis_names": ["x", "y"], "axis_types": ["auto", "auto"],
     "spec": ["x", "y"], "memory_kind": "device", "devices": "all"},
    {"mesh_shape": [8], "axis_names": ["d"], "axis_types": ["explicit"],
     "spec": [None, "d"], "memory_kind": "pinned_host", "devices": "array"},
    {"mesh_shape": [2, 2, 2], "axis_names": ["x", "y", "z"],
     "axis_types": ["explicit", "auto", "explicit"], "spec": [["y", "x"], None, "z"],
     "memory_kind": "unpinned_host", "devices": "all"},
    {"mesh_shape": [1, 8], "axis_names": ["données", "τ"], "axis_types": ["auto", "auto"],
     "spec": [None, "τ"], "memory_kind": "device", "devices": "all"},
    {"mesh_shape": [4, 2], "axis_names": ['a"b', "c\\d"], "axis_types": ["auto", "auto"],
     "spec": [['a"b', "c\\d"]], "memory_kind": "device", "devices": "array"},
    {"mesh_shape": [8], "axis_names": ["x"], "axis_types": ["auto"], "spec": [],
     "memory_kind": "device", "devices": "all"},
]  # fmt: skip
RANKS = [2, 2, 3, 2, 1, 0]


def table() -> list[list[Any]]:
    """[state as the controls hold it, Python's key] for each layout."""
    out = []
    for d, ndim in zip(LAYOUTS, RANKS, strict=True):
        st = LayoutState.from_wire(d, ndim)
        out.append([st.to_wire(), wire.state_key(st)])
    return out


def test_fixture_is_what_python_gives() -> None:
    fresh = json.dumps(table(), indent=1) + "\n"
    pinned.check(FIXTURE, fresh)


def test_keys_are_the_layouts_and_differ() -> None:
    """Each key reads back as its layout, and no two layouts share one."""
    rows = table()
    assert all(json.loads(key) == st for st, key in rows)
    assert len({key for _, key in rows}) == len(rows)
    assert rows[0][1] == (
        '{"mesh_shape":[2,4],"axis_names":["x","y"],"axis_types":["auto","auto"],'
        '"spec":["x","y"],"memory_kind":"device","devices":"all"}'
    )
    assert '"données","τ"' in rows[3][1]  # as written, not \\u-escaped
