"""Plans for meshes bigger than the kernel: compile for N simulated devices in a helper process."""

from .compile import Plan, plan
from .gpu import GpuMeshInfo, gpu_mesh
from .helper import PlanError
from .tpu import TpuMeshInfo, tpu_mesh

__all__ = ["GpuMeshInfo", "Plan", "PlanError", "TpuMeshInfo", "gpu_mesh", "plan", "tpu_mesh"]
