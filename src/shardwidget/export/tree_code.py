"""Copy as code for a tree view (``view.code``): the Python that lays a whole pytree out as shown.

Run with the tree bound to ``name``, the snippet makes the mesh, the regex rules (first match
wins, as the view applies them) and, where logical rules set a leaf's layout, a path -> spec
table; then it rebinds ``name`` to the tree with each such leaf placed by ``jax.device_put`` (a
``ShapeDtypeStruct`` gets the sharding, nothing is allocated). Leaves no rule matches are left
as they are. Only jax (and the standard library's ``re``) is used. On a plan (an AbstractMesh)
every array leaf becomes a ``ShapeDtypeStruct`` on it: nothing is placed.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
from jax.sharding import AbstractMesh, Mesh

from ..model import spec as spec_mod
from ..model.layout import MeshInfo, mesh_info
from ..model.mesh import is_planned
from ..model.rules import Rule
from ..model.tree import TreeLeaf
from .code import IMPORTS, make_mesh_ids, mesh_lines


def _rules_lines(rules: Sequence[Rule]) -> list[str]:
    if not rules:
        return ["rules = []  # (regex on the leaf's path, spec): the first match wins"]
    lines = ["rules = [  # (regex on the leaf's path, spec): the first match wins"]
    lines += [f"    ({r.pattern!r}, {spec_mod.to_text(r.spec)})," for r in rules]
    return [*lines, "]"]


def _logical_lines(leaves: Sequence[TreeLeaf], sources: Sequence[str]) -> list[str]:
    rows = [
        f"    {leaf.path!r}: {spec_mod.to_text(spec_mod.normalize(leaf.spec, len(leaf.shape)))},"
        for leaf, src in zip(leaves, sources, strict=True)
        if src == "logical"
    ]
    if not rows:
        return ["logical = {}  # path -> spec of leaves laid out by logical axis names"]
    return [
        "logical = {  # path -> spec of leaves laid out by their logical axis names",
        *rows,
        "}",
    ]


PLACE = """


def _key(k):
    return str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k))))


def _place(path, x):
    at = jax.tree_util.keystr(path)
    slash = "/".join(_key(k) for k in path)  # rules match either form of the path
    hit = (s for pattern, s in rules if re.search(pattern, at) or re.search(pattern, slash))
    spec = next(hit, logical.get(at))
    if spec is None or not isinstance(x, (jax.Array, jax.ShapeDtypeStruct, np.ndarray)):
        return x  # no rule: the leaf keeps its layout
    sharding = NamedSharding(mesh, spec)
    if isinstance(x, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
    return jax.device_put(x, sharding)


"""


def tree_code(
    mesh: Mesh | AbstractMesh,
    rules: Sequence[Rule],
    leaves: Sequence[TreeLeaf],
    sources: Sequence[str],
    name: str = "params",
) -> str:
    """The snippet that rebinds ``name`` to the tree laid out by ``rules`` on ``mesh`` (leaves
    whose ``sources`` entry is "logical" get their spec from a table)."""
    if not name.isidentifier():
        raise ValueError(f"name must be a Python identifier, got {name!r}")
    info = mesh_info(mesh)
    if is_planned(mesh):
        return _planned_code(info, rules, leaves, sources, name)
    lines, _ = mesh_lines(info, [int(d.id) for d in jax.devices()], make_mesh_ids(info))
    head = ["import re", "", "import jax", "import numpy as np"]  # (numpy leaves are laid out)
    head.append(IMPORTS.split("\n")[1])
    body = [*lines, *_rules_lines(rules), *_logical_lines(leaves, sources)]
    put = f"{name} = jax.tree_util.tree_map_with_path(_place, {name})"
    return "\n".join([*head, "", *body]) + PLACE + put


PLACE_PLANNED = """


def _key(k):
    return str(getattr(k, "key", getattr(k, "idx", getattr(k, "name", k))))


def _place(path, x):
    if not isinstance(x, (jax.Array, jax.ShapeDtypeStruct, np.ndarray)):
        return x
    at = jax.tree_util.keystr(path)
    slash = "/".join(_key(k) for k in path)  # rules match either form of the path
    hit = (s for pattern, s in rules if re.search(pattern, at) or re.search(pattern, slash))
    spec = next(hit, logical.get(at))
    if spec is None:  # no rule: its own spec where its mesh has the plan's axes, else replicated
        own = getattr(x, "sharding", None)
        same = isinstance(own, NamedSharding) and dict(own.mesh.shape) == dict(mesh.shape)
        spec = own.spec if same else P()
    return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=NamedSharding(mesh, spec))


"""


def _planned_code(
    info: MeshInfo,
    rules: Sequence[Rule],
    leaves: Sequence[TreeLeaf],
    sources: Sequence[str],
    name: str,
) -> str:
    """tree_code on an AbstractMesh: the tree as ShapeDtypeStructs laid out on the plan."""
    head = ["import re", "", "import jax", "import numpy as np", IMPORTS.split("\n")[1]]
    body = [
        *mesh_lines(info, [], None, planned=True)[0],
        *_rules_lines(rules),
        *_logical_lines(leaves, sources),
    ]
    put = f"{name} = jax.tree_util.tree_map_with_path(_place, {name})"
    return "\n".join([*head, "", *body]) + PLACE_PLANNED + put
