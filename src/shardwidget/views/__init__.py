"""The views: one base widget (:class:`ShardView`) and its kinds, the array view, the function
view and the tree view; :func:`compare` puts function views side by side."""

from . import cells  # noqa: F401  (names notebook cells in collectives' sources)
from .array import ArrayView
from .base import ShardView
from .compare import Comparison, compare
from .function import FunctionView
from .tree import TreeView

__all__ = ["ArrayView", "Comparison", "FunctionView", "ShardView", "TreeView", "compare"]
