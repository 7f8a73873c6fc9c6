"""Hardware presets: the few numbers per device an estimate needs, each with its public source.

Units, per device (one TPU chip, one GPU):

============== ============================================================================
field          meaning
============== ============================================================================
peak_flops     FLOP/s, dense bf16 matrix multiply (no sparsity)
hbm_bytes      bytes of device memory (HBM)
hbm_bandwidth  bytes/s between HBM and the chip
ici_bandwidth  bytes/s one device *sends* over one mesh axis in a collective: on a TPU torus,
               the two links of that axis (one to each ring neighbour), one direction each;
               on a GPU, its NVLink bandwidth in one direction (NVSwitch: any peer)
ici_latency    seconds per step of a collective over ICI (TPU) or NVLink (GPU): one ring
               step, one message to a neighbour and its synchronisation
dcn_latency    seconds per step over the data-centre network, for a mesh axis marked as
               crossing slices or hosts (``dcn_axes=`` of an estimate)
dcn_bandwidth  bytes/s one device sends over that network (scale-out), one direction: a
               collective whose groups cross it moves at this rate, not the ICI/NVLink's
============== ============================================================================

The presets (sources read 2026-11-23):

======== ========= ========== ============ ============= =====================================
name     peak bf16 HBM        HBM bw       ICI / axis    source
======== ========= ========== ============ ============= =====================================
tpu-v4   275 TF/s  32 GiB     1200 GB/s    100 GB/s      cloud.google.com/tpu/docs/v4; links:
                                                         6 ICI links at 50 GB/s per direction
                                                         (TPU v4 paper, arXiv:2304.01433)
tpu-v5e  197 TF/s  16 GB      819 GB/s     100 GB/s      cloud.google.com/tpu/docs/v5e: 400 GB/s
                                                         bidirectional ICI per chip, 4 ports
tpu-v5p  459 TF/s  95 GB      2765 GB/s    200 GB/s      cloud.google.com/tpu/docs/v5p: 1200 GB/s
                                                         bidirectional ICI per chip, 3D torus
                                                         (6 ports)
tpu-v6e  918 TF/s  32 GB      1638 GB/s    200 GB/s      cloud.google.com/tpu/docs/v6e: 800 GB/s
                                                         bidirectional ICI per chip, 4 ports
h100     989 TF/s  80 GB      3.35 TB/s    450 GB/s      nvidia.com/en-us/data-center/h100 (SXM:
                                                         1979 TF/s bf16 with sparsity, so 989
                                                         dense; NVLink 900 GB/s both directions)
a100     312 TF/s  80 GB      2039 GB/s    300 GB/s      nvidia.com/en-us/data-center/a100 (80GB
                                                         SXM: 312 TF/s bf16 dense; NVLink 600
                                                         GB/s both directions)
a100-40  312 TF/s  40 GB      1555 GB/s    300 GB/s      NVIDIA A100 datasheet (40GB SXM: 312
                                                         TF/s bf16 dense, HBM2 1,555 GB/s; NVLink
                                                         600 GB/s both directions)
h100-pcie 756 TF/s 80 GB      2 TB/s       64 GB/s       nvidia.com/en-us/data-center/h100 (PCIe:
                                                         1513 TF/s bf16 with sparsity, so 756
                                                         dense; PCIe Gen5 128 GB/s both
                                                         directions between GPUs)
h200     989 TF/s  141 GB     4.8 TB/s     450 GB/s      nvidia.com/en-us/data-center/h200 (SXM:
                                                         H100's compute, 141 GB HBM3e at 4.8
                                                         TB/s; NVLink 900 GB/s both directions)
b200     2250 TF/s 178 GiB    7.7 TB/s     900 GB/s      XLA's GPU target spec
                                                         (xla/backends/gpu/target_config/specs/
                                                         b200.txtpb: usable memory, bandwidth);
                                                         nvidia.com/en-us/data-center/hgx (HGX
                                                         B200: 36 PF bf16 sparse / 8 GPUs / 2);
                                                         NVLink 5: 1.8 TB/s both directions
gb200    2500 TF/s 186 GB     8 TB/s       900 GB/s      nvidia.com/en-us/data-center/gb200-nvl72
                                                         (NVL72: 180 PF bf16 dense, 13.4 TB HBM3e
                                                         at 576 TB/s over 72 GPUs; one NVLink
                                                         domain of 72 GPUs, 1.8 TB/s per GPU)
tpu7x    1154 TF/s 96 GiB     3.69 TB/s    100 GB/s      cloud.google.com/tpu/docs/tpu7x (Ironwood:
                                                         per chip 2307 TF/s bf16, 192 GiB at 7.38
                                                         TB/s, 1.2 TB/s bidirectional ICI, 3D
                                                         torus, 6 ports); JAX sees two devices per
                                                         chip: each figure here is half a chip's
======== ========= ========== ============ ============= =====================================

Latencies per collective step (the "α" of the α-β model: a collective of ``s`` steps costs
``s × latency`` before any byte counts):

======== ============ ============ =================================================================
name     ICI/NVLink   DCN          source
======== ============ ============ =================================================================
tpu-*    1 µs         10 µs        ICI: "How to Scale Your Model" (jax-ml.github.io/scaling-book,
                                   part 3, "Sharded Matrices"), which takes about 1 µs per ICI hop
                                   for latency-bound collectives. DCN: NCCL's model of a network
                                   ring step (src/graph/tuning.cc, hwLat NET Ring Simple 9.6 µs,
                                   rounded to 10); Google publishes no per-step DCN latency
h100     1.9 µs       10 µs        NVLink: NCCL's model (src/graph/tuning.cc, hwLat NVLink Ring
a100, h200, b200, gb200                               LL128 = 1.9 µs per step); DCN as above
h100-pcie 2.5 µs      10 µs        PCIe: NCCL's model (hwLat PCI Ring LL128 = 2.5 µs); DCN as above
======== ============ ============ =================================================================

Network (scale-out) bandwidth per device, one direction: a collective over an axis that
crosses slices or hosts pays the network's latency *and* moves its bytes at this rate (the
slowest link its groups cross sets its time):

========== =========== ==================================================================
name       network     source
========== =========== ==================================================================
h100, h200 50 GB/s     DGX H100/H200: 8 × ConnectX-7 400 Gb/s, one per GPU
                       (docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html)
b200       50 GB/s     DGX B200: 8 × ConnectX-7 400 Gb/s, one per GPU
                       (docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html)
a100(-40)  25 GB/s     DGX A100: 8 × ConnectX-6 200 Gb/s, one per GPU
                       (docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html)
gb200      50 GB/s     assumed: one 400 Gb/s NIC per GPU outside the NVLink domain (a
                       typical GB200 NVL72 scale-out network; racks vary)
h100-pcie  25 GB/s     assumed: one 200 Gb/s NIC per GPU (a typical PCIe server)
tpu-*      6.25 GB/s   assumed: 50 Gb/s of DCN per chip, the order the scaling book works
                       with (jax-ml.github.io/scaling-book/tpus/, "DCN"); Google publishes
                       no per-chip DCN figure
========== =========== ==================================================================

A preset of your own without ``dcn_bandwidth`` prices the network at its ``ici_bandwidth``
and every estimate on it says so.

TPU "ICI / axis": per-chip bidirectional ICI bandwidth / ports / 2 directions = one link one
way; times 2 links per torus axis. ``local`` is measured on the machine at hand (see
:func:`measure_local`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

GB, GIB = 1e9, float(1 << 30)


@dataclasses.dataclass(frozen=True)
class Hardware:
    """One device of a target machine. Units in the module docstring; all numbers > 0."""

    name: str
    """The preset's name ("tpu-v5e", "h100", …), as ``hardware`` traits and
    ``estimate(...)`` take it."""
    peak_flops: float
    """FLOP/s, dense bf16."""
    hbm_bytes: float
    """Bytes of device memory."""
    hbm_bandwidth: float
    """Bytes/s to and from device memory."""
    ici_bandwidth: float
    """Bytes/s one device sends over one mesh axis in a collective."""
    label: str = ""
    """The name the dropdown shows ("" shows ``name``)."""
    source: str = ""
    """Where the numbers come from (URLs), or how they were measured."""
    ici_latency: float = 1e-6
    """Seconds per collective step over ICI / NVLink (default 1 µs)."""
    dcn_latency: float = 10e-6
    """Seconds per collective step over an axis that crosses slices or hosts (default 10 µs)."""
    link: str = "ICI"
    """What ``ici_latency`` and ``ici_bandwidth`` travel over, in words ("ICI", "NVLink")."""
    dcn_bandwidth: float = 0.0
    """Bytes/s one device sends over the network between slices or hosts, one direction;
    0: not given (the network is then priced at ``ici_bandwidth``, and estimates say so)."""
    dcn_link: str = "DCN"
    """What the slow link is called in estimates ("DCN" between TPU slices, "network" between
    GPU hosts)."""
    topology: str = ""
    """For a TPU, its family as ``shardwidget.tpu_mesh`` names topologies ("v5e" for
    ``"v5e:16x16"``; "v5" with ``chip_config_name="megacore"`` for v5p): a plan on it can be
    compiled by that TPU's own compiler. "" for other hardware."""

    def __post_init__(self) -> None:
        for f in ("peak_flops", "hbm_bytes", "hbm_bandwidth", "ici_bandwidth", "ici_latency",
                  "dcn_latency"):  # fmt: skip
            v = getattr(self, f)
            if not isinstance(v, int | float) or not v > 0 or v != v or v == float("inf"):
                raise ValueError(
                    f"hardware {self.name!r}: {f} must be a positive number; got {v!r}"
                )
        d = self.dcn_bandwidth
        if not isinstance(d, int | float) or not d >= 0 or d == float("inf"):
            raise ValueError(
                f"hardware {self.name!r}: dcn_bandwidth must be >= 0 (0: not given); got {d!r}"
            )
        if not self.name:
            raise ValueError("hardware: a preset needs a name")

    @property
    def network_bandwidth(self) -> float:
        """Bytes/s over the network: ``dcn_bandwidth``, else (not given) ``ici_bandwidth``."""
        return self.dcn_bandwidth or self.ici_bandwidth

    def to_wire(self) -> dict[str, Any]:
        """The preset as the dropdown lists it (wire.HardwareWire)."""
        return {
            "name": self.name,
            "label": self.label or self.name,
            "peak_flops": float(self.peak_flops),
            "hbm_bytes": float(self.hbm_bytes),
            "hbm_bandwidth": float(self.hbm_bandwidth),
            "ici_bandwidth": float(self.ici_bandwidth),
            "ici_latency": float(self.ici_latency),
            "dcn_latency": float(self.dcn_latency),
            "source": self.source,
        }


