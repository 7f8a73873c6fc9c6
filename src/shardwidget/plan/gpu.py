"""Plans by the GPU's own compiler: :func:`gpu_mesh` and the GPU planning helper.

A GPU plan's mesh is a ``jax.sharding.AbstractMesh`` (every ``mesh=`` takes it) whose abstract
device says "cuda" and names the GPU and the topology; :func:`info` gives the rest. The kernel
lowers for CUDA (``lowering_platforms=("cuda",)``: no plugin needed) and the GPU helper
(``_gpu_worker.py``, run by the GPU compiler's own venv: :mod:`.compilers`) compiles the module
text with a compile-only CUDA client made from the GPU's target config (XLA's
``xla/backends/gpu/target_config/specs``, shipped in ``gpu_specs/``) and a topology
"SLICESxHOSTSxGPUS", as ``jax.experimental.topologies`` does. The kernel never loads the CUDA
plugin. No autotuning happens (no GPU to time kernels on), and the compile-only client has no
cost analysis: FLOPs are counted from the HLO.
"""

from __future__ import annotations

import numbers
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from jax.sharding import AbstractMesh, Mesh

from .. import _jax
from . import compilers
from . import helper as _helper

GPU_WORKER = pathlib.Path(__file__).with_name("_gpu_worker.py")
SPECS = pathlib.Path(__file__).with_name("gpu_specs")
START_TIMEOUT_S = 120.0
MEMORY_FRACTION = 0.75
"""What JAX's GPU client takes of a GPU's memory by default (it preallocates 75 %:
``XLA_PYTHON_CLIENT_MEM_FRACTION``); the rest is the CUDA context's, cuBLAS' and cuDNN's."""


@dataclass(frozen=True)
class GpuPreset:
    """One GPU :func:`gpu_mesh` knows."""

    name: str
    """What :func:`gpu_mesh` takes ("h100")."""
    spec: str
    """Its target config in ``gpu_specs/`` (XLA's file name)."""
    title: str
    """How notes name it ("H100 SXM")."""
    hardware: str
    """The cost preset (:mod:`shardwidget.cost.hardware`) with its speeds; "" where none has
    this GPU's (the estimate then needs ``hardware=``)."""
    nvlink_domain: int = 0
    """GPUs that one NVLink domain joins by default: 0 for a host's GPUs (an HGX board's
    NVSwitch joins only its own host's), 72 for a GB200 NVL72 rack."""
    link: str = "NVLink"
    """What joins a host's GPUs: "NVLink" (SXM parts through NVSwitch; the target config's
    ``device_interconnect_info`` counts the links where XLA's has it), "PCIe" for PCIe cards
    (H100 PCIe: PCIe Gen5, NVLink bridges join pairs only). As the cost preset's ``link``."""


PRESETS: dict[str, GpuPreset] = {
    p.name: p
    for p in (
        GpuPreset("a100-40", "a100_sxm_40.txtpb", "A100 SXM 40 GB", "a100-40"),
        GpuPreset("a100-80", "a100_sxm_80.txtpb", "A100 SXM 80 GB", "a100"),
        GpuPreset("h100-sxm", "h100_sxm.txtpb", "H100 SXM", "h100"),
        GpuPreset("h100-pcie", "h100_pcie.txtpb", "H100 PCIe", "h100-pcie", link="PCIe"),
        GpuPreset("h200", "h200.txtpb", "H200", "h200"),
        GpuPreset("b200", "b200.txtpb", "B200", "b200"),
        GpuPreset("gb200", "gb200.txtpb", "GB200", "gb200", nvlink_domain=72),
    )
}
ALIASES = {"a100": "a100-80", "h100": "h100-sxm"}


def preset(gpu: str) -> GpuPreset:
    """The preset called ``gpu`` (or an alias: "h100", "a100"); ValueError listing the known
    ones for any other name."""
    key = str(gpu).lower().strip()
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        known = ", ".join([*PRESETS, *(f"{a} (= {b})" for a, b in ALIASES.items())])
        raise ValueError(f"unknown GPU {gpu!r}; gpu_mesh knows: {known}")
    return PRESETS[key]


def target_config(p: GpuPreset) -> str:
    """The preset's target config text, as XLA ships it."""
    return (SPECS / p.spec).read_text()


