"""Steps planned in tests/plan/test_tpu.py, and the TPU compiler run on them directly.

Run by the Python that has libtpu (``python tpu_direct.py TOPOLOGY SIZE D0xD1 [SLICES CONFIG]``):
``jax.jit(step).lower(...).compile()`` on ``jax.experimental.topologies`` devices, as the
issue's recipe does, printing what the compile says as JSON (the test compares a plan with it).
It imports only JAX, so both Pythons import it.
"""

from __future__ import annotations

import json
import os
import sys

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def mlp(w: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One bf16 layer, its gradient and an SGD update: an all-gather, a reduce-scatter and
    an all-reduce on the TPU compiler."""
    g = jax.grad(lambda w: jnp.tanh(x @ w).sum())(w)
    return w - 0.1 * g, g.sum()


def mlp_args(big: int = 4096) -> tuple[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct]:
    """(w, x) as shapes; ``big`` 262144 overflows a v5e's HBM."""
    return (
        jax.ShapeDtypeStruct((big, big), jnp.bfloat16),
        jax.ShapeDtypeStruct((1024, big), jnp.bfloat16),
    )


SPECS = [P("data", "model"), P("data", None)]


def main() -> None:
    os.environ["TPU_SKIP_MDS_QUERY"] = "1"
    jax.config.update("jax_platforms", "cpu")
    from jax.experimental import topologies
    from jax.sharding import NamedSharding

    topology, big, shape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    slices, chip_config = (int(sys.argv[4]), sys.argv[5]) if len(sys.argv) > 5 else (1, "")
    dims = tuple(int(s) for s in shape.split("x"))
    kw: dict = {"num_slices": slices} if slices > 1 else {}
    if chip_config:
        kw["chip_config_name"] = chip_config
    topo = topologies.get_topology_desc(platform="tpu", topology_name=topology, **kw)
    if slices > 1:  # data spans the slices: DCN (2, 1), ICI inside
        from jax.experimental import mesh_utils

        devs = mesh_utils.create_hybrid_device_mesh(
            (dims[0] // slices, dims[1]), (slices, 1), topo.devices
        )
        mesh = jax.sharding.Mesh(devs, ("data", "model"))
    else:
        mesh = topologies.make_mesh(topo, dims, ("data", "model"))
    sds = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s))
        for a, s in zip(mlp_args(big), SPECS, strict=True)
    ]
    donate = tuple(int(k) for k in os.environ.get("DONATE", "").split(",") if k)
    exe = jax.jit(mlp, donate_argnums=donate).lower(*sds).compile()
    m = exe.memory_analysis()
    text = exe.as_text()
    print(
        json.dumps(
            {
                "devices": [
                    [int(d.id), [int(c) for c in d.coords], int(d.core_on_chip)]
                    for d in mesh.devices.flat
                ],
                "memory": [
                    m.argument_size_in_bytes,
                    m.output_size_in_bytes,
                    m.temp_size_in_bytes,
                    m.alias_size_in_bytes,
                ],
                "flops": exe.cost_analysis()["flops"],
                "outputs": [str(s) for s in exe.output_shardings],
                "hlo": text,
            }
        )
    )


if __name__ == "__main__":
    main()