_TPU = "https://cloud.google.com/tpu/docs/"
_NCCL = "https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc"
_LAT_TPU = (
    "; latency: ICI 1 µs per hop, https://jax-ml.github.io/scaling-book/sharding/; DCN 10 µs "
    "per step, NCCL's network ring step " + _NCCL + "; DCN 6.25 GB/s per chip per direction, "
    "assumed (50 Gb/s, the order https://jax-ml.github.io/scaling-book/tpus/ works with; Google "
    "publishes no per-chip figure)"
)
_DGX = "https://docs.nvidia.com/dgx/"
_NET_H100 = (
    "; network 50 GB/s per GPU per direction: DGX H100/H200, 8 × ConnectX-7 400 Gb/s, one "
    "per GPU, " + _DGX + "dgxh100-user-guide/introduction-to-dgxh100.html"
)
_NET_B200 = (
    "; network 50 GB/s per GPU per direction: DGX B200, 8 × ConnectX-7 400 Gb/s, one per GPU, "
    + _DGX
    + "dgxb200-user-guide/introduction-to-dgxb200.html"
)
_NET_A100 = (
    "; network 25 GB/s per GPU per direction: DGX A100, 8 × ConnectX-6 200 Gb/s, one per GPU, "
    + _DGX
    + "dgxa100-user-guide/introduction-to-dgxa100.html"
)
_NET_GB200 = (
    "; network 50 GB/s per GPU per direction, assumed: one 400 Gb/s NIC per GPU outside the "
    "NVLink domain (a typical NVL72 scale-out network; racks vary)"
)
_NET_PCIE = (
    "; network 25 GB/s per GPU per direction, assumed: one 200 Gb/s NIC per GPU (a typical "
    "PCIe server)"
)
_LAT_GPU = "; latency: NVLink 1.9 µs per ring step (NCCL's LL128 hwLat), DCN 10 µs: " + _NCCL
_TPU_LAT: dict[str, Any] = {"ici_latency": 1e-6, "dcn_latency": 10e-6, "dcn_bandwidth": 6.25 * GB}
_GPU_LAT: dict[str, Any] = {
    "ici_latency": 1.9e-6, "dcn_latency": 10e-6, "link": "NVLink", "dcn_link": "network"
}  # fmt: skip
# H100 PCIe cards in one host talk over PCIe (an NVLink bridge joins pairs only)
_LAT_PCIE = "; latency: PCIe 2.5 µs per ring step (NCCL's PCI LL128 hwLat), DCN 10 µs: " + _NCCL
_PCIE_LAT: dict[str, Any] = {
    "ici_latency": 2.5e-6, "dcn_latency": 10e-6, "link": "PCIe", "dcn_link": "network"
}  # fmt: skip
_A100_SHEET = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
PRESETS: dict[str, Hardware] = {
    h.name: h
    for h in (
        Hardware(
            "tpu-v4", 275e12, 32 * GIB, 1200 * GB, 2 * 50 * GB, "TPU v4",
            _TPU + "v4 (read 2026-11-23); ICI links: https://arxiv.org/abs/2304.01433" + _LAT_TPU,
            **_TPU_LAT, topology="v4",
        ),
        # ICI per axis: bidirectional per chip / ports / 2 directions × 2 links per torus axis
        Hardware(
            "tpu-v5e", 197e12, 16 * GB, 819 * GB, 400 * GB / 4 / 2 * 2, "TPU v5e",
            _TPU + "v5e (read 2026-11-23)" + _LAT_TPU, **_TPU_LAT, topology="v5e",
        ),
        Hardware(
            "tpu-v5p", 459e12, 95 * GB, 2765 * GB, 1200 * GB / 6 / 2 * 2, "TPU v5p",
            _TPU + "v5p (read 2026-11-23)" + _LAT_TPU, **_TPU_LAT, topology="v5",
        ),
        Hardware(
            "tpu-v6e", 918e12, 32 * GB, 1638 * GB, 800 * GB / 4 / 2 * 2, "TPU v6e",
            _TPU + "v6e (read 2026-11-23)" + _LAT_TPU, **_TPU_LAT, topology="v6e",
        ),
        # a JAX device of TPU7x is one of the chip's two TensorCores: half the chip's figures
        Hardware(
            "tpu7x", 2307e12 / 2, 192 * GIB / 2, 7.37e12 / 2, 1200 * GB / 6 / 2 * 2 / 2,
            "TPU7x (Ironwood)", _TPU + "tpu7x (read 2026-11-26): per chip 2307 TF/s bf16, 192 "
            "GiB HBM, 7.37 TB/s, 1.2 TB/s bidirectional ICI; per device (TensorCore) half"
            + _LAT_TPU + " (per device: half the chip's)",
            **{**_TPU_LAT, "dcn_bandwidth": 6.25 * GB / 2}, topology="tpu7x",
        ),
        Hardware(
            "h100", 989e12, 80 * GB, 3.35e12, 900 * GB / 2, "H100 SXM",
            "https://www.nvidia.com/en-us/data-center/h100/ (read 2026-11-23)"
            + _LAT_GPU + _NET_H100,
            **_GPU_LAT, dcn_bandwidth=50 * GB,
        ),
        Hardware(
            "a100", 312e12, 80 * GB, 2039 * GB, 600 * GB / 2, "A100 80GB SXM",
            "https://www.nvidia.com/en-us/data-center/a100/ (read 2026-11-23)"
            + _LAT_GPU + _NET_A100,
            **_GPU_LAT, dcn_bandwidth=25 * GB,
        ),
        Hardware(
            "a100-40", 312e12, 40 * GB, 1555 * GB, 600 * GB / 2, "A100 40GB SXM",
            _A100_SHEET + " (A100 40GB SXM: 312 TF/s bf16 dense, 40 GB HBM2 at 1,555 GB/s, "
            "NVLink 600 GB/s both directions; read 2026-11-28)" + _LAT_GPU + _NET_A100,
            **_GPU_LAT, dcn_bandwidth=25 * GB,
        ),
        Hardware(
            "h100-pcie", 1513e12 / 2, 80 * GB, 2e12, 128 * GB / 2, "H100 PCIe",
            "https://www.nvidia.com/en-us/data-center/h100/ (H100 PCIe: 1,513 TF/s bf16 with "
            "sparsity, so 756 dense; 80 GB at 2 TB/s; GPU to GPU over PCIe Gen5 128 GB/s both "
            "directions, NVLink bridges join pairs only; read 2026-11-28)" + _LAT_PCIE + _NET_PCIE,
            **_PCIE_LAT, dcn_bandwidth=25 * GB,
        ),
        Hardware(
            "h200", 989e12, 141 * GB, 4.8e12, 900 * GB / 2, "H200 SXM",
            "https://www.nvidia.com/en-us/data-center/h200/ (read 2026-11-26)"
            + _LAT_GPU + _NET_H100,
            **_GPU_LAT, dcn_bandwidth=50 * GB,
        ),
        Hardware(
            "b200", 2250e12, 178 * GIB, 7.7e12, 1800 * GB / 2, "B200",
            "https://github.com/openxla/xla/tree/main/xla/backends/gpu/target_config/specs "
            "(b200: usable memory and bandwidth); https://www.nvidia.com/en-us/data-center/hgx/ "
            "(HGX B200: 36 PF bf16 with sparsity over 8 GPUs; NVLink 5 1.8 TB/s per GPU, both "
            "directions; read 2026-11-26)" + _LAT_GPU + _NET_B200,
            **_GPU_LAT, dcn_bandwidth=50 * GB,
        ),
        Hardware(
            "gb200", 2500e12, 186 * GB, 8e12, 1800 * GB / 2, "GB200 NVL72 (72-GPU NVLink domain)",
            "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (per GPU: 180 PF bf16 dense, "
            "13.4 TB HBM3e at 576 TB/s over 72 GPUs, one NVLink domain of 72 GPUs at 1.8 TB/s "
            "per GPU both directions; read 2026-11-26)" + _LAT_GPU + _NET_GB200,
            **_GPU_LAT, dcn_bandwidth=50 * GB,
        ),
    )
}  # fmt: skip
NAMES = (*PRESETS, "local")
DEFAULT = "tpu-v5p"
_USER: dict[str, Hardware] = {}


