"""ShardView in marimo: a 4×8 array on a 2×4 mesh of 8 simulated CPU devices.

    marimo edit examples/marimo_arrays.py      # or: marimo run examples/marimo_arrays.py

Change the layout with the view's controls; the cell below it shows the kernel's side.
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import jax

    # Before anything else starts JAX's backend: 8 CPU devices. Every other cell uses `jax` from
    # here, so marimo runs this one first.
    jax.config.update("jax_num_cpu_devices", 8)
    return (jax,)


@app.cell
def _():
    import marimo as mo

    mo.md(
        """
        # Arrays and their shardings, seen with ShardView

        `jax.make_mesh((2, 4), ('x', 'y'))` arranges the 8 devices in a 2×4 grid with named
        axes, and `P('x', 'y')` splits dimension 0 over `x` (2 ways) and dimension 1 over `y`
        (4 ways): one 2×2 block per device. Use the view's controls to lay the array out
        differently; the kernel re-lays it out with `jax.device_put`.
        """
    )
    return (mo,)


@app.cell
def _(jax, mo):
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardwidget import ShardView

    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    arr = jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y")))
    shard_view = ShardView(arr)

    # The controls ask the kernel to re-lay the array out, and the kernel sets the view's traits.
    # A marimo state, set whenever they change, re-runs the cells that read it.
    get_changes, set_changes = mo.state(0)
    shard_view.observe(
        lambda _change: set_changes(lambda n: n + 1),
        names=["spec", "mesh_shape", "axis_names", "axis_types", "memory_kind"],
    )
    view = mo.ui.anywidget(shard_view)
    view  # noqa: B018  (marimo shows a cell's last expression)
    return arr, get_changes, shard_view


@app.cell
def _(arr, get_changes, mo, shard_view):
    _n = get_changes()  # re-run on every new layout
    _shown = shard_view.array.sharding
    mo.md(
        f"""
        **Kernel side** (layout changes: {_n}) — `view.spec` = `{shard_view.spec}`,
        `view.mesh_shape` = `{shard_view.mesh_shape}`

        `view.array.sharding`: <code>{_shown.spec} over
        {dict(_shown.mesh.shape)}</code>; the original array is unchanged: `{arr.sharding.spec}`
        """
    )
    return


if __name__ == "__main__":
    app.run()
