"""Which PartitionSpecs are valid for a mesh and a shape, one rule in two languages (issue 34,
item 5).

Python's ``spec.validate`` refuses a spec the kernel cannot lay out; the controls' ``sanitizeSpec``
(js/shared/spec.ts) changes such a spec into one it can (and ``specOptions`` disables its
choices). ``js/tests/wire/spec_validity.gen.json`` holds Python's verdict for every spec built
from a few entries (an axis, two, their reverse, an axis twice, an axis the mesh lacks) on
three meshes and shapes chosen so some axes divide and some do not; vitest
(js/tests/wire/spec_validity.test.ts) checks that ``sanitizeSpec`` leaves exactly the valid ones
as they are. Python's verdict is checked against JAX's own: ``NamedSharding`` built on the
mesh and its ``shard_shape`` of the shape. ``SHARDWIDGET_REGEN=1`` rewrites the fixture.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import jax
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.model import spec as spec_mod

from . import pinned

FIXTURE = pinned.FOLDER / "spec_validity.gen.json"

MESHES = {"2x4": ((2, 4), ("x", "y")), "2x2x2": ((2, 2, 2), ("x", "y", "z")), "8": ((8,), ("d",))}
SHAPES = [(8, 4), (6, 12), (0, 2)]  # 6 % 4 and 2 % 4 leave a remainder; a zero-size dimension


def entries(names: tuple[str, ...]) -> list[Any]:
    """None, each axis, the first two in order and reversed, an axis twice, one not in the mesh."""
    out: list[Any] = [None, *names]
    if len(names) > 1:
        out += [[names[0], names[1]], [names[1], names[0]]]
    return [*out, [names[0], names[0]], "q"]


def cases() -> list[dict[str, Any]]:
    out = []
    for mesh_name, (sizes, names) in MESHES.items():
        for shape in SHAPES:
            for spec in itertools.product(entries(names), repeat=len(shape)):
                out.append(
                    {
                        "mesh": mesh_name,
                        "axis_names": list(names),
                        "mesh_shape": list(sizes),
                        "shape": list(shape),
                        "spec": list(spec),
                        "valid": python_says(list(spec), shape, names, sizes),
                    }
                )
    return out


def python_says(spec: list[Any], shape: tuple[int, ...], names: Any, sizes: Any) -> bool:
    axes = dict(zip(names, sizes, strict=True))
    try:
        spec_mod.validate(spec_mod.normalize(spec, len(shape)), shape, axes)
    except ValueError:
        return False
    return True


def jax_says(spec: list[Any], shape: list[int], mesh: Any) -> bool:
    """JAX's verdict: the sharding builds on the mesh and cuts the shape into equal shards."""
    entries_ = [tuple(e) if isinstance(e, list) else e for e in spec]
    try:
        NamedSharding(mesh, P(*entries_)).shard_shape(tuple(shape))
    except Exception as e:  # ValueError (no such axis, shards not equal), DuplicateSpecError
        if not isinstance(e, ValueError) and "Duplicate" not in type(e).__name__:
            raise
        return False
    return True


def test_fixture_is_what_python_gives() -> None:
    fresh = json.dumps(cases(), indent=0) + "\n"
    pinned.check(FIXTURE, fresh)


@pytest.mark.parametrize("mesh_name", list(MESHES))
def test_python_agrees_with_jax(mesh_name: str) -> None:
    sizes, names = MESHES[mesh_name]
    mesh = jax.make_mesh(sizes, names, axis_types=(AxisType.Auto,) * len(sizes))
    mine = [c for c in cases() if c["mesh"] == mesh_name]
    differ = [
        (c["shape"], c["spec"], c["valid"])
        for c in mine
        if jax_says(c["spec"], c["shape"], mesh) != c["valid"]
    ]
    assert differ == []


def test_both_verdicts_occur_for_each_reason() -> None:
    """Known by hand: each way of being invalid is in the fixture, and valid specs are."""
    by = {(c["mesh"], tuple(c["shape"]), json.dumps(c["spec"])): c["valid"] for c in cases()}
    assert by[("2x4", (8, 4), '["x", "y"]')]
    assert by[("2x4", (6, 12), '["x", "y"]')]  # 6 % 2, 12 % 4
    assert not by[("2x4", (6, 12), '["y", "x"]')]  # 6 % 4
    assert not by[("2x4", (8, 4), '["x", "x"]')]  # one axis on two dimensions
    assert not by[("2x4", (8, 4), '[["x", "x"], null]')]  # one axis twice in a dimension
    assert not by[("2x4", (8, 4), '["q", null]')]  # not in the mesh
    assert by[("2x4", (0, 2), '[["y", "x"], null]')]  # a zero-size dimension divides
    assert not by[("8", (6, 12), '["d", null]')]
