"""The collectives in compiled (per-device, SPMD-partitioned) HLO text, named with the user's axes.

Pure text and numpy: imports no JAX and no widget code.

XLA writes the devices a collective runs over in several forms; all become explicit groups of
*logical* device ids (positions in the executable's device assignment) before anything else:

- explicit lists ``replica_groups={{0,1,2,3},{4,5,6,7}}`` (``{}``: all devices in one group);
- iota lists ``replica_groups=[2,4]<=[8]`` and ``replica_groups=[4,2]<=[2,4]T(1,0)``;
- mesh axes ``replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_0'}``, optionally with a
  permuted device order ``mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(0,2,1))`` and
  sub-axes ``{'axis_0':(2)2}`` (pre-size 2, size 2);
- ``source_target_pairs={{0,4},{1,5}}`` for collective-permute.

HLO's own mesh axes (``axis_0``…) are XLA's factorization of the device list, not the user's mesh
(a ``(2, 4)`` mesh can appear as ``axis_0=1, axis_1=2, axis_2=4``). So the user's axis names come
from geometry, not from names: :func:`axes_of_groups` maps each group's devices to coordinates in
the user's mesh and reports the mesh axes along which the members differ.

Bytes are what one device sends, for the usual ring/pairwise algorithms (the same model XLA's
cost analysis and the JAX scaling book use), with ``n`` devices per group and result bytes ``R``:
all-reduce ``2 (n-1)/n R``; all-gather ``(n-1)/n R``; reduce-scatter ``(n-1) R``; all-to-all
``(n-1)/n R``; collective-permute ``R`` (0 for a device that sends to itself).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

DTYPE_BYTES = {
    "pred": 1.0,
    "s2": 0.25,
    "u2": 0.25,
    "s4": 0.5,
    "u4": 0.5,
    "s8": 1.0,
    "u8": 1.0,
    "s16": 2.0,
    "u16": 2.0,
    "f16": 2.0,
    "bf16": 2.0,
    "s32": 4.0,
    "u32": 4.0,
    "f32": 4.0,
    "s64": 8.0,
    "u64": 8.0,
    "f64": 8.0,
    "c64": 8.0,
    "c128": 16.0,
}


def _dtype_bytes(dt: str) -> float:
    if dt in DTYPE_BYTES:
        return DTYPE_BYTES[dt]
    if dt.startswith("f8") or dt.startswith("f4") or dt.startswith("f6"):
        return {"f8": 1.0, "f6": 0.75, "f4": 0.5}[dt[:2]]
    raise ValueError(f"unknown HLO element type {dt!r}")


@dataclass(frozen=True)
class HloShape:
    """One array shape of an HLO instruction: dtype and dimensions."""

    dtype: str
    """HLO element type: "f32", "bf16", "s32", "pred", …."""
    dims: tuple[int, ...]
    """The dimensions."""

    @property
    def nbytes(self) -> int:
        """Bytes of the array."""
        return math.ceil(math.prod(self.dims) * _dtype_bytes(self.dtype))


@dataclass(frozen=True)
class Collective:
    """One collective instruction of the compiled program."""

    kind: str
    """One of KINDS."""
    axes: tuple[str, ...]
    """The user's mesh axes the groups span, in mesh order; () when they match no axes."""
    shape: tuple[int, ...]
    """Result shape on one device (of a tuple result, its first element that is not a scalar:
    see :attr:`elements`)."""
    dtype: str
    """HLO element type of the result ("f32", …)."""
    bytes: int
    """Bytes one device sends (see the module docstring)."""
    group_size: int
    """Devices per group."""
    n_groups: int
    """How many groups run it side by side."""
    groups: tuple[tuple[int, ...], ...] = field(repr=False)
    """Groups of device ids (collective-permute: (source, target) pairs that move data)."""
    groups_text: str = field(repr=False, default="")
    """The groups as the HLO writes them (replica_groups or source_target_pairs)."""
    op_name: str = field(repr=False, default="")
    """The JAX operation it came from (the HLO metadata's op_name), "" when none."""
    source: str = field(repr=False, default="")
    """The user's line it came from ("file.py:12"), "" when the HLO does not say."""
    partial: bool = field(repr=False, default=False)
    """True when a group covers only part of an axis (e.g. pairs along x)."""
    name: str = field(repr=False, default="")
    """The HLO instruction name, e.g. "all-reduce.1"."""
    elements: tuple[HloShape, ...] = field(repr=False, default=())
    """Every array it carries, per device (a combined all-reduce of gradients: one per
    gradient, the loss's scalar too); its bytes are theirs summed."""
    in_leaves: tuple[str, ...] | None = field(repr=False, default=None, compare=False)
    """The paths of the input leaves that flow into it, by dataflow through the compiled
    program (:mod:`.flow`); None where that could not be told (:attr:`leaves_note`)."""
    out_leaves: tuple[str, ...] | None = field(repr=False, default=None, compare=False)
    """The paths of the output leaves it flows into; None where not told."""
    element_in_leaves: tuple[tuple[str, ...], ...] = field(repr=False, default=(), compare=False)
    """Per element of :attr:`elements`: the input paths that flow into it (empty: not told)."""
    element_out_leaves: tuple[tuple[str, ...], ...] = field(repr=False, default=(), compare=False)
    """Per element: the output paths it flows into (empty: not told)."""
    element_gradients: tuple[str, ...] = field(repr=False, default=(), compare=False)
    """Per element: the input leaf it carries the gradient of (``params['w1']``), told by
    dataflow (:mod:`.gradients`); "" where it is no gradient or whose is not told."""
    leaves_note: str = field(repr=False, default="", compare=False)
    """Why the leaves are not told (or only the inputs are); "" otherwise."""
    explainer: Any = field(repr=False, default=None, compare=False)
    """What gives its :attr:`cause` (``explainer(collective)``, computed on first use for every
    collective of the compile); None where none was asked for."""

    @property
    def leaves(self) -> tuple[str, ...] | None:
        """The paths of the input leaves it touches, then of the output leaves (by dataflow,
        never by shape); None where the program could not be followed (:attr:`leaves_note`)."""
        if self.in_leaves is None:
            return None
        return self.in_leaves + (self.out_leaves or ())

    @property
    def result_text(self) -> str:
        """Its result per device as the HLO types it: "f32[512,1024]", or for a combined
        collective every element it carries, "(f32[], f32[512,1024], f32[1024,512])"."""
        if len(self.elements) > 1:
            return (
                "("
                + ", ".join(f"{e.dtype}[{','.join(map(str, e.dims))}]" for e in self.elements)
                + ")"
            )
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"

    @property
    def element_leaves(self) -> tuple[tuple[str, ...], ...]:
        """Per element of :attr:`elements`: its input paths, then its output paths."""
        outs = self.element_out_leaves or ((),) * len(self.element_in_leaves)
        return tuple(a + b for a, b in zip(self.element_in_leaves, outs, strict=True))

    @property
    def gradients(self) -> tuple[str, ...]:
        """The input leaves whose gradients it carries (a data-parallel step's all-reduce:
        every parameter's), each once, in element order; () where none is told."""
        return tuple(dict.fromkeys(g for g in self.element_gradients if g))

    @property
    def cause(self) -> Any:
        """Why XLA inserted it (a :class:`shardwidget.why.cause.Cause`: ``.text``,
        ``.inputs``, ``.constraints``, ``.outputs``, ``.op``); None where no explanation was
        asked for."""
        return None if self.explainer is None else self.explainer(self)


