"""The one place that knows JAX's private API and what differs between JAX versions.

Every other module of the package uses only JAX's public API, and reaches through here for the
rest (tests/test_jax_adapter.py enforces it). What differs, and where it changed:

- ``PartitionSpec.partitions``: public from jax 0.10; before, the entries are ``_partitions``
  (0.7–0.9). :func:`spec_entries` reads whichever exists, else iterates the spec.
- ``jax.dtypes.itemsize_bits``: from jax 0.8; below, :func:`itemsize_bits` derives the bits of
  the sub-byte dtypes (int4 / uint4 / float4_e2m1fn: 4, int2 / uint2: 2) from their names.
- pmap's implementation: ``jax._src.pmap`` from jax 0.8 (its ``infer_params`` returns the
  call info and mesh on 0.8, a cached shard_map with ``in_specs_flat`` from 0.9); before,
  pmap lives in
  ``jax._src.api`` and returns jaxlib's C++ ``PmapFunction`` (:func:`is_cpp_pmap`).
  :func:`pmap_source_files` names both files, whichever exist.
- ``PartitionSpec.__eq__``: before jax 0.10 a spec equals the tuple of its entries
  (``P() == ()``, ``P("x") == ("x",)``); from 0.10 it equals only specs. The package never
  compares a spec with a tuple or list (``views/function.py``'s ``_empty_seq``: P() is
  replicated outputs, not "no out_specs").
- ``jax.lax.pcast``: missing in jax 0.7.2. The package does not call it.
- The default axis types of a mesh made without ``axis_types=``: ``jax.make_mesh`` Auto in
  0.7–0.8 (0.8 warns it will change), Explicit from 0.9 (measured on 0.7.2, 0.8.3, 0.9.2 and
  0.10.2); ``jax.sharding.AbstractMesh`` Auto up to 0.10 and Explicit from 0.11 (where a plan's
  sharded contraction is then refused, as JAX refuses it); ``jax.sharding.Mesh`` Auto.
  :func:`default_axis_type` measures it for the running JAX, and :func:`axis_types` spells a
  mesh's ``axis_types=`` for tests, notebooks and the README. The package always passes
  ``axis_types=``, so its meshes are the same on every version.
- pmap's name for an axis the user did not name: ``_internal_pmap_axis_name`` in jax 0.10,
  the text of a ``_TempAxisName`` (``"<axis 0x7f…>"``) in 0.8–0.9, and the object itself on
  0.7 (where this package names it ``_internal_pmap_axis_name``): :func:`is_unnamed_pmap_axis`.
- ``jax.device_put`` of an array typed on Explicit axes (``float32[4@x,8@y]``): jax 0.7 checks
  the array's own spec against the target mesh (``ValueError: Resource axis: x … not found in
  mesh``), from 0.8 the target's spec; :func:`device_put` retypes such an array on Auto axes
  first (no copy) where JAX refuses.
- The order ``jax.typeof`` writes unreduced/reduced axes in: mesh order from jax 0.10, the
  spec's frozenset order before (:func:`typeof_axes`).
- pmap's outputs: a ``PmapSharding`` on jax 0.7, a NamedSharding over a one-axis mesh from
  0.8 (:func:`pmap_sharding_named` reads the former as the latter).
- Private but stable across 0.7–0.10, kept here so one file lists them: jaxpr walking
  (``jax._src.core.jaxprs_in_params``, ``core.Literal``), source locations
  (``source_info_util.summarize``, ``api_util.fun_sourceinfo``), and the axis name pmap gives
  an unnamed axis (``_internal_pmap_axis_name``).
- Compiling a lowered module's text for N devices (the planning helper, ``plan/_worker.py``,
  which loads this package by path): ``jax._src.compiler.get_compile_options`` and the CPU
  client's ``compile_and_load`` (jax 0.10); :func:`compile_module_text`.
- ``jax.sharding.AbstractMesh``'s constructor: ``(axis_sizes, axis_names, axis_types)`` from
  jax 0.7 (0.5–0.6 took one tuple of ``(name, size)`` pairs); :func:`abstract_mesh`. Its
  ``axis_sizes``, ``axis_names`` and ``axis_types`` read the same on 0.7–0.10.
  ``jax.set_mesh`` takes a concrete Mesh only; an AbstractMesh's context is
  ``jax.sharding.use_abstract_mesh`` (0.7–0.10): :func:`mesh_context`.
- A TPU plan's mesh (``shardwidget.tpu_mesh``) is an AbstractMesh whose ``abstract_device``
  (``jax._src.mesh.AbstractDevice``, jax 0.8+; ``jax.jit(...).trace(...).lower()`` takes its
  platform) names the TPU and the topology: :func:`tpu_abstract_device`. The TPU helper
  (``plan/_tpu_worker.py``, which loads this package by path) compiles a lowered module's text with
  a topology's compile-only client as ``jax/_src/compiler.py`` does:
  :func:`compile_module_for_devices`.

The ``jax._src`` imports sit inside the functions that use them (the one kind of import inside a
function tests/test_structure.py allows here): a private module one JAX version lacks then fails
only the function that reads it, not the package's import.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import jax
import numpy as np
from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec
from numpy.typing import DTypeLike

# Compiling a lowered module's text for N devices or a TPU topology (the planning helpers), in
# _jax/compile.py
from .compile import compile_module_for_devices as compile_module_for_devices
from .compile import compile_module_text as compile_module_text
from .compile import hlo_sharding_text as hlo_sharding_text
from .compile import kept_inputs as kept_inputs
from .compile import topology_abstract_device as topology_abstract_device
from .compile import tpu_abstract_device as tpu_abstract_device

# Shardy's propagation in jaxlib's MLIR (the "why this collective" causes), in _jax/shardy.py
from .shardy import PEAK_DUMP as PEAK_DUMP
from .shardy import SHARDY_DUMP as SHARDY_DUMP
from .shardy import SHARDY_PIPELINE as SHARDY_PIPELINE
from .shardy import shardy_beside_compiles as shardy_beside_compiles
from .shardy import shardy_missing as shardy_missing
from .shardy import shardy_ops as shardy_ops

PMAP_INTERNAL_AXIS = "_internal_pmap_axis_name"
"""The mesh axis name of an unnamed pmap axis in its outputs' NamedSharding (jax 0.7–0.10)."""