def hardware(name: str | Hardware | None = None, /, **fields: Any) -> Hardware:
    """A hardware preset: ``hardware("tpu-v5p")``, ``hardware("local")`` (measured once on this
    machine), or a preset of your own: ``hardware(name="my-gpu", peak_flops=..., hbm_bytes=...,
    hbm_bandwidth=..., ici_bandwidth=...)``, which is also registered under its name (views'
    ``hardware`` trait and ``estimate("my-gpu")`` then find it). A Hardware is returned as is."""
    if isinstance(name, Hardware) and not fields:
        return name
    if fields:
        if name is not None and "name" not in fields:
            fields["name"] = name
        allowed = {f.name for f in dataclasses.fields(Hardware)}
        bad = sorted(set(fields) - allowed)
        if bad:
            raise TypeError(
                f"hardware() got {bad[0]!r}; a preset has: {', '.join(sorted(allowed))}"
            )
        missing = sorted(
            f
            for f in ("name", "peak_flops", "hbm_bytes", "hbm_bandwidth", "ici_bandwidth")
            if f not in fields
        )
        if missing:
            raise TypeError(f"hardware(...) of your own needs {', '.join(missing)}")
        if fields["name"] in NAMES:
            raise ValueError(f"{fields['name']!r} is a built-in preset; give yours another name")
        return register(Hardware(**fields))
    if name is None:
        name = DEFAULT
    if not isinstance(name, str):
        raise TypeError(
            f"hardware: expected a preset name or a Hardware; got {type(name).__name__}"
        )
    if name == "local":
        return measure_local()
    if name in PRESETS:
        return PRESETS[name]
    if name in _USER:
        return _USER[name]
    raise ValueError(f"unknown hardware {name!r}; presets: {', '.join(names())}")


