"""The tree view's change path without widget code: a TreeState (mesh, regex rules, logical
rules) read from a request, the rules applied to every leaf from shardings alone (no device
work; a rule that cannot apply is refused in words), and the leaves placed on demand.

:class:`TreePath` holds the user's tree (flattened, never changed) and the mesh it was given.
:class:`~shardwidget.views.tree.TreeView` runs it through ``ShardView._change`` and publishes
the result; its selected leaf's statistics go through the array view's
:func:`~shardwidget.views.array_path.leaf_summary`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh

from .. import _jax, wire
from ..model import free_memory
from ..model import mesh as mesh_mod
from ..model import rules as rules_mod
from ..model import rules_text as editor_text
from ..model.layout import Layout
from ..model.summary import Summary
from ..model.tree import Flat
from ..plan import gpu as gpu_mod
from ..plan import tpu as tpu_mod
from .array_path import leaf_summary


@dataclasses.dataclass(frozen=True)
class TreeState:
    """The layout a tree view shows, as data: the mesh, the regex rules, the logical rules.

    Attributes:
        mesh_shape, axis_names, axis_types: the mesh the rules lay out on.
        rules: the regex rules (first match wins); logical: the logical axis rules.
        text: the rules as the editor holds them (comments kept); not part of equality.
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...]
    rules: tuple[rules_mod.Rule, ...] = ()
    logical: rules_mod.LogicalRules = ()
    text: str | None = dataclasses.field(default=None, compare=False)

    def to_wire(self) -> dict[str, Any]:
        """The trait values of this state."""
        return {
            "mesh_shape": list(self.mesh_shape),
            "axis_names": list(self.axis_names),
            "axis_types": list(self.axis_types),
            "rules_text": self.text
            if self.text is not None
            else editor_text.to_text(self.rules, self.logical),
        }


Computed = tuple[Any, rules_mod.Applied]
"""What a tree view's compute returns: (the mesh, every leaf laid out by the rules)."""