_TEMP_AXIS = re.compile(r"<axis 0x[0-9a-fA-F]+>")

_SUB_BYTE_BITS = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}


def spec_entries(spec: PartitionSpec) -> tuple[Any, ...]:
    """The entries of a PartitionSpec, one per dimension it names (unreduced/reduced sets are
    not entries)."""
    for name in ("partitions", "_partitions"):
        entries = getattr(spec, name, None)
        if entries is not None:
            return tuple(entries)
    return tuple(spec)


def itemsize_bits(dtype: DTypeLike) -> int | None:
    """Bits per element as XLA stores the dtype (4 for int4: two to a byte); None when JAX
    does not say (an extended dtype such as a PRNG key)."""
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


def is_unnamed_pmap_axis(name: object) -> bool:
    """Whether a mesh axis name is the one pmap gives an axis the user did not name:
    ``_internal_pmap_axis_name`` (jax 0.10; this package's name for it on 0.7), or the text of a
    ``_TempAxisName`` (``"<axis 0x7f…>"``, jax 0.8–0.9), or such an object itself."""
    if type(name).__name__ == "_TempAxisName":
        return True
    return isinstance(name, str) and (
        name == PMAP_INTERNAL_AXIS or _TEMP_AXIS.fullmatch(name) is not None
    )


def unnamed_pmap_axis(names: Iterable[Any]) -> Any:
    """The first of ``names`` that is pmap's unnamed axis (:func:`is_unnamed_pmap_axis`), or
    None."""
    return next((a for a in names if is_unnamed_pmap_axis(a)), None)


def typeof_axes(spec_set: Iterable[object], mesh_order: tuple[str, ...]) -> tuple[str, ...]:
    """A spec's unreduced (or reduced) set in the order ``jax.typeof`` writes it
    (``{U:(x,y)}``): () where that is ``mesh_order`` (jax 0.10: ``core.order_wrt_mesh``);
    before, the order the spec's own set iterates in."""
    from jax._src import core

    if hasattr(core, "order_wrt_mesh") or len(mesh_order) < 2:
        return ()
    return tuple(str(a) for a in spec_set)


