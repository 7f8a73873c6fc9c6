"""The HLO collective parser against compiled programs of every JAX version and backend we hold
(tests/hlo/fixtures/*/index.json names each program's mesh and the collectives and axes it
must show). jax 0.11 prints every replica group as ``mesh['x'=2,'y'=4] {'x','y'}``; 0.10 as
explicit lists; both use the iota form ``[2,4]<=[8]`` somewhere."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from shardwidget.hlo import collectives as hlo

FIXTURES = Path(__file__).parent / "fixtures"


def _programs() -> list[tuple[str, str, dict]]:
    out = []
    for index in sorted(FIXTURES.glob("*/index.json")):
        for name, entry in json.loads(index.read_text()).items():
            if name.startswith("_") or not isinstance(entry.get("expect"), dict):
                continue
            out.append((index.parent.name, name, entry))
    return out


PROGRAMS = _programs()


def test_every_fixture_folder_has_programs_with_collectives() -> None:
    folders = {f for f, _, _ in PROGRAMS}
    assert {"jax-0.10.2-cpu8", "jax-0.11.2-cpu8"} <= folders
    for f in folders:
        assert (FIXTURES / f / "index.json").is_file()


@pytest.mark.parametrize(
    ("folder", "name", "entry"), PROGRAMS, ids=[f"{f}/{n}" for f, n, _ in PROGRAMS]
)
def test_collectives_of_fixture(folder: str, name: str, entry: dict) -> None:
    text = (FIXTURES / folder / f"{name}.hlo").read_text()
    sizes = tuple(entry["mesh"]["shape"])
    names = tuple(entry["mesh"]["names"])
    n = math.prod(sizes)
    ids = np.arange(n).reshape(sizes)
    coords = {int(ids[c]): tuple(int(v) for v in c) for c in np.ndindex(*sizes)}
    found = hlo.collectives(text, list(range(n)), coords, names, sizes)
    kinds: dict[str, set[tuple[str, ...]]] = {}
    for c in found:
        kinds.setdefault(c.kind, set()).add(c.axes)
    expect = entry["expect"]
    assert set(kinds) == set(expect), (folder, name, kinds)
    for kind, axes in expect.items():
        assert kinds[kind] == {tuple(axes)}, (folder, name, kind, kinds[kind])
    for c in found:
        assert c.groups, c
        assert c.bytes > 0, c
        # every group lies on the user's mesh: its size is the product of the axes it spans
        if c.kind != "collective-permute":
            assert c.group_size == math.prod(sizes[names.index(a)] for a in c.axes), c
