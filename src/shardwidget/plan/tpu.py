"""Plans by the TPU's own compiler: :func:`tpu_mesh` and the TPU planning helper.

A TPU plan's mesh is a ``jax.sharding.AbstractMesh`` (so every ``mesh=`` takes it) whose
abstract device says "TPU" and names the topology; :func:`info` gives the rest: the topology,
and for each position of the mesh (row-major) the chip's coordinates, the core on the chip and
the slice, as ``jax.experimental.topologies.make_mesh`` placed the logical mesh on the torus.
The kernel lowers for the TPU (``lowering_platforms=("tpu",)``, no libtpu needed) and the TPU
helper (``_tpu_worker.py``, an interpreter with libtpu: this one, or ``SHARDWIDGET_TPU_PYTHON``)
compiles the module text with the topology's compile-only client. An HBM overflow is an
answer (:func:`hbm_words`), not an error.
"""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jax.sharding import AbstractMesh, Mesh

from .. import _jax
from ..model import mesh as mesh_mod
from . import compilers
from . import gpu as _gpu
from . import helper as _helper

TPU_WORKER = pathlib.Path(__file__).with_name("_tpu_worker.py")
TPU_PYTHON_VAR = "SHARDWIDGET_TPU_PYTHON"
START_TIMEOUT_S = 120.0
HBM_GIB = {"v5e": 15.75, "v6e": 31.25, "v5p": 95.74, "tpu7x": 94.75}
"""Usable HBM per device (GiB), as the TPU compiler states it in its overflow errors."""
_FAMILIES = (("tpu7x", "tpu7x"), ("v5e", "v5e"), ("v6e", "v6e"), ("v5p", "v5p"), ("v5", "v5p"))


