"""The TPU compiler run directly on a sum across a mesh axis of a multi-slice topology (for
tests/plan/test_tpu_slices.py). Run by the Python that has libtpu: ``python
tpu_slices_direct.py TOPOLOGY SLICES D0xD1.. DCN0xDCN1.. AXES AXIS [OTHER]``: ``x.sum(axis=0)`` of a
(1024, 4096) float32 array whose dimension 0 is split over AXIS, on the mesh
``mesh_utils.create_hybrid_device_mesh`` makes with DCN0xDCN1.. slices along each axis,
printing each position's slice and every Megascale transfer libtpu wrote (its type, target and
the shape it receives) and the compiled text as JSON. With OTHER, :func:`two_sums` of x (over
AXIS) and y (over OTHER) instead. It imports only JAX.
"""

from __future__ import annotations

import json
import os
import re
import sys

import jax
import jax.numpy as jnp


def two_sums(x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Two sums over dimension 0, each of its own input: x's reaches only the first output,
    y's only the second."""
    return x.sum(axis=0), y.sum(axis=0)


def main() -> None:
    os.environ["TPU_SKIP_MDS_QUERY"] = "1"
    jax.config.update("jax_platforms", "cpu")
    from jax.experimental import mesh_utils, topologies
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    topology, slices, shape, dcn_shape, axes, axis = sys.argv[1:7]
    other = sys.argv[7] if len(sys.argv) > 7 else ""  # (two inputs: x over AXIS, y over OTHER)
    dims = tuple(int(s) for s in shape.split("x"))
    dcn = tuple(int(s) for s in dcn_shape.split("x"))
    topo = topologies.get_topology_desc(
        platform="tpu", topology_name=topology, num_slices=int(slices)
    )
    ici = tuple(d // s for d, s in zip(dims, dcn, strict=True))
    devices = mesh_utils.create_hybrid_device_mesh(ici, dcn, topo.devices)
    mesh = jax.sharding.Mesh(devices, tuple(axes.split(",")))
    x = jax.ShapeDtypeStruct((1024, 4096), jnp.float32, sharding=NamedSharding(mesh, P(axis)))
    if other:
        y = jax.ShapeDtypeStruct((1024, 4096), jnp.float32, sharding=NamedSharding(mesh, P(other)))
        text = jax.jit(two_sums).lower(x, y).compile().as_text()
    else:
        text = jax.jit(lambda x: x.sum(axis=0)).lower(x).compile().as_text()
    recvs = []
    for line in text.splitlines():
        kind = re.search(r'_xla_megascale_transfer_type="(\w+)"', line)
        shape_m = re.search(r"= \((\w+\[[\d,]*\])", line)
        if kind and " recv(" in line and shape_m:
            target = re.search(r'_xla_megascale_target="([^"]*)"', line)
            recvs.append([kind.group(1), target.group(1) if target else "", shape_m.group(1)])
    print(
        json.dumps(
            {
                "slice_index": [int(d.slice_index) for d in mesh.devices.flat],
                "megascale_recvs": recvs,
                "hlo": text,
                "ici": len(
                    re.findall(r" (?:all-reduce|all-gather|reduce-scatter)(?:-start)?\(", text)
                ),
            }
        )
    )


if __name__ == "__main__":
    main()