def pmap_sharding_named(sharding: Any, ndim: int) -> Any | None:
    """The NamedSharding a ``PmapSharding`` stands for (what ``jax.pmap`` gives its outputs on
    jax 0.7; a NamedSharding from 0.8): a one-axis mesh of its devices named
    PMAP_INTERNAL_AXIS, the mapped dimension (``Chunked`` or ``Unstacked`` in its
    ``sharding_spec``) on it. None for any other sharding, or a spec this does not read (the
    caller checks the blocks against ``devices_indices_map``)."""
    if type(sharding).__name__ != "PmapSharding":
        return None

    entries: list[Any] = []
    for s in sharding.sharding_spec.sharding:
        kind = type(s).__name__
        if kind == "NoSharding":
            entries.append(None)
        elif kind in ("Chunked", "Unstacked"):
            entries.append(PMAP_INTERNAL_AXIS)
        else:
            return None
    if len(entries) != ndim or entries.count(PMAP_INTERNAL_AXIS) != 1:
        return None
    mesh = Mesh(np.array(list(sharding.devices.flat)), (PMAP_INTERNAL_AXIS,))
    spec = PartitionSpec(*entries)
    return NamedSharding(mesh, spec, memory_kind=sharding.memory_kind)


def is_cpp_pmap(f: Callable[..., Any]) -> bool:
    """Whether f is jaxlib's C++ ``PmapFunction``: what ``jax.pmap`` returns on jax 0.7 (no
    ``__code__`` to read; from 0.8 pmap returns a Python function of ``jax._src.pmap``)."""
    return type(f).__name__ == "PmapFunction"


def _pmap_axis(f: Any) -> Any:
    """The axis name a C++ PmapFunction (jax 0.7) maps over: the user's, or PMAP_INTERNAL_AXIS
    for an unnamed axis (pmap's own ``_TempAxisName``, which newer JAX also renames so)."""
    from jax._src import core

    axis = f._axis_name
    return PMAP_INTERNAL_AXIS if isinstance(axis, core._TempAxisName) else axis


def _cpp_pmap_call(
    f: Any, args: Any, kwargs: dict[str, Any], check: bool = True
) -> tuple[Any, Any, Any]:
    """pmap's call info (jax 0.7's ``PmapCallInfo``) and its mesh for f(*args, **kwargs);
    ValueError in pmap's words when the mapped axis is larger than the devices (``check``;
    else the mesh has the devices there are, and the compile says so)."""
    p = f._prepare_pmap(tuple(args), dict(kwargs))
    devs = list(jax.devices() if p.devices is None else p.devices)
    n = int(p.local_axis_size)
    if check and n > len(devs):
        raise ValueError(
            f"compiling computation that requires {n} logical devices, but only {len(devs)} "
            f"XLA devices are available (num_replicas={n})"
        )
    axis = _pmap_axis(f)
    return p, jax.sharding.Mesh(np.array(devs[:n]), (axis,)), axis


def _closure(fn: Callable[..., Any]) -> dict[str, Any]:
    """A function's free variables by name (what its closure cells hold)."""
    cells = [c.cell_contents for c in fn.__closure__ or ()]
    return dict(zip(fn.__code__.co_freevars, cells, strict=True))


def pmap_spec(axis: object, ax: int | None) -> Any:
    """The PartitionSpec pmap gives an argument or output mapped at dimension ``ax`` over
    ``axis`` (``P()`` for ``None``: the same whole value on each device)."""
    if ax is None:
        return PartitionSpec()
    return PartitionSpec(*([None] * ax), axis)


def pmap_params(
    f: Callable[..., Any], args: Any, kwargs: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], list[Any]]:
    """What ``jax.pmap`` does with f(*args, **kwargs): its one-axis mesh, one PartitionSpec
    per flat argument (the mapped dimension on pmap's axis; ``P()`` for ``in_axes=None``) and
    the flat arguments (static_broadcasted_argnums left out). Read from pmap's private
    ``infer_params`` closure (jax 0.8+) or the C++ PmapFunction's ``_prepare_pmap`` (0.7).
    Raises what pmap raises for arguments it refuses."""
    if is_cpp_pmap(f):
        p, mesh, axis = _cpp_pmap_call(f, args, kwargs, check=False)
        specs = tuple(pmap_spec(axis, ax) for ax in p.in_axes_flat)
        return mesh, specs, list(p.flat_args)
    infer = _closure(f)["infer_params"]
    inner = _closure(infer)
    if "out_axes_flat" in inner:  # jax 0.9+: (cached shard_map, jitted, flat args, …)
        res = infer(*args, **kwargs)
        return res[0].mesh, tuple(res[0].in_specs_flat), list(res[2])
    # jax 0.8: its infer_params caches a shard_map whose output tree is only known once run,
    # so calling it here would break the next call; pmap's call info is read as it reads it.
    from jax._src import pmap as pmap_impl

    prepare: Any = pmap_impl.__dict__["_prepare_pmap"]  # (0.8's signature, not 0.10's)
    p = prepare(
        inner["f"],
        inner["in_axes"],
        inner["out_axes"],
        inner["static_broadcasted_tuple"],
        inner["donate_tuple"],
        inner["devices"],
        inner["backend"],
        inner["axis_size"],
        args,
        kwargs,
    )
    axis = inner["axis_name"]
    devices: Any = pmap_impl.__dict__["_get_devices"](p, inner["backend"])
    mesh = jax.sharding.Mesh(devices, (axis,))
    return mesh, tuple(pmap_spec(axis, a) for a in p.in_axes_flat), list(p.flat_args)


