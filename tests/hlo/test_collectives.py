"""The HLO collective parser: every replica-group form, sub-axes, pairs, shapes and bytes.

Pure text: expected groups are written out by hand from the forms' definitions (XLA's
replica_group.cc / mesh.cc), and the same groups written in different forms must agree.
"""

from __future__ import annotations

import inspect
import pathlib
from typing import Any

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.hlo import collectives as hlo

# A (2, 4) user mesh x, y over device ids 0..7 in row-major order.
NAMES, SIZES = ("x", "y"), (2, 4)
COORDS = {int(i): (int(i) // 4, int(i) % 4) for i in range(8)}
IDENTITY = list(range(8))


def _sets(groups: list[list[int]]) -> set[frozenset[int]]:
    return {frozenset(g) for g in groups}


# ------------------------------------------------------------------ the three forms
def test_explicit_groups() -> None:
    assert hlo.parse_groups("{{0,1,2,3},{4,5,6,7}}", 8) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert hlo.parse_groups("{{0,4},{1,5},{2,6},{3,7}}", 8) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert hlo.parse_groups("{}", 8) == [list(range(8))]


def test_iota_groups() -> None:
    assert hlo.parse_groups("[2,4]<=[8]", 8) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # [4,2]<=[2,4]T(1,0): iota(8).reshape(2,4).T → [[0,4],[1,5],[2,6],[3,7]]
    assert hlo.parse_groups("[4,2]<=[2,4]T(1,0)", 8) == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_mesh_axes_groups() -> None:
    m = "mesh['axis_0'=2,'axis_1'=4]"
    assert hlo.parse_groups(m + " {'axis_0'}", 8) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert hlo.parse_groups(m + " {'axis_1'}", 8) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert hlo.parse_groups(m + " {'axis_0','axis_1'}", 8) == [list(range(8))]
    # Group order follows the listed axis order: axis_1 major, then axis_0.
    assert hlo.parse_groups(m + " {'axis_1','axis_0'}", 8) == [[0, 4, 1, 5, 2, 6, 3, 7]]


def test_mesh_with_device_ids_and_sub_axis() -> None:
    # Seen on this machine for a P('x','y') → P('y','x') re-layout.
    text = "mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(0,2,1)) {'axis_0':(2)2}"
    # device order = iota(8).reshape(2,2,2).transpose(0,2,1) = [0,2,1,3,4,6,5,7] as (4, 2);
    # axis_0 (size 4) = (major 2)(minor 2); the sub-axis (pre 2, size 2) is the major half.
    assert _sets(hlo.parse_groups(text, 8)) == _sets([[0, 4], [2, 6], [1, 5], [3, 7]])
    # The same device order written as an explicit list, and with the iota-list syntax.
    explicit = "mesh['axis_0'=4,'axis_1'=2], device_ids=([0,2,1,3,4,6,5,7]) {'axis_0':(2)2}"
    iota = "mesh['axis_0'=4,'axis_1'=2], device_ids=([4,2]<=[2,2,2]T(0,2,1)) {'axis_0':(2)2}"
    assert hlo.parse_groups(explicit, 8) == hlo.parse_groups(text, 8)
    assert hlo.parse_groups(iota, 8) == hlo.parse_groups(text, 8)


def test_minor_sub_axis() -> None:
    # axis_0 of size 4 split as (2)(2); sub-axis (1)2 is the minor half: ids k and k+2... of a
    # (4,) mesh: devices 0..3 → groups {0,1},{2,3}.
    assert hlo.parse_groups("mesh['axis_0'=4] {'axis_0':(1)2}", 4) == [[0, 1], [2, 3]]
    assert hlo.parse_groups("mesh['axis_0'=4] {'axis_0':(2)2}", 4) == [[0, 2], [1, 3]]


def test_forms_agree_on_the_same_groups() -> None:
    same = [
        "{{0,4},{1,5},{2,6},{3,7}}",
        "[4,2]<=[2,4]T(1,0)",
        "mesh['axis_0'=2,'axis_1'=4] {'axis_0'}",
        "mesh['axis_0'=1,'axis_1'=2,'axis_2'=4] {'axis_1'}",
    ]
    results = [_sets(hlo.parse_groups(t, 8)) for t in same]
    assert all(r == results[0] for r in results)


def test_unknown_forms_are_refused() -> None:
    with pytest.raises(ValueError, match="unrecognized"):
        hlo.parse_groups("groups(0,1)", 8)
    with pytest.raises(ValueError, match="not in"):
        hlo.parse_groups("mesh['a'=8] {'b'}", 8)


# ------------------------------------------------------------------ axes from geometry
def test_axes_of_groups() -> None:
    assert hlo.axes_of_groups([[0, 4], [1, 5]], COORDS, NAMES, SIZES) == (("x",), False)
    assert hlo.axes_of_groups([[0, 1, 2, 3]], COORDS, NAMES, SIZES) == (("y",), False)
    assert hlo.axes_of_groups([list(range(8))], COORDS, NAMES, SIZES) == (("x", "y"), False)
    assert hlo.axes_of_groups([[0, 1], [2, 3]], COORDS, NAMES, SIZES) == (("y",), True)
    assert hlo.axes_of_groups([[0], [1]], COORDS, NAMES, SIZES)[0] == ()


# ------------------------------------------------------------------ whole instructions
LINES = """
HloModule jit_f, entry_computation_layout={(f32[32,16]{1,0})->f32[16]{0}}

ENTRY %main.1 (param: f32[32,16]) -> f32[16] {
  %param = f32[32,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %wrapped_reduce = f32[16]{0} fusion(%param), kind=kLoop, calls=%wrapped_reduce_computation
  ROOT %all-reduce = f32[16]{0} all-reduce(%wrapped_reduce), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}, use_global_device_ids=true, to_apply=%region_0.0.clone, metadata={op_name="jit(f)/reduce_sum" source_file="/x/nb.py" source_line=3}
  %all-gather = f32[32,64]{0,1} all-gather(%wrapped_copy), channel_id=2, replica_groups=[2,4]<=[8], dimensions={1}, use_global_device_ids=true
  %all-to-all.1 = (f32[1,16,16]{2,1,0}, f32[1,16,16]{2,1,0}) all-to-all(%a, %b), channel_id=3, replica_groups=mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(0,2,1)) {'axis_0':(2)2}
  %reduce_scatter.7 = f32[32,16]{0,1} reduce-scatter(%c), channel_id=4, replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, dimensions={1}, to_apply=%region_0.0
  %collective-permute = f32[1,16]{1,0} collective-permute(%d), channel_id=5, source_target_pairs={{0,4},{1,5},{2,6},{3,7},{4,0},{5,1},{6,2},{7,3}}
  %cp2 = f32[16,32]{1,0} collective-permute(%e), channel_id=6, source_target_pairs={{0,0},{1,1}}
  %ars = f32[8]{0:S(1)} all-reduce-start(%f), channel_id=7, replica_groups={{0,1},{2,3},{4,5},{6,7}}
  %ard = f32[8]{0} all-reduce-done(%ars)
  %ags = (f32[4]{0}, f32[16]{0}) all-gather-start(%g), channel_id=8, replica_groups=[2,4]<=[8], dimensions={0}
  %not = f32[16]{0} add(%h, %i)
}
"""


def test_collectives_from_text() -> None:
    cs = hlo.collectives(LINES, IDENTITY, COORDS, NAMES, SIZES)
    got = [(c.kind, c.axes, c.shape, c.dtype, c.bytes, c.group_size, c.n_groups) for c in cs]
    assert got == [
        # all-reduce over x: 2 devices, 64 B result → 2·(1/2)·64 = 64 B sent
        ("all-reduce", ("x",), (16,), "f32", 64, 2, 4),
        # all-gather over y: 4 devices, 8 KiB result → 3/4 · 8192 = 6144
        ("all-gather", ("y",), (32, 64), "f32", 6144, 4, 2),
        # all-to-all over x: a tuple of two 1 KiB parts → 1/2 · 2048
        ("all-to-all", ("x",), (1, 16, 16), "f32", 1024, 2, 4),
        # reduce-scatter over y: result 2 KiB, operand 4× → 3 · 2048
        ("reduce-scatter", ("y",), (32, 16), "f32", 6144, 4, 2),
        # collective-permute along x: each device sends its 64 B block
        ("collective-permute", ("x",), (1, 16), "f32", 64, 2, 8),
        # a permute where every device keeps its own block moves nothing
        ("collective-permute", (), (16, 32), "f32", 0, 2, 0),
        # async forms: the -start op is the collective (and a memory-space layout parses)
        ("all-reduce", ("y",), (8,), "f32", 32, 2, 4),
        ("all-gather", ("y",), (16,), "f32", 48, 4, 2),
    ]
    assert cs[0].op_name == "jit(f)/reduce_sum"
    assert cs[0].source == "nb.py:3"
    assert cs[0].groups == ((0, 4), (1, 5), (2, 6), (3, 7))


FRAMES = """HloModule jit_f, is_scheduled=true, num_partitions=8

FileNames
1 "/home/me/nb.py"
2 "/site-packages/jax/_src/numpy/reductions.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=2 end_column=2}
2 {file_name_id=1 function_name_id=2 line=6 end_line=6 column=11 end_column=11}
3 {file_name_id=2 function_name_id=2 line=40 end_line=40 column=1 end_column=1}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=2}


ENTRY %main.1 (param: f32[32,16]) -> f32[16] {
  %p = f32[32,16]{1,0} parameter(0)
  ROOT %all-reduce = f32[16]{0} all-reduce(%p), channel_id=1, replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global_device_ids=true, to_apply=%r, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
  %ag = f32[32,64]{0,1} all-gather(%p), channel_id=2, replica_groups=[2,4]<=[8], dimensions={1}, metadata={op_name="jit(f)/x" stack_frame_id=9}
}
"""


def test_source_lines_from_the_stack_frame_tables() -> None:
    # newer XLA: metadata names a frame; the tables at the top of the module say where it is
    assert hlo.stack_frames(FRAMES) == {1: "nb.py:7", 2: "nb.py:6", 3: "reductions.py:40"}
    cs = hlo.collectives(FRAMES, IDENTITY, COORDS, NAMES, SIZES)
    assert [(c.kind, c.source) for c in cs] == [("all-reduce", "nb.py:6"), ("all-gather", "")]


def test_source_lines_of_a_real_compile() -> None:
    mesh = jax.make_mesh(SIZES, NAMES, axis_types=(AxisType.Explicit,) * len(NAMES))
    x = jax.device_put(np.ones((64, 32), np.float32), NamedSharding(mesh, P("x", "y")))

    def f(a: Any) -> Any:
        return a.sum(axis=0)  # the all-reduce comes from this line

    txt = jax.jit(f).lower(x).compile().as_text()
    line = inspect.getsourcelines(f)[1] + 1
    cs = hlo.collectives(txt, IDENTITY, COORDS, NAMES, SIZES)
    assert [c.kind for c in cs] == ["all-reduce"]
    assert cs[0].source == f"{pathlib.Path(__file__).name}:{line}"


def test_logical_ids_map_through_the_device_assignment() -> None:
    # The executable's logical device i is device assignment[i]: a permuted mesh.
    perm = [3, 1, 0, 2, 7, 5, 4, 6]
    coords = {d: (k // 4, k % 4) for k, d in enumerate(perm)}
    cs = hlo.collectives(LINES, perm, coords, NAMES, SIZES)
    assert cs[0].groups == ((3, 7), (1, 5), (0, 4), (2, 6))
    assert cs[0].axes == ("x",)


def test_shapes_and_dtypes() -> None:
    assert hlo.parse_shapes("(bf16[2,3]{1,0}, u32[], pred[4])") == [
        hlo.HloShape("bf16", (2, 3)),
        hlo.HloShape("u32", ()),
        hlo.HloShape("pred", (4,)),
    ]
    assert hlo.HloShape("bf16", (2, 3)).nbytes == 12
    assert hlo.HloShape("c64", (2,)).nbytes == 16
    assert hlo.HloShape("s4", (3,)).nbytes == 2
    with pytest.raises(ValueError, match="unknown HLO element type"):
        _ = hlo.HloShape("q99", (1,)).nbytes


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_bytes_model(n: int) -> None:
    r = 4096
    ids = list(range(n))
    coords = {i: (i,) for i in ids}
    groups = "{{" + ",".join(map(str, ids)) + "}}"
    text = "\n".join(
        f"  %{k} = f32[1024]{{0}} {k}(%p), replica_groups={groups}"
        for k in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")
    )
    got = {c.kind: c.bytes for c in hlo.collectives(text, ids, coords, ("x",), (n,))}
    assert got == {
        "all-reduce": round(2 * (n - 1) / n * r),
        "all-gather": round((n - 1) / n * r),
        "reduce-scatter": (n - 1) * r,
        "all-to-all": round((n - 1) / n * r),
    }


def test_iota_reshape_matches_numpy() -> None:
    g = hlo.parse_groups("[6,4]<=[2,3,4]T(2,0,1)", 24)
    want = np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1).reshape(6, 4).tolist()
    assert g == want