class TreePath:
    """Read, check and apply a tree's rules (see the module's doc).

    Attributes:
        flat: the user's tree, flattened (None once the view let go of it); devices: the
        kernel's; own_mesh: the mesh the view was given (or the tree's own); its layouts keep
        this mesh's device order for its shape, names and types.
    """

    def __init__(self, flat: Flat, own_mesh: Any) -> None:
        self.flat: Flat | None = flat
        self.devices = list(jax.devices())
        self.own_mesh = own_mesh
        self._applied_for: tuple[TreeState, Any, Computed] | None = None
        self._changed_for: tuple[rules_mod.Applied, tuple[int, ...]] | None = None

    @property
    def planned(self) -> bool:
        """Whether the mesh is an AbstractMesh: a plan, with no devices and no data."""
        return mesh_mod.is_planned(self.own_mesh)

    def n_devices(self) -> int:
        """The devices the view lays out over: the kernel's, or a plan's positions."""
        return int(self.own_mesh.size) if self.planned else len(self.devices)

    def require_flat(self) -> Flat:
        if self.flat is None:
            raise ValueError("this view was closed: it holds no tree")
        return self.flat

    # ---------------------------------------------------------------- read and check
    def from_wire(self, d: dict[str, Any]) -> TreeState:
        try:
            shape = tuple(d["mesh_shape"])
            names = tuple(d["axis_names"])
            types = tuple(d["axis_types"])
            text = d["rules_text"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"incomplete tree request: {e}") from None
        if not isinstance(text, str):
            raise ValueError(f"rules must be text, one rule per line; got {type(text).__name__}")
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise ValueError(f"mesh sizes must be integers; got {list(shape)}")
        rules, logical = editor_text.parse(text)
        return TreeState(shape, names, types, rules, logical, text)

    def adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """Nothing beyond the base's axis rule."""

    def label(self, st: TreeState) -> str:
        """The mesh and the number of rules, in a few words."""
        mesh = " × ".join(f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=False))
        return f"mesh {mesh} · {len(st.rules)} rule{'' if len(st.rules) == 1 else 's'}"

    def mesh_for(self, st: TreeState) -> Any:
        own = self.own_mesh
        if (
            st.mesh_shape == mesh_mod.mesh_sizes(own)
            and st.axis_names == tuple(own.axis_names)
            and st.axis_types == tuple(mesh_mod.mesh_axis_types(own))
        ):
            return own
        if self.planned:
            mesh = mesh_mod.build_abstract_mesh(
                st.mesh_shape, st.axis_names, st.axis_types, own.size
            )
            if gpu_mod.is_gpu(own):
                return gpu_mod.reshaped(own, mesh)  # the same GPUs and hosts
            return tpu_mod.reshaped(own, mesh) if tpu_mod.is_tpu(own) else mesh  # same chips
        return mesh_mod.build_mesh(st.mesh_shape, st.axis_names, st.axis_types, self.devices)

    def check(self, st: TreeState) -> None:
        """The rules applied to every leaf on st's mesh: ValueError naming the leaf and the
        rule that cannot apply (the work is kept for :meth:`compute` of the same state)."""
        self.compute(st)

    # ---------------------------------------------------------------- compute
    def compute(self, st: TreeState) -> Computed:
        """(mesh, the leaves laid out by st's rules) from shardings alone: no device work.
        The last one is remembered (for its state, on the same own mesh): the check and the
        compute of one change apply the rules once."""
        memo = self._applied_for
        if memo is not None and memo[0] == st and memo[1] is self.own_mesh:
            return memo[2]
        mesh = self.mesh_for(st)
        done = (mesh, rules_mod.apply(self.require_flat().leaves, mesh, st.rules, st.logical))
        self._applied_for = (st, self.own_mesh, done)
        return done

    def forget(self) -> None:
        """Drop the remembered result (after it is published: the view holds it then)."""
        self._applied_for = None

    # ---------------------------------------------------------------- the leaves
    def changed(self, applied: rules_mod.Applied, i: int) -> bool:
        """Whether leaf i laid out as applied differs from the user's."""
        leaf = applied.leaves[i]
        if not applied.sources[i]:
            return False
        orig = self.require_flat().leaves[i]
        if not orig.placed:
            return True
        return not leaf.sharding.is_equivalent_to(orig.sharding, len(leaf.shape))

    def payload(
        self,
        st: TreeState,
        applied: rules_mod.Applied,
        key: int,
        code: str,
        planned: str,
        devices: Sequence[int],
    ) -> wire.TreeWire:
        """``_tree``: every leaf as laid out, memory per device of every device of the mesh
        (``devices``, zeros included; see :mod:`shardwidget.wire`)."""
        mesh_text = " × ".join(
            f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=True)
        )
        static = self.require_flat().static
        return wire.tree_payload(
            applied,
            static,
            key=key,
            mesh_text=mesh_text,
            code=code,
            planned=planned,
            devices=devices,
        )

    def changed_leaves(self, applied: rules_mod.Applied) -> tuple[int, ...]:
        """The leaves whose layout differs from the user's (worked out once per layout)."""
        if self._changed_for is None or self._changed_for[0] is not applied:
            idx = tuple(i for i in range(len(applied.leaves)) if self.changed(applied, i))
            self._changed_for = (applied, idx)
        return self._changed_for[1]

    def leaf_options(self, shape: tuple[int, ...], lay: Layout) -> wire.Options:
        """The options of a leaf's embedded grid: its layout is the rules' (no controls); a
        TPU plan's mesh select offers only the shapes its torus holds."""
        opts = wire.options(
            n_devices=self.n_devices(),
            platform="planned" if self.planned else self.devices[0].platform,
            shape=list(shape),
            dtype=lay.dtype,
            memory_kinds=["device"],
            original=None,
            reshard_disabled="the tree view's rules set this layout",
        )
        opts["factorizations"] = tpu_mod.offered(self.own_mesh, opts["factorizations"])
        return opts

    def check_mesh(self, mesh: Mesh | AbstractMesh) -> None:
        """ValueError in words unless ``mesh`` can replace the view's: a plan takes an
        AbstractMesh of as many positions, a view on devices a jax Mesh."""
        if self.planned:
            if not mesh_mod.is_planned(mesh) or mesh.size != self.own_mesh.size:
                n = self.own_mesh.size
                raise ValueError(f"a plan of {n} positions takes an AbstractMesh of {n}")
        elif not isinstance(mesh, jax.sharding.Mesh):
            raise ValueError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")

    def leaf_grid(
        self, applied: rules_mod.Applied, i: int, key: int, changed: bool
    ) -> wire.LeafGrid:
        """Leaf i's grid as applied, without statistics: what a saved page shows on a click."""
        return wire.leaf_grid(
            applied.leaves[i].layout,
            key=key,
            source="resharded" if changed else "original",
            n_devices=self.n_devices(),
            platform="planned" if self.planned else self.devices[0].platform,
            local_process=jax.process_index(),
            why_no_stats="a saved page: statistics only for the leaf selected when it was saved",
        )

    def check_fits(self, applied: rules_mod.Applied, leaves: list[int], what: str) -> None:
        """ValueError in words, before any device work, when the copies of these leaves would
        not fit in free device memory (the user's own leaves stay as they are)."""
        need: dict[int, int] = {}
        for i in leaves:
            ids, b = rules_mod.leaf_bytes(applied.leaves[i])
            for d in ids:
                need[d] = need.get(d, 0) + b
        by_id = {int(d.id): d for d in self.devices}
        free_memory.check_fits({by_id[d]: n for d, n in need.items() if d in by_id}, what)

    def placed(self, applied: rules_mod.Applied, changed: tuple[int, ...]) -> Any:
        """The tree laid out as applied: the changed leaves placed with ``jax.device_put`` (a
        ShapeDtypeStruct gets the sharding), the others the user's own; a plan's leaves all as
        ShapeDtypeStructs with their shardings (nothing placed)."""
        flat = self.require_flat()
        values = list(flat.values)
        if self.planned:
            for leaf in applied.leaves:
                values[leaf.index] = jax.ShapeDtypeStruct(
                    leaf.shape, leaf.dtype, sharding=leaf.sharding
                )
            return jax.tree_util.tree_unflatten(flat.treedef, values)
        for i in changed:
            leaf = applied.leaves[i]
            x = values[leaf.index]
            if leaf.abstract:
                values[leaf.index] = jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=leaf.sharding)
        concrete = [i for i in changed if not applied.leaves[i].abstract]
        self.check_fits(applied, concrete, "placing the tree's re-laid-out leaves (view.tree)")
        if concrete:
            placed = _jax.device_put(
                [values[applied.leaves[i].index] for i in concrete],
                [applied.leaves[i].sharding for i in concrete],
            )
            for i, a in zip(concrete, placed, strict=True):
                values[applied.leaves[i].index] = a
        return jax.tree_util.tree_unflatten(flat.treedef, values)

    def summarize(
        self, applied: rules_mod.Applied, i: int, lay: Layout, with_stats: bool
    ) -> Summary:
        """Statistics of leaf i as laid out: placed for this, and released at once (the
        array view's statistics of one array, :func:`leaf_summary`)."""
        leaf = applied.leaves[i]
        n = len(lay.blocks)
        if self.planned:
            return Summary.unavailable(n, "planned: no data")
        if not with_stats:
            return Summary.unavailable(n, "statistics are off (stats=False)")
        if leaf.abstract:
            return Summary.unavailable(n, "an abstract leaf (ShapeDtypeStruct): no data")
        x = self.require_flat().values[leaf.index]
        changed = self.changed(applied, i)
        if changed:
            try:
                self.check_fits(applied, [i], f"statistics of {leaf.path} as laid out")
            except ValueError as e:
                return Summary.unavailable(n, str(e))
        placed = changed or not leaf.placed  # (a numpy leaf: where device_put puts it)
        arr = _jax.device_put(x, leaf.sharding) if placed else x
        try:
            return leaf_summary(arr, lay, leaf_dims(len(leaf.shape)), len(lay.devices))
        finally:
            del arr


def pick_leaf(asked: int | None, current: int, leaf_bytes: list[int]) -> int:
    """The leaf to select: the one asked for (``selected=``; ValueError when it is no leaf
    index), else the current one while it is a leaf, else the one with the most bytes."""
    n = len(leaf_bytes)
    if asked is not None and not 0 <= asked < n:
        raise ValueError(f"selected={asked} is not a leaf index 0…{n - 1}")
    pick = asked if asked is not None else current
    return pick if 0 <= pick < n else max(range(n), key=leaf_bytes.__getitem__)


def leaf_dims(ndim: int) -> tuple[int, ...]:
    """The dimensions a leaf is drawn over: its first two (one for a vector, none for a
    scalar)."""
    return (0, 1) if ndim >= 2 else (0,) if ndim == 1 else ()
