"""shardwidget: see, live, how a jax.Array is laid out across devices, and change it."""

from .fnview import FunctionView, compare
from .widget import ShardView

__version__ = "0.1.0"
__all__ = ["FunctionView", "ShardView", "__version__", "compare"]
