"""The change path a view kind runs, as a protocol: read a request, check it, compute it.

Each kind of view has one plain class that does this without widget code (no traits, no
messages): :class:`~shardwidget.views.array_path.ArrayPath`,
:class:`~shardwidget.views.function_path.FunctionPath`,
:class:`~shardwidget.views.tree_path.TreePath`. :class:`~shardwidget.views.base.ShardView`
drives one through ``_change`` and publishes what it computes; tests drive one without a
kernel. ``S`` is the kind's layout state (``LayoutState``, ``TraceState``, ``TreeState``), ``R``
what its compute returns.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar


class State(Protocol):
    """A kind's layout state: immutable, compared by value, and written as its trait values."""

    def to_wire(self) -> dict[str, Any]:
        """The trait values of this state."""
        ...


S = TypeVar("S", bound=State)
R_co = TypeVar("R_co", covariant=True)


class ChangePath(Protocol[S, R_co]):
    """What :class:`~shardwidget.views.base.ShardView` asks of a kind's change path."""

    def from_wire(self, d: dict[str, Any]) -> S:
        """The state of trait values or a front-end request; ValueError when malformed."""
        ...

    def adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """Complete a candidate's trait values after ``changes`` (in place)."""
        ...

    def check(self, st: S) -> None:
        """Validation (no device work): ValueError naming what is wrong."""
        ...

    def compute(self, st: S) -> R_co:
        """The work for a valid state (device_put; compile and run; rules applied)."""
        ...

    def label(self, st: S) -> str:
        """The state in a few words (the undo/redo buttons' tooltips)."""
        ...
