"""Plans for meshes bigger than the kernel: compile for N simulated devices in a helper process."""

from .compile import Plan, plan
from .helper import PlanError
from .tpu import TpuMeshInfo, tpu_mesh

__all__ = ["Plan", "PlanError", "TpuMeshInfo", "plan", "tpu_mesh"]