_KINDS = {"TPU v4": "tpu-v4", "TPU v5 lite": "tpu-v5e", "TPU v5": "tpu-v5p", "TPU v5p": "tpu-v5p",
          "TPU v6 lite": "tpu-v6e", "TPU7x": "tpu7x",
          # a shardwidget.gpu_mesh's kind: its target config's name (no preset has the
          # speeds of an A100 40 GB or an H100 PCIe: those take the fallback)
          "NVIDIA H100 80GB HBM3": "h100", "NVIDIA H200 141GB HBM3e": "h200",
          "NVIDIA A100-SXM4-80GB": "a100", "NVIDIA B200": "b200",
          "NVIDIA GB200": "gb200"}  # fmt: skip


def preset_for(mesh: Any, fallback: str) -> str:
    """The preset of the TPU or GPU a mesh stands for (a ``shardwidget.tpu_mesh`` or
    ``gpu_mesh``: its abstract device's kind, "TPU v5 lite" -> "tpu-v5e", "NVIDIA H100 80GB
    HBM3" -> "h100"), else ``fallback``."""
    kind = getattr(getattr(mesh, "abstract_device", None), "device_kind", None)
    return _KINDS.get(str(kind), fallback)


def kind_preset(device_kind: str) -> str:
    """The preset of a JAX device kind ("TPU v5 lite" -> "tpu-v5e"); "" where none has it."""
    return _KINDS.get(device_kind, "")


