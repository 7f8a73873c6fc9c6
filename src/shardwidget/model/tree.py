"""A pytree of arrays as plain data: its array leaves (path, shape, dtype, sharding, logical axis
names) and its static leaves. Imports JAX, never widget code; flax is never imported (its
variables are recognised by their methods).

Leaves are what ``jax.tree_util.tree_flatten_with_path`` gives, in its order, with their paths as
``jax.tree_util.keystr`` writes them. A leaf is an array leaf when it is a ``jax.Array``, a
``jax.ShapeDtypeStruct`` (an abstract leaf, as ``jax.eval_shape`` gives: no data, never
allocated) or a numpy array (laid out where ``jax.device_put`` would place it, as a function
view lays numpy inputs out); every other leaf (int, str, …) is static: listed, never laid out.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from . import spec as spec_mod
from . import tree_input
from .layout import Layout, itemsize_bits_of, layout_of_sharding
from .mesh import is_planned, mesh_sizes

Names = tuple[str | None, ...]  # a logical axis name (or None) per dimension


@dataclass(frozen=True)
class TreeLeaf:
    """One array leaf of a tree, laid out by ``sharding``.

    Attributes:
        path: the leaf's path, as ``jax.tree_util.keystr`` writes it.
        index: its position among all the tree's leaves (static ones included).
        shape: the global shape.
        dtype: the numpy dtype (``str(leaf.dtype)``: "float32", "int4", …).
        sharding: the jax Sharding it is (or would be) laid out by.
        abstract: True for a ShapeDtypeStruct (no data, no statistics).
        placed: False for a ShapeDtypeStruct without a sharding: it is shown on the default
            device, where ``jax.device_put`` / ``jit`` would put it.
        names: logical axis names per dimension (flax ``nnx.with_partitioning`` metadata), or
            None when the leaf carries none.
        itemsize_bits: bits per element (4 for int4: packed two to a byte, as XLA stores it).
    """

    path: str
    index: int
    shape: tuple[int, ...]
    dtype: Any
    sharding: Any = field(repr=False)
    abstract: bool = False
    placed: bool = True
    names: Names | None = None
    itemsize_bits: int = field(default=0, repr=False)

    @functools.cached_property
    def layout(self) -> Layout:
        """The same :class:`~shardwidget.Layout` the array view shows (made on first use: a
        tree of thousands of leaves lays out from shardings alone, then draws few)."""
        return layout_of_sharding(self.sharding, self.shape, self.dtype)

    @property
    def spec(self) -> Any:
        """The PartitionSpec, as JAX holds it (``sharding.spec``: a spec shorter than the rank
        leaves the rest replicated); for a sharding without one, the spec of its layout's mesh
        where one describes it, else None (one device, or a custom layout)."""
        if isinstance(self.sharding, NamedSharding):
            return self.sharding.spec
        lay = self.layout
        return spec_mod.to_partition_spec(lay.spec) if lay.spec is not None else None

    @property
    def size(self) -> int:
        """Elements of the whole leaf (math.prod: numpy's costs ~40 µs a call, and a rules
        change of 5,000 leaves asks every leaf)."""
        return math.prod(int(d) for d in self.shape)

    @property
    def logical_bytes(self) -> int:
        """Bytes of the whole leaf, counted once (int4 packed)."""
        return -(-self.size * self.itemsize_bits // 8)

    def with_sharding(self, sharding: jax.sharding.Sharding) -> TreeLeaf:
        """This leaf laid out by another sharding."""
        return TreeLeaf(
            self.path,
            self.index,
            self.shape,
            self.dtype,
            sharding,
            self.abstract,
            True,
            self.names,
            self.itemsize_bits,
        )


@dataclass(frozen=True)
class StaticLeaf:
    """A leaf that is not an array (an int, a string, a numpy array, …): listed, never laid out.

    Attributes:
        path: as ``jax.tree_util.keystr`` writes it; index: its position among all leaves;
        kind: its type's name; text: a short repr.
    """

    path: str
    index: int
    kind: str
    text: str


@dataclass(frozen=True)
class Flat:
    """A tree taken apart: its structure, every leaf in order, and the array leaves."""

    treedef: Any = field(repr=False)
    values: tuple[Any, ...] = field(repr=False)  # every leaf as given (the user's own objects)
    leaves: tuple[TreeLeaf, ...]
    static: tuple[StaticLeaf, ...]


def is_array_leaf(x: object) -> bool:
    """A jax.Array, a ShapeDtypeStruct or a numpy array: what a tree view lays out."""
    return tree_input.is_array_leaf(x)


def _is_flax_variable(x: object) -> bool:
    """A flax variable (nnx.Variable, or a linen Partitioned box), without importing flax."""
    mod = type(x).__module__ or ""
    return mod.startswith("flax.") and (hasattr(x, "get_metadata") or hasattr(x, "names"))


def _names_of(var: object) -> Names | None:
    """The logical axis names a flax variable carries: nnx ``out_sharding`` (flax ≥ 0.11) or
    ``sharding`` / ``sharding_names`` (older nnx), or linen ``Partitioned.names``."""
    meta: dict[str, Any] = {}
    if hasattr(var, "get_metadata"):
        try:
            meta = dict(var.get_metadata())
        except Exception:  # a variable type whose metadata cannot be read: no names
            meta = {}
    for key in ("out_sharding", "sharding_names", "sharding"):
        names = meta.get(key)
        if names:
            break
    else:
        names = getattr(var, "names", None)
    if not isinstance(names, tuple | list) or not all(
        n is None or isinstance(n, str) for n in names
    ):
        return None
    return tuple(names)


def logical_names(tree: object) -> dict[str, Names]:
    """Path of each array leaf under a flax variable -> that variable's logical axis names."""
    found: dict[str, Names] = {}
    nodes, _ = jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_flax_variable)
    for path, node in nodes:
        if not _is_flax_variable(node):
            continue
        names = _names_of(node)
        if names is None:
            continue
        for sub, leaf in jax.tree_util.tree_flatten_with_path(node)[0]:
            if is_array_leaf(leaf) and len(leaf.shape) == len(names):
                found[jax.tree_util.keystr((*path, *sub))] = names
    return found


