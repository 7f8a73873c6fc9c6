import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwidget.model import mesh as mesh_mod
from shardwidget.model import spec as spec_mod


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 48), st.integers(1, 3))
def test_factorizations_are_exactly_the_ordered_factorizations(n, k):
    got = mesh_mod.factorizations(n, k)
    brute = [t for t in itertools.product(range(1, n + 1), repeat=k) if math.prod(t) == n]
    assert list(got) == brute


@pytest.mark.parametrize("n", [256, 4096])
def test_factorizations_large_counts(n):
    f = mesh_mod.factorizations(n, 4)
    assert len(set(f)) == len(f) and all(math.prod(t) == n for t in f)
    # n = 2**a: ordered 4-factorizations are compositions of a into 4 parts >= 0.
    a = n.bit_length() - 1
    assert len(f) == math.comb(a + 3, 3)


def test_all_factorizations_for_8():
    f = mesh_mod.all_factorizations(8)
    assert f["1"] == [[8]]
    assert f["2"] == [[1, 8], [2, 4], [4, 2], [8, 1]]
    assert [2, 2, 2] in f["3"] and all(math.prod(s) == 8 for s in f["4"])


@pytest.mark.parametrize(
    ("shape", "names", "types", "match"),
    [
        ((3, 3), ("x", "y"), ("auto", "auto"), r"\(3, 3\) has 9 devices.*kernel has 8.*\(2, 4\)"),
        ((8,), ("x", "y"), ("auto",), "1 axes but 2 axis names"),
        ((2, 4), ("x", "x"), ("auto", "auto"), "'x' is used twice"),
        ((2, 4), ("x", ""), ("auto", "auto"), "'' is not valid"),  # "1y" is allowed (issue 11)
        ((2, 4), ("x", "y"), ("auto", "manual"), "'manual' is not one of"),
        ((2, 4), ("x", "y"), ("auto",), "2 axes but 1 axis types"),
        ((1, 1, 2, 2, 2), ("a", "b", "c", "d", "e"), ("auto",) * 5, "1 to 4 axes"),
        ((0, 8), ("x", "y"), ("auto", "auto"), "positive integers"),
    ],
)
def test_validate_mesh_messages(shape, names, types, match):
    with pytest.raises(ValueError, match=match):
        mesh_mod.validate_mesh(shape, names, types, 8)


def test_validate_mesh_accepts_valid():
    mesh_mod.validate_mesh((2, 2, 2), ("a", "b", "c"), ("auto", "explicit", "auto"), 8)


def test_normalize_forms():
    from jax.sharding import PartitionSpec as P

    assert spec_mod.normalize(P("x", None), 3) == (("x",), (), ())
    assert spec_mod.normalize(["x", ["y", "z"]], 2) == (("x",), ("y", "z"))
    assert spec_mod.normalize(P(("x", "y")), 1) == (("x", "y"),)
    assert spec_mod.normalize(None, 2) == ((), ())
    assert spec_mod.to_wire((("x",), (), ("y", "z"))) == ["x", None, ["y", "z"]]
    assert spec_mod.to_text((("x",), (), ("y", "z"))) == "P('x', None, ('y', 'z'))"


@pytest.mark.parametrize(
    ("spec", "ndim", "match"),
    [
        ("x", 2, "not the string 'x'.*did you mean"),
        (["x", "y", "z"], 2, "3 entries but the array has 2 dimensions"),
        ([3], 1, "dimension 0: spec entry 3 must be"),
    ],
)
def test_normalize_rejects(spec, ndim, match):
    with pytest.raises(ValueError, match=match):
        spec_mod.normalize(spec, ndim)


AXES = {"x": 2, "y": 4}


@pytest.mark.parametrize(
    ("spec", "shape", "match"),
    [
        (
            (("z",), ()),
            (4, 8),
            r"dimension 0: axis 'z' is not in the mesh; its axes are 'x' \(size 2\)",
        ),
        ((("x",), ("x",)), (4, 8), "'x' is used by dimensions 0 and 1"),
        ((("x", "x"),), (8,), "'x' is used by dimension 0 twice"),
        (
            ((), ("y",)),
            (4, 6),
            r"dimension 1 has size 6, which 'y' \(y=4, 4 shards\) does not divide: 6 % 4 = 2.*'x' \(size 2\)",
        ),
        ((("x", "y"),), (12,), r"dimension 0 has size 12, which '\(x, y\)' .*8 shards.*12 % 8 = 4"),
        ((("y",), ()), (3, 8), r"size 3.*no mesh axis divides it"),
    ],
)
def test_validate_spec_messages(spec, shape, match):
    with pytest.raises(ValueError, match=match):
        spec_mod.validate(spec, shape, AXES)


def test_validate_spec_accepts():
    spec_mod.validate((("x", "y"), ()), (16, 3), AXES)
    spec_mod.validate(((), ()), (3, 5), AXES)