def register(h: Hardware) -> Hardware:
    """Make a preset of your own findable by its name (what ``hardware(name=..., ...)`` does;
    views' ``hardware`` trait does it for a Hardware it is given). ValueError for a built-in
    preset's name."""
    if h.name in NAMES and h != PRESETS.get(h.name):
        raise ValueError(f"{h.name!r} is a built-in preset; give yours another name")
    if h.name not in NAMES:
        _USER[h.name] = h
    return h


def names() -> list[str]:
    """Every preset name, user presets last."""
    return [*NAMES, *_USER]


def listed() -> list[Hardware]:
    """The presets a dropdown offers: built-ins (``local`` only once measured) and user presets."""
    out = list(PRESETS.values())
    if measure_local.cache_info().currsize:
        out.append(measure_local())
    return out + list(_USER.values())


@functools.cache
def measure_local() -> Hardware:
    """The machine at hand, measured once per process (about a second): a jitted matmul
    (peak_flops; bfloat16 on accelerators as the presets, float32 on CPU, whose bfloat16 is
    emulated), a ``device_put`` of 64 MiB to device 0 (hbm_bandwidth), a copy from device 0 to
    the last device (ici_bandwidth; with one device, hbm_bandwidth), a one-element copy
    (ici_latency; dcn_latency at least 10 µs); hbm_bytes from the
    device's memory stats, else the host's physical memory shared by the local devices."""

    devs = jax.local_devices()
    n = 1024
    dtype = np.float32 if devs[0].platform == "cpu" else jnp.bfloat16
    a = jax.device_put(np.ones((n, n), dtype), devs[0])
    mm = jax.jit(lambda x: x @ x)
    mm(a).block_until_ready()
    flops = 2 * n**3 / _best(lambda: mm(a).block_until_ready())
    host = np.ones(16 << 20, np.float32)  # 64 MiB
    bw = host.nbytes / _best(lambda: jax.device_put(host, devs[0]).block_until_ready())
    x = jax.device_put(host, devs[0])
    ici = bw
    small = jax.device_put(np.ones(1, np.float32), devs[0])
    # a one-element copy: all latency, no bandwidth (to itself with one device)
    lat = _best(lambda: jax.device_put(small, devs[-1]).block_until_ready(), repeats=5)
    if len(devs) > 1:
        ici = host.nbytes / _best(lambda: jax.device_put(x, devs[-1]).block_until_ready())
    stats = devs[0].memory_stats() or {}
    hbm = float(stats.get("bytes_limit") or 0) or _host_memory() / len(devs)
    return Hardware(
        "local", flops, hbm, bw, ici, f"local ({devs[0].platform} × {len(devs)})",
        f"measured on this machine: {n}x{n} {np.dtype(dtype).name} matmul, 64 MiB device_put, "
        "device-to-device copy; latency: a one-element device-to-device copy",
        ici_latency=lat, dcn_latency=max(lat, 10e-6), link="device-to-device", dcn_bandwidth=ici,
    )  # fmt: skip


def _best(f: Any, repeats: int = 3) -> float:
    """The fastest of a few runs, seconds (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return max(best, 1e-9)


def _host_memory() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * GIB
