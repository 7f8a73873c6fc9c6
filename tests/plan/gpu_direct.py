"""Programs planned in tests/plan/test_gpu.py, and XLA's GPU compiler run on them directly.

Run by the Python of the GPU compiler's venv (``python gpu_direct.py SPEC TOPOLOGY D0xD1..
AXES PROGRAM``, PROGRAM "-" for the mesh's devices only): the issue's recipe, ``topologies.get_topology_desc(platform="cuda",
target_config=..., topology=...)``, ``topologies.make_mesh``, ``jax.jit(f).lower(...).compile()``,
printing what the compile says as JSON. It imports only JAX, so both Pythons import it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def mlp(w: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One bf16 layer, its gradient and an SGD update."""
    g = jax.grad(lambda w: jnp.tanh(x @ w).sum())(w)
    return w - 0.1 * g, g.sum()


def tanh_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.sum(jnp.tanh(x @ w))


def scanned(ws: jax.Array, x: jax.Array) -> jax.Array:
    """A stack of 4 layers under lax.scan, and its loss's gradient (FSDP over the first axis)."""

    def loss(ws: jax.Array) -> jax.Array:
        def layer(h: jax.Array, w: jax.Array) -> tuple[jax.Array, None]:
            return jnp.tanh(h @ w), None

        return jax.lax.scan(layer, x, ws)[0].sum()

    return jax.grad(loss)(ws)


def held_at_once(x: jax.Array, w: jax.Array) -> jax.Array:
    """A 40 GiB product, dead once summed, then a 20 GiB output: the compiler's peak (the
    product and the arguments) is 40.6 GiB, what the GPU runtime allocates at once (the
    product's temp buffer and the output) 60.6 GiB."""
    s = jnp.tanh(x @ w).astype(jnp.float32).sum()
    return jnp.broadcast_to(s.astype(jnp.bfloat16), (2**14, 655360))


def dp_loss(p: dict[str, jax.Array], batch: dict[str, jax.Array]) -> jax.Array:
    h = jax.nn.relu(batch["x"] @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - batch["y"]) ** 2)


def dp_step(p: dict[str, jax.Array], batch: dict[str, jax.Array]) -> Any:
    """A data-parallel SGD step: XLA's GPU compiler all-reduces the loss and the gradients as
    one flat concatenate."""
    value, grads = jax.value_and_grad(dp_loss)(p, batch)
    return value, jax.tree.map(lambda a, g: a - 0.1 * g, p, grads)


DP_SHAPES = {"b1": (32,), "w1": (64, 32), "w2": (32, 48), "x": (32, 64), "y": (32, 48)}
"""dp_step's parameters and batch; each parameter of its own size (its gradient told apart)."""


def dp_flat(b1: jax.Array, w1: jax.Array, w2: jax.Array, x: jax.Array, y: jax.Array) -> Any:
    """dp_step with its leaves as arguments (this script compiles flat arguments)."""
    return dp_step({"b1": b1, "w1": w1, "w2": w2}, {"x": x, "y": y})


def _sds(shape: tuple[int, ...]) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.bfloat16)


PROGRAMS: dict[str, tuple[Callable[..., Any], list[jax.ShapeDtypeStruct], list[Any]]] = {
    "mlp": (mlp, [_sds((4096, 4096)), _sds((1024, 4096))], [P("data", "model"), P("data", None)]),
    "tanh_matmul": (
        tanh_matmul,
        [_sds((4096, 8192)), _sds((8192, 8192))],
        [P("data", None), P(None, "model")],
    ),
    "scanned": (
        scanned,
        [_sds((4, 2048, 2048)), _sds((512, 2048))],
        [P(None, "data", "model"), P("data", None)],
    ),
    # 48 GiB of weights replicated, and a 48 GiB product: past 75 % of an 80 GB GPU
    "too_big": (tanh_matmul, [_sds((8192, 8192)), _sds((8192, 3 * 2**20))], [P(), P()]),
    # the peak under 75 % of an 80 GB GPU, what is held at once over it
    "held_at_once": (held_at_once, [_sds((2**14, 256)), _sds((256, 1310720))], [P(), P()]),
    # params replicated, the batch split over "data"
    "dp_step": (
        dp_flat,
        [jax.ShapeDtypeStruct(s, jnp.float32) for s in DP_SHAPES.values()],
        [P(), P(), P(), P("data"), P("data")],
    ),
    # FSDP: params split over "data" on dim 0 too
    "fsdp_step": (
        dp_flat,
        [jax.ShapeDtypeStruct(s, jnp.float32) for s in DP_SHAPES.values()],
        [P("data")] * 5,
    ),
}
"""name -> (function, argument shapes, in_specs on a mesh with axes "data" and "model")."""

REFUSED = ("collective_memory_granularity",)
"""Lines of XLA's newest target configs that jaxlib 0.10.2's proto does not know (the issue's
recipe removes them by hand)."""


def main() -> None:
    jax.config.update("jax_platforms", "cpu")
    from jax.experimental import topologies
    from jax.sharding import NamedSharding

    spec_file, topology, shape, axes, program = sys.argv[1:6]
    with open(spec_file) as f:
        text = f.read()
    text = "\n".join(ln for ln in text.splitlines() if ln.strip().split(":")[0] not in REFUSED)
    dims = tuple(int(s) for s in shape.split("x"))
    names = tuple(axes.split(","))
    topo = topologies.get_topology_desc(platform="cuda", target_config=text, topology=topology)
    mesh = topologies.make_mesh(topo, dims, names)
    if program == "-":  # the mesh's devices only: each position's id and process (its host)
        print(
            json.dumps({"devices": [[int(d.id), int(d.process_index)] for d in mesh.devices.flat]})
        )
        return
    f, args, specs = PROGRAMS[program]
    sds = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s))
        for a, s in zip(args, specs, strict=True)
    ]
    exe = jax.jit(f).lower(*sds).compile()
    m = exe.memory_analysis()
    print(
        json.dumps(
            {
                "devices": [[int(d.id), int(d.process_index)] for d in mesh.devices.flat],
                "memory": [
                    m.argument_size_in_bytes,
                    m.output_size_in_bytes,
                    m.temp_size_in_bytes,
                    m.alias_size_in_bytes,
                ],
                "outputs": [
                    [e if e is None or isinstance(e, str) else list(e) for e in s.spec]
                    for s in jax.tree.leaves(exe.output_shardings)
                ],
                "hlo": exe.as_text(),
            }
        )
    )


if __name__ == "__main__":
    main()
