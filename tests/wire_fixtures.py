"""Real wire payloads, written as a TypeScript module the renderer's tests type-check and consume.

``python tests/wire_fixtures.py N`` prints, as JSON, the synced state of views made on N simulated
CPU devices (binary values as {"__b64__": base64}). ``tests/wire/test_wire_contract.py`` runs it for 8
and 32 devices and writes ``js/tests/wire/fixtures.gen.ts``: each view's state as a literal typed
with the TypeScript wire types (``ArrayModel``, ``FunctionModel``), so tsc refuses any field Python
sends that TypeScript does not declare, and any declared field Python does not send, and vitest
draws them. It also writes the device colours of the static picture for vitest to compare with the
live renderer's.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from tests.helpers import UNREDUCED


def traits(view: Any) -> dict[str, Any]:
    """The view's synced state, JSON-ready (binary values as {"__b64__": ...})."""
    from shardwidget.wire import encode

    state: dict[str, Any] = encode(view.synced_state())
    return state


def views(n: int) -> dict[str, Any]:
    """The synced state of a few views on the n devices JAX has now (n = 8 or 32)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardwidget import ShardView

    assert jax.device_count() == n, (jax.device_count(), n)
    shape = (2, 4) if n == 8 else (4, 8)
    mesh = jax.make_mesh(shape, ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    big = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    big[3, 5] = np.nan
    out: dict[str, Any] = {}
    x = jax.device_put(big, NamedSharding(mesh, P("x", "y")))
    out[f"array{n}"] = traits(ShardView(x))
    if n != 8:
        return out
    small = jax.device_put(
        np.arange(8 * 8, dtype=np.int32).reshape(8, 8), NamedSharding(mesh, P("y"))
    )
    out["arrayValues8"] = traits(ShardView(small))
    moved = ShardView(small)
    moved.cost_open = True  # its collectives asked for (the front end's section open)
    moved.spec = ["x", "y"]  # a re-layout: _transfer "ready", with its pairs and estimate
    out["arrayResharded8"] = traits(moved)
    out["arrayScalar8"] = traits(ShardView(jnp.float32(3.5)))
    # An Explicit-mode reduction left unreduced: partial sums, with each device's statistics
    # (from jax 0.8: 0.7 makes no unreduced array).
    emesh = jax.make_mesh(shape, ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    if UNREDUCED:
        with jax.set_mesh(emesh):
            part = jax.lax.reduce_sum(
                jax.device_put(big, NamedSharding(emesh, P("x", "y"))),
                [0],
                out_sharding=P("y", unreduced={"x"}),
            )
        out["arrayUnreduced8"] = traits(ShardView(part))
    a = jax.device_put(np.ones((16, 8), np.float32), NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("y", None)))

    def matmul(a: Any, b: Any) -> Any:
        return {"out": a @ b, "total": (a @ b).sum()}

    out["function8"] = traits(ShardView(matmul, a, b))
    searched = ShardView(matmul, a, b)  # its search panel's payload: every candidate compiled
    searched.search(workers=2)
    out["functionSearched8"] = traits(searched)

    def psum_rows(a: Any) -> Any:
        return jax.lax.psum(a, "x")

    out["functionShardMap8"] = traits(
        ShardView(psum_rows, a, mode="shard_map", in_specs=[P("x", None)], out_specs=[P()])
    )
    # A pmap'd function: pmap's own mesh over axis "i", its leaves labelled in words.
    pmapped = jax.pmap(lambda r: jax.lax.psum(r, "i") * r, axis_name="i")
    out["functionPmap8"] = traits(ShardView(pmapped, np.arange(n * 4.0).reshape(n, 4)))
    # A tree: a laid-out weight, an abstract leaf, a static leaf, a rule.
    tree = {"w": a, "b": jax.ShapeDtypeStruct((8,), jnp.float32), "n": 3}
    out["tree8"] = traits(ShardView(tree, mesh=mesh, rules=[("b", P("y"))]))
    tree_searched = ShardView(tree, mesh=mesh, rules=[("b", P("y"))])  # its search panel
    tree_searched.search()
    out["treeSearched8"] = traits(tree_searched)
    # A plan: the same tree's shapes on an AbstractMesh of 256 positions (no devices).
    pod = jax.sharding.AbstractMesh(
        (32, 8), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2
    )
    shapes = {"w": jax.ShapeDtypeStruct((256, 64), jnp.float32), "b": tree["b"], "n": 3}
    out["treePlanned256"] = traits(
        ShardView(shapes, mesh=pod, rules=[("w", P("data", "model")), ("b", P("model"))])
    )
    return out


def main() -> None:
    n = int(sys.argv[1])
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_num_cpu_devices", n)
    json.dump(views(n), sys.stdout)


if __name__ == "__main__":
    main()
