"""The views: one base widget (:class:`ShardView`) and its two kinds, the array view and the
function view; :func:`compare` puts function views side by side."""

from .array import ArrayView
from .base import ShardView
from .compare import Comparison, compare
from .function import FunctionView
from .tree import TreeView  # noqa: F401  (registers the tree view kind)

__all__ = ["ArrayView", "Comparison", "FunctionView", "ShardView", "compare"]