# ------------------------------------------------------------------------------- text parsing
_SHAPE = re.compile(r"([a-z][a-z0-9]*)\[([0-9,]*)\]")
_INSTR_HEAD = re.compile(r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*")
_OP = re.compile(r"\s*(?P<op>[a-z][a-z\-]*)\(")


def parse_shapes(text: str) -> list[HloShape]:
    """Array shapes in an HLO shape string: "f32[4,8]{1,0}" or a tuple "(f32[2], u32[])"."""
    out = []
    for m in _SHAPE.finditer(text):
        dims = tuple(int(d) for d in m.group(2).split(",") if d)
        out.append(HloShape(m.group(1), dims))
    return out


def balanced(text: str, start: int) -> str:
    """The balanced {...} / [...] / (...) group starting at text[start]."""
    pairs = {"{": "}", "[": "]", "(": ")"}
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in pairs:
            depth += 1
        elif c in pairs.values():
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    raise ValueError(f"unbalanced brackets in {text[start : start + 80]!r}")


def _attr(line: str, name: str) -> str | None:
    """The raw value of attribute `name=` on an instruction line (balanced, or up to ', ')."""
    m = re.search(r"(?:^|[\s,])" + re.escape(name) + r"=", line)
    if m is None:
        return None
    i = m.end()
    if line.startswith("mesh[", i):
        # mesh['a'=2,...][, device_ids=(...)] {axes}
        j = i + 4
        txt = balanced(line, j)
        end = j + len(txt)
        rest = line[end:]
        dm = re.match(r",\s*device_ids=", rest)
        if dm:
            k = end + dm.end()
            end = k + len(balanced(line, k))
        am = re.match(r"\s*\{", line[end:])
        if am:
            k = end + am.end() - 1
            end = k + len(balanced(line, k))
        return line[i:end]
    if i < len(line) and line[i] in "{[(":
        txt = balanced(line, i)
        end = i + len(txt)
        # iota lists: [2,4]<=[8] or [2,4]<=[2,4]T(1,0)
        m2 = re.match(r"<=\[[0-9,]*\](?:T\([0-9,]*\))?", line[end:])
        if m2:
            end += m2.end()
        return line[i:end]
    m3 = re.match(r"[^,\s]+", line[i:])
    return m3.group(0) if m3 else ""


def _iota(reshape: Sequence[int], perm: Sequence[int] | None) -> np.ndarray:
    a = np.arange(math.prod(reshape), dtype=np.int64).reshape(tuple(reshape))
    if perm is not None:
        a = a.transpose(tuple(perm))
    return a.reshape(-1)


def _ints(s: str) -> list[int]:
    return [int(v) for v in s.split(",") if v.strip()]


def _parse_device_list(text: str, n: int) -> np.ndarray:
    """device_ids=(...) of a mesh: "[2,2,2]T(0,2,1)", "[4,2]<=[2,4]T(1,0)" or an explicit list."""
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    m = re.fullmatch(r"(?:\[([0-9,]*)\]<=)?\[([0-9,]*)\](?:T\(([0-9,]*)\))?", t)
    if m and (m.group(1) is not None or m.group(3) is not None or len(_ints(m.group(2))) != n):
        return _iota(_ints(m.group(2)), _ints(m.group(3)) if m.group(3) else None)
    flat = _ints(re.sub(r"[\[\]{}]", ",", t))
    if len(flat) != n:
        raise ValueError(f"device_ids lists {len(flat)} devices for a mesh of {n}: {text!r}")
    return np.asarray(flat, dtype=np.int64)


def parse_groups(text: str, n_devices: int) -> list[list[int]]:
    """Groups of logical device ids from any replica-group form (module docstring)."""
    t = text.strip()
    if t.startswith("mesh["):
        return _mesh_groups(t)
    m = re.fullmatch(r"\[([0-9,]*)\]<=\[([0-9,]*)\](?:T\(([0-9,]*)\))?", t)
    if m:
        gshape = _ints(m.group(1))
        flat = _iota(_ints(m.group(2)), _ints(m.group(3)) if m.group(3) else None)
        size = gshape[-1] if gshape else 1
        return flat.reshape(-1, size).tolist()
    if t.startswith("{"):
        inner = t[1:-1].strip()
        if not inner:
            return [list(range(n_devices))]
        return [_ints(g) for g in re.findall(r"\{([0-9,\s]*)\}", inner)]
    raise ValueError(f"unrecognized replica groups {text!r}")


def _mesh_groups(t: str) -> list[list[int]]:
    m = re.match(r"mesh\[(.*?)\]", t)
    if m is None:
        raise ValueError(f"unrecognized mesh replica groups {t!r}")
    names, sizes = [], []
    for part in re.findall(r"'([^']*)'\s*=\s*(\d+)", m.group(1)):
        names.append(part[0])
        sizes.append(int(part[1]))
    n = math.prod(sizes)
    rest = t[m.end() :]
    order = np.arange(n, dtype=np.int64)
    dm = re.match(r",\s*device_ids=", rest)
    if dm:
        txt = balanced(rest, dm.end())
        order = _parse_device_list(txt, n)
        rest = rest[dm.end() + len(txt) :]
    am = re.search(r"\{(.*)\}", rest)
    refs: list[tuple[int, int | None, int | None]] = []  # (axis, pre, size)
    for r in re.findall(r"'([^']*)'(?::\((\d+)\)(\d+))?", am.group(1) if am else ""):
        if r[0] not in names:
            raise ValueError(f"replica groups name axis {r[0]!r}, not in {names}")
        ax = names.index(r[0])
        refs.append((ax, int(r[1]), int(r[2])) if r[1] else (ax, None, None))
    # Split every axis at the sub-axis boundaries, then group over the referenced pieces.
    dims: list[int] = []
    pieces: dict[tuple[int, int, int], list[int]] = {}  # (axis, lo, hi) boundaries → dim indices
    full: dict[int, list[int]] = {}
    for ax, size in enumerate(sizes):
        bounds = {1, size}
        for a, pre, sz in refs:
            if a == ax and pre is not None and sz is not None:
                bounds |= {pre, pre * sz}
        b = sorted(bounds)
        # major to minor: the largest boundary step first
        ax_dims = []
        for lo, hi in reversed(list(itertools.pairwise(b))):
            ax_dims.append(len(dims))
            pieces[(ax, lo, hi)] = [len(dims)]
            dims.append(hi // lo)
        full[ax] = ax_dims
        # a sub-axis spanning several pieces
        for a, pre, sz in refs:
            if a == ax and pre is not None and sz is not None:
                covered = [
                    pieces[(ax, lo, hi)][0]
                    for lo, hi in itertools.pairwise(b)
                    if lo >= pre and hi <= pre * sz
                ]
                pieces[(ax, pre, pre * sz)] = sorted(covered)
    arr = order.reshape(dims if dims else [1])
    grouped: list[int] = []
    for a, pre, sz in refs:
        if pre is None or sz is None:
            grouped += full[a]
        else:
            grouped += pieces[(a, pre, pre * sz)]
    rest_dims = [d for d in range(len(dims)) if d not in grouped]
    gsize = math.prod(dims[d] for d in grouped) if grouped else 1
    return arr.transpose(rest_dims + grouped).reshape(-1, gsize).tolist()


def parse_pairs(text: str) -> list[tuple[int, int]]:
    """The (source, target) pairs of collective-permute's source_target_pairs."""
    return [(int(a), int(b)) for a, b in re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", text)]


# ------------------------------------------------------------------------------- axes
def axes_of_groups(
    groups: Sequence[Sequence[int]],
    device_coords: dict[int, tuple[int, ...]],
    axis_names: Sequence[str],
    axis_sizes: Sequence[int],
) -> tuple[tuple[str, ...], bool]:
    """(axes, partial): the user's mesh axes along which members of some group differ, in mesh
    order; partial is True when a group does not cover all of those axes' combinations."""
    varying: set[int] = set()
    for g in groups:
        cs = [device_coords[d] for d in g if d in device_coords]
        if len(cs) < 2:
            continue
        for k in range(len(axis_names)):
            if len({c[k] for c in cs}) > 1:
                varying.add(k)
    axes = tuple(axis_names[k] for k in sorted(varying))
    full = math.prod(axis_sizes[k] for k in varying)
    partial = any(len(g) != full for g in groups) if groups else False
    return axes, partial


# ------------------------------------------------------------------------------- main entry
def instructions(hlo_text: str) -> Iterator[tuple[str, str, str, str]]:
    """(name, shape text, op, whole line) for every instruction."""
    for line in hlo_text.splitlines():
        m = _INSTR_HEAD.match(line)
        if m is None:
            continue
        i = m.end()
        if line.startswith("(", i):
            shape = balanced(line, i)
        else:
            sm = re.match(r"[a-z][a-z0-9]*\[[0-9,]*\](?:\{[^}]*\})?", line[i:])
            if sm is None:
                continue
            shape = sm.group(0)
        om = _OP.match(line, i + len(shape))
        if om:
            yield m.group("name"), shape, om.group("op"), line


def _result_shapes(kind: str, op: str, shape_text: str) -> list[HloShape]:
    """Every array a collective's result carries (a combined one's scalars too), from its
    result shape text; an async start's operands and context words left out."""
    shapes = parse_shapes(shape_text)
    if op.endswith("-start") and len(shapes) > 1:
        if kind == "all-gather":  # (operands..., results...)
            shapes = shapes[len(shapes) // 2 :]
        elif kind == "collective-permute":  # (operand, result, u32[], u32[])
            shapes = shapes[1:2]
        elif kind == "reduce-scatter" and shape_text.startswith("(("):  # ((operands), results)
            shapes = parse_shapes(shape_text[1 + len(balanced(shape_text, 1)) :])
    return shapes


CellLabel = Callable[[str], "str | None"]
"""A file path -> the notebook cell its code came from ("cell [3]"), or None."""

_CELL_LABELS: list[CellLabel] = []


def label_cells_with(label: CellLabel) -> None:
    """Have :func:`where` name code run from a notebook cell by label(path): the views register
    the running IPython shell's names (this package reads no shell)."""
    if label not in _CELL_LABELS:
        _CELL_LABELS.append(label)


def where(path: str, line: int | str) -> str:
    """A source location for a reader: "cell [N], line L" for code run from a notebook cell (as
    a registered :func:`label_cells_with` names its file), else "file.py:L"."""
    for label in _CELL_LABELS:
        try:
            cell = label(path)
        except Exception:  # a shell that cannot name this file: the file name stays
            cell = None
        if cell:
            return f"{cell}, line {line}"
    return f"{path.rsplit('/', 1)[-1]}:{line}"


def stack_frames(hlo_text: str) -> dict[int, str]:
    """``stack_frame_id`` -> where (see :func:`where`) from the module's frame tables.

    Newer XLA writes source locations once, in tables at the top of the module text
    (``FileNames``, ``FunctionNames``, ``FileLocations``, ``StackFrames``), and each
    instruction's metadata names a frame by ``stack_frame_id`` instead of carrying
    ``source_file`` / ``source_line``.
    """
    tables: dict[str, dict[int, str]] = {}
    current: dict[int, str] | None = None
    for line in hlo_text.splitlines():
        head = line.strip()
        if head in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            current = tables.setdefault(head, {})
            continue
        if current is None:
            continue
        m = re.match(r"(\d+)\s+(.*)$", head)
        if not m:
            current = None  # a blank line or the first computation ends the table
            continue
        current[int(m.group(1))] = m.group(2)
    files = {k: v.strip('"') for k, v in tables.get("FileNames", {}).items()}
    locs: dict[int, str] = {}
    for k, v in tables.get("FileLocations", {}).items():
        f = re.search(r"file_name_id=(\d+)", v)
        ln = re.search(r"\bline=(\d+)", v)
        if f and ln and int(f.group(1)) in files:
            locs[k] = where(files[int(f.group(1))], ln.group(1))
    out: dict[int, str] = {}
    for k, v in tables.get("StackFrames", {}).items():
        loc = re.search(r"file_location_id=(\d+)", v)
        if loc and int(loc.group(1)) in locs:
            out[k] = locs[int(loc.group(1))]
    return out


def collectives(
    hlo_text: str,
    device_assignment: Sequence[int],
    device_coords: dict[int, tuple[int, ...]],
    axis_names: Sequence[str],
    axis_sizes: Sequence[int],
) -> list[Collective]:
    """Every collective in the compiled HLO, in program text order.

    device_assignment[i] is the device id of logical device i; device_coords maps a device id to
    its coordinates in the user's mesh (axis_names / axis_sizes)."""
    n = len(device_assignment)
    out: list[Collective] = []
    frames: dict[int, str] | None = None
    for name, shape_text, op, line in instructions(hlo_text):
        kind = op[: -len("-start")] if op.endswith("-start") else op
        if kind not in KINDS:
            continue
        elements = _result_shapes(kind, op, shape_text)
        first = next((s for s in elements if s.dims), elements[0])  # (as shown: an array)
        total = sum(s.nbytes for s in elements)
        meta_op = re.search(r'op_name="([^"]*)"', line)
        src_f = re.search(r'source_file="([^"]*)"', line)
        src_l = re.search(r"source_line=(\d+)", line)
        source = where(src_f.group(1), src_l.group(1)) if src_f and src_l else ""
        frame = re.search(r"stack_frame_id=(\d+)", line)
        if not source and frame:
            if frames is None:
                frames = stack_frames(hlo_text)
            source = frames.get(int(frame.group(1)), "")

        def dev(i: int) -> int:
            return int(device_assignment[i]) if 0 <= i < n else i

        if kind == "collective-permute":
            raw = _attr(line, "source_target_pairs") or "{}"
            pairs = [(dev(a), dev(b)) for a, b in parse_pairs(raw)]
            moving = [p for p in pairs if p[0] != p[1]]
            axes, _ = axes_of_groups(moving, device_coords, axis_names, axis_sizes)
            out.append(
                Collective(
                    kind=kind,
                    axes=axes,
                    shape=first.dims,
                    dtype=first.dtype,
                    bytes=total if moving else 0,
                    group_size=2,
                    n_groups=len(moving),
                    groups=tuple(tuple(p) for p in moving),
                    groups_text=raw,
                    op_name=meta_op.group(1) if meta_op else "",
                    source=source,
                    partial=True,
                    name=name,
                    elements=tuple(elements),
                )
            )
            continue
        raw = _attr(line, "replica_groups") or "{}"
        logical = parse_groups(raw, n)
        groups = tuple(tuple(dev(i) for i in g) for g in logical)
        gs = len(groups[0]) if groups else 1
        axes, partial = axes_of_groups(groups, device_coords, axis_names, axis_sizes)
        if kind == "all-reduce":
            sent = 2 * (gs - 1) * total / gs
        elif kind == "reduce-scatter":
            sent = (gs - 1) * total
        else:  # all-gather, all-to-all
            sent = (gs - 1) * total / gs
        out.append(
            Collective(
                kind=kind,
                axes=axes,
                shape=first.dims,
                dtype=first.dtype,
                bytes=round(sent),
                group_size=gs,
                n_groups=len(groups),
                groups=groups,
                groups_text=raw,
                op_name=meta_op.group(1) if meta_op else "",
                source=source,
                partial=partial,
                name=name,
                elements=tuple(elements),
            )
        )
    return out
