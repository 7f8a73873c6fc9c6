"""pmap'd functions in the function view: ``ShardView(jax.pmap(f, axis_name="i"), x)``.

In JAX 0.10 ``jax.pmap(f)`` is ``jit(shard_map(f))`` over a one-axis mesh that pmap builds per
call (named after ``axis_name``, sized by the mapped axis). Compiling it inside the function
view's own mesh fails ("the context mesh ... should match the mesh passed to shard_map"), and
re-laying out its inputs would change nothing: pmap fixes the layout. So a pmap'd function is
viewed on pmap's own mesh with pmap's own specs, the layout fixed.

The mesh and specs come from pmap's private internals, read by the JAX adapter
(:func:`shardwidget._jax.pmap_params`: the ``infer_params`` closure from jax 0.8, the C++
``PmapFunction``'s ``_prepare_pmap`` on 0.7). On jax 0.7 the function compiled is the same
body as a shard_map over pmap's mesh (:func:`shardwidget._jax.pmap_compilable`): 0.7's pmap
cannot be compiled under jit as one SPMD program.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh

from .. import _jax
from ..model import spec as spec_mod
from ..model.pmap_axis import LABEL, relabel, renamed
from . import function as trace_mod
from . import result as result_mod

INTERNAL_AXIS = _jax.PMAP_INTERNAL_AXIS
"""The name pmap gives its mesh axis when the user gives none."""


def pmapped_of(f: Callable[..., Any]) -> Any:
    """The pmap'd function behind f: f itself, or the g of ``jax.jit(g)`` (as tutorial 003's
    ``jax.jit(jax.pmap(dot))``); None for anything else."""
    if is_pmapped(f):
        return f
    inner = getattr(f, "__wrapped__", None)
    return inner if inner is not None and is_pmapped(inner) else None


def is_pmapped(f: Callable[..., Any]) -> bool:
    """Whether f is what ``jax.pmap`` returned (not f under jit or vmap: those trace it)."""
    if _jax.is_cpp_pmap(f):
        return callable(getattr(f, "lower", None))
    code = getattr(f, "__code__", None)
    return (
        code is not None
        and code.co_filename in _jax.pmap_source_files()
        and "infer_params" in code.co_freevars
        and callable(getattr(f, "lower", None))
    )


@dataclass(frozen=True)
class PmapLayout:
    """What pmap does with these arguments.

    Attributes:
        mesh: pmap's one-axis jax Mesh (its devices: the first n of ``jax.local_devices()``,
            or the ``devices=`` given).
        axis_name: the mesh axis name as JAX writes it (the user's, or INTERNAL_AXIS).
        user_axis: the axis_name the user gave pmap, as text; "" when none.
        in_specs: one normalized spec per array leaf of the arguments (the mapped dimension on
            the axis, or replicated for ``in_axes=None``).
    """

    mesh: Any
    axis_name: str
    user_axis: str
    in_specs: tuple[spec_mod.NormSpec, ...]

    @property
    def size(self) -> int:
        """Devices pmap runs on: the mapped axis size."""
        return int(self.mesh.devices.size)


def pmap_layout(f: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> PmapLayout:
    """pmap's mesh and in_specs for f(*args, **kwargs); ValueError in pmap's words when pmap
    refuses the arguments (e.g. a mapped axis larger than the device count)."""
    try:
        mesh, in_specs_flat, flat = _jax.pmap_params(f, args, kwargs)
    except Exception as e:  # pmap's own checks: axis sizes, in_axes against the arguments
        raise ValueError(result_mod.clean_error(e)) from None
    axis = mesh.axis_names[0]
    if not isinstance(axis, str):  # pmap takes any hashable; mesh axes here are named by text
        raise ValueError(
            f"pmap's axis_name is {axis!r}, not a string: the view names mesh axes by text. "
            f"Name it with a string, e.g. jax.pmap(f, axis_name={str(axis)!r})"
        )
    # pmap's flat arguments are the view's leaves in the same order (static_broadcasted_argnums
    # are hashable, so never arrays), plus any non-array leaf pmap maps too.
    specs = tuple(
        spec_mod.normalize(tuple(s), len(a.shape))
        for a, s in zip(flat, in_specs_flat, strict=True)
        if result_mod.is_array_leaf(a)
    )
    n_leaves = sum(
        result_mod.is_array_leaf(v) for v in jax.tree_util.tree_leaves((tuple(args), dict(kwargs)))
    )
    if len(specs) != n_leaves:  # never seen; refuse rather than pair specs with wrong leaves
        raise ValueError("could not read pmap's layout of these arguments")
    name = str(mesh.axis_names[0])
    return PmapLayout(mesh, name, "" if _jax.is_unnamed_pmap_axis(name) else name, specs)


def leaf_note(spec: spec_mod.NormSpec, shape: Sequence[int], lay: PmapLayout, side: str) -> str:
    """pmap's layout of one leaf in words (instead of its internal axis name), with the shape
    pmap's body sees (inputs) or returns (outputs) on each device."""
    n = lay.size
    dims = [d for d, entry in enumerate(spec) if lay.axis_name in entry]
    body = tuple(int(k) for i, k in enumerate(shape) if i not in dims[:1])
    sees = f"; the body sees shape {body}" if side == "in" else f"; each body returns {body}"
    over = f" (axis {lay.user_axis!r})" if lay.user_axis else " (pmap's unnamed axis)"
    if not dims:
        if side == "in":
            return f"pmap: the same whole value on each of the {n} devices (in_axes=None){sees}"
        return f"pmap: one value, the same on each of the {n} devices (out_axes=None){sees}"
    d = dims[0]
    if side == "in":
        return f"pmap: dimension {d} mapped over {n} devices{over}, one slice per device{sees}"
    return f"pmap: dimension {d} stacks the {n} devices' results{over}, one per device{sees}"


FIXED = (
    "pmap fixes this layout: the mapped dimension goes one slice per device over pmap's own "
    "mesh. To try other layouts, view the function pmap wraps: "
    "ShardView(f, x, mode='shard_map') or ShardView(f, x)"
)


class PmapResult(result_mod.TraceResult):
    """A pmap'd function's result: JAX's own shardings, leaves whose layouts call an unnamed
    pmap axis LABEL (the shardings keep INTERNAL_AXIS)."""

    @property
    def input_leaves(self) -> list[result_mod.LeafResult]:
        return [dataclasses.replace(lf, layout=relabel(lf.layout)) for lf in super().input_leaves]

    @property
    def output_leaves(self) -> list[result_mod.LeafResult]:
        return [dataclasses.replace(lf, layout=relabel(lf.layout)) for lf in super().output_leaves]


class PmapTraced(trace_mod.Traced):
    """A pmap'd function (or jax.jit of one), compiled as ``jit`` of it on pmap's own mesh and
    specs (the layout is fixed: :meth:`validate` refuses any other). Results have
    ``mode == "pmap"``; an unnamed pmap axis is called LABEL in the state and the layouts."""

    def __init__(
        self,
        f: Callable[..., Any],
        args: Sequence[Any],
        kwargs: dict[str, Any],
        devices: Sequence[Any],
        mode: str | None = None,
    ) -> None:
        if mode not in (None, "pmap"):
            raise ValueError(
                f"{getattr(f, '__name__', 'f')} is a jax.pmap'd function: it is viewed as pmap "
                f"runs it (mode 'pmap'), not mode={mode!r}. For {mode}, view the function pmap "
                f"wraps: ShardView(f, x, mode={mode!r})"
            )
        # "jit" drives the compile: jax.jit over pmap's jit(shard_map), with pmap's shardings
        # (on jax 0.7, whose pmap jit cannot compile, the same body as a shard_map).
        pm = pmapped_of(f)
        run = _jax.pmap_compilable(pm)
        if run is not pm and pm is not f:
            run = jax.jit(run)
        super().__init__(run, args, kwargs, "jit", devices)
        self.user_f = f  # (what the jaxpr is made of: the function pmap returned)
        self.pmap = pmap_layout(pm, args, kwargs)
        inner = getattr(pm, "__wrapped__", None)
        name = f"pmap({getattr(inner, '__name__', None) or 'f'})"
        self.fn_name = name if pm is f else f"jit({name})"
        shown = self.pmap.user_axis or LABEL
        self.own = result_mod.TraceState(
            (self.pmap.size,),
            (shown,),
            ("auto",),
            tuple(renamed(s, self.pmap.axis_name, shown) for s in self.pmap.in_specs),
            (),
        )

    def find_own_mesh(self) -> None:
        """pmap has its own mesh (:meth:`mesh`): nothing to look for in f."""

    def _user_error(self, e: BaseException) -> str:
        """The error in words; on jax 0.8, whose pmap answers a trace after a failed one with
        only "Store empty" (its cached shard_map kept the failed call's output store), the
        first error instead: what pmap itself said."""
        msg = super()._user_error(e)
        first = getattr(self, "_first_error", "")
        if "Store empty" in msg and first:
            return first
        self._first_error = first or msg
        return msg

    def _jit_in_shardings(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """pmap has no in_shardings of a jit: none read (and no trace of f before the compile:
        on jax 0.8 a second trace after a failed one says only "Store empty")."""
        return [None] * len(self.leaves)

    def mesh(self, state: result_mod.TraceState) -> Any:
        """pmap's own mesh (the only one :meth:`validate` lets through)."""
        return self.pmap.mesh

    def _structs(self, state: result_mod.TraceState, mesh: Mesh | AbstractMesh) -> list[Any]:
        # The arguments as pmap lays them out, on its mesh with JAX's own axis name.
        return super()._structs(dataclasses.replace(state, in_specs=self.pmap.in_specs), mesh)

    def validate(self, state: result_mod.TraceState) -> None:
        """Only pmap's own layout, its outputs as pmap lays them out (out_specs None)."""
        if state.mesh_key != self.own.mesh_key or state.in_specs != self.own.in_specs:
            raise ValueError(FIXED)
        if any(s is not None for s in state.out_specs):
            raise ValueError(FIXED)

    def _compile(self, state: result_mod.TraceState) -> result_mod.TraceResult:
        base = super()._compile(state)
        res = PmapResult(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
        res.mode = "pmap"
        # The jaxpr as jax.make_jaxpr(f)(*args) prints it: outside the compile's set_mesh
        # (which would add a ctx_mesh to pmap's inner jit).
        run, self.f = self.f, self.user_f  # (on jax 0.7: pmap's own, not its shard_map twin)
        try:
            closed = jax.make_jaxpr(self._named)(*self._structs(state, self.pmap.mesh))
        finally:
            self.f = run
        res.jaxpr = result_mod.jaxpr_text(closed)
        res.notes = {
            "in": [
                leaf_note(s, lf.shape, self.pmap, "in")
                for s, lf in zip(self.pmap.in_specs, self.leaves, strict=True)
            ],
            "out": [
                leaf_note(spec_mod.normalize(tuple(sh.spec), len(shape)), shape, self.pmap, "out")
                if hasattr(sh, "spec")
                else ""
                for sh, shape in zip(res.out_shardings, res.out_shapes, strict=True)
            ],
        }
        return res


_CLASH = re.compile(
    r"should match the mesh passed to shard_map Mesh\((.*), axis_types=\(([^)]*)\)\)"
)
_AXIS = re.compile(r"'([^']*)': (\d+)")


def mesh_clash_hint(msg: str) -> str:
    """msg, plus what to do, when f calls a shard_map (a pmap'd function is one) on a mesh of
    its own: JAX refuses it inside the view's mesh, and the same mesh given to the view works."""
    m = _CLASH.search(msg)
    if m is None:
        return msg
    axes = _AXIS.findall(m.group(1))
    types = [t.strip().lower() for t in m.group(2).split(",") if t.strip()]
    if not axes or len(types) != len(axes):
        return msg
    names = [a for a, _ in axes]
    unnamed = " (pmap's name for an unnamed axis)" if _jax.unnamed_pmap_axis(names) else ""
    return (
        f"{msg}\nThe function runs a shard_map (a jax.pmap'd function is one) on a mesh of its "
        "own; the view compiles it inside the view's mesh, which must be the same. Give the "
        f"view that mesh: mesh_shape={[int(n) for _, n in axes]}, axis_names={names}{unnamed}, "
        f"axis_types={types}; or view the pmap'd function itself: ShardView(pmapped, x)"
    )