@dataclass(frozen=True)
class TpuMeshInfo:
    """What a :func:`tpu_mesh` stands for.

    Attributes:
        topology: the topology's name, as ``get_topology_desc`` takes it ("v5e:16x16").
        num_slices: slices (joined over DCN).
        chip_config_name: libtpu's chip configuration ("megacore" for v5p); "" for its default.
        family: "v5e", "v6e", "v5p", "v4", "tpu7x", … (from the topology's name).
        device_kind: JAX's device kind ("TPU v5 lite").
        libtpu: the TPU compiler's version ("0.0.42.1").
        mesh_shape, axis_names: the logical mesh.
        device_ids: the topology's device id at each position of the mesh (row-major).
        coords: each position's chip coordinates (x, y, z) on its slice's torus.
        core_on_chip: each position's core on its chip.
        slice_index: each position's slice.
        allow_split_physical_axes: whether a logical axis may split a physical one.
        topology_devices: every device of the topology: (id, (x, y, z), core, slice).
        held_shapes: the mesh shapes of as many devices, 1 to ``mesh_mod.MAX_AXES`` axes,
            that ``make_mesh`` places on this topology (the helper's answer), and this mesh's.
    """

    topology: str
    num_slices: int
    chip_config_name: str
    family: str
    device_kind: str
    libtpu: str
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    device_ids: tuple[int, ...]
    coords: tuple[tuple[int, ...], ...]
    core_on_chip: tuple[int, ...]
    slice_index: tuple[int, ...]
    allow_split_physical_axes: bool
    topology_devices: tuple[tuple[int, tuple[int, ...], int, int], ...] = field(repr=False)
    held_shapes: frozenset[tuple[int, ...]] = field(default=frozenset(), repr=False)

    @property
    def n_chips(self) -> int:
        """Chips of the topology (all slices)."""
        return len({(d[1], d[3]) for d in self.topology_devices})

    @property
    def cores_per_chip(self) -> int:
        """Devices per chip (2 for tpu7x; 1 where one device drives a chip's cores)."""
        return max(1, len(self.topology_devices) // max(1, self.n_chips))

    @property
    def hbm_bytes(self) -> int | None:
        """Usable HBM per device, where known for the family."""
        gib = HBM_GIB.get(self.family)
        return None if gib is None else int(gib * 2**30)

    @property
    def title(self) -> str:
        """ "v5e 16×16", "v5e 16×16 × 2 slices"."""
        dims = self.topology.split(":", 1)[-1].replace("x", "×")
        slices = f" × {self.num_slices} slices" if self.num_slices > 1 else ""
        return f"{self.family} {dims}{slices}"

    @property
    def machine(self) -> str:
        """What Cloud TPU calls the machine: "v5e-256"; v4 and v5p count TensorCores (two per
        chip), tpu7x its devices."""
        n = len(self.topology_devices) // self.num_slices
        if self.family in ("v4", "v5p"):
            n = 2 * self.n_chips // self.num_slices
        one = f"{self.family}-{n}"
        return one if self.num_slices == 1 else f"{self.num_slices} × {one}"

    def physical_axes(self) -> dict[str, tuple[str, ...]]:
        """For each logical axis, the physical axes its steps move along ("x", "y", "z",
        "core", "slice": DCN), read from the positions the axis joins."""
        where = tuple(zip(self.coords, self.core_on_chip, self.slice_index, strict=True))
        return mesh_mod.physical_axes(self.mesh_shape, self.axis_names, where)

    def describe(self) -> list[str]:
        """Lines a reader can take in: the machine, then how each logical axis lies on it."""
        lines = [
            f"{self.machine} ({self.title}; {self.n_chips:,} chips, "
            f"{self.cores_per_chip} device{'s' if self.cores_per_chip > 1 else ''} per chip), "
            f"{self.device_kind}"
        ]
        for name, axes in self.physical_axes().items():
            over = " × ".join(axes) if axes else "—"
            dcn = " (across slices: DCN)" if "slice" in axes else ""
            lines.append(f"{name}: along {over}{dcn}")
        return lines


_MESHES = compilers.Meshes[TpuMeshInfo]()


def info(mesh: object) -> TpuMeshInfo | None:
    """What a :func:`tpu_mesh` stands for; None for any other mesh."""
    return _MESHES.info(mesh)


def is_tpu(mesh: object) -> bool:
    """Whether ``mesh`` came from :func:`tpu_mesh` (its plans use the TPU compiler)."""
    return info(mesh) is not None


def lowering_platforms(mesh: object) -> tuple[str, ...]:
    """The platform to lower a plan for: ("tpu",) on a :func:`tpu_mesh`, ("cuda",) on a
    :func:`~.gpu.gpu_mesh`, else ("cpu",)."""
    if _gpu.is_gpu(mesh):
        return ("cuda",)
    return ("tpu",) if is_tpu(mesh) else ("cpu",)


def family_of(topology: str) -> str:
    """ "v5e:16x16" -> "v5e"; "v5:2x2x1" -> "v5p"; "v4:2x2x1" -> "v4"."""
    head = topology.split(":", 1)[0].lower()
    for prefix, fam in _FAMILIES:
        if head == prefix or head.startswith(prefix + "litepod"):
            return fam
    return head


def tpu_mesh(
    topology: str,
    mesh_shape: Sequence[int],
    axis_names: Sequence[str],
    *,
    num_slices: int = 1,
    axis_types: object = None,
    allow_split_physical_axes: bool = False,
    chip_config_name: str = "",
) -> Any:
    """A mesh of a TPU topology's chips, for plans compiled by the TPU's own compiler.

    ``tpu_mesh("v5e:16x16", (16, 16), ("data", "model"))`` is a ``jax.sharding.AbstractMesh``
    (every ``mesh=`` takes it: tree views, arrays as shapes, function views,
    :func:`shardwidget.plan.plan`) standing for a v5e-256, laid on its torus as
    ``jax.experimental.topologies.make_mesh`` lays it (a logical axis must be a product of
    physical axes unless ``allow_split_physical_axes``). ``num_slices``: slices over DCN (the
    first axis usually spans them). ``chip_config_name``: "megacore" for v5p
    (``"v5:2x2x1"``). Needs libtpu, in a venv of its own (``python -m shardwidget.compilers
    install tpu``), in this Python where the platform put it (Colab TPU) or in the one
    ``SHARDWIDGET_TPU_PYTHON`` names; PlanError in words without it. The topology's
    devices come from the TPU helper (started once, reused)."""
    shape = tuple(int(s) for s in mesh_shape)
    names = tuple(str(a) for a in axis_names)
    if len(shape) != len(names):
        raise ValueError(f"mesh_shape {shape} has {len(shape)} axes; axis_names has {len(names)}")
    if not isinstance(topology, str) or ":" not in topology:
        raise ValueError(f'topology must be a name such as "v5e:16x16"; got {topology!r}')
    if int(num_slices) < 1:
        raise ValueError(f"num_slices must be at least 1; got {num_slices}")
    req = {
        "op": "describe",
        "topology": topology,
        "num_slices": int(num_slices),
        "chip_config_name": chip_config_name,
        "mesh_shape": list(shape),
        "axis_names": list(names),
        "allow_split_physical_axes": bool(allow_split_physical_axes),
        "max_axes": mesh_mod.MAX_AXES,
    }
    h = tpu_helper()
    reply = h.request(req, _helper.busy(START_TIMEOUT_S), f"describe {topology}")
    if "error" in reply:
        why = compilers.first_line(reply["error"])
        raise ValueError(f"no mesh {shape} {names} on {topology}: {why}")
    if "refused" in reply:
        raise ValueError(_no_mesh(topology, shape, allow_split_physical_axes, reply))
    by_id = {d[0]: d for d in reply["devices"]}
    pos = [by_id[i] for i in reply["mesh"]]
    key = f"{topology}/{num_slices}/{chip_config_name}/{allow_split_physical_axes}"
    mi = TpuMeshInfo(
        topology=topology,
        num_slices=int(num_slices),
        chip_config_name=chip_config_name,
        family=family_of(topology),
        device_kind=reply["device_kind"],
        libtpu=h.ready.get("libtpu", "?"),
        mesh_shape=shape,
        axis_names=names,
        device_ids=tuple(reply["mesh"]),
        coords=tuple(tuple(d[1]) for d in pos),
        core_on_chip=tuple(d[2] for d in pos),
        slice_index=tuple(d[3] for d in pos),
        allow_split_physical_axes=bool(allow_split_physical_axes),
        topology_devices=tuple((d[0], tuple(d[1]), d[2], d[3]) for d in reply["devices"]),
        held_shapes=_held(reply.get("shapes", {}), shape),
    )
    types = compilers.mesh_axis_types(axis_types, len(shape))
    where = tuple(zip(mi.coords, mi.core_on_chip, mi.slice_index, strict=True))
    device = _jax.tpu_abstract_device(mi.device_kind, reply.get("num_cores"), key, where)
    mesh = _jax.abstract_mesh_on(shape, names, types, device)
    _MESHES.add(mesh, mi)
    return mesh


def _no_mesh(topology: str, shape: tuple[int, ...], split: bool, reply: dict[str, Any]) -> str:
    """Why ``topology`` holds no mesh of ``shape``, in words: its device count, or the shapes
    of as many axes it holds (``make_mesh``'s own answers, tried in the helper). JAX's words
    only where ours do not explain it (a shape it holds, refused all the same)."""
    n = int(reply["n_devices"])
    held = [tuple(s) for s in reply["shapes"].get(str(len(shape)), [])]
    offer = ", ".join(map(_fmt, held)) or "none"
    if shape in held:
        return f"no mesh {shape} on {topology}: {compilers.first_line(reply['refused'])}"
    if math.prod(shape) != n:
        head = f"{topology} has {n} devices; a {_fmt(shape)} mesh has {math.prod(shape)}"
    else:
        how = ": each axis of the mesh must be a product of the torus's own axes"
        how = "" if split else how + " (allow_split_physical_axes=True lifts that)"
        head = f"the {topology} torus cannot hold a {_fmt(shape)} mesh{how}"
    return f"{head}; {len(shape)}-axis meshes it holds: {offer}"


def _held(shapes: dict[str, list[list[int]]], own: tuple[int, ...]) -> frozenset[tuple[int, ...]]:
    """The helper's held shapes (by axis count), with the mesh's own (held: it was placed)."""
    return frozenset(tuple(s) for ks in shapes.values() for s in ks) | {own}


def offered(mesh: object, facts: dict[str, list[list[int]]]) -> dict[str, list[list[int]]]:
    """A mesh select's shapes (``model.mesh.all_factorizations``): on a :func:`tpu_mesh`
    only those its torus holds (``make_mesh`` accepts them: each logical axis a product of
    physical axes), other meshes' all. An axis count the helper was not asked about offers
    only the mesh's own shape: an unchecked shape would be refused when chosen."""
    mi = info(mesh)
    if mi is None:
        return facts
    return {k: [s for s in v if tuple(s) in mi.held_shapes] for k, v in facts.items()}


def refusal(mi: TpuMeshInfo, shape: tuple[int, ...]) -> str:
    """Why the torus cannot hold a mesh of ``shape``, in words ("" where it can or the helper
    was not asked about that many axes)."""
    if len(shape) > mesh_mod.MAX_AXES or shape in mi.held_shapes or not mi.held_shapes:
        return ""
    dims = mi.topology.split(":", 1)[-1]
    held = sorted(s for s in mi.held_shapes if len(s) == len(shape))
    return (
        f"the {mi.title} torus cannot hold a {_fmt(shape)} mesh: each axis of the mesh must be a "
        f"product of the torus's own axes ({dims}, as jax.experimental.topologies.make_mesh "
        f"places it); {len(shape)}-axis shapes it holds: {', '.join(map(_fmt, held)) or 'none'}"
    )


def _fmt(shape: tuple[int, ...]) -> str:
    return "×".join(map(str, shape))


def reshaped(mesh: Mesh | AbstractMesh, like: Any) -> Any:
    """The same topology's :func:`tpu_mesh` with the axes (sizes, names, types) of the
    AbstractMesh ``like`` (a view's mesh select); ValueError in words where the torus cannot
    hold that shape."""
    mi = info(mesh)
    assert mi is not None
    why = refusal(mi, tuple(like.axis_sizes))
    if why:
        raise ValueError(why)
    return tpu_mesh(
        mi.topology,
        tuple(like.axis_sizes),
        tuple(like.axis_names),
        num_slices=mi.num_slices,
        axis_types=tuple(like.axis_types),
        allow_split_physical_axes=mi.allow_split_physical_axes,
        chip_config_name=mi.chip_config_name,
    )


# ------------------------------------------------------------------- a topology for a preset
_2D = ((1, 1), (2, 2), (2, 4), (4, 4), (4, 8), (8, 8), (8, 16), (16, 16))
"""v5e / v6e slice shapes (chips); larger pods are slices of 16 × 16 over DCN."""


def topology_for(family: str, n_devices: int) -> tuple[str, int, str] | None:
    """(topology name, slices, chip config) of ``family`` ("v5e", "v6e", "v5" (v5p), "v4",
    "tpu7x"; a preset's ``topology``) with ``n_devices`` JAX devices, for a plan's "compile
    with this TPU"; None where the family has no such shape."""
    if family in ("v5e", "v6e"):
        for slices in (1, 2, 4, 8, 16, 32, 64):
            chips = n_devices // slices
            shape = next((s for s in _2D if s[0] * s[1] == chips), None)
            if shape is not None and chips * slices == n_devices and (slices == 1 or chips == 256):
                return f"{family}:{shape[0]}x{shape[1]}", slices, ""
        return None
    if family in ("v4", "v5", "tpu7x"):
        chips = n_devices // 2 if family == "tpu7x" else n_devices
        if chips < 1 or chips & (chips - 1) or (family == "tpu7x" and n_devices % 2):
            return None
        dims = [1, 1, 1]
        k = 0
        while math.prod(dims) < chips:  # doubling the smallest side: 2x2x1, 2x2x2, 2x2x4, …
            dims[k % 3] *= 2
            k += 1
        a, b, c = sorted(dims)
        name = f"{b}x{c}x1" if a == 1 else f"{a}x{b}x{c}"  # as Cloud TPU names them: 2x2x1, 2x2x2
        return f"{family}:{name}", 1, "megacore" if family in ("v4", "v5") else ""
    return None


def compile_with(hardware_topology: str, n_devices: int) -> tuple[str, str]:
    """What a plan view's "compile with" offers for a preset (its ``topology``) and a plan of
    n devices: ("this TPU: v5e:16x16", "") when a TPU plan can be made here, else ("", why in
    one line: no TPU family, no topology of that size, or what to install)."""
    if not hardware_topology:
        return "", "this hardware is not a TPU: its plans are the CPU compiler's"
    found = topology_for(hardware_topology, n_devices)
    if found is None:
        return "", f"no {family_of(hardware_topology + ':')} topology has {n_devices} devices"
    why = unavailable()
    if why:
        return "", why
    name, slices, _ = found
    return f"this TPU: {name}" + (f" × {slices} slices" if slices > 1 else ""), ""


# ------------------------------------------------------------------------------ the helper
def tpu_python() -> str:
    """The interpreter that runs the TPU helper (:func:`.compilers.python_for`):
    ``SHARDWIDGET_TPU_PYTHON`` where set, else this one when the platform put libtpu here (a
    Colab TPU runtime), else the TPU compiler's own venv for this jax
    (``python -m shardwidget.compilers install tpu``); PlanError in words otherwise."""
    return compilers.python_for("tpu")


def unavailable() -> str:
    """ "" where TPU plans can be made here, else one line saying what to install and why."""
    return compilers.unavailable("tpu")


class TpuHelper(compilers.CompilerHelper):
    """The process with libtpu that compiles for TPU topologies (one serves them all)."""

    what = "the TPU planning helper (libtpu)"
    compiler = "tpu"
    worker = TPU_WORKER

    def _environ(self) -> dict[str, str]:
        env = super()._environ()
        env["TPU_SKIP_MDS_QUERY"] = "1"  # no metadata server: this is not a TPU VM
        # libtpu takes /tmp/libtpu_lockfile per process; compile-only use needs no lock, and
        # another kernel's helper (or the user's own libtpu process) must not block this one
        env["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
        return env


_TPU: list[TpuHelper] = []


def tpu_helper() -> TpuHelper:
    """The running TPU helper, else a new one (PlanError in words: no libtpu, a JAX that
    differs from the kernel's, a failed start)."""
    return compilers.running(_TPU, TpuHelper)


def new_helper(nice: int = 0) -> TpuHelper:
    """A TPU helper process of its own (the search's parallel workers each start one)."""
    return compilers.start(TpuHelper, nice)


def stop() -> None:
    """End the TPU helper (nothing if none runs)."""
    compilers.stop_held(_TPU)


_helper.ON_STOP_ALL.append(stop)


_RESULTS = compilers.Results(keep=32)
"""TPU compiles kept, per (lowered module, topology, placement): showing a planned layout
again asks the helper nothing (a compile at 256 chips takes 30-60 s)."""


def result_key(text: str, mesh: Mesh | AbstractMesh) -> tuple[Any, ...]:
    """What a TPU result is cached by: the lowered module, the topology, the placement."""
    mi = info(mesh)
    assert mi is not None
    digest = compilers.module_digest(text)
    return (digest, mi.topology, mi.num_slices, mi.chip_config_name, mi.device_ids)


def has_result(text: str, mesh: Mesh | AbstractMesh) -> bool:
    """Whether the TPU compiler's answer for this module on this mesh is cached."""
    return result_key(text, mesh) in _RESULTS


def compile_text(text: str, mesh: Mesh | AbstractMesh, timeout: float) -> dict[str, Any]:
    """What the TPU compiler made of a lowered module for a :func:`tpu_mesh`: the CPU helper's
    reply fields, or "hbm" (its words) when the program does not fit. PlanError in words
    when the helper dies, passes ``timeout`` or the compiler refuses (the helper then ends)."""
    mi = info(mesh)
    assert mi is not None
    ask = lambda: request(tpu_helper(), text, mi, timeout)  # noqa: E731
    return _RESULTS.answer(result_key(text, mesh), ask, stop)


def request(h: _helper.Helper, text: str, mi: TpuMeshInfo, timeout: float) -> dict[str, Any]:
    """The reply of TPU helper ``h`` for a lowered module on ``mi``'s topology, uncached (an
    HBM overflow is an answer: "hbm"); PlanError in words when the compiler refuses (``h``
    then ends)."""
    req = {
        "op": "compile",
        "module": text,
        "topology": mi.topology,
        "num_slices": mi.num_slices,
        "chip_config_name": mi.chip_config_name,
        "devices": list(mi.device_ids),
    }
    refused = f"the TPU compiler (libtpu {mi.libtpu}) could not compile the plan for {mi.title}"
    return compilers.compile_request(h, req, timeout, mi.title, refused)


def note(mi: TpuMeshInfo) -> str:
    """ "compiled by the TPU compiler (libtpu 0.0.42.1) for v5e 16×16: the program a v5e-256
    runs"."""
    return (
        f"compiled by the TPU compiler (libtpu {mi.libtpu}) for {mi.title}: the program a "
        f"{mi.machine} runs"
    )


_SIZE = r"([\d.]+)\s*([KMGT]?)i?B?"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def hbm_figures(words: str) -> tuple[int | None, int | None]:
    """(bytes needed, bytes available) from the TPU compiler's HBM overflow message ("the total
    memory required for HLO temporaries (64.25G) exceeds available HBM (15.75G)"; "Used 20.5G
    of 15.75G hbm"); None where it does not say."""

    def size(m: re.Match[str] | None) -> int | None:
        return None if m is None else int(float(m.group(1)) * _UNITS[m.group(2)])

    need = re.search(r"required for [^(]*\(" + _SIZE + r"\)", words) or re.search(
        r"Used " + _SIZE + " of", words
    )
    have = re.search(r"available HBM \(" + _SIZE + r"\)", words) or re.search(
        r" of " + _SIZE + r" hbm", words
    )
    return size(need), size(have)


def hbm_words(words: str, mi: TpuMeshInfo) -> str:
    """ "does not fit: needs 64.25 GiB of 15.75 GiB on every chip" (the compiler's figures)."""
    need, have = hbm_figures(words)
    have = have or mi.hbm_bytes
    where = "on every chip" if mi.cores_per_chip == 1 else "on every TensorCore"
    if need is None:
        return f"does not fit in HBM {where}: {compilers.first_line(words)}"
    of = f" of {have / 2**30:.2f} GiB" if have else ""
    what = re.search(r"required for ([^(]*?)\s*\(", words)
    return f"does not fit: needs {need / 2**30:.2f} GiB{of} {where}" + (
        f" ({what.group(1)})" if what else ""
    )