def _default_sharding() -> Any:
    return jax.sharding.SingleDeviceSharding(jax.devices()[0])


def flatten(tree: object) -> Flat:
    """The tree taken apart; ValueError naming the path when it holds a cycle, nests too deep
    or has dict keys JAX cannot sort (:func:`.tree_input.check`)."""
    tree_input.check(tree)
    try:
        pairs, treedef = jax.tree_util.tree_flatten_with_path(tree)
    except (RecursionError, SystemError) as e:  # a cycle or depth in a node of its own type
        raise ValueError(f"JAX cannot flatten this tree (a cycle, or nested too deep): {e}") from e
    names = logical_names(tree)
    leaves: list[TreeLeaf] = []
    static: list[StaticLeaf] = []
    bits: dict[Any, int] = {}
    for i, (path, x) in enumerate(pairs):
        key = jax.tree_util.keystr(path)
        if not is_array_leaf(x):
            static.append(StaticLeaf(key, i, type(x).__name__, _short(x)))
            continue
        if isinstance(x, jax.Array) and x.is_deleted():
            raise ValueError(f"leaf {key} is a deleted jax.Array (donated or deleted)")
        sharding = getattr(x, "sharding", None)
        dt = x.dtype  # a numpy dtype, or an extended one (PRNG keys: key<fry>)
        if isinstance(x, np.ndarray):  # as jax.device_put would place it (float64 -> float32)
            dt = jax.dtypes.canonicalize_dtype(dt)
        if dt not in bits:
            bits[dt] = itemsize_bits_of(dt)
        leaves.append(
            TreeLeaf(
                path=key,
                index=i,
                shape=tuple(int(s) for s in x.shape),
                dtype=dt,
                sharding=sharding if sharding is not None else _default_sharding(),
                abstract=isinstance(x, jax.ShapeDtypeStruct),
                placed=sharding is not None,
                names=names.get(key),
                itemsize_bits=bits[dt],
            )
        )
    values = tuple(x for _, x in pairs)
    return Flat(treedef, values, tuple(leaves), tuple(static))


