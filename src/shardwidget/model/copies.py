"""Copies of a tree leaf: how many devices hold each element, and whether it is replicated on
every device. Imports JAX, never widget code.

Two different facts, easily confused: a leaf *has copies* when each element sits on more than one
device (``P('model', None)`` on a 4 × 2 mesh: two halves, four copies of each); it is *replicated
on every device* only when every device of the mesh holds all of it (``P()``): what
``sharding.devices_indices_map(shape)`` says when every device's index is the whole array. The
tree view flags the second (a whole copy per device, the common mistake), not the first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection

from jax.sharding import NamedSharding

from .._jax import spec_entries
from . import mesh as mesh_mod
from . import spec as spec_mod
from .rules import leaf_bytes
from .tree import TreeLeaf


def replication(leaf: TreeLeaf) -> int:
    """How many devices hold each element (from the spec alone for a NamedSharding)."""
    s = leaf.sharding
    if isinstance(s, NamedSharding) and not spec_mod.unreduced_of(s.spec):
        return _named_replication(s, len(leaf.shape))
    return leaf.layout.replication


@functools.lru_cache(maxsize=1024)
def _named_replication(s: NamedSharding, ndim: int) -> int:
    """replication of a NamedSharding (once per sharding and rank: leaves share them)."""
    used = {a for entry in spec_mod.normalize(spec_entries(s.spec), ndim) for a in entry}
    sizes = dict(zip(s.mesh.axis_names, mesh_mod.mesh_sizes(s.mesh), strict=True))
    return math.prod(int(n) for a, n in sizes.items() if a not in used)


def on_every_device(leaf: TreeLeaf, mesh_ids: Collection[int]) -> bool:
    """Whether every device of the mesh (``mesh_ids``) holds the whole leaf: each holder holds
    all of it (its replication is its number of holders) and the holders include every device
    of the mesh. An unreduced leaf holds partial values, never the whole: False."""
    s = leaf.sharding
    if isinstance(s, NamedSharding) and spec_mod.unreduced_of(s.spec):
        return False
    holders = leaf_bytes(leaf)[0]
    return replication(leaf) == len(holders) and set(mesh_ids) <= set(holders)
