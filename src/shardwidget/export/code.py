"""Copy as code: the Python that reproduces a layout shown by a view (``view.code``).

An array view's snippet, run with the user's array bound to ``x``, makes the mesh with its axis
names, types and device order and lays ``x`` out with ``jax.device_put`` (memory kind
included). A function view's snippet makes the mesh and the ``jax.jit(f, in_shardings=…,
out_shardings=…)`` or ``jax.shard_map(f, mesh=…, in_specs=…, out_specs=…)`` of the layout shown.

The text comes from plain data (:class:`~shardwidget.model.layout.Layout`, the trace state); JAX is
asked only for the order of ``jax.devices()`` and of ``jax.make_mesh``, so that a mesh JAX
would make by itself is written as ``jax.make_mesh`` and any other order (a reversed or a
sub-set of devices) as an explicit device array.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax

from ..model import spec as spec_mod
from ..model.layout import Layout, MeshInfo
from ..trace.result import Slot

IMPORTS = "import jax\nfrom jax.sharding import AxisType, NamedSharding, PartitionSpec as P"


class NotLiteral(Exception):
    """A pytree node the snippet cannot write as a Python literal (a custom pytree class)."""


def tuple_text(items: Sequence[str]) -> str:
    """``(a, b)`` / ``(a,)``: items (already Python text) as a tuple literal."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def axis_types_text(types: Sequence[str]) -> str:
    """``(AxisType.Explicit, AxisType.Auto)``: axis types as Python writes them."""
    return tuple_text([f"AxisType.{'Explicit' if t == 'explicit' else 'Auto'}" for t in types])


def mesh_lines(
    mesh: MeshInfo,
    all_ids: Sequence[int],
    make_mesh_ids: Sequence[int] | None,
    planned: bool = False,
) -> tuple[list[str], bool]:
    """(lines that bind ``mesh``, whether they need numpy). ``all_ids``: the ids of
    ``jax.devices()`` in order; ``make_mesh_ids``: the ids of ``jax.make_mesh`` for this shape
    in mesh order (None where it cannot make it): when they equal the mesh's, make_mesh says it
    in one line, else the devices are picked by their position in ``jax.devices()``."""
    shape = tuple_text([str(s) for s in mesh.axis_sizes])
    names = tuple_text([repr(a) for a in mesh.axis_names])
    types = axis_types_text(mesh.axis_types)
    if planned:  # an AbstractMesh: positions, no devices
        return [f"mesh = jax.sharding.AbstractMesh({shape}, {names}, {types})  # a plan"], False
    if make_mesh_ids is not None and tuple(make_mesh_ids) == tuple(mesh.device_ids):
        return [f"mesh = jax.make_mesh({shape}, {names}, axis_types={types})"], False
    pos = {d: i for i, d in enumerate(all_ids)}
    picks = [pos[d] for d in mesh.device_ids]
    if picks == list(range(len(all_ids))):
        pick = "np.array(jax.devices())"
    else:
        pick = f"np.array(jax.devices())[{picks}]"
    return [
        "# the devices in this mesh's own order (positions in jax.devices())",
        f"devices = {pick}.reshape{shape}",
        f"mesh = jax.sharding.Mesh(devices, {names}, axis_types={types})",
    ], True


def make_mesh_ids(mesh: MeshInfo) -> list[int] | None:
    """The device ids, in mesh order, of ``jax.make_mesh`` for this mesh's shape over every
    device (None where make_mesh cannot make it, e.g. a mesh over some of the devices)."""
    ids = _make_mesh_ids(mesh.axis_sizes, mesh.axis_names)
    return list(ids) if ids is not None else None


@functools.lru_cache(maxsize=32)
def _make_mesh_ids(sizes: tuple[int, ...], names: tuple[str, ...]) -> tuple[int, ...] | None:
    """make_mesh_ids, once per mesh shape and names: the devices never change in a process, and
    make_mesh takes ~9 ms at 4096 devices, on the path of every layout change (view.code)."""

    if math.prod(sizes) != len(jax.devices()):
        return None
    try:
        # (axis types given: make_mesh warns without them on jax 0.8; the order is the same)
        auto = (jax.sharding.AxisType.Auto,) * len(sizes)
        m = jax.make_mesh(sizes, names, axis_types=auto)
    except Exception:  # make_mesh refuses some shapes on some topologies: say it by devices
        return None
    return tuple(int(d.id) for d in m.devices.flat)


def _header(needs_np: bool) -> list[str]:
    return ["import jax", *(["import numpy as np"] if needs_np else []), IMPORTS.split("\n")[1]]


