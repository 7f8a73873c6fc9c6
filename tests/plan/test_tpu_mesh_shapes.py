"""A TPU plan's mesh select offers only the shapes its torus holds, as
``jax.experimental.topologies.make_mesh`` (run directly, in the Python with libtpu) accepts them;
a shape it refuses is refused in words, and the view stays on the shape it shows.

They need libtpu (SHARDWIDGET_TPU_PYTHON or this Python); skipped with the reason elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget
from shardwidget.model import mesh as mesh_mod
from shardwidget.plan import background, tpu

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")

_MAKE_MESH = """
import json, sys
from jax.experimental import topologies
topo = topologies.get_topology_desc(platform="tpu", topology_name=sys.argv[1])
ok = []
for shape in json.loads(sys.argv[2]):
    try:
        topologies.make_mesh(topo, tuple(shape), tuple(f"a{i}" for i in range(len(shape))))
    except Exception:
        continue
    ok.append(shape)
print(json.dumps(ok))
"""


def _make_mesh_accepts(topology: str, shapes: list[list[int]]) -> list[list[int]]:
    """The shapes ``topologies.make_mesh`` accepts on the topology, run directly."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", TPU_SKIP_MDS_QUERY="1")
    out = subprocess.run(
        [tpu.tpu_python(), "-c", _MAKE_MESH, topology, json.dumps(shapes)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    return [list(s) for s in json.loads(out.stdout.strip().splitlines()[-1])]


@pytest.fixture(scope="module")
def v5e16():
    return tpu.tpu_mesh("v5e:4x4", (4, 4), ("data", "model"))


def _w() -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct((64, 32), np.float32)


def test_the_tree_views_mesh_select_offers_what_make_mesh_accepts(v5e16):
    tv = shardwidget.ShardView({"w": _w()}, mesh=v5e16, rules=[(r"w", P("data", "model"))])
    offered = tv._options["factorizations"]
    every = mesh_mod.all_factorizations(16)
    for k, shapes in every.items():
        assert offered[k] == _make_mesh_accepts("v5e:4x4", shapes), k
    # known by hand: a 4x4 torus holds 16 = 16 or 4·4 per axis, never 2 or 8
    assert offered["2"] == [[1, 16], [4, 4], [16, 1]]
    assert [2, 8] not in offered["2"] and [8, 2] not in offered["2"]


def test_a_shape_the_torus_cannot_hold_is_refused_in_words(v5e16):
    tv = shardwidget.ShardView({"w": _w()}, mesh=v5e16, rules=[(r"w", P("data", "model"))])
    with pytest.raises(ValueError, match="cannot hold a 2×8 mesh") as e:
        tv.mesh_shape = [2, 8]
    words = str(e.value)
    assert "product of the torus's own axes" in words
    assert "1×16, 4×4, 16×1" in words and "NotImplementedError" not in words
    assert list(tv.mesh_shape) == [4, 4]  # the control stays on the shape shown
    assert tpu.info(tv.mesh).mesh_shape == (4, 4)


def test_the_function_views_mesh_select_offers_what_make_mesh_accepts(v5e16):
    def f(w):
        return w * 2

    v = shardwidget.ShardView(f, _w(), mesh=v5e16, in_specs=[P("data", "model")])
    assert background.wait(300)
    offered = v._trace_options["factorizations"]
    assert offered["2"] == _make_mesh_accepts("v5e:4x4", mesh_mod.all_factorizations(16)["2"])
    assert offered["2"] == [[1, 16], [4, 4], [16, 1]]


def test_tpu_mesh_called_with_a_shape_the_torus_cannot_hold_says_which_it_can():
    held = _make_mesh_accepts("v5e:4x4", mesh_mod.all_factorizations(16)["2"])
    assert held == [[1, 16], [4, 4], [16, 1]]  # make_mesh's own answer, run directly
    with pytest.raises(ValueError, match="torus cannot hold") as e:
        tpu.tpu_mesh("v5e:4x4", (2, 8), ("data", "model"))
    words = str(e.value)
    assert "cannot hold a 2×8 mesh" in words and "product of the torus's own axes" in words
    assert "2-axis meshes it holds: 1×16, 4×4, 16×1" in words
    assert "NotImplementedError" not in words and "E.g." not in words


def test_tpu_mesh_called_with_too_few_devices_says_how_many_it_has():
    with pytest.raises(ValueError, match="has 16 devices") as e:
        tpu.tpu_mesh("v5e:4x4", (2, 4), ("data", "model"))
    words = str(e.value)
    assert "v5e:4x4 has 16 devices; a 2×4 mesh has 8" in words
    assert "1×16, 4×4, 16×1" in words and "must equal the product" not in words


def test_a_single_array_on_a_tpu_mesh_offers_what_make_mesh_accepts(v5e16):
    sds = jax.ShapeDtypeStruct((64, 32), np.float32, sharding=NamedSharding(v5e16, P("data")))
    v = shardwidget.ShardView(sds)
    offered = v._options["factorizations"]
    for k, shapes in mesh_mod.all_factorizations(16).items():
        assert offered[k] == _make_mesh_accepts("v5e:4x4", shapes), k