def pmap_compilable(f: Any) -> Callable[..., Any]:
    """A function that computes what the pmap'd f does and that ``jax.jit`` can trace and
    compile on pmap's mesh: f itself from jax 0.8 (pmap is ``jit(shard_map)`` there); on jax
    0.7, whose C++ pmap cannot be compiled under jit as one SPMD program, the same body as
    ``shard_map`` over pmap's mesh (as 0.7's own ``jax_pmap_shmap_merge`` path builds it)."""
    if not is_cpp_pmap(f):
        return cast(Callable[..., Any], f)  # (a pmap'd function)
    from jax._src import shard_map

    def as_shard_map(*args: Any, **kwargs: Any) -> Any:
        p, mesh, axis = _cpp_pmap_call(f, args, kwargs)
        in_axes = list(p.in_axes_flat)

        def body(*xs: Any) -> Any:  # pmap's body sees one slice: the mapped dimension dropped
            xs = tuple(
                x if a is None else jax.lax.squeeze(x, [a])
                for x, a in zip(xs, in_axes, strict=True)
            )
            outs = p.flat_fun.call_wrapped(*xs)
            return tuple(
                o if a is None else jax.lax.expand_dims(o, [a])
                for o, a in zip(outs, p.out_axes_thunk(), strict=True)
            )

        mapped = shard_map._shard_map(
            body,
            mesh=mesh,
            in_specs=tuple(pmap_spec(axis, a) for a in in_axes),
            out_specs=lambda: tuple(pmap_spec(axis, a) for a in p.out_axes_thunk()),
            axis_names=set(mesh.axis_names),
            check_vma=False,
        )
        outs = mapped(*p.flat_args)  # (its trace fills p.out_tree)
        return jax.tree_util.tree_unflatten(p.out_tree(), outs)

    as_shard_map.__name__ = getattr(f, "__name__", "f")
    wrapped = getattr(f, "__wrapped__", None)
    as_shard_map.__wrapped__ = wrapped  # type: ignore[attr-defined]  # (functools' convention)
    return as_shard_map


def sub_jaxprs(params: dict[str, Any]) -> Iterator[Any]:
    """The jaxprs inside an equation's parameters (a jit's, a shard_map's, a cond's, ...)."""
    from jax._src import core

    yield from core.jaxprs_in_params(params)


def is_literal(var: object) -> bool:
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


def device_assignment(sharding: jax.sharding.Sharding) -> list[Any]:
    """The devices of a sharding in XLA's order (the order its compiled HLO numbers them:
    the private ``_device_assignment``, jax 0.7–0.10; ``device_set`` is unordered)."""
    return list(sharding._device_assignment)


def hlo_sharding(sharding: jax.sharding.Sharding) -> Any:
    """The sharding's ``xla_client.HloSharding`` (private ``_hlo_sharding``: GSPMDSharding,
    jax 0.7–0.10), or None for a sharding without one."""
    return getattr(sharding, "_hlo_sharding", None)


def prng_key_shape(dtype: DTypeLike) -> tuple[int, ...] | None:
    """The key data's shape of a PRNG key dtype (the private ``dtype._impl.key_shape``,
    jax 0.7–0.10: (2,) for threefry), or None for another dtype."""
    impl = getattr(dtype, "_impl", None)
    return None if impl is None else tuple(int(k) for k in impl.key_shape)


def jit_user_in_shardings(f: Callable[..., Any]) -> bool:
    """Whether a ``jax.jit`` function was given in_shardings of its own (the private
    ``_jit_info.user_specified_in_shardings``); True where JAX does not say (check anyway)."""
    return bool(getattr(getattr(f, "_jit_info", None), "user_specified_in_shardings", True))


