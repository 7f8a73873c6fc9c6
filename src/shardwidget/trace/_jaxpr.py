"""What the traced program itself says: its sharding constraints, shard_map meshes, constant
outputs and unused arguments (notes), read from the jaxpr and attributed to argument paths.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import jax
from jax.extend.core import Jaxpr
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

from .. import _jax
from ..model import spec as spec_mod
from ..model.layout import dtype_name
from .result import CONSTANT_NOTE, OTHER_MESH_NOTE, UNUSED_NOTE, Constraint, Leaf


def _constraint_text(spec: PartitionSpec, ndim: int) -> str:
    """A constraint's spec as written: P('x', None), with ``P.UNCONSTRAINED`` entries (the
    dimensions a with_sharding_constraint leaves to XLA) named as JAX names them."""
    entries = tuple(spec)
    free = [e is PartitionSpec.UNCONSTRAINED for e in entries]
    norm = spec_mod.normalize(
        tuple(None if f else e for f, e in zip(free, entries, strict=True)), ndim
    )
    if not any(free):
        return spec_mod.to_text(norm)
    parts = [
        "P.UNCONSTRAINED" if i < len(free) and free[i] else spec_mod.to_text((axes,))[2:-1]
        for i, axes in enumerate(norm)
    ]
    return "P(" + ", ".join(parts) + ")"


def walk_constraints(jaxpr: Any, out: list[Constraint]) -> None:
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in ("sharding_constraint", "reshard"):
            sh = eqn.params.get("sharding", eqn.params.get("dst_sharding"))
            aval = eqn.outvars[0].aval
            spec = getattr(sh, "spec", None)
            ndim = len(aval.shape)
            text = _constraint_text(spec, ndim) if spec is not None else str(sh)
            try:
                src = _jax.source_line(eqn.source_info)
            except Exception:
                src = ""
            out.append(
                Constraint(
                    kind="with_sharding_constraint" if name == "sharding_constraint" else "reshard",
                    shape=tuple(int(d) for d in aval.shape),
                    dtype=str(aval.dtype),
                    sharding=sh,
                    spec_text=text,
                    source=src,
                )
            )
        for sub in _jax.sub_jaxprs(eqn.params):
            walk_constraints(sub, out)


def _same_blocks_spec(
    sharding: jax.sharding.Sharding,
    shape: tuple[int, ...],
    own: Mesh | AbstractMesh,
) -> tuple[Any, ...] | None:
    """PartitionSpec entries on the mesh own that put the same blocks on the same devices as
    sharding (checked with devices_indices_map), or None when no spec does."""

    def key(sh: Any) -> dict[int, tuple[tuple[int, int], ...]]:
        return {
            d.id: tuple(sl.indices(n)[:2] for sl, n in zip(idx, shape, strict=True))
            for d, idx in sh.devices_indices_map(shape).items()
        }

    try:
        want = key(sharding)
        splits = [
            n // s if s else 1 for n, s in zip(shape, sharding.shard_shape(shape), strict=True)
        ]
    except Exception:
        return None
    sizes = dict(own.shape)
    names = list(own.axis_names)

    def per_dim(d: int, free: list[str]) -> Any:
        if d == len(shape):
            yield ()
            return
        for r in range(len(free) + 1):
            for combo in itertools.permutations(free, r):
                if math.prod(sizes[a] for a in combo) != splits[d]:
                    continue
                rest = [a for a in free if a not in combo]
                for tail in per_dim(d + 1, rest):
                    yield (combo, *tail)

    for n, cand in enumerate(per_dim(0, names)):
        if n > 200:
            break
        entries = tuple(None if not c else c[0] if len(c) == 1 else c for c in cand)
        sh = NamedSharding(own, PartitionSpec(*entries))
        if key(sh) == want:
            return entries
    return None


def other_mesh(value: Any, own: Any) -> tuple[tuple[Any, ...] | None, str] | None:
    """For an input whose NamedSharding is over a concrete mesh other than own: (its spec's
    entries on own, or None for replicated; a line in words). None for every other input.
    The same blocks on the same devices where a spec on own gives them (jax.jit(f) accepts
    that), else its own spec where own has the same axes (another device order or axis
    types: jax.jit(f) refuses it), else replicated."""

    sh = getattr(value, "sharding", None)
    mesh = getattr(sh, "mesh", None)
    if (
        own is None
        or not isinstance(sh, NamedSharding)
        or not isinstance(mesh, jax.sharding.Mesh)
        or mesh == own
    ):
        return None
    ids = [d.id for d in mesh.devices.flat]
    if mesh.shape_tuple != own.shape_tuple:
        what = f"axes {dict(mesh.shape)}"
    elif ids != [d.id for d in own.devices.flat]:
        what = f"devices {ids}"
    else:
        what = "axis types " + ", ".join(str(t).split(".")[-1] for t in mesh.axis_types)
    shape = tuple(int(n) for n in value.shape)
    same = _same_blocks_spec(sh, shape, own)
    if same is not None:
        spec_txt = ", ".join(repr(e) for e in same)
        how = f"the same blocks on the same devices are P({spec_txt}) on the view's mesh"
        auto = jax.sharding.AxisType.Auto
        if any(t != auto for t in (*mesh.axis_types, *own.axis_types)):
            how += " (jax.jit(f) refuses inputs on different meshes with Explicit axes)"
        return same, OTHER_MESH_NOTE.format(what=what, how=how)
    if mesh.shape_tuple == own.shape_tuple:
        return _jax.spec_entries(sh.spec), OTHER_MESH_NOTE.format(
            what=what,
            how=(
                "jax.jit(f) refuses inputs on different meshes; "
                "shown with its spec on the view's mesh"
            ),
        )
    return None, OTHER_MESH_NOTE.format(what=what, how="shown replicated on the view's mesh")


def leaf_notes(
    jaxpr: Jaxpr, dropped: Sequence[bool], leaves: Sequence[Leaf], other_mesh: Sequence[str] = ()
) -> dict[str, list[str]]:
    """{"in": [...], "out": [...]}: a line per input XLA dropped (unused, or float0), per input
    on another mesh than the view's (``other_mesh``) and per output that is a constant (a
    literal or a closed-over value in the traced jaxpr)."""
    ins = []
    other = list(other_mesh) or [""] * len(leaves)
    for gone, lf, elsewhere in zip(dropped, leaves, other, strict=True):
        if elsewhere:
            ins.append(elsewhere)
        elif not gone:
            ins.append("")
        elif dtype_name(lf.dtype) == "float0":
            ins.append("float0: a zero tangent with no data; XLA takes no buffer for it")
        else:
            ins.append(UNUSED_NOTE)
    outs = [CONSTANT_NOTE if c else "" for c in _constant_outputs(jaxpr)]
    return {"in": ins if any(ins) else [], "out": outs if any(outs) else []}


def _constant_outputs(jaxpr: Jaxpr) -> list[bool]:
    """Per output of jaxpr: whether it is a literal or a closed-over value, looking through the
    shard_map / jit equation that produces it (the body's own output)."""
    invars = set(jaxpr.invars)
    made = {id(o): (eqn, i) for eqn in jaxpr.eqns for i, o in enumerate(eqn.outvars)}
    out = []
    for v in jaxpr.outvars:
        if _jax.is_literal(v):
            out.append(True)
        elif v in invars:
            out.append(False)
        elif id(v) not in made:  # a constvar
            out.append(True)
        else:
            eqn, i = made[id(v)]
            inner = (
                eqn.params.get("jaxpr")
                if eqn.primitive.name in ("shard_map", "pjit", "jit")
                else None
            )
            inner = getattr(inner, "jaxpr", inner)
            out.append(bool(inner is not None and _constant_outputs(inner)[i]))
    return out


def walk_shard_map_meshes(jaxpr: Jaxpr, out: list[Mesh]) -> None:
    """The concrete meshes of the shard_maps in jaxpr (and the jaxprs inside it), in order."""
    for eqn in jaxpr.eqns:
        mesh = eqn.params.get("mesh") if eqn.primitive.name == "shard_map" else None
        if isinstance(mesh, jax.sharding.Mesh):
            out.append(mesh)
        for sub in _jax.sub_jaxprs(eqn.params):
            walk_shard_map_meshes(sub, out)
