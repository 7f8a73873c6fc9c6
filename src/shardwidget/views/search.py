"""A function view's search for a layout: ``view.search(...)`` runs
:func:`shardwidget.search` on the view's function and arguments, and
``search.apply(i)`` lays the view out as candidate i (a layout change: undo restores).

The panel: ``_search`` (:mod:`shardwidget.wire.search`) is republished as results arrive. The
search's threads only hand over (:meth:`_later`: the kernel's thread sets the trait; at most one
publish waits at a time, and it reads the search as it is then); a click on a row or point
sends ``{"type": "search_apply", "id": k}``, applied inside the view's boundary."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
from jax.sharding import AxisType

from ..layout_search import Candidate, Search
from ..layout_search import run as search_run
from ..model import spec as spec_mod
from ..wire import search as search_wire


class SearchClicks:
    """The search panel's click, for every view with a search: ``search_apply`` applies the
    newest search's candidate k (:meth:`_apply_arrived`) inside the view's boundary (a refusal
    said in ``error``); any other message is the view's own."""

    _searched: Any

    if TYPE_CHECKING:  # the view's own boundary

        def _handling(self) -> Any: ...

    def _apply_arrived(self, cand: Any) -> None:
        """Lay the view out as this arrived candidate (each kind's own)."""
        raise NotImplementedError

    def _on_custom_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        k = search_wire.parse_apply(content)
        if k is None:
            super()._on_custom_msg(widget, content, buffers)  # type: ignore[misc]  # (a mixin: the view's base has it)
            return
        with self._handling():
            found = self._searched
            arrived = found.arrived if found is not None else []
            if not 0 <= k < len(arrived):
                raise ValueError(f"no candidate {k} in the newest search ({len(arrived)} so far)")
            self._apply_arrived(arrived[k])


class SearchMixin(SearchClicks):
    """:meth:`search` and :meth:`apply_candidate` for the function view."""

    _path: Any
    hardware: str
    mode: str
    out_specs: list[Any]
    _search: Any  # the view's trait (wire.SearchWire)
    _searched: Search | None = None
    _search_key = 0
    _search_waiting = False
    _shown: Any

    if TYPE_CHECKING:  # the view's own (ShardView and its boundary)

        def set_layout(self, **changes: Any) -> None: ...
        def _later(self, work: Callable[[], None]) -> None: ...
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
    ) -> Search:
        """Find a layout for this view's function and arguments (see
        :func:`shardwidget.search`): ``mesh`` defaults to the view's own target (a plan's
        mesh, or an AbstractMesh of the kernel's device count: the CPU compiler), ``hardware``
        to the view's preset there, else the target's own (see :func:`shardwidget.search`).
        ``search.apply(i)`` shows candidate i here."""
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
        found = search_run.search(
            traced.f,
            *args,
            mesh=target,
            # the view's preset on its own chips; another target's own (a TPU's, a GPU's): a
            # candidate compiled for a v5e is timed on a v5e, not on the view's v5p
            hardware=hardware if hardware is not None or mesh is not None else self.hardware,
            strategies=strategies,
            budget_s=budget_s,
            workers=workers,
            wait=False,
            donate=self._shown.donate if self._shown is not None else (),  # as the view compiles
            _view=self,
        )
        self._searched = found
        found.on_result(self._result_arrived)
        self._publish_search()
        if wait:
            found.wait()
            self._publish_search()  # (on this thread: nothing waits for a kernel's loop)
        return found

    def _result_arrived(self, found: Search) -> None:
        """From a search's thread: have the kernel's thread publish, unless a publish already
        waits (it will read the newer results)."""
        if found is not self._searched or self._search_waiting:
            return
        self._search_waiting = True
        self._later(self._publish_search)

    def _publish_search(self) -> None:
        """``_search`` of the newest search as it stands now (on the kernel's thread)."""
        self._search_waiting = False
        if self._searched is None:
            return
        self._search_key += 1
        self._search = dict(search_wire.search(self._searched, self._search_key))

    def _apply_arrived(self, cand: Any) -> None:
        self.apply_candidate(cand)

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
