"""A function view's search for a layout: ``view.search(...)`` runs
:func:`shardwidget.search` on the view's function and arguments, and
``search.apply(i)`` lays the view out as candidate i (a layout change: undo restores)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import jax
from jax.sharding import AxisType

from ..layout_search import Candidate, Search
from ..layout_search import run as search_run
from ..model import spec as spec_mod


class SearchMixin:
    """:meth:`search` and :meth:`apply_candidate` for the function view."""

    _path: Any
    hardware: str
    mode: str
    out_specs: list[Any]

    if TYPE_CHECKING:  # the view's own (ShardView.set_layout)

        def set_layout(self, **changes: Any) -> None: ...

    def search(
        self,
        mesh: object = None,
        *,
        hardware: object = None,
        strategies: dict[str, Any] | None = None,
        budget_s: float | None = None,
        workers: int | None = None,
        wait: bool = True,
    ) -> Search:
        """Find a layout for this view's function and arguments (see
        :func:`shardwidget.search`): ``mesh`` defaults to the view's own target (a plan's
        mesh, or an AbstractMesh of the kernel's device count: the CPU compiler), ``hardware``
        to the view's preset. ``search.apply(i)`` shows candidate i here."""
        traced = self._path.traced
        args, kwargs = jax.tree_util.tree_unflatten(traced._treedef, traced._all)
        if kwargs or traced.static_args:
            raise ValueError(
                "search takes f(*arrays): this view's function has keyword or non-array "
                f"arguments ({', '.join([*kwargs, *traced.static_args])}); bind them first "
                "(functools.partial) and make a view of the rest"
            )
        if self.mode != "jit":
            raise ValueError(f"search lays out jax.jit programs; this view is in {self.mode} mode")
        target = mesh if mesh is not None else self._own_target()
        return search_run.search(
            traced.f,
            *args,
            mesh=target,
            hardware=hardware if hardware is not None else self.hardware,
            strategies=strategies,
            budget_s=budget_s,
            workers=workers,
            wait=wait,
            _view=self,
        )

    def _own_target(self) -> Any:
        plan_mesh = getattr(self._path.traced, "plan_mesh", None)
        if plan_mesh is not None:
            return plan_mesh
        n = self._path.n_devices()
        return jax.sharding.AbstractMesh((n,), ("x",), axis_types=(AxisType.Auto,))

    def apply_candidate(self, cand: Candidate) -> None:
        """Show candidate ``cand``'s layout (outputs laid out by XLA); ValueError in words when
        it has another device count than the view."""
        n = self._path.n_devices()
        if math.prod(cand.mesh_shape) != n:
            raise ValueError(
                f"candidate {cand.name!r} spans {math.prod(cand.mesh_shape)} devices; this view "
                f"has {n}: search with this view's target (view.search()) to apply here"
            )
        self.set_layout(
            mesh_shape=list(cand.mesh_shape),
            axis_names=list(cand.axis_names),
            axis_types=["auto"] * len(cand.mesh_shape),
            in_specs=[spec_mod.to_wire(s) for s in cand.proposal.specs],
            out_specs=[None] * len(self.out_specs),
        )