def jit_has_out_shardings(
    f: Callable[..., Any], args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
) -> bool:
    """Whether f is a ``jax.jit(g, out_shardings=…)`` with out_shardings of its own.

    Read first from f's own jaxpr for (args, kwargs): one jit equation whose ``out_shardings``
    parameter holds a sharding (not UnspecifiedValue) for some output: the structure JAX
    traces, on every version. Then, where the trace fails, from the private ``_jit_info``
    (jax 0.7–0.10). False otherwise (a pmap'd function, …): the view then lets XLA choose.
    (A view that lost f's out_shardings showed the output of a constraint onto a sub-mesh as
    the constraint's P('x') with no collective, where JAX compiles f's P(None) and an
    all-gather.)"""
    try:
        eqns = jax.make_jaxpr(f)(*args, **(kwargs or {})).jaxpr.eqns
    except Exception:  # (f refuses these arguments, …): what the jit object says, if anything
        eqns = None
    if eqns is not None:
        if len(eqns) != 1 or "out_shardings" not in eqns[0].params:
            return False
        return any(_specified(sh) for sh in eqns[0].params["out_shardings"])
    info = _jit_info_of(f)
    if info is None:
        return False
    return any(_specified(sh) for sh in getattr(info, "out_shardings_leaves", ()))


def _specified(sh: object) -> bool:
    return sh is not None and type(sh).__name__ != "UnspecifiedValue"


def _jit_info_of(f: Callable[..., Any]) -> Any:
    """A jit object's private ``_jit_info`` (jax 0.7–0.10), None where it has none."""
    return getattr(f, "_jit_info", None)


def abstract_mesh(sizes: tuple[int, ...], names: tuple[str, ...], types: tuple[Any, ...]) -> Any:
    """``jax.sharding.AbstractMesh`` of these axis sizes, names and ``AxisType``s: a mesh of
    positions, no devices (jax 0.7–0.10 take them positionally)."""
    return jax.sharding.AbstractMesh(sizes, names, types)


def abstract_mesh_on(
    sizes: tuple[int, ...], names: tuple[str, ...], types: tuple[Any, ...], device: object
) -> Any:
    """:func:`abstract_mesh` with an ``abstract_device`` (:func:`tpu_abstract_device`) where
    this JAX takes one (0.8+), else without."""
    if device is None:
        return abstract_mesh(sizes, names, types)
    try:
        return jax.sharding.AbstractMesh(sizes, names, types, abstract_device=device)
    except TypeError:  # a JAX whose AbstractMesh takes no device
        return abstract_mesh(sizes, names, types)


def mesh_context(mesh: Mesh | AbstractMesh) -> Any:
    """The context a function runs under on this mesh: ``jax.set_mesh`` for a Mesh,
    ``jax.sharding.use_abstract_mesh`` for an AbstractMesh (a plan: tracing and lowering only)."""
    if isinstance(mesh, jax.sharding.AbstractMesh):
        return jax.sharding.use_abstract_mesh(mesh)
    return jax.set_mesh(mesh)


def one_trace_for_layouts() -> bool:
    """Whether ``jax.jit(f, in_shardings=...)`` traced from shapes alone lowers the module
    that f traced with the layout in its arguments' types lowers (the source locations
    aside): from jax 0.8; jax 0.7 writes extra scalar broadcasts into one of the two."""
    return tuple(int(v) for v in re.findall(r"\d+", jax.__version__)[:2]) >= (0, 8)


