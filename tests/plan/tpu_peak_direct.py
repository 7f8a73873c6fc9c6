"""Models of several layers compiled by the TPU compiler directly, their memory reports
printed: what tests/plan/test_tpu_peak.py checks a TPU plan's peak against.

Run by the Python that has libtpu (``python tpu_peak_direct.py TOPOLOGY MODEL BATCH OUT``):
``jax.jit(step).lower(...).compile()`` on ``jax.experimental.topologies`` devices with XLA
asked to dump its reports; prints JSON: ``memory`` (memory_analysis: argument, output, temp,
alias), ``report`` (the dump's texts by file suffix), or ``error`` (the compiler's words), into
the file OUT (libtpu prints on stdout and stderr). It
imports only JAX, so both Pythons import it.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

LAYERS, WIDTH = 4, 2048
SPECS = [P(None, "data", "model"), P("data", None)]
"""The stacked weights (layer, in, out) and the batch (batch, in), on a (data, model) mesh."""
FILES = (
    "after_optimizations-live-range.txt",
    "after_optimizations-buffer-assignment.txt",
    "after_optimizations.txt",
)


def step(model: str):  # type: ignore[no-untyped-def]
    """A training step of LAYERS tanh layers (a scan over the stacked weights, or a Python
    loop over them) with its SGD update."""

    def loss(ws: jax.Array, x: jax.Array) -> jax.Array:
        if model == "scan":
            x, _ = jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)
        else:
            for i in range(LAYERS):
                x = jnp.tanh(x @ ws[i])
        return (x.astype(jnp.float32) ** 2).mean()

    def train(ws: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        g = jax.grad(loss)(ws, x)
        return ws - 0.1 * g, loss(ws, x)

    return train


def args(batch: int) -> tuple[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct]:
    return (
        jax.ShapeDtypeStruct((LAYERS, WIDTH, WIDTH), jnp.bfloat16),
        jax.ShapeDtypeStruct((batch, WIDTH), jnp.bfloat16),
    )


def main() -> None:
    os.environ["TPU_SKIP_MDS_QUERY"] = "1"
    jax.config.update("jax_platforms", "cpu")
    from jax.experimental import topologies
    from jax.sharding import NamedSharding

    topology, model, batch, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
    n = len(topo.devices)
    mesh = topologies.make_mesh(topo, (2, n // 2), ("data", "model"))
    sds = [
        jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s))
        for a, s in zip(args(batch), SPECS, strict=True)
    ]
    folder = tempfile.mkdtemp()
    opts = {"xla_dump_to": folder, "xla_dump_hlo_as_text": True, "xla_dump_hlo_module_re": ".*"}
    out: dict[str, object] = {}
    try:
        exe = jax.jit(step(model)).lower(*sds).compile(compiler_options=opts)
        m = exe.memory_analysis()
        out["memory"] = [
            m.argument_size_in_bytes,
            m.output_size_in_bytes,
            m.temp_size_in_bytes,
            m.alias_size_in_bytes,
        ]
    except Exception as e:  # the compiler's words (an HBM overflow)
        out["error"] = str(e)
    report = {}
    for suffix in FILES:
        found = sorted(glob.glob(os.path.join(folder, "*" + suffix)))
        if found:
            with open(found[-1], encoding="utf-8") as f:
                report[suffix] = f.read()
    out["report"] = report
    shutil.rmtree(folder, ignore_errors=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
