"""shardwidget: see, live, how a jax.Array is laid out across devices, and change it.

``ShardView(arr)`` returns an :class:`ArrayView`, ``ShardView(f, *args)`` a
:class:`FunctionView`, ``ShardView(tree)`` (a model's parameters, an optimizer state, an
``eval_shape`` tree) a :class:`TreeView`; all are ShardViews. :func:`compare` puts function
views side by side (and two array views as a layout diff). ``view.code`` is the Python of the
layout shown; :func:`memory_map` shows device memory over every live array;
:func:`suggest_layouts` lists the layouts (and paddings) that fit a shape; :func:`search`
finds a layout for a step on a pod (candidates compiled by its compiler, ranked by fit and
time). ``view.snapshot()`` is a :class:`Snapshot`: the view frozen now, to display in
narrative notebooks.
"""

from .cost.estimate import Estimate
from .cost.hardware import Hardware, hardware
from .cost.reshard import Transfer
from .export.page import ExportReport
from .layout_search import Candidate, Search, search
from .model.help import suggest_layouts
from .model.layout import Layout
from .model.memory_map import MemoryMap, memory_map
from .model.state import LayoutState
from .plan.gpu import gpu_mesh
from .plan.tpu import tpu_mesh
from .render.snapshot import Snapshot
from .trace.result import TraceResult, TraceState
from .views import ArrayView, Comparison, FunctionView, ShardView, TreeView, compare

__version__ = "0.1.0"
__all__ = [
    "ArrayView",
    "Candidate",
    "Comparison",
    "Estimate",
    "ExportReport",
    "FunctionView",
    "Hardware",
    "Layout",
    "LayoutState",
    "MemoryMap",
    "Search",
    "ShardView",
    "Snapshot",
    "TraceResult",
    "TraceState",
    "Transfer",
    "TreeView",
    "__version__",
    "compare",
    "gpu_mesh",
    "hardware",
    "memory_map",
    "search",
    "suggest_layouts",
    "tpu_mesh",
]