def _short(x: object, limit: int = 60) -> str:
    if isinstance(x, np.ndarray):
        return f"{x.dtype}{list(x.shape)} (numpy)"
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mesh_of(leaves: tuple[TreeLeaf, ...]) -> Any:
    """The mesh of the first leaf laid out on one (the tree's own mesh); else a mesh made by
    ``jax.make_mesh`` for the first AbstractMesh a ShapeDtypeStruct names (``jax.eval_shape``
    under ``jax.set_mesh``), or that AbstractMesh itself (a plan) when it has more positions
    than the kernel has devices; None when no leaf has a mesh."""

    abstract = None
    for leaf in leaves:
        if isinstance(leaf.sharding, NamedSharding):
            mesh = leaf.sharding.mesh
            if isinstance(mesh, jax.sharding.Mesh):
                return mesh
            abstract = abstract or mesh
    if abstract is None:
        return None
    sizes = tuple(int(n) for n in abstract.axis_sizes)
    if int(np.prod(sizes)) > len(jax.devices()):
        return abstract  # more positions than the kernel has devices: a plan

    return jax.make_mesh(sizes, tuple(abstract.axis_names), axis_types=abstract.axis_types)


def on_mesh(leaves: tuple[TreeLeaf, ...], mesh: Mesh | AbstractMesh) -> tuple[TreeLeaf, ...]:
    """Leaves whose sharding names an AbstractMesh, placed on ``mesh`` (the same spec) when it
    has that mesh's axes and sizes, else shown unplaced on the default device: a layout needs
    devices. Other leaves as they are. On a planned ``mesh`` (an AbstractMesh):
    :func:`on_plan`."""

    if is_planned(mesh):
        return on_plan(leaves, mesh)
    out = []
    for leaf in leaves:
        s = leaf.sharding
        if not isinstance(s, NamedSharding) or isinstance(s.mesh, jax.sharding.Mesh):
            out.append(leaf)
            continue
        same = _axes(s.mesh) == dict(zip(mesh.axis_names, mesh_sizes(mesh), strict=True))
        placed = _on(mesh, s) if same else _default_sharding()
        out.append(dataclasses.replace(leaf, sharding=placed, placed=same))
    return tuple(out)


def _on(mesh: Mesh | AbstractMesh, s: Any) -> Any:
    """NamedSharding s moved onto mesh: its spec and its memory kind (pinned_host), as the
    ShapeDtypeStruct asked; the spec alone where mesh's devices lack that memory kind."""
    try:
        return NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)
    except ValueError:  # e.g. a kind these devices do not have
        return NamedSharding(mesh, s.spec)


def _axes(mesh: Mesh | AbstractMesh) -> dict[str, int]:
    return dict(zip(mesh.axis_names, mesh_sizes(mesh), strict=True))


def on_plan(leaves: tuple[TreeLeaf, ...], plan: Any) -> tuple[TreeLeaf, ...]:
    """Every leaf as shapes on the AbstractMesh ``plan`` (``abstract``: no data, a jax.Array
    taken as its shape): a NamedSharding whose mesh has the plan's axes and sizes keeps its
    spec there; any other leaf is replicated on the plan, ``placed=False`` (as ``jax.jit``
    replicates an input it is given no sharding for)."""
    axes = _axes(plan)
    replicated = NamedSharding(plan, PartitionSpec())
    out = []
    for leaf in leaves:
        s = leaf.sharding
        same = isinstance(s, NamedSharding) and leaf.placed and _axes(s.mesh) == axes
        sharding = _on(plan, s) if same else replicated
        out.append(dataclasses.replace(leaf, sharding=sharding, placed=same, abstract=True))
    return tuple(out)
