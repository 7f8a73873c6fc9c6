"""ShardView(tree, mesh=AbstractMesh(...)): a tree or one array planned on a mesh of positions
the kernel does not have. Geometry checked against JAX's devices_indices_map on a real mesh of
the same shape (8 devices here, 256 in a subprocess); no device memory is allocated."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget._jax import CompileCount
from shardwidget.model.layout import layout_of_sharding

SHAPE = (64, 32)
CASES = [  # (mesh shape, axis names, spec)
    ((2, 4), ("x", "y"), P("x", "y")),
    ((2, 4), ("x", "y"), P("y", "x")),
    ((2, 4), ("x", "y"), P(None, ("x", "y"))),
    ((2, 4), ("x", "y"), P(("y", "x"))),
    ((4, 2), ("a", "b"), P("b")),
    ((8,), ("d",), P(None, "d")),
    ((2, 2, 2), ("p", "q", "r"), P(("r", "p"), "q")),
    ((2, 2, 2), ("p", "q", "r"), P()),
]


def _blocks_by_position(lay) -> dict[int, tuple]:
    return {d: blk.index for blk in lay.blocks for d in blk.devices}


def _jax_blocks(mesh_shape, names, spec, shape) -> dict[int, tuple]:
    """Position on the mesh (row-major) -> its (start, stop) per dimension, as JAX says."""
    mesh = jax.make_mesh(mesh_shape, names, axis_types=(AxisType.Explicit,) * len(names))
    pos = {d.id: i for i, d in enumerate(mesh.devices.flat)}
    out = {}
    for dev, idx in NamedSharding(mesh, spec).devices_indices_map(shape).items():
        out[pos[dev.id]] = tuple(s.indices(n)[:2] for s, n in zip(idx, shape, strict=True))
    return out


@pytest.fixture
def sds_tree():
    f32 = jnp.float32
    return {
        "embed": jax.ShapeDtypeStruct((1024, 256), f32),
        "layers": [
            {"w": jax.ShapeDtypeStruct((256, 1024), f32), "b": jax.ShapeDtypeStruct((1024,), f32)}
            for _ in range(3)
        ],
        "step": 0,
    }


RULES = [(r"embed", P("data")), (r"\['w'\]", P(None, "model"))]


@pytest.mark.parametrize(("mesh_shape", "names", "spec"), CASES)
def test_geometry_equals_jax_on_a_real_mesh_of_the_same_shape(mesh_shape, names, spec):
    am = AbstractMesh(mesh_shape, names, axis_types=(AxisType.Auto,) * len(names))
    lay = layout_of_sharding(NamedSharding(am, spec), SHAPE, np.dtype("float32"))
    assert [d.id for d in lay.devices] == list(range(8))
    assert lay.mesh is not None and lay.mesh.device_ids == tuple(range(8))
    assert _blocks_by_position(lay) == _jax_blocks(mesh_shape, names, spec, SHAPE)


_SUB = """
import json, jax
from jax.sharding import NamedSharding, PartitionSpec as P
out = []
for sizes, names, spec, shape in json.loads(input()):
    mesh = jax.make_mesh(tuple(sizes), tuple(names), axis_types=(jax.sharding.AxisType.Explicit,) * len(names))
    pos = {d.id: i for i, d in enumerate(mesh.devices.flat)}
    m = NamedSharding(mesh, P(*[tuple(e) if isinstance(e, list) else e for e in spec]))
    got = {pos[d.id]: [list(s.indices(n)[:2]) for s, n in zip(ix, shape)]
           for d, ix in m.devices_indices_map(tuple(shape)).items()}
    out.append(sorted(got.items()))
