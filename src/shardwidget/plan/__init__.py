"""Plans for meshes bigger than the kernel: compile for N simulated devices in a helper process."""

from .compile import Plan, plan
from .gpu import GpuMeshInfo, gpu_mesh
from .helper import PlanError
from .largest_fit import Fit, largest_fit
from .tpu import TpuMeshInfo, tpu_mesh

__all__ = [
    "Fit",
    "GpuMeshInfo",
    "Plan",
    "PlanError",
    "TpuMeshInfo",
    "gpu_mesh",
    "largest_fit",
    "plan",
    "tpu_mesh",
]