def array_code(lay: Layout, var: str = "x") -> str:
    """The snippet that lays ``var`` out as ``lay``: mesh, then ``jax.device_put``."""
    kind = repr(lay.memory_kind)
    if lay.mesh is None or lay.spec is None:
        if lay.sharding_type == "SingleDeviceSharding" and len(lay.devices) == 1:
            pos = [int(d.id) for d in jax.devices()].index(lay.devices[0].id)
            return "\n".join(
                [
                    "import jax",
                    "",
                    f"device = jax.devices()[{pos}]",
                    f"{var} = jax.device_put({var}, "
                    f"jax.sharding.SingleDeviceSharding(device, memory_kind={kind}))",
                ]
            )
        return f"# a {lay.sharding_type} has no mesh and spec that this snippet could write\n"
    lines, needs_np = mesh_lines(
        lay.mesh, [int(d.id) for d in jax.devices()], make_mesh_ids(lay.mesh)
    )
    sharding = f"NamedSharding(mesh, {spec_mod.to_text(lay.spec)}, memory_kind={kind})"
    summed = (
        [
            f"# {var}'s partials summed over {', '.join(map(repr, lay.unreduced))}: device_put "
            "makes no unreduced arrays"
        ]
        if lay.unreduced
        else []
    )
    put = f"{var} = jax.device_put({var}, {sharding})"
    return "\n".join([*_header(needs_np), "", *lines, *summed, put])


def render_tree(tree: object, leaf: Callable[[Slot], str]) -> str:
    """A pytree of Slots (tuples, lists, dicts, None) as a Python literal, each Slot written
    by ``leaf``; NotLiteral for any other node (a namedtuple or a registered class)."""
    if isinstance(tree, Slot):
        return leaf(tree)
    if tree is None:
        return "None"
    if type(tree) is tuple:
        return tuple_text([render_tree(t, leaf) for t in tree])
    if type(tree) is list:
        return "[" + ", ".join(render_tree(t, leaf) for t in tree) + "]"
    if type(tree) is dict:
        return "{" + ", ".join(f"{k!r}: {render_tree(v, leaf)}" for k, v in tree.items()) + "}"
    raise NotLiteral(type(tree).__name__)


@dataclass(frozen=True)
class FunctionLayout:
    """What a function view's snippet needs, as data.

    Attributes:
        name: the function's name, as the snippet calls it.
        mode: "jit" or "shard_map".
        mesh: the mesh every input is laid out on.
        in_specs / out_specs: one normalized spec per input / output leaf (None: XLA chooses).
        args: the positional arguments with each leaf replaced by a :class:`Slot` (static
            leaves marked), kwargs likewise; out: the outputs' pytree of Slots.
    """

    name: str
    mode: str
    mesh: MeshInfo
    in_specs: Sequence[spec_mod.NormSpec]
    out_specs: Sequence[spec_mod.NormSpec | None]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    out: Any
    in_memory: Sequence[str | None] = ()
    """Per input leaf: its memory kind where not "device" (pinned_host), else None."""
    out_memory: Sequence[str | None] = ()
    """Per output leaf: its memory kind (jit's out_shardings write it where not "device")."""
    planned: bool = False
    """mesh is an AbstractMesh (a plan): the snippet plans the layout instead of running it."""
    donate: Sequence[int] = ()
    """The input leaves donated (written as ``donate_argnums`` of the positional arguments
    they make up whole)."""


def _sharding_of(spec: spec_mod.NormSpec | None, mode: str, memory_kind: str | None = None) -> str:
    if spec is None:
        return "None"
    p = spec_mod.to_text(spec)
    if mode == "shard_map":
        return p
    mk = f", memory_kind={memory_kind!r}" if memory_kind not in (None, "device") else ""
    return f"NamedSharding(mesh, {p}{mk})"


def _notes(fl: FunctionLayout, flat: bool) -> list[str]:
    """Comments on what the snippet does differently from the view (static values)."""
    static = any(isinstance(a, Slot) and a.static for a in fl.args) or any(
        isinstance(v, Slot) and v.static for v in fl.kwargs.values()
    )
    nested = [a for a in fl.args if not isinstance(a, Slot)]
    notes = []
    if any(s.static for s in _leaves(nested)) or (flat and static):
        notes.append("# static values among array arguments are traced here, not closed over")
    if fl.mode == "shard_map" and static:
        notes.append(
            "# shard_map takes arrays only: close over static arguments (functools.partial)"
        )
    return notes


def _jitted(fl: FunctionLayout, target: str, ins: str, outs: str, flat: bool) -> str:
    """The jax.jit(...) expression (static_argnums where f takes them directly; static
    keywords are closed over by the caller, see function_code)."""
    nums = [] if flat else _donate_argnums(fl)
    donated = f", donate_argnums={tuple_text([str(k) for k in nums])}" if nums else ""
    if fl.mode == "shard_map":
        sm = f"jax.shard_map({target}, mesh=mesh, in_specs={ins}, out_specs={outs})"
        return f"jax.jit({sm}{donated})"
    static = [i for i, a in enumerate(fl.args) if isinstance(a, Slot) and a.static]
    extra = "" if all(s is None for s in fl.out_specs) else f", out_shardings={outs}"
    if static and not flat:
        extra += f", static_argnums={tuple_text([str(i) for i in static])}"
    return f"jax.jit({target}, in_shardings={ins}{extra}{donated})"


