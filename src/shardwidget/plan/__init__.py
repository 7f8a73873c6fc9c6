"""Plans for meshes bigger than the kernel: compile for N simulated devices in a helper process."""

from .compile import Plan, plan
from .helper import PlanError

__all__ = ["Plan", "PlanError", "plan"]