@contextlib.contextmanager
def quiet_donation() -> Iterator[None]:
    """JAX's "Some donated buffers were not usable" warning held back (lowering and calling a
    function with donated inputs): the view reads what a donation saves from the compile
    itself (its alias bytes and peak), and says so there."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Some donated buffers were not usable")
        yield


def device_put(x: object, sharding: object) -> Any:
    """``jax.device_put(x, sharding)`` (one array and sharding, or lists of them). jax 0.7 checks
    an array typed on Explicit axes (``float32[4@x,8@y]``) by its own spec on the target mesh:
    moving it onto a mesh without those axes raises ``ValueError: Resource axis: x … not found
    in mesh`` (from jax 0.8 the target's spec is checked, and the move works). Where JAX
    refuses, each such array is first retyped on its own mesh with Auto axes (the same devices,
    spec and buffers: no copy), then moved; a refusal for another reason is raised again."""
    try:
        return jax.device_put(x, sharding)
    except ValueError:
        xs = x if isinstance(x, list) else [x]
        retyped = [_auto_typed(a) for a in xs]
        if all(r is a for r, a in zip(retyped, xs, strict=True)):
            raise
        return jax.device_put(retyped if isinstance(x, list) else retyped[0], sharding)


def _auto_typed(x: object) -> Any:
    """x on its own mesh with every axis Auto (no copy), or x itself when it has no Explicit
    axis (or is not an array on a NamedSharding)."""

    sharding = getattr(x, "sharding", None)
    if not isinstance(x, jax.Array) or not isinstance(sharding, NamedSharding):
        return x
    mesh = sharding.mesh
    types = tuple(getattr(mesh, "axis_types", ()))
    if AxisType.Explicit not in types:
        return x
    auto = mesh.update(axis_types=(AxisType.Auto,) * len(types))
    return jax.device_put(x, sharding.update(mesh=auto))


# ------------------------------------------------------------------ compiles and memory kinds
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
"""The jax.monitoring duration event JAX records once per XLA compile (``jax._src.dispatch``'s
BACKEND_COMPILE_EVENT, the same name in jax 0.7–0.10; a cached call records none)."""


_ACTIVE_COUNTS: list[CompileCount] = []
_LISTENING: list[bool] = []


def _on_duration(event: str, duration_secs: float, **kw: str | int) -> None:
    if event == BACKEND_COMPILE_EVENT:
        for c in _ACTIVE_COUNTS:
            c.n += 1
            c.names.append(str(kw.get("fun_name", "")))
            c.seconds += duration_secs


class CompileCount:
    """Counts XLA compiles while active (``with CompileCount() as c: ...; c.n``), from JAX's own
    monitoring event: tests and benchmarks say how many programs an update compiled."""

    def __init__(self) -> None:
        self.n = 0
        self.names: list[str] = []  # each compile's function name, as JAX reports it
        self.seconds = 0.0  # XLA's compile time, all compiles together

    def of(self, name: str) -> int:
        """How many compiles were of a function whose name contains ``name``."""
        return sum(name in n for n in self.names)

    def __enter__(self) -> CompileCount:
        if not _LISTENING:  # one listener for the process: JAX keeps every one registered
            jax.monitoring.register_event_duration_secs_listener(_on_duration)
            _LISTENING.append(True)
        _ACTIVE_COUNTS.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE_COUNTS.remove(self)


def to_device_memory(x: object) -> Any:
    """Inside a jit: ``x`` moved to the device's own memory kind (a value in ``pinned_host`` or
    ``unpinned_host`` cannot be computed on there: XLA refuses "memory_space of all inputs passed
    to select_n must be the same"). ``jax.memory.Space.Device`` from jax 0.8; before, JAX's
    TransferToMemoryKind("device")."""
    space = getattr(getattr(jax, "memory", None), "Space", None)
    if space is not None:
        return jax.device_put(x, space.Device)
    from jax._src.sharding_impls import (  # type: ignore[attr-defined]  # jax 0.7 only
        TransferToMemoryKind,
    )

    return jax.device_put(x, TransferToMemoryKind("device"))


# ------------------------------------------------------------------ axis-type defaults
MESH_CONSTRUCTORS = ("make_mesh", "AbstractMesh", "Mesh")


@functools.cache
def default_axis_type(constructor: str = "make_mesh") -> Any:
    """The ``AxisType`` the running JAX gives every axis of a mesh made by ``constructor``
    ("make_mesh", "AbstractMesh" or "Mesh") without ``axis_types=`` (module docstring: it
    changed between versions), measured on a one-axis mesh of one device."""
    if constructor not in MESH_CONSTRUCTORS:
        raise ValueError(f"constructor must be one of {MESH_CONSTRUCTORS}; got {constructor!r}")
    dev = jax.devices()[0]
    with warnings.catch_warnings():  # jax 0.8 warns that make_mesh's default will change
        warnings.simplefilter("ignore", DeprecationWarning)
        if constructor == "make_mesh":
            mesh: Any = jax.make_mesh((1,), ("a",), devices=[dev])
        elif constructor == "AbstractMesh":
            mesh = jax.sharding.AbstractMesh((1,), ("a",))
        else:
            mesh = jax.sharding.Mesh(np.array([dev], dtype=object), ("a",))
    return next(iter(mesh.axis_types))


def axis_types(kind: str, n: int) -> tuple[Any, ...]:
    """``axis_types=`` for a mesh of n axes, all of one kind ("auto", "explicit", "manual"):
    what a test, notebook or README snippet passes so its meaning is the same on every JAX."""
    kinds = {"auto": "Auto", "explicit": "Explicit", "manual": "Manual"}
    if kind not in kinds:
        raise ValueError(f"kind must be one of {sorted(kinds)}; got {kind!r}")
    return (getattr(jax.sharding.AxisType, kinds[kind]),) * n
