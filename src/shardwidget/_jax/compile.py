"""Compiling a lowered module's text outside ``jax.jit`` (private JAX: part of the adapter,
:mod:`shardwidget._jax`): for N CPU devices (the planning helper, ``plan/_worker.py``) and for a
TPU topology's compile-only client (the TPU helper, ``plan/_tpu_worker.py``), as
``jax/_src/compiler.py`` does; a TPU plan's abstract device; an OpSharding as HLO writes it."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import numpy as np


def compile_module_text(text: str, n: int, options: dict[str, Any] | None = None) -> Any:
    """The loaded executable XLA compiles from a lowered module's text (StableHLO, as
    ``jax.jit(f).trace(...).lower().as_text()`` writes it) for the first ``n`` CPU devices, SPMD
    partitioned (Shardy when the module has ``sdy.`` annotations). Its ``hlo_modules()``,
    ``get_compiled_memory_stats()``, ``cost_analysis()`` and ``get_output_shardings()``
    are what the planning helper returns. ``options``: XLA compiler options, as
    ``Lowered.compile(compiler_options=...)`` takes them (e.g. :data:`SHARDY_DUMP`)."""
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]  # (private: not in jaxlib's stubs)

    backend = xla_bridge.get_backend("cpu")
    devs = jax.devices("cpu")[:n]
    opts = _spmd_options(text, devs, backend, options)
    return backend.compile_and_load(text, xc.DeviceList(tuple(devs)), opts)


def _spmd_options(
    text: str, devices: list[Any], backend: object, options: dict[str, Any] | None = None
) -> Any:
    """Compile options for one replica of len(devices) partitions on these devices, SPMD
    partitioned (Shardy where the module has ``sdy.`` annotations), with XLA's ``options``."""
    from jax._src import compiler

    n = len(devices)
    opts = compiler.get_compile_options(
        num_replicas=1,
        num_partitions=n,
        device_assignment=np.array(devices).reshape(1, n),
        backend=backend,
        env_options_overrides=options or None,
    )
    opts.executable_build_options.use_spmd_partitioning = True
    opts.executable_build_options.use_shardy_partitioner = "sdy." in text
    return opts


def compile_module_for_devices(
    text: str, devices: list[Any], options: dict[str, Any] | None = None
) -> Any:
    """The executable a compile-only client (a TPU topology's, from
    ``jax.experimental.topologies.get_topology_desc``) compiles from a lowered module's text for
    ``devices`` in this order (partition i on devices[i]), SPMD partitioned with Shardy where the
    module has ``sdy.`` annotations. As ``jax/_src/compiler.py`` does for a
    ``CompileOnlyPyClient``: the text parsed into an ``ir.Module`` in JAX's own MLIR context,
    keyword arguments. Not loaded: it has ``hlo_modules()``, ``get_compiled_memory_stats()``,
    ``cost_analysis()`` and ``get_output_shardings()``, and never runs. ``options``: XLA
    compiler options (:data:`SHARDY_DUMP`)."""
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]  # (private: not in jaxlib's stubs)
    from jax._src.lib.mlir import ir  # type: ignore[attr-defined]  # (private: not in jaxlib's stubs)

    client = devices[0].client
    opts = _spmd_options(text, devices, client, options)
    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        return client.compile(
            module, executable_devices=xc.DeviceList(tuple(devices)), compile_options=opts
        )


def tpu_abstract_device(
    device_kind: str, num_cores: int | None, topology: str, positions: tuple[Any, ...] = ()
) -> Any:
    """The ``abstract_device`` of a TPU plan's AbstractMesh: platform "tpu" (so JAX lowers
    for the TPU), the chip's device kind, ``topology`` (a key naming the topology and the
    placement) so that two TPU meshes of one shape on different topologies stay two meshes
    (AbstractMesh is interned by its fields), and ``positions``: each mesh position's
    ((x, y, z), core on chip, slice), which the model layer reads without knowing plans. None
    where this JAX has no AbstractDevice."""
    return topology_abstract_device("tpu", device_kind, num_cores, topology, positions)


def topology_abstract_device(
    platform: str,
    device_kind: str,
    num_cores: int | None,
    topology: str,
    positions: tuple[Any, ...] = (),
    links: tuple[str, ...] = (),
    domain_hosts: int = 0,
) -> Any:
    """:func:`tpu_abstract_device` for any platform ("tpu"; "cuda" for a GPU plan, whose
    positions are ((GPU on its host, host in its slice, 0), 0, slice)). ``links``: what a step
    along each mesh axis travels over, in words, in axis order (a GPU plan: "NVLink (within a
    host)", "network (…, across hosts)"); ``domain_hosts``: hosts one NVLink domain joins
    where it spans several (a GB200 NVL72: 18), else 0. The model layer reads both without
    knowing plans. None where this JAX has no AbstractDevice."""
    try:
        from jax._src.mesh import AbstractDevice
    except ImportError:  # jax 0.7: AbstractMesh carries no device
        return None
    device = _topology_device(AbstractDevice)
    return device(device_kind, num_cores, platform, topology, positions, links, domain_hosts)


@functools.cache
def _topology_device(base: Any) -> Any:
    @dataclasses.dataclass(frozen=True, slots=True)
    class TopologyDevice(base):  # type: ignore[misc]  # (base: JAX's private AbstractDevice)
        topology: str = ""
        positions: tuple[Any, ...] = dataclasses.field(default=(), repr=False)
        links: tuple[str, ...] = dataclasses.field(default=(), repr=False)
        domain_hosts: int = 0

    return TopologyDevice


def hlo_sharding_text(proto: object) -> str:
    """An OpSharding proto as HLO writes it ("{devices=[4,2]<=[8]}")."""
    from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]  # (private: not in jaxlib's stubs)

    return str(xc.HloSharding.from_proto(proto))


def kept_inputs(lowered: jax.stages.Lowered, n: int) -> list[bool] | None:
    """Per flattened input (n of them), whether the lowered program keeps it as a parameter (a
    jitted function's unused inputs are dropped); None where this JAX does not say."""
    try:
        kept = lowered._lowering.compile_args["kept_var_idx"]
    except (AttributeError, KeyError, TypeError):
        return None
    return [i in kept for i in range(n)]