def device_memory(text: str) -> int | None:
    """``device_memory_size`` of a target config (bytes); None where it has none."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("device_memory_size:"):
            return int(s.split(":", 1)[1])
    return None


@dataclass(frozen=True)
class GpuMeshInfo:
    """What a :func:`gpu_mesh` stands for.

    Attributes:
        gpu: the preset (:class:`GpuPreset`).
        slices, hosts, gpus_per_host: the topology (hosts per slice).
        device_kind: the GPU's name as its target config gives it ("NVIDIA H100 80GB HBM3").
        jaxlib, plugin: the helper's versions.
        mesh_shape, axis_names: the logical mesh.
        device_ids: the topology's device id at each position of the mesh (row-major).
        host: each position's host (its process index: hosts of all slices, in order).
        gpu_in_host: each position's GPU on its host.
        slice_index: each position's slice.
        device_memory: bytes of the GPU's memory (the target config's ``device_memory_size``).
        memory_fraction: the part of it a JAX program gets (:data:`MEMORY_FRACTION`).
        nvlink_domain: GPUs joined by one NVLink domain.
        dropped: the target config's fields this jaxlib refused (removed for the compile).
        target_config: the GPU's target config text, as shipped (sent with each compile).
    """

    gpu: GpuPreset
    slices: int
    hosts: int
    gpus_per_host: int
    device_kind: str
    jaxlib: str
    plugin: str
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    device_ids: tuple[int, ...]
    host: tuple[int, ...]
    gpu_in_host: tuple[int, ...]
    slice_index: tuple[int, ...]
    device_memory: int | None
    memory_fraction: float
    nvlink_domain: int
    dropped: tuple[str, ...] = ()
    target_config: str = field(default="", repr=False)

    @property
    def topology(self) -> str:
        """ "SLICESxHOSTSxGPUS", as the CUDA plugin takes it ("1x2x8")."""
        return f"{self.slices}x{self.hosts}x{self.gpus_per_host}"

    @property
    def n_gpus(self) -> int:
        """GPUs of the topology (slices × hosts × GPUs per host)."""
        return self.slices * self.hosts * self.gpus_per_host

    @property
    def usable_memory(self) -> int | None:
        """Bytes a JAX program gets on each GPU (the fraction of its memory)."""
        m = self.device_memory
        return None if m is None else int(m * self.memory_fraction)

    @property
    def title(self) -> str:
        """ "2 hosts × 8 H100 SXM", "2 slices × 18 hosts × 4 GB200"."""
        hosts = f"{self.hosts} host{'s' if self.hosts > 1 else ''}"
        slices = f"{self.slices} slices × " if self.slices > 1 else ""
        return f"{slices}{hosts} × {self.gpus_per_host} {self.gpu.title}"

    def link(self, moved: set[str]) -> str:
        """What a step along an axis that moves along ``moved`` ("gpu", "host", "domain",
        "slice") travels over, in words (within a host the GPU's own link: PCIe cards have no
        NVLink domain, so another host is across the network)."""
        if "slice" in moved or "domain" in moved:
            return "network (InfiniBand / Ethernet, across hosts)"
        if "host" in moved:
            return f"NVLink (one NVLink domain of {self.nvlink_domain} GPUs, across hosts)"
        if self.gpu.link != "NVLink" and moved:
            return f"{self.gpu.link} (within a host; {self.gpu.title} cards have no NVSwitch)"
        return "NVLink (within a host)" if moved else "—"

    def physical_axes(self) -> dict[str, set[str]]:
        """For each logical axis, what its steps change: "gpu" (within a host), "host",
        "domain" (the NVLink domain: consecutive hosts' GPUs, ``nvlink_domain`` of them),
        "slice"."""
        per = self.gpus_per_host
        domain = [(h * per + g) // max(self.nvlink_domain, 1)
                  for g, h in zip(self.gpu_in_host, self.host, strict=True)]  # fmt: skip
        keys = ("gpu", "host", "domain", "slice")
        where = list(zip(self.gpu_in_host, self.host, domain, self.slice_index, strict=True))
        out: dict[str, set[str]] = {}
        stride = len(where)
        for name, size in zip(self.axis_names, self.mesh_shape, strict=True):
            stride //= size
            moved: set[str] = set()
            for step in range(1, size):
                a, b = where[0], where[step * stride]
                moved |= {k for k, x, y in zip(keys, a, b, strict=True) if x != y}
            out[name] = moved
        return out

    @property
    def domain_hosts(self) -> int:
        """Hosts one NVLink domain joins where it spans several (GB200 NVL72: 18), else 0."""
        hosts = self.nvlink_domain // self.gpus_per_host
        return hosts if hosts > 1 and self.gpu.link == "NVLink" else 0

    def network_axes(self) -> tuple[str, ...]:
        """Mesh axes whose collectives cross the network (the cost model's slow links)."""
        return tuple(a for a, m in self.physical_axes().items() if self.link(m).startswith("net"))

    def describe(self) -> list[str]:
        """The machine, then how each logical axis lies on it."""
        lines = [f"{self.title} ({self.n_gpus} GPUs, {self.device_kind}, topology {self.topology})"]
        for name, moved in self.physical_axes().items():
            lines.append(f"{name}: {self.link(moved)}")
        return lines


_MESHES = compilers.Meshes[GpuMeshInfo]()


def info(mesh: object) -> GpuMeshInfo | None:
    """What a :func:`gpu_mesh` stands for; None for any other mesh."""
    return _MESHES.info(mesh)


def is_gpu(mesh: object) -> bool:
    """Whether ``mesh`` came from :func:`gpu_mesh` (its plans use the GPU compiler)."""
    return info(mesh) is not None


def _whole(what: str, v: object) -> int:
    """``v`` as a count of at least 1; ValueError in words for a fraction, a bool, a string."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ValueError(f"{what} must be a whole number; got {v!r}")
    if int(v) < 1:
        raise ValueError(f"{what} must be at least 1; got {v}")
    return int(v)


def _check(
    shape: tuple[int, ...], names: tuple[str, ...], hosts: int, gpus: int, slices: int
) -> None:
    if len(shape) != len(names):
        raise ValueError(f"mesh_shape {shape} has {len(shape)} axes; axis_names has {len(names)}")
    if len(set(names)) != len(names) or not all(names):
        raise ValueError(f"axis_names {names}: each mesh axis needs a name of its own")
    n = slices * hosts * gpus
    size = 1
    for s in shape:
        if s < 1:
            raise ValueError(f"mesh_shape {shape}: every axis needs at least 1 GPU")
        size *= s
    if size != n and size % (slices * hosts):
        raise ValueError(
            f"mesh_shape {shape} has {size} positions, which do not split evenly over "
            f"{slices} slice(s) × {hosts} host(s): every host holds the same number of GPUs"
        )
    if size != n:
        raise ValueError(
            f"mesh_shape {shape} has {size} positions, but {slices} slice(s) × {hosts} host(s) "
            f"× {gpus} GPUs per host are {n} GPUs: the mesh must use every GPU once "
            f"(gpus_per_host={size // (slices * hosts)} would)"
        )


def _domain(p: GpuPreset, nvlink_domain: object, gpus: int) -> int:
    """The GPUs one NVLink domain joins: ``nvlink_domain``, else the preset's, else a host's;
    ValueError in words where it splits a host or the GPU has no NVLink."""
    if nvlink_domain is None or nvlink_domain == 0:
        domain = p.nvlink_domain or gpus
    elif p.link != "NVLink" and nvlink_domain != gpus:  # (a host's own: what it resolves to)
        raise ValueError(f"{p.title} GPUs talk over {p.link}: they have no NVLink domain")
    else:
        domain = _whole("nvlink_domain", nvlink_domain)
    if domain % gpus:
        raise ValueError(
            f"an NVLink domain of {domain} {p.title} GPUs joins whole hosts, but hosts of "
            f"{gpus} GPUs do not divide it (gpus_per_host: a divisor of {domain})"
        )
    return domain


def gpu_mesh(
    gpu: str,
    mesh_shape: Sequence[int],
    axis_names: Sequence[str],
    *,
    hosts: int = 1,
    gpus_per_host: int = 8,
    slices: int = 1,
    axis_types: object = None,
    nvlink_domain: int | None = None,
    memory_fraction: float = MEMORY_FRACTION,
) -> Any:
    """A mesh of GPUs for plans compiled by XLA's GPU compiler (jaxlib's CUDA plugin).

    ``gpu_mesh("h100", (2, 8), ("data", "model"), hosts=2)`` is a
    ``jax.sharding.AbstractMesh`` (every ``mesh=`` takes it) standing for 2 hosts of 8 H100 SXM,
    placed as ``jax.experimental.topologies.make_mesh`` places it (hosts outermost).
    ``gpu``: one of :data:`PRESETS` ("a100-40", "a100-80", "h100-sxm", "h100-pcie", "h200",
    "b200", "gb200"; "h100" and "a100" are the SXM 80 GB ones). ``hosts``: hosts per slice;
    ``slices``: groups of hosts (the CUDA plugin's topology "SLICESxHOSTSxGPUS").
    ``nvlink_domain``: GPUs one NVLink domain joins (NVLink GPUs only; default: a host's
    GPUs; 72 for "gb200", an NVL72 rack:
    ``gpu_mesh("gb200", (72,), ("data",), gpus_per_host=4, hosts=18)``).
    ``memory_fraction``: the part of each GPU's memory a program gets ("does not fit" above
    it; JAX's default 0.75). Needs the GPU compiler's venv
    (``python -m shardwidget.compilers install gpu``); PlanError in words without it."""
    p = preset(gpu)
    hosts, gpus_per_host = _whole("hosts", hosts), _whole("gpus_per_host", gpus_per_host)
    slices = _whole("slices", slices)
    shape = tuple(_whole("every mesh_shape size", s) for s in mesh_shape)
    names = tuple(str(a) for a in axis_names)
    _check(shape, names, hosts, gpus_per_host, slices)
    domain = _domain(p, nvlink_domain, gpus_per_host)
    if not 0 < memory_fraction <= 1:
        raise ValueError(f"memory_fraction must be in (0, 1]; got {memory_fraction}")
    text = target_config(p)
    topology = f"{slices}x{hosts}x{gpus_per_host}"
    h = gpu_helper()
    req = {"op": "describe", "target_config": text, "topology": topology, "mesh_shape": list(shape)}
    reply = h.request(req, _helper.busy(START_TIMEOUT_S), f"describe {topology} {p.title}")
    if "error" in reply:
        raise ValueError(
            f"no mesh {shape} on {topology} {p.title}: {compilers.first_line(reply['error'])}"
        )
    mi = _info(p, reply, h.ready, shape, names, (slices, hosts, gpus_per_host))
    mi = _replace(mi, domain, memory_fraction, text)
    key = f"{p.name}/{topology}/{mi.nvlink_domain}/{memory_fraction}"
    where = tuple(((g, hh % mi.hosts, 0), 0, s) for g, hh, s in
                  zip(mi.gpu_in_host, mi.host, mi.slice_index, strict=True))  # fmt: skip
    links = tuple(mi.link(m) for m in mi.physical_axes().values())
    device = _jax.topology_abstract_device(
        "cuda", mi.device_kind, None, key, where, links, mi.domain_hosts
    )
    mesh = _jax.abstract_mesh_on(
        shape, names, compilers.mesh_axis_types(axis_types, len(shape)), device
    )
    _MESHES.add(mesh, mi)
    return mesh


def _info(
    p: GpuPreset,
    reply: dict[str, Any],
    ready: dict[str, Any],
    shape: tuple[int, ...],
    names: tuple[str, ...],
    topo: tuple[int, int, int],
) -> GpuMeshInfo:
    slices, hosts, per = topo
    process = {int(i): int(pi) for i, pi in reply["devices"]}
    seen: dict[int, int] = {}
    local = {}
    for i in sorted(process):  # a host's GPUs in id order
        local[i] = seen.get(process[i], 0)
        seen[process[i]] = local[i] + 1
    ids = tuple(int(i) for i in reply["mesh"])
    return GpuMeshInfo(
        gpu=p,
        slices=slices,
        hosts=hosts,
        gpus_per_host=per,
        device_kind=str(reply["device_kind"]),
        jaxlib=str(ready.get("jaxlib", "?")),
        plugin=str(ready.get("plugin", "?")),
        mesh_shape=shape,
        axis_names=names,
        device_ids=ids,
        host=tuple(process[i] for i in ids),
        gpu_in_host=tuple(local[i] for i in ids),
        slice_index=tuple(process[i] // hosts for i in ids),
        device_memory=None,
        memory_fraction=MEMORY_FRACTION,
        nvlink_domain=p.nvlink_domain,
        dropped=tuple(reply.get("dropped", ())),
    )


def _replace(mi: GpuMeshInfo, domain: int, fraction: float, text: str) -> GpuMeshInfo:
    return replace(
        mi,
        nvlink_domain=int(domain),
        memory_fraction=float(fraction),
        device_memory=device_memory(text),
        target_config=text,
    )


def reshaped(mesh: Mesh | AbstractMesh, like: Any) -> Any:
    """The same GPUs' :func:`gpu_mesh` with the axes of the AbstractMesh ``like``."""
    mi = info(mesh)
    assert mi is not None
    return gpu_mesh(
        mi.gpu.name,
        tuple(like.axis_sizes),
        tuple(like.axis_names),
        hosts=mi.hosts,
        gpus_per_host=mi.gpus_per_host,
        slices=mi.slices,
        axis_types=tuple(like.axis_types),
        nvlink_domain=mi.nvlink_domain,
        memory_fraction=mi.memory_fraction,
    )


# ------------------------------------------------------------------------------ the helper
class GpuHelper(compilers.CompilerHelper):
    """The process with the CUDA plugin that compiles for GPU topologies (one serves them all)."""

    what = "the GPU planning helper (jaxlib's CUDA plugin)"
    compiler = "gpu"
    worker = GPU_WORKER
    # errors stay on: a target config field this jaxlib's proto refuses is named only in the
    # parser's logged error, and then removed
    log_level = "1"

    def _environ(self) -> dict[str, str]:
        env = super()._environ()
        env.pop("CUDA_ROOT", None)  # ptxas and libdevice: the venv's nvcc wheel, as JAX finds it
        return env


_GPU: list[GpuHelper] = []


def gpu_helper() -> GpuHelper:
    """The running GPU helper, else a new one (PlanError in words: no venv, a JAX that differs
    from the kernel's, a failed start)."""
    return compilers.running(_GPU, GpuHelper)


def new_helper(nice: int = 0) -> GpuHelper:
    """A GPU helper process of its own (the search's parallel workers each start one);
    PlanError in words as :func:`gpu_helper`'s."""
    return compilers.start(GpuHelper, nice)


def stop() -> None:
    """End the GPU helper (nothing if none runs)."""
    compilers.stop_held(_GPU)


_helper.ON_STOP_ALL.append(stop)

_RESULTS = compilers.Results(keep=32)
"""GPU compiles kept, per (lowered module, GPU, topology, placement)."""


def result_key(text: str, mesh: Mesh | AbstractMesh) -> tuple[Any, ...]:
    """What a GPU result is cached by: the lowered module (without source locations), the
    GPU, the topology, the placement."""
    mi = info(mesh)
    assert mi is not None
    return (compilers.module_digest(text), mi.gpu.name, mi.topology, mi.device_ids)


def has_result(text: str, mesh: Mesh | AbstractMesh) -> bool:
    """Whether the GPU compiler's answer for this module on this mesh is cached."""
    return result_key(text, mesh) in _RESULTS


def compile_text(text: str, mesh: Mesh | AbstractMesh, timeout: float) -> dict[str, Any]:
    """What the GPU compiler made of a lowered module for a :func:`gpu_mesh` (the CPU helper's
    reply fields). PlanError in words when the helper dies, passes ``timeout`` or XLA refuses
    (the helper then ends)."""
    mi = info(mesh)
    assert mi is not None
    ask = lambda: request(gpu_helper(), text, mi, timeout)  # noqa: E731
    return _RESULTS.answer(result_key(text, mesh), ask, stop)


def request(h: _helper.Helper, text: str, mi: GpuMeshInfo, timeout: float) -> dict[str, Any]:
    """The reply of GPU helper ``h`` for a lowered module on ``mi``'s GPUs, uncached; PlanError
    in words when XLA refuses (``h`` then ends: its state is unknown)."""
    req = {
        "op": "compile",
        "module": text,
        "target_config": mi.target_config,
        "topology": mi.topology,
        "devices": list(mi.device_ids),
    }
    refused = f"XLA's GPU compiler (jaxlib {mi.jaxlib}) could not compile the plan for {mi.title}"
    return compilers.compile_request(h, req, timeout, mi.title, refused)


def note(mi: GpuMeshInfo) -> str:
    """ "compiled by XLA's GPU compiler (jaxlib 0.10.2, CUDA plugin) for 2 hosts × 8 H100 SXM:
    the program they run; kernels not autotuned"."""
    return (
        f"compiled by XLA's GPU compiler (jaxlib {mi.jaxlib}, CUDA plugin) for {mi.title}: the "
        "program they run; kernels not autotuned"
    )


def memory_words(peak: int, mi: GpuMeshInfo) -> str:
    """ "" where ``peak`` bytes (a plan's :attr:`~.compile.Plan.fit_bytes`) fit in what a
    program gets of each GPU, else "does not fit: needs 91.20 GiB of 59.33 GiB on every GPU
    (arguments + outputs + temporaries, held at once; 75 % of 79.11 GiB: …)"."""
    have = mi.usable_memory
    if have is None or peak <= have:
        return ""
    return (
        f"does not fit: needs {peak / 2**30:.2f} GiB of {have / 2**30:.2f} GiB on every GPU "
        f"(arguments + outputs + temporaries, held at once; {share_words(mi)})"
    )


def share_words(mi: GpuMeshInfo) -> str:
    """ "75 % of 79.11 GiB: JAX's share, XLA_PYTHON_CLIENT_MEM_FRACTION": what a program gets
    of each GPU, as both ``Plan.fits`` and the estimate judge it."""
    total = (mi.device_memory or 0) / 2**30
    return (
        f"{mi.memory_fraction:.0%} of {total:.2f} GiB: JAX's share, XLA_PYTHON_CLIENT_MEM_FRACTION"
    )
