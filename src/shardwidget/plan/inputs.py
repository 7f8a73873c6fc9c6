"""What :func:`shardwidget.plan.plan` takes, checked before JAX sees it: the mesh is an
AbstractMesh (``mesh=(16, 16)`` is a TypeError in words, not an AttributeError), and each
argument leaf's spec fits it (an axis used twice, an axis the mesh lacks, a spec longer than
the leaf's rank, a size the axes do not divide: a ValueError naming the argument and leaf, as
the tree view says it, not JAX's DuplicateSpecError).
"""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from ..model import mesh as mesh_mod
from ..model import spec as spec_mod


def check_mesh(mesh: Mesh | AbstractMesh) -> None:
    """TypeError in words unless mesh is a jax AbstractMesh (or Mesh)."""
    if isinstance(mesh, jax.sharding.AbstractMesh | jax.sharding.Mesh):
        return
    hint = ""
    if isinstance(mesh, tuple | list) and all(isinstance(s, int) for s in mesh):
        names = ", ".join(repr(n) for n in mesh_mod.default_axis_names(len(mesh)))
        hint = f": write mesh=AbstractMesh({tuple(mesh)}, ({names}{',' if len(mesh) == 1 else ''}))"
    raise TypeError(
        "plan(mesh=...) takes a jax.sharding.AbstractMesh (the pod's axis sizes and names) or a "
        "shardwidget.tpu_mesh(...), "
        f"got {type(mesh).__name__} {mesh!r}"[:160]
        + hint
    )


def _entries(spec: object) -> list[Any]:
    if spec is None:
        return []
    if isinstance(spec, PartitionSpec | list | tuple):
        return list(spec)
    raise TypeError(f"a spec is a PartitionSpec, got {type(spec).__name__} {spec!r}"[:160])


def sds(x: object, mesh: Mesh | AbstractMesh, spec: object, where: str) -> Any:
    """x as a ShapeDtypeStruct laid out by spec on mesh; TypeError / ValueError naming
    ``where`` ("argument 0['w1']") when x is not an array or spec does not fit it."""
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise TypeError(
            f"{where}: a plan takes arrays or jax.ShapeDtypeStruct; got {type(x).__name__}"
        )
    shape = tuple(int(s) for s in x.shape)
    entries = _entries(spec)
    try:
        norm = spec_mod.normalize(entries, len(shape))
        axes = dict(zip((str(a) for a in mesh.axis_names), mesh_mod.mesh_sizes(mesh), strict=True))
        spec_mod.validate(norm, shape, axes)
    except ValueError as e:
        raise ValueError(f"{where} (shape {shape}), spec {spec!r}: {e}") from None
    pspec = spec if isinstance(spec, PartitionSpec) else spec_mod.to_partition_spec(norm)
    return jax.ShapeDtypeStruct(shape, x.dtype, sharding=NamedSharding(mesh, pspec))


def arg_sds(i: int, a: object, spec: Any, mesh: Mesh | AbstractMesh, is_spec: Any) -> Any:
    """Argument i as ShapeDtypeStructs on the mesh: ``spec`` None (replicated), one spec for
    every leaf (``is_spec(spec)``), or a tree of specs shaped like the argument."""

    def one(path: tuple[Any, ...], x: Any, s: Any) -> Any:
        return sds(x, mesh, s, f"argument {i}{jax.tree_util.keystr(path)}")

    if spec is None or is_spec(spec):
        return jax.tree_util.tree_map_with_path(lambda p, x: one(p, x, spec), a)
    try:
        return jax.tree_util.tree_map_with_path(one, a, spec, is_leaf=lambda x: hasattr(x, "shape"))
    except ValueError as e:
        if "argument " in str(e):
            raise
        raise ValueError(f"argument {i}: its specs are not shaped like it: {e}") from None
