"""shardwidget: see, live, how a jax.Array is laid out across devices, and change it.

``ShardView(arr)`` returns an :class:`ArrayView`, ``ShardView(f, *args)`` a
:class:`FunctionView`; both are ShardViews. :func:`compare` puts function views side by side.
"""

from .cost.estimate import Estimate
from .cost.hardware import Hardware, hardware
from .cost.reshard import Transfer
from .export import ExportReport
from .layout import Layout
from .state import LayoutState
from .trace import TraceResult, TraceState
from .views import ArrayView, Comparison, FunctionView, ShardView, compare

__version__ = "0.1.0"
__all__ = [
    "ArrayView",
    "Comparison",
    "Estimate",
    "ExportReport",
    "FunctionView",
    "Hardware",
    "Layout",
    "LayoutState",
    "ShardView",
    "TraceResult",
    "TraceState",
    "Transfer",
    "__version__",
    "compare",
    "hardware",
]
