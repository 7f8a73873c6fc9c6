"""The TPU compiler's HLO (real output of libtpu 0.0.42.1, tests/hlo/tpu_fixtures/make.py) read
by hlo.collectives and hlo.tpu: tiled layouts ``{1,0:T(8,128)(2,1)S(1)}``, memory spaces,
iota groups ``[4,2]<=[2,4]T(1,0)``, ``mesh['axis_0'=2,'axis_1'=4] {'axis_0'}``, explicit
groups, source-target pairs, and the all-reduce-scatter fusion."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

from shardwidget.hlo import collectives as hlo
from shardwidget.hlo import tpu as hlo_tpu

FIXTURES = pathlib.Path(__file__).parent / "tpu_fixtures"
INDEX = json.loads((FIXTURES / "index.json").read_text())
_OPS = re.compile(
    r"=\s*\S.*?\s(all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)(-start)?\("
)


def _read(name: str) -> tuple[str, list[hlo.Collective], tuple[str, ...]]:
    meta = INDEX[name]
    text = (FIXTURES / f"{name}.hlo").read_text()
    sizes, names = tuple(meta["mesh"]), tuple(meta["names"])
    n = int(np.prod(sizes))
    coords = {i: tuple(int(c) for c in np.unravel_index(i, sizes)) for i in range(n)}
    found = hlo.collectives(text, list(range(n)), coords, names, sizes)
    return text, hlo_tpu.fused_collectives(text, found), names


@pytest.mark.parametrize("name", sorted(INDEX))
def test_every_collective_of_the_tpu_hlo_is_read(name):
    text, found, _ = _read(name)
    # counted apart from the parser: every line whose instruction is a collective
    ops = [m for line in text.splitlines() if (m := _OPS.search(line))]
    assert len(found) == len(ops) > 0
    assert "T(8,128)" in text  # the fixture has the TPU's tiled layouts


@pytest.mark.parametrize("name", sorted(INDEX))
def test_every_group_form_covers_every_device_once(name):
    _, found, _ = _read(name)
    for c in found:
        if c.kind == "collective-permute":
            assert sorted(a for a, _ in c.groups) == sorted(b for _, b in c.groups)
            continue
        members = sorted(d for g in c.groups for d in g)
        assert members == list(range(8)), (c.name, c.groups_text)
        assert len({len(g) for g in c.groups}) == 1


def test_the_forms_seen_are_the_ones_the_tpu_compiler_prints():
    texts = {c.groups_text for n in INDEX for c in _read(n)[1]}
    assert any(t.startswith("mesh[") for t in texts)
    assert any(re.fullmatch(r"\[\d+,\d+\]<=\[\d+,\d+\]T\(1,0\)", t) for t in texts)
    assert any(t.startswith("{{") for t in texts)


def test_iota_groups_with_a_transpose_read_as_numpy_does():
    groups = hlo.parse_groups("[4,2]<=[2,4]T(1,0)", 8)
    assert groups == np.arange(8).reshape(2, 4).T.tolist()


def test_the_all_reduce_scatter_fusion_is_a_reduce_scatter_with_a_source():
    text, found, _ = _read("v5e_2x4_mlp")
    assert "calls=%all-reduce-scatter" in text
    rs = [c for c in found if c.kind == "reduce-scatter"]
    assert rs, [c.kind for c in found]
    for c in rs:
        # the gradient of w (data × model) summed over the batch axis: data
        assert c.axes == ("data",)
        assert c.source.startswith("tpu_direct.py:")
        assert c.bytes == (c.group_size - 1) * hlo.HloShape(c.dtype, c.shape).nbytes
    # the step's own lines, for every collective the TPU compiler made
    assert all(c.source for c in found)


def test_shard_map_exchange_axes():
    _, found, _ = _read("v5e_2x4_exchange")
    kinds = {c.kind: c.axes for c in found}
    assert kinds["collective-permute"] == ("model",)
    assert kinds["all-to-all"] == ("data",)
    assert ("data", "model") in [c.axes for c in found if c.kind == "all-reduce"]
