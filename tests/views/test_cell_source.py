"""A collective's "caused by" names the notebook cell (execution count and line), not the kernel's
temporary file for the cell (``/tmp/ipykernel_123/3194285871.py:2``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from shardwidget.hlo import collectives as hlo

SCRIPT = textwrap.dedent(
    """
    import jax
    from IPython.core.interactiveshell import InteractiveShell
    from ipykernel.compiler import XCachingCompiler  # the file names a Jupyter kernel gives cells

    shell = InteractiveShell.instance(compiler_class=XCachingCompiler)
    for cell in [
        "import jax, jax.numpy as jnp\\nfrom shardwidget import ShardView",
        "x = jnp.ones((8, 8))",
        "def f(a):\\n    b = a * 2\\n    return b.sum(axis=0)",
        "v = ShardView(f, x, in_specs=[['x', None]], mesh_shape=[8], axis_names=['x'])",
    ]:
        r = shell.run_cell(cell, store_history=True)
        r.raise_error()
    v = shell.user_ns["v"]
    print("FILE", shell.compile.get_code_name(
        "def f(a):\\n    b = a * 2\\n    return b.sum(axis=0)", "", 0))
    for c in v.trace.collectives:
        print("COLL", c.kind, "|", c.source)
    print("REPR", repr(v))
    import re
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    f, x = shell.user_ns["f"], shell.user_ns["x"]
    text = jax.jit(f, in_shardings=NamedSharding(mesh, P("x", None))).lower(x).compile().as_text()
    # the line JAX's compiled HLO names for the all-reduce (its stack frame's file location)
    # (a stack frame's file location, or source_line= itself on older JAX)
    frame = re.search(r"all-reduce\\(.*stack_frame_id=(\\d+)", text)
    frames = dict(re.findall(r"^(\\d+) \\{file_location_id=(\\d+)", text, re.M))
    lines = dict(re.findall(r"^(\\d+) \\{file_name_id=\\d+ function_name_id=\\d+ line=(\\d+)", text, re.M))
    direct = re.search(r"all-reduce\\(.*source_line=(\\d+)", text)
    print("HLOLINE", lines[frames[frame.group(1)]] if frame else direct.group(1))
    """
)


def test_caused_by_names_the_cell_and_line():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    tmp_file = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("FILE"))
    assert "ipykernel" in tmp_file  # the name the kernel gives the cell's code (what was shown)
    colls = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("COLL")]
    # the sum in cell 3: its line 3, or the line JAX's own compile names (jax 0.8: line 2)
    line = next(ln.split(" ", 1)[1] for ln in lines if ln.startswith("HLOLINE"))
    assert colls == [f"all-reduce | cell [3], line {line}"], out.stdout
    assert tmp_file.rsplit("/", 1)[-1] not in out.stdout.replace(f"FILE {tmp_file}", "")


def test_outside_a_notebook_the_file_name_stays():
    assert hlo.where("/home/me/project/train.py", 12) == "train.py:12"
    assert hlo.where("/tmp/ipykernel_1/3194285871.py", "2") == "3194285871.py:2"  # no shell
