"""shardwidget: see, live, how a jax.Array is laid out across devices, and change it."""

from .widget import ShardView

__version__ = "0.1.0"
__all__ = ["ShardView", "__version__"]