print(json.dumps(out))
"""


def test_geometry_equals_jax_at_256_devices():
    """The same comparison in a process that really has 256 (simulated) devices."""
    cases = [
        ((32, 8), ("data", "model"), ["data", "model"], (256, 64)),
        ((32, 8), ("data", "model"), [["model", "data"]], (1024, 4)),
        ((4, 8, 8), ("a", "b", "c"), ["c", None, ["a", "b"]], (16, 6, 64)),
        ((256,), ("fsdp",), [None, "fsdp"], (3, 512)),
    ]
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=256",
    }
    run = subprocess.run(
        [sys.executable, "-c", _SUB],
        input=json.dumps(cases),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    theirs = json.loads(run.stdout)
    for (sizes, names, spec, shape), got in zip(cases, theirs, strict=True):
        pspec = P(*[tuple(e) if isinstance(e, list) else e for e in spec])
        lay = layout_of_sharding(
            NamedSharding(
                AbstractMesh(sizes, names, axis_types=(AxisType.Auto,) * len(names)), pspec
            ),
            shape,
            "f4",
        )
        ours = _blocks_by_position(lay)
        assert len(ours) == 256
        assert {d: [list(r) for r in ix] for d, ix in ours.items()} == dict(got), spec


def test_planned_tree_allocates_nothing_and_covers_every_position(sds_tree):
    before = len(jax.live_arrays())
    am = AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    view = ShardView(sds_tree, mesh=am, rules=RULES)
    assert view.planned and view.mesh is am
    per = view.per_device
    assert list(per) == list(range(256))
    # embed: 1024/32 rows × 256; w: 256 × 1024/8, three times; b replicated, three times
    want = (1024 // 32 * 256 + 3 * 256 * 1024 // 8 + 3 * 1024) * 4
    assert set(per.values()) == {want}
    lay = view.leaf("['embed']").layout
    assert lay.n_devices == 256 and len(lay.blocks) == 32 and lay.replication == 8
    assert lay.blocks[1].devices == tuple(range(8, 16))
    view.rules = [(r"embed", P("model", "data"))]
    repr(view), view.to_svg(), view.tree
    assert len(jax.live_arrays()) == before


def test_jax_arrays_are_taken_as_their_shapes():
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    tree = {
        "w": jax.device_put(jnp.ones((64, 32)), NamedSharding(mesh, P("data", "model"))),
        "b": jnp.zeros(32),
    }
    before = len(jax.live_arrays())
    view = ShardView(
        tree, mesh=AbstractMesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    )
    w, b = view.leaf("['w']"), view.leaf("['b']")
    assert w.abstract and b.abstract
    assert w.spec == P("data", "model")  # its mesh has the plan's axes: its spec kept
    assert not b.placed and b.layout.replication == 8  # one device: replicated on the plan
    assert view._leaf_summary is not None
    assert view._leaf_summary[2].message == "planned: no data"
    assert view._stats["message"] == "planned: no data"
    out = view.tree
    assert isinstance(out["w"], jax.ShapeDtypeStruct)
    assert len(jax.live_arrays()) == before


def test_one_array_planned_with_spec():
    sds = jax.ShapeDtypeStruct((4096, 1024), jnp.bfloat16)
    am = AbstractMesh((16, 16), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    view = ShardView(sds, mesh=am, spec=P("x", "y"))
    leaf = view.leaves[0]
    assert leaf.layout.typeof == "bfloat16[4096@x,1024@y]"
    assert set(view.per_device.values()) == {4096 * 1024 * 2 // 256}
    x = jnp.ones((64, 32))
    arr_view = ShardView(x, mesh=am, spec=P(None, "y"))
    assert arr_view.planned and arr_view.leaves[0].layout.shard_shape == (64, 2)
    with pytest.raises(ValueError, match=r"does not divide"):
        ShardView(jax.ShapeDtypeStruct((10, 3), jnp.float32), mesh=am, spec=P("x"))


def test_a_planned_view_says_what_it_is(sds_tree):
    view = ShardView(
        sds_tree,
        mesh=AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
        rules=RULES,
    )
    words = "planned on AbstractMesh (32, 8) · no devices"
    assert words in repr(view)
    assert view._tree["planned"] == words
    svg = view.to_svg()
    assert words in svg and "estimates for h100" in svg
    assert words in view._static_html()
    assert view._options["n_devices"] == 256 and view._options["platform"] == "planned"
    assert [32, 8] in view._options["factorizations"]["2"]


def test_rules_that_cannot_apply_are_refused_in_words(sds_tree):
    view = ShardView(
        sds_tree,
        mesh=AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
        rules=RULES,
    )
    shown = view.rules
    with pytest.raises(ValueError, match=r"leaf \['layers'\]\[0\]\['b'\].*not in the mesh"):
        view.rules = [(r"\['b'\]", P("nope"))]
    with pytest.raises(ValueError, match=r"leaf \['embed'\]"):
        view.rules = [(r"embed", P(None, ("data", "model", "data")))]
    view.rules = [(r"\['b'\]", P(("data", "model")))]  # 1024 over 256: fine
    with pytest.raises(ValueError, match=r"\['layers'\]\[0\]\['b'\]"):
        view.rules = [(r"\['b'\]", P(("data", "model"), None))]  # a spec longer than the rank
    assert view.rules == [(r"\['b'\]", P(("data", "model")))]
    view.rules = shown
    assert view.rules == shown


def test_mesh_shape_changes_within_the_plan(sds_tree):
    view = ShardView(
        sds_tree,
        mesh=AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
        rules=RULES,
    )
    view.mesh_shape = [16, 16]
    assert tuple(view.mesh.axis_sizes) == (16, 16)
    assert list(view.per_device) == list(range(256))
    with pytest.raises(ValueError, match="the plan has 256 devices"):
        view.mesh_shape = [8, 8]
    with pytest.raises(ValueError, match="AbstractMesh of 256"):
        view.mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
    view.mesh = AbstractMesh((64, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    assert view.leaf("['embed']").layout.blocks[0].shape == (16, 256)


def test_code_rebinds_the_tree_as_planned(sds_tree):
    view = ShardView(
        sds_tree,
        mesh=AbstractMesh((32, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
        rules=RULES,
    )
    scope = {"params": sds_tree}
    exec(view.code, scope)
    sds = lambda t: [x for x in jax.tree.leaves(t) if isinstance(x, jax.ShapeDtypeStruct)]  # noqa: E731
    got, want = sds(scope["params"]), sds(view.tree)
    assert len(got) == 7
    assert [g.sharding.spec for g in got] == [w.sharding.spec for w in want]
    assert all(isinstance(g.sharding.mesh, AbstractMesh) for g in got)


def test_4096_positions_lay_out_quickly():
    tree = {f"l{i}": jax.ShapeDtypeStruct((4096, 512), jnp.float32) for i in range(100)}
    am = AbstractMesh((64, 64), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    view = ShardView(tree, mesh=am, rules=[(".*", P("data", "model"))])
    with CompileCount() as c:
        view.rules = [(".*", P("model", "data"))]
    assert list(view.per_device) == list(range(4096))
    assert len(view.leaves[0].layout.blocks) == 4096
    assert c.n == 0  # from the specs alone (benchmarks/tree.py times it: not a test here)


def test_shapes_on_an_abstract_mesh_bigger_than_the_kernel_plan_on_it():
    pod = AbstractMesh((16, 16), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    f32 = jnp.float32
    tree = {
        "w": jax.ShapeDtypeStruct((512, 256), f32, sharding=NamedSharding(pod, P("data", "model"))),
        "b": jax.ShapeDtypeStruct((256,), f32),
    }
    view = ShardView(tree)
    assert view.planned and view.mesh == pod
    assert view.leaf("['w']").layout.shard_shape == (32, 16)
    assert len(view.per_device) == 256
