"""The one place that knows JAX's private API and what differs between JAX versions.

Every other module of the package uses only JAX's public API, and reaches through here for the
rest (tests/test_jax_adapter.py enforces it). What differs, and where it changed:

- ``PartitionSpec.partitions``: public from jax 0.10; before, the entries are ``_partitions``
  (0.7–0.9). :func:`spec_entries` reads whichever exists, else iterates the spec.
- ``jax.dtypes.itemsize_bits``: from jax 0.8; below, :func:`itemsize_bits` derives the bits of
  the sub-byte dtypes (int4 / uint4 / float4_e2m1fn: 4, int2 / uint2: 2) from their names.
- pmap's implementation: ``jax._src.pmap`` from jax 0.8; before, pmap lives in
  ``jax._src.api`` and returns jaxlib's C++ ``PmapFunction`` (:func:`is_cpp_pmap`).
  :func:`pmap_source_files` names both files, whichever exist.
- ``jax.lax.pcast``: missing in jax 0.7.2. The package does not call it.
- ``jax.make_mesh``'s default axis types: Auto in 0.7–0.9, Explicit from 0.10. The package
  always passes ``axis_types=``, so its meshes are the same on every version.
- Private but stable across 0.7–0.10, kept here so one file lists them: jaxpr walking
  (``jax._src.core.jaxprs_in_params``, ``core.Literal``), source locations
  (``source_info_util.summarize``, ``api_util.fun_sourceinfo``), and the axis name pmap gives
  an unnamed axis (``_internal_pmap_axis_name``).
- Compiling a lowered module's text for N devices (the planning helper, ``plan/_worker.py``,
  which loads this file by path): ``jax._src.compiler.get_compile_options`` and the CPU
  client's ``compile_and_load`` (jax 0.10); :func:`compile_module_text`.
- ``jax.sharding.AbstractMesh``'s constructor: ``(axis_sizes, axis_names, axis_types)`` from
  jax 0.7 (0.5–0.6 took one tuple of ``(name, size)`` pairs); :func:`abstract_mesh`. Its
  ``axis_sizes``, ``axis_names`` and ``axis_types`` read the same on 0.7–0.10.
  ``jax.set_mesh`` takes a concrete Mesh only; an AbstractMesh's context is
  ``jax.sharding.use_abstract_mesh`` (0.7–0.10): :func:`mesh_context`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

PMAP_INTERNAL_AXIS = "_internal_pmap_axis_name"
"""The mesh axis name of an unnamed pmap axis in its outputs' NamedSharding (jax 0.7–0.10)."""

_SUB_BYTE_BITS = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}


def spec_entries(spec: Any) -> tuple[Any, ...]:
    """The entries of a PartitionSpec, one per dimension it names (unreduced/reduced sets are
    not entries)."""
    for name in ("partitions", "_partitions"):
        entries = getattr(spec, name, None)
        if entries is not None:
            return tuple(entries)
    return tuple(spec)


def itemsize_bits(dtype: Any) -> int | None:
    """Bits per element as XLA stores the dtype (4 for int4: two to a byte); None when JAX
    does not say (an extended dtype such as a PRNG key)."""
    import jax

    fn = getattr(jax.dtypes, "itemsize_bits", None)
    if fn is not None:
        try:
            return int(fn(np.dtype(dtype)))
        except (TypeError, ValueError, AttributeError):
            return None
    try:
        dt = np.dtype(dtype)
    except TypeError:
        return None
    return int(_SUB_BYTE_BITS.get(dt.name, dt.itemsize * 8))


@functools.cache
def pmap_source_files() -> frozenset[str]:
    """The files that define the function ``jax.pmap`` returns (for telling it apart)."""
    import importlib

    files = set()
    for name in ("jax._src.pmap", "jax._src.api"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        path = getattr(mod, "__file__", None)
        if path:
            files.add(path)
    return frozenset(files)


def is_cpp_pmap(f: Any) -> bool:
    """Whether f is jaxlib's C++ ``PmapFunction``: what ``jax.pmap`` returns on jax 0.7 (no
    ``__code__`` to read; from 0.8 pmap returns a Python function of ``jax._src.pmap``)."""
    return type(f).__name__ == "PmapFunction"


def sub_jaxprs(params: dict[str, Any]) -> Iterator[Any]:
    """The jaxprs inside an equation's parameters (a jit's, a shard_map's, a cond's, ...)."""
    from jax._src import core

    yield from core.jaxprs_in_params(params)


def is_literal(var: Any) -> bool:
    """Whether a jaxpr variable is a literal (a constant written into the program)."""
    from jax._src import core

    return isinstance(var, core.Literal)


def source_line(source_info: Any) -> str:
    """Where in the user's code an equation came from ("file.py:12 (f)")."""
    from jax._src import source_info_util

    return str(source_info_util.summarize(source_info))


def function_source(f: Callable[..., Any]) -> str:
    """How JAX names a function in its messages ("f at /path/file.py:12")."""
    from jax._src.api_util import fun_sourceinfo

    return str(fun_sourceinfo(f))


def compile_module_text(text: str, n: int) -> Any:
    """The loaded executable XLA compiles from a lowered module's text (StableHLO, as
    ``jax.jit(f).trace(...).lower().as_text()`` writes it) for the first ``n`` CPU devices, SPMD
    partitioned (Shardy when the module has ``sdy.`` annotations). Its ``hlo_modules()``,
    ``get_compiled_memory_stats()``, ``cost_analysis()`` and ``get_output_shardings()``
    are what the planning helper returns."""
    import jax
    from jax._src import compiler, xla_bridge
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]

    backend = xla_bridge.get_backend("cpu")
    devs = jax.devices("cpu")[:n]
    opts = compiler.get_compile_options(
        num_replicas=1,
        num_partitions=n,
        device_assignment=np.array(devs).reshape(1, n),
        backend=backend,
    )
    opts.executable_build_options.use_spmd_partitioning = True
    opts.executable_build_options.use_shardy_partitioner = "sdy." in text
    return backend.compile_and_load(text, xc.DeviceList(tuple(devs)), opts)


def hlo_sharding_text(proto: Any) -> str:
    """An OpSharding proto as HLO writes it ("{devices=[4,2]<=[8]}")."""
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]

    return str(xc.HloSharding.from_proto(proto))


def jit_has_out_shardings(f: Any) -> bool:
    """Whether f is a ``jax.jit(g, out_shardings=…)`` with out_shardings of its own (read from
    the private ``_jit_info``, jax 0.7–0.10). False where it is absent (a pmap'd function, or a
    JAX without it): the view then lets XLA choose, as before."""
    info = getattr(f, "_jit_info", None)
    if info is None:
        return False
    leaves = getattr(info, "out_shardings_leaves", ())
    return any(type(sh).__name__ != "UnspecifiedValue" for sh in leaves)


def abstract_mesh(sizes: tuple[int, ...], names: tuple[str, ...], types: tuple[Any, ...]) -> Any:
    """``jax.sharding.AbstractMesh`` of these axis sizes, names and ``AxisType``s: a mesh of
    positions, no devices (jax 0.7–0.10 take them positionally)."""
    import jax

    return jax.sharding.AbstractMesh(sizes, names, types)


def mesh_context(mesh: Any) -> Any:
    """The context a function runs under on this mesh: ``jax.set_mesh`` for a Mesh,
    ``jax.sharding.use_abstract_mesh`` for an AbstractMesh (a plan: tracing and lowering only)."""
    import jax

    if isinstance(mesh, jax.sharding.AbstractMesh):
        return jax.sharding.use_abstract_mesh(mesh)
    return jax.set_mesh(mesh)
