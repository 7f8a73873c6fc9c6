"""The layouts a view has shown, for undo and redo: a plain list with a cursor, no widget code.

:class:`~shardwidget.views.base.ShardView` notes each state it publishes here and steps
through them on undo/redo (showing a remembered state through its change path again).
"""

from __future__ import annotations

from typing import Generic, TypeVar

S = TypeVar("S")


class History(Generic[S]):
    """The states shown, oldest first, and the index of the one shown now (-1 before the
    first)."""

    def __init__(self) -> None:
        self.states: list[S] = []
        self.at = -1
        self.stepping = False  # True while undo/redo shows a remembered state

    def target(self, by: int) -> int:
        """The index ``by`` steps away (-1: undo, 1: redo); ValueError when there is none."""
        to = self.at + by
        if not 0 <= to < len(self.states):
            raise ValueError(f"nothing to {'undo' if by < 0 else 'redo'}")
        return to

    def remember(self, st: S, limit: int) -> bool:
        """Note that st is shown now: a new step (the states undone are forgotten; at most
        ``limit`` kept, the oldest forgotten first), unless undo/redo is showing a remembered
        one or st is the one shown. Whether it changed."""
        if self.stepping or (0 <= self.at < len(self.states) and self.states[self.at] == st):
            return False
        self.states = [*self.states[: self.at + 1], st][-limit:]
        self.at = len(self.states) - 1
        return True
