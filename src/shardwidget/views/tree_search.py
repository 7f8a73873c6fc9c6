"""A tree view's search for a layout: ``view.search(...)`` proposes the layouts a practitioner
would try for the tree (:mod:`shardwidget.layout_search.tree`: partition rules, ranked by fit
and bytes per device; a tree has no step, so no step time), and ``search.apply(i)`` sets the
view's mesh and rules to candidate i's (one layout change: undo restores).

The panel: ``_search`` (:mod:`shardwidget.wire.search`, the function view's payload) is
published once (nothing is compiled: every candidate is there at once); a click on a row sends
``{"type": "search_apply", "id": k}``, applied inside the view's boundary."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import jax
from jax.sharding import AxisType

from ..layout_search import tree as tree_search
from ..model import rules as rules_mod
from ..wire import search as search_wire
from .search import SearchClicks


class TreeSearchMixin(SearchClicks):
    """:meth:`search` and :meth:`apply_tree_candidate` for the tree view."""

    _path: Any
    _name: str
    hardware: str
    _search: Any  # the view's trait (wire.SearchWire)
    _searched: tree_search.TreeSearch | None = None
    _search_key = 0

    if TYPE_CHECKING:  # the view's own (TreeView and its boundary)

        @property
        def _state(self) -> Any: ...
        def _handling(self) -> Any: ...

    def search(
        self,
        mesh: object = None,
        *,
        hardware: object = None,
        strategies: dict[str, Any] | None = None,
        budget_s: float | None = None,
        workers: int | None = None,
        wait: bool = True,
        compile: bool = False,
    ) -> tree_search.TreeSearch:
        """The layouts a practitioner would try for this tree on ``mesh``'s chips (default:
        the view's own: a plan's mesh, or the kernel's device count), as partition rules,
        ranked by fit in a device's memory, then by the bytes a device holds; the step time
        is unknown (a tree has no step: make a function view, ``ShardView(step, tree,
        batch)``, to rank by time). ``strategies``: your own rules (see
        :func:`shardwidget.search`). ``budget_s``, ``workers`` and ``wait`` are taken as the
        function view's, and have nothing to do: nothing is compiled, unless ``compile=True``:
        then each layout's bytes per device are the target compiler's (an identity of the
        tree, compiled: a TPU pads small blocks beyond the data). ``search.apply(i)``
        lays this view out as candidate i; ``search.code(i)`` is its rules as Python."""
        flat = self._path.require_flat()
        shapes = [
            tree_search.TreeLeafShape(x.path, tuple(x.shape), int(x.itemsize_bits), str(x.dtype))
            for x in flat.leaves
        ]
        found = tree_search.search(
            shapes,
            mesh=mesh if mesh is not None else self._own_target(),
            # the view's preset on its own chips; another target's own (a TPU's, a GPU's)
            hardware=hardware if hardware is not None or mesh is not None else self.hardware,
            strategies=strategies,
            name=self._name,
            view=self,
            compile=compile,
        )
        self._searched = found
        self._search_key += 1
        self._search = dict(search_wire.search(found, self._search_key))
        return found

    def _own_target(self) -> Any:
        if self._path.planned:
            return self._path.own_mesh
        n = self._path.n_devices()
        return jax.sharding.AbstractMesh((n,), ("x",), axis_types=(AxisType.Auto,))

    def _apply_arrived(self, cand: Any) -> None:
        self.apply_tree_candidate(cand)

    def apply_tree_candidate(self, cand: tree_search.TreeCandidate) -> None:
        """Set the mesh and the rules to candidate ``cand``'s, as one layout change;
        ValueError in words when it spans another device count than the view."""
        n = self._path.n_devices()
        if math.prod(cand.mesh_shape) != n:
            raise ValueError(
                f"candidate {cand.name!r} spans {math.prod(cand.mesh_shape)} devices; this view "
                f"has {n}: search with this view's target (view.search()) to apply here"
            )
        view: Any = self  # (a mixin: the view's change path is ShardView's)
        view._change(
            dataclasses.replace(
                self._state,
                mesh_shape=tuple(cand.mesh_shape),
                axis_names=tuple(cand.axis_names),
                axis_types=("auto",) * len(cand.mesh_shape),
                rules=rules_mod.make_rules(list(cand.rules)),
                text=None,
            )
        )
