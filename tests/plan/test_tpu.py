"""Plans by the TPU compiler (shardwidget.tpu_mesh) against the TPU compiler run directly.

They need libtpu: in this Python, or in the one SHARDWIDGET_TPU_PYTHON names (./dev test makes
.venvs/tpu and sets it); skipped with the reason elsewhere. Small topologies only (a v5e:2x4
compile takes about a second here; 256 chips take 30-60 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import jax
import numpy as np
import pytest
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget.model import spec as spec_mod
from shardwidget.plan import PlanError, background, helper, plan, shardings, tpu
from tests.plan import tpu_direct

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

DIRECT = os.path.join(os.path.dirname(__file__), "tpu_direct.py")


def _direct(topology: str, big: int, shape: str, slices: int = 1, chip_config: str = "") -> dict:
    """The TPU compiler run directly (jax.jit(...).lower(...).compile() on topology devices)."""
    env = dict(
        os.environ, JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1", ALLOW_MULTIPLE_LIBTPU_LOAD="1"
    )
    out = subprocess.run(
        [tpu.tpu_python(), DIRECT, topology, str(big), shape, str(slices), chip_config],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def v5e():
    return tpu.tpu_mesh("v5e:2x4", (2, 4), ("data", "model"))


def test_a_tpu_plan_is_what_the_tpu_compiler_makes(v5e):
    pl = plan(tpu_direct.mlp, *tpu_direct.mlp_args(), mesh=v5e, in_specs=tpu_direct.SPECS)
    want = _direct("v5e:2x4", 4096, "2x4")
    mi = pl.topology
    # the same chips in the same mesh order
    chips = zip(mi.device_ids, mi.coords, mi.core_on_chip, strict=True)
    assert [[i, list(c), k] for i, c, k in chips] == want["devices"]
    m = pl.memory
    assert [m["arguments"], m["outputs"], m["temporaries"], m["aliased"]] == want["memory"]
    assert pl.flops == want["flops"]
    assert pl.compiler == "tpu" and pl.fits
    assert pl.note == (
        f"compiled by the TPU compiler (libtpu {mi.libtpu}) for v5e 2×4: the program a v5e-8 runs"
    )
    # the same collectives, by kind and device groups
    n = 8
    coords = {i: tuple(int(c) for c in np.unravel_index(i, (2, 4))) for i in range(n)}
    direct = shardwidget.plan.compile.hlo.collectives(
        want["hlo"], list(range(n)), coords, ("data", "model"), (2, 4)
    )
    assert sorted((c.name, c.groups) for c in pl.collectives) == sorted(
        (c.name, c.groups) for c in direct
    )
    assert "optimal_seconds" not in repr(pl)
    # the outputs laid out as the TPU compiler lays them out, read back as specs on the mesh
    w, _ = tpu_direct.mlp_args()
    specs = [
        shardings.spec_of(t, s, ("data", "model"), (2, 4))
        for t, s in zip(pl.output_shardings, [w.shape, ()], strict=True)
    ]
    got = [
        spec_mod.to_text(spec_mod.normalize(sp, len(sh)))
        for sp, sh in zip(specs, [w.shape, ()], strict=True)
    ]
    assert [f"spec={g}" in o for g, o in zip(got, want["outputs"], strict=True)] == [True, True]


@pytest.mark.parametrize(
    ("topology", "shape", "slices", "chip_config"),
    [
        ("tpu7x:2x2x1", (2, 4), 1, ""),  # two TensorCores per chip
        ("v5:2x2x1", (2, 2), 1, "megacore"),  # v5p
        ("v5e:2x2", (4, 2), 2, ""),  # two slices: data across them over DCN
    ],
)
def test_plans_on_other_topologies_are_what_the_tpu_compiler_makes(
    topology, shape, slices, chip_config
):
    mesh = tpu.tpu_mesh(
        topology, shape, ("data", "model"), num_slices=slices, chip_config_name=chip_config
    )
    pl = plan(tpu_direct.mlp, *tpu_direct.mlp_args(), mesh=mesh, in_specs=tpu_direct.SPECS)
    want = _direct(topology, 4096, f"{shape[0]}x{shape[1]}", slices, chip_config)
    mi = pl.topology
    assert [d[0] for d in want["devices"]] == list(mi.device_ids)
    m = pl.memory
    assert [m["arguments"], m["outputs"], m["temporaries"], m["aliased"]] == want["memory"]
    assert pl.flops == want["flops"]
    n = len(mi.device_ids)
    coords = {i: tuple(int(c) for c in np.unravel_index(i, shape)) for i in range(n)}
    # the direct compile's HLO read as a plan's is (across slices: one slice's program, its
    # DCN collectives Megascale transfers; tests/plan/test_tpu_slices.py checks that reading)
    direct = shardwidget.plan.compile.tpu_collectives(
        want["hlo"], mi, coords, ("data", "model"), shape
    )
    assert sorted((c.name, c.groups) for c in pl.collectives) == sorted(
        (c.name, c.groups) for c in direct
    )
    if slices > 1:
        assert "slice" in mi.physical_axes()["data"]  # data runs across the slices (DCN)
        dcn = [c for c in pl.collectives if c.axes == ("data",) and "}x{" in c.groups_text]
        assert dcn and all(c.group_size == slices for c in dcn)  # the gradient's, over DCN


def test_an_hbm_overflow_is_a_result_in_words(v5e):
    pl = plan(tpu_direct.mlp, *tpu_direct.mlp_args(262144), mesh=v5e, in_specs=tpu_direct.SPECS)
    assert pl.fits is False and pl.collectives == []
    assert "RESOURCE_EXHAUSTED" in pl.hbm
    assert "does not fit: needs 64.25 GiB of 15.75 GiB on every chip" in pl.note
    # its figures, as the compiler gave them (issue 38 item 11: memory was {})
    assert pl.memory == {"required": int(64.25 * 2**30), "available": int(15.75 * 2**30)}
    # no step time for a program that was never compiled (it read "estimate on TPU v5e: 0 s")
    with pytest.raises(ValueError, match=r"no estimate: .*does not fit: needs 64.25 GiB"):
        pl.estimate()
    # the TPU compiler itself refuses the same program with the same figures
    with pytest.raises(subprocess.CalledProcessError) as e:
        _direct("v5e:2x4", 262144, "2x4")
    assert "64.25G" in e.value.stderr and "15.75G" in e.value.stderr


def test_tpu_mesh_places_the_mesh_as_topologies_make_mesh(v5e):
    mi = tpu.info(v5e)
    assert isinstance(v5e, AbstractMesh) and mi.device_kind == "TPU v5 lite"
    assert mi.n_chips == 8 and mi.machine == "v5e-8"
    assert (
        tpu.info(
            AbstractMesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
        )
        is None
    )
    # another topology of the same shape is another mesh
    other = tpu.tpu_mesh("v5e:4x2", (2, 4), ("data", "model"))
    assert other is not v5e and tpu.info(v5e).topology == "v5e:2x4"


def test_two_cores_per_chip_and_slices():
    m = tpu.tpu_mesh("tpu7x:2x2x1", (2, 4), ("data", "model"))
    mi = tpu.info(m)
    assert mi.cores_per_chip == 2 and sorted(set(mi.core_on_chip)) == [0, 1]
    two = tpu.tpu_mesh("v5e:2x2", (2, 2, 2), ("dcn", "data", "model"), num_slices=2)
    mi2 = tpu.info(two)
    assert sorted(set(mi2.slice_index)) == [0, 1]
    axes = mi2.physical_axes()
    assert axes["dcn"] == ("slice",) and "slice" not in axes["model"]
    assert any("DCN" in line for line in mi2.describe())


def test_a_mesh_the_torus_cannot_hold_is_refused_in_words():
    with pytest.raises(
        ValueError,
        match=r"v5e:2x4 has 8 devices; a 3×3 mesh has 9; 2-axis meshes it holds: 1×8, 2×4, 4×2, 8×1",
    ):
        tpu.tpu_mesh("v5e:2x4", (3, 3), ("a", "b"))
    with pytest.raises(ValueError, match="topology must be a name"):
        tpu.tpu_mesh("v5e", (8,), ("a",))


def test_function_and_tree_views_take_a_tpu_mesh(v5e):
    w, x = tpu_direct.mlp_args()
    v = shardwidget.ShardView(tpu_direct.mlp, w, x, mesh=v5e, in_specs=tpu_direct.SPECS)
    assert background.wait(300)
    pl = plan(tpu_direct.mlp, w, x, mesh=v5e, in_specs=tpu_direct.SPECS)
    assert sorted(c.kind for c in v.trace.collectives) == sorted(c.kind for c in pl.collectives)
    assert v.trace.memory["temp"] == pl.memory["temporaries"]
    assert "TPU compiler" in v.planned
    tv = shardwidget.ShardView({"w": w}, mesh=v5e, rules=[(r"w", P("data", "model"))])
    assert "v5e:2x4" in tv.planned and len(tv.per_device) == 8


def test_libtpu_warnings_never_reach_the_user(capfd):
    tpu.stop()
    capfd.readouterr()
    tpu.tpu_mesh("v5e:2x2", (2, 2), ("a", "b"))
    out, err = capfd.readouterr()
    assert "TPU_WORKER_HOSTNAMES" not in out + err and "TPU_ACCELERATOR_TYPE" not in out + err


def test_a_dead_tpu_helper_is_said_in_words_and_the_next_plan_starts_another(v5e):
    h = tpu.tpu_helper()
    h.proc.kill()
    h.proc.wait()
    with pytest.raises(PlanError, match=r"TPU planning helper .* was killed by SIGKILL"):
        h.request({"op": "describe"}, 10, "a compile")
    pl = plan(tpu_direct.mlp, *tpu_direct.mlp_args(), mesh=v5e, in_specs=tpu_direct.SPECS)
    assert pl.fits and tpu.tpu_helper() is not h


def test_the_helper_ends_with_the_stop_of_every_helper():
    h = tpu.tpu_helper()
    helper.stop_all()
    assert not h.alive


def test_the_tpu_plan_beside_the_cpu_plan_of_the_same_layout(v5e):
    args = tpu_direct.mlp_args()
    on_tpu = plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    cpu_mesh = AbstractMesh((2, 4), ("data", "model"), (AxisType.Auto,) * 2)
    on_cpu = plan(tpu_direct.mlp, *args, mesh=cpu_mesh, in_specs=tpu_direct.SPECS)
    assert on_cpu.compiler == "cpu" and on_cpu.topology is None
    line = on_tpu.versus(on_cpu)
    assert line.startswith("TPU (v5e) vs CPU compiler, per device:")
    for kind in {c.kind for c in on_tpu.collectives} | {c.kind for c in on_cpu.collectives}:
        n_tpu = sum(c.kind == kind for c in on_tpu.collectives)
        n_cpu = sum(c.kind == kind for c in on_cpu.collectives)
        assert f"{kind} {n_tpu} vs {n_cpu}" in line
    over = plan(tpu_direct.mlp, *tpu_direct.mlp_args(262144), mesh=v5e, in_specs=tpu_direct.SPECS)
    assert "does not fit" in over.versus(on_cpu)


def test_showing_a_planned_layout_again_asks_the_helper_nothing(v5e):
    args = tpu_direct.mlp_args(2048)
    plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    h = tpu.tpu_helper()
    h.proc.kill()
    h.proc.wait()
    again = plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS)
    assert again.fits and [h] == tpu._TPU and not h.alive  # the dead helper was not asked


def test_a_tpu_plan_s_devices_carry_their_chips(v5e):
    w, _ = tpu_direct.mlp_args()
    tv = shardwidget.ShardView({"w": w}, mesh=v5e, rules=[(r"w", P("data", "model"))])
    mi = tpu.info(v5e)
    devs = tv.leaf("['w']").layout.devices
    assert [d.coords for d in devs] == list(mi.coords)
    assert [d.core_on_chip for d in devs] == list(mi.core_on_chip)
    assert {d.kind for d in devs} == {"TPU v5 lite"}
    # across slices, the slice is a fourth coordinate (the picture's panels)
    two = tpu.tpu_mesh("v5e:2x2", (2, 2, 2), ("dcn", "data", "model"), num_slices=2)
    tv2 = shardwidget.ShardView({"w": w}, mesh=two, rules=[(r"w", P("data", "model"))])
    got = [d.coords for d in tv2.leaf("['w']").layout.devices]
    want = [(*c, s) for c, s in zip(tpu.info(two).coords, tpu.info(two).slice_index, strict=True)]
    assert got == want and {c[3] for c in got} == {0, 1}


def test_a_view_on_a_tpu_mesh_estimates_for_that_tpu(v5e):
    w, _ = tpu_direct.mlp_args()
    tv = shardwidget.ShardView({"w": w}, mesh=v5e, rules=[(r"w", P("data", "model"))])
    assert tv.hardware == "tpu-v5e"
    assert shardwidget.hardware(tv.hardware).topology == tpu.info(v5e).family


def _args_of_size(n: int) -> tuple:
    return tpu_direct.mlp_args(n)


def test_a_function_view_shows_the_cpu_plan_then_switches_to_the_tpu_s():
    mesh = tpu.tpu_mesh("v5e:2x2", (2, 2), ("data", "model"))
    args = _args_of_size(1536)  # a module no other test compiled: not in the TPU cache
    v = shardwidget.ShardView(tpu_direct.mlp, *args, mesh=mesh, in_specs=tpu_direct.SPECS)
    first = v.trace
    st = first.state
    # at once: the CPU compiler's plan (or, if the TPU compile won the race, the TPU's)
    assert "the CPU compiler's plan, shown while the TPU compiler" in v.planned or (
        st in v._traced.tpu_over
    )
    assert background.wait(300)
    _until(lambda: "compiled by the TPU compiler" in v.planned)
    want = plan(tpu_direct.mlp, *args, mesh=mesh, in_specs=tpu_direct.SPECS)
    assert v.trace.state == st and v.trace.memory["temp"] == want.memory["temporaries"]
    assert sorted(c.kind for c in v.trace.collectives) == sorted(c.kind for c in want.collectives)
    assert "compiled by the TPU compiler" in v._trace_options["planned"]


def test_the_tpu_result_s_compile_time_is_the_compiler_s_not_its_cache_read():
    """The view's "compiled in" for the TPU's result is the TPU compile's own time (from the
    background, where it ran), not the moment its cached reply took (issue 38 item 11: 139 ms
    for a result that took ~2.5 s); within the time the test waited for it."""
    mesh = tpu.tpu_mesh("v5e:2x2", (2, 2), ("data", "model"))
    args = _args_of_size(1792)  # a module no other test compiled: not in the TPU cache
    t0 = time.perf_counter()
    v = shardwidget.ShardView(tpu_direct.mlp, *args, mesh=mesh, in_specs=tpu_direct.SPECS)
    assert background.wait(300)
    _until(lambda: "compiled by the TPU compiler" in v.planned)
    waited_ms = (time.perf_counter() - t0) * 1e3
    # plan() compiles a module of its own (its trace folds a constant differently from the
    # view's, so it is not the view's cached result): a second compile, timed apart, which a
    # loaded machine may slow or speed by a factor (CI: 1,511 ms against the view's 1,485).
    # The bug was a cache read's 139 ms for a ~2.5 s compile: a quarter of it still tells.
    tpu_s = plan(tpu_direct.mlp, *args, mesh=mesh, in_specs=tpu_direct.SPECS).compile_s
    assert tpu_s * 1e3 / 4 <= v.trace.compile_ms <= waited_ms
    assert v._trace["compile_ms"] == round(v.trace.compile_ms, 1)


def test_a_tpu_result_for_a_layout_the_user_left_is_never_shown():
    mesh = tpu.tpu_mesh("v5e:2x2", (2, 2), ("data", "model"))
    args = _args_of_size(1280)
    v = shardwidget.ShardView(tpu_direct.mlp, *args, mesh=mesh, in_specs=tpu_direct.SPECS)
    v.mesh_shape = [4, 1]  # left before (or just after) the TPU answer for (2, 2)
    assert background.wait(300)
    _until(lambda: "compiled by the TPU compiler" in v.planned)
    assert tuple(v.trace.state.mesh_shape) == (4, 1) and "(4, 1)" in v.planned


def _until(ok, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not ok():
        assert time.monotonic() < end, "the view never switched"
        time.sleep(0.05)


@pytest.mark.parametrize(("family", "n"), [("v5e", 8), ("v6e", 4), ("v5", 8), ("tpu7x", 16)])
def test_a_presets_topology_for_a_plan_size_is_one_libtpu_knows(family, n):
    name, slices, chip_config = tpu.topology_for(family, n)
    mesh = tpu.tpu_mesh(name, (n,), ("a",), num_slices=slices, chip_config_name=chip_config)
    assert len(tpu.info(mesh).device_ids) == n
    label, why = tpu.compile_with(family, n)
    assert label.startswith(f"this TPU: {name}") and why == ""


def test_a_tree_view_reshaped_stays_on_the_same_chips(v5e):
    w, _ = tpu_direct.mlp_args()
    tv = shardwidget.ShardView({"w": w}, mesh=v5e, rules=[(r"w", P("data", "model"))])
    tv.mesh_shape = [4, 2]
    mi = tpu.info(tv.mesh)
    assert mi is not None and mi.topology == "v5e:2x4" and mi.mesh_shape == (4, 2)
    assert [d.coords for d in tv.leaf("['w']").layout.devices] == list(mi.coords)
    assert "v5e:2x4 (4, 2)" in tv.planned


def test_a_tpu_compile_past_its_time_limit_is_stopped_in_words(v5e):
    args = tpu_direct.mlp_args(1792)  # not in the TPU cache
    with pytest.raises(PlanError, match=r"TPU planning helper .* took longer than 0\.001 s"):
        plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS, timeout=1e-3)
    assert not any(h.alive for h in tpu._TPU)
    assert plan(tpu_direct.mlp, *args, mesh=v5e, in_specs=tpu_direct.SPECS).fits


def test_libtpu_refusing_a_module_is_said_in_words_and_the_helper_ends(v5e):
    h = tpu.tpu_helper()
    with pytest.raises(PlanError, match=r"the TPU compiler \(libtpu .*\) could not compile"):
        tpu.compile_text("this is not a module", v5e, 60)
    assert not h.alive
    assert tpu.tpu_helper() is not h


def test_a_cpu_plan_view_compiles_with_the_presets_tpu_and_back():
    args = _args_of_size(1152)
    cpu_mesh = AbstractMesh((2, 4), ("data", "model"), (AxisType.Auto,) * 2)
    v = shardwidget.ShardView(tpu_direct.mlp, *args, mesh=cpu_mesh, in_specs=tpu_direct.SPECS)
    v.hardware = "h100"
    assert v._trace_options["compile_with"] == {
        "current": "cpu",
        "tpu": "",
        "why": "this hardware is not a TPU: its plans are the CPU compiler's",
    }
    v.hardware = "tpu-v5e"
    assert v._trace_options["compile_with"]["tpu"] == "this TPU: v5e:2x4"
    v._on_custom_msg(v, {"type": "compile_with", "compiler": "tpu"}, [])
    assert background.wait(300)
    _until(lambda: "compiled by the TPU compiler" in v.planned)
    want = plan(tpu_direct.mlp, *args, mesh=v._traced.plan_mesh, in_specs=tpu_direct.SPECS)
    assert v.trace.memory["temp"] == want.memory["temporaries"] and want.compiler == "tpu"
    assert v._trace_options["compile_with"]["current"] == "tpu"
    v._on_custom_msg(v, {"type": "compile_with", "compiler": "cpu"}, [])
    on_cpu = plan(tpu_direct.mlp, *args, mesh=cpu_mesh, in_specs=tpu_direct.SPECS)
    assert "XLA's CPU compiler" in v.planned
    assert v.trace.memory["temp"] == on_cpu.memory["temporaries"]
    v._on_custom_msg(v, {"type": "compile_with", "compiler": "gpu"}, [])
    assert "compile with" in v.error and v.trace.memory["temp"] == on_cpu.memory["temporaries"]
