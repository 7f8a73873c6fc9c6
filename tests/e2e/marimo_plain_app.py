"""A marimo app whose cell ends with a plain ``ShardView(arr)``, no ``mo.ui.anywidget``: what
docs/hosts.md says works (tests/e2e/test_hosts.py serves it with ``marimo run``)."""

import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import jax

    jax.config.update("jax_num_cpu_devices", 8)
    return (jax,)


@app.cell
def _(jax):
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardwidget import ShardView

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    arr = jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y")))
    ShardView(arr)
    return


if __name__ == "__main__":
    app.run()