def _donate_argnums(fl: FunctionLayout) -> list[int]:
    """The positional arguments whose array leaves are all donated (jax.jit donates whole
    arguments)."""
    out = []
    for k, arg in enumerate(fl.args):
        ids = [s.i for s in _leaves(arg) if not s.static]
        if ids and set(ids) <= set(fl.donate):
            out.append(k)
    return out


def _donate_note(fl: FunctionLayout, flat: bool) -> list[str]:
    """A comment naming donated leaves the snippet's donate_argnums cannot say."""
    nums = [] if flat else _donate_argnums(fl)
    whole = {s.i for k in nums for s in _leaves(fl.args[k])}
    rest = sorted(set(fl.donate) - whole)
    if not rest:
        return []
    return [
        f"# the view donates input leaves {', '.join(map(str, rest))} alone: jax.jit donates "
        "whole positional arguments (donate_argnums), so the snippet donates none of them"
    ]


def function_code(fl: FunctionLayout) -> str:
    """The snippet of ``jax.jit(f, in_shardings=…, out_shardings=…)`` (jit) or
    ``jax.jit(jax.shard_map(f, mesh=…, in_specs=…, out_specs=…))`` for the layout fl.

    Array keyword arguments (jit takes no in_shardings for keywords) make the snippet wrap f
    as ``f_flat(args, kwargs)``, whose two arguments carry the shardings."""
    fn = fl.name if fl.name.isidentifier() else "f"
    ids = [int(d.id) for d in jax.devices()]
    make_ids = None if fl.planned else make_mesh_ids(fl.mesh)
    lines, needs_np = mesh_lines(fl.mesh, ids, make_ids, fl.planned)
    flat = any(not s.static for s in _leaves(fl.kwargs))

    def spec_of(s: Slot) -> str:  # a static leaf traced here: any sharding (jit: unspecified)
        if s.static:
            return "P()" if fl.mode == "shard_map" else "None"
        mk = fl.in_memory[s.i] if s.i < len(fl.in_memory) else None
        return _sharding_of(fl.in_specs[s.i], fl.mode, mk)

    def out_mk(s: Slot) -> str | None:
        return fl.out_memory[s.i] if s.i < len(fl.out_memory) else None

    try:
        if flat:
            ins = render_tree((tuple(fl.args), dict(fl.kwargs)), spec_of)
        else:
            dynamic = [a for a in fl.args if not (isinstance(a, Slot) and a.static)]
            ins = render_tree(tuple(dynamic), spec_of)
        outs = render_tree(fl.out, lambda s: _sharding_of(fl.out_specs[s.i], fl.mode, out_mk(s)))
    except NotLiteral as e:
        return f"# {fn}'s arguments or outputs hold a {e} pytree node: no snippet is written\n"
    target, call = fn, f"{fn}_sharded(...)  # your arguments, as given to the view"
    if flat:
        lines += [
            f"def {fn}_flat(args, kwargs):  # jit takes shardings for positional arguments only",
            f"    return {fn}(*args, **kwargs)",
        ]
        target, call = f"{fn}_flat", f"{fn}_sharded((...), {{...}})  # (args, kwargs) of the view"
    kw_static = [k for k, v in fl.kwargs.items() if isinstance(v, Slot) and v.static]
    if kw_static and not flat and fl.mode == "jit":
        # jax.jit refuses keyword arguments when in_shardings is given, static_argnames too
        names = ", ".join(kw_static)
        lines += [
            f"# {names}: the keyword value(s) given to the view; jax.jit takes no keywords with",
            "# in_shardings, so the snippet closes over them",
        ]
        target = f"functools.partial({fn}, {', '.join(f'{k}={k}' for k in kw_static)})"
        call = f"{fn}_sharded(...)  # your positional arguments, as given to the view"
    return "\n".join(
        [
            *(["import functools"] if target.startswith("functools.") else []),
            *_header(needs_np),
            "",
            *lines,
            *_notes(fl, flat),
            *_donate_note(fl, flat),
            f"{fn}_sharded = {_jitted(fl, target, ins, outs, flat)}",
            *(_PLANNED if fl.planned else ["# with jax.set_mesh(mesh):", f"#     out = {call}"]),
        ]
    )


_PLANNED = [
    "# a plan: shardwidget.plan.plan(f, *args, mesh=mesh, in_specs=..., out_specs=...) compiles",
    "# this layout for the mesh's positions in the planning helper (nothing runs here)",
]


def _leaves(tree: object) -> list[Slot]:
    if isinstance(tree, Slot):
        return [tree]
    if isinstance(tree, dict):
        return [s for v in tree.values() for s in _leaves(v)]
    if isinstance(tree, list | tuple):
        return [s for v in tree for s in _leaves(v)]
    return []
