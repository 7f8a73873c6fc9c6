"""A function and its arguments as pytrees: the array leaves a view lays out (every other
leaf is static, closed over), the function called on those leaves alone, its outputs traced
once per layout that can change them, and specs as JAX reads them (a single spec, a pytree
prefix, one per leaf). The base of :class:`~shardwidget.trace.function.Traced`, which compiles
and runs it. Imports no widget code.
"""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax.sharding import AbstractMesh, Mesh, PartitionSpec

from .. import _jax
from ..model import spec as spec_mod
from ._specs import leaf_specs
from .paths import param_names, path_text
from .result import Leaf, Slot, TraceState, clean_error, is_array_leaf


class FunctionCall:
    """f and its arguments: the array leaves in order (:attr:`leaves`), the static ones
    (:attr:`static_args`), f called on the array leaves, and its outputs' shapes, dtypes and
    paths per traced layout (cached)."""

    def __init__(
        self, f: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], mode: str
    ) -> None:
        self.f, self.mode = f, mode
        self.fn_name = getattr(f, "__name__", None) or type(f).__name__
        leaves_p, self._treedef = jax.tree_util.tree_flatten_with_path((tuple(args), dict(kwargs)))
        names = param_names(getattr(f, "__wrapped__", f), len(args))
        self._all = [v for _, v in leaves_p]
        for p, v in leaves_p:  # inside jit/vmap/grad: nothing concrete to compile or show
            if isinstance(v, jax.core.Tracer):
                raise TypeError(
                    f"ShardView got a tracer for {path_text(p, names)} ({type(v).__name__}, "
                    f"{getattr(v, 'aval', '?')}): it compiles and runs f on concrete arrays, so "
                    "make the view outside jit/vmap/grad, with the arrays f is called with"
                )
        self._dyn_pos = [i for i, v in enumerate(self._all) if is_array_leaf(v)]
        self.leaves = [
            Leaf(
                path_text(leaves_p[i][0], names),
                tuple(int(d) for d in self._all[i].shape),
                jax.dtypes.canonicalize_dtype(self._all[i].dtype, allow_extended_dtype=True),
                self._all[i],
            )
            for i in self._dyn_pos
        ]
        self.static_args = [
            f"{path_text(p, names)}={v!r}"[:80] for p, v in leaves_p if not is_array_leaf(v)
        ]
        self._out_info: dict[Any, tuple[list[tuple[int, ...]], list[Any], list[str]]] = {}
        self._out_tree: dict[Any, Any] = {}

    def mesh(self, state: TraceState) -> Any:
        """The jax Mesh of state (the subclass's)."""
        raise NotImplementedError

    def _structs(self, state: TraceState, mesh: Mesh | AbstractMesh) -> list[Any]:
        """The array leaves as ShapeDtypeStructs laid out as state says (the subclass's)."""
        raise NotImplementedError

    # -- specs as JAX reads them: a single spec, a pytree prefix, one per leaf
    def in_leaf_specs(self, value: Any) -> list[Any]:
        """in_specs as given to the view, one spec per input array leaf (see
        :func:`leaf_specs`): a single PartitionSpec applies to every leaf; a tuple is a pytree
        prefix of the positional arguments (as ``jax.shard_map`` / ``jax.jit`` read it;
        keyword arguments' leaves are replicated); a list of one spec per array leaf is the
        view's own form."""
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, self._all)
        full = (tuple(args), dict(kwargs))

        def prefix(v: Any) -> Any:
            return (tuple(v), {k: None for k in kwargs})

        return leaf_specs(value, full, prefix, self._dyn_pos, "in_specs", "the arguments")

    def out_leaf_specs(self, value: object, state: TraceState) -> list[Any]:
        """out_specs as given to the view, one per output leaf (see :meth:`in_leaf_specs`; a
        prefix is of f's output pytree). Traces f (ValueError for errors in f)."""
        self.output_info(state)
        tree = self._out_tree[None if self.mode == "jit" else (state.mesh_key, state.in_specs)]
        full = jax.tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
        return leaf_specs(
            value, full, lambda v: v, list(range(tree.num_leaves)), "out_specs", "the outputs"
        )

    # -- the function with array leaves as its only arguments
    def _call(self, *dyn: Any) -> Any:
        vals = list(self._all)
        for pos, v in zip(self._dyn_pos, dyn, strict=True):
            vals[pos] = v
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, vals)
        return self.f(*args, **kwargs)

    def _user_error(self, e: BaseException) -> str:
        """JAX's message about f, naming the user's function where JAX names the internal
        wrapper (its name and this file's line, e.g. "function f at .../trace.py:688")."""
        try:
            where = _jax.function_source(self.f)
        except Exception:  # a callable JAX cannot describe
            where = self.fn_name
        msg = clean_error(e).replace("'_call_flat'", repr(self.fn_name))
        return re.sub(r"\S+ at \S*?" + re.escape(pathlib.Path(__file__).name) + r":\d+", where, msg)

    def _under_name(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """fn under the user's function name, so HLO op names and JAX's messages read
        jit(layer)/… rather than an internal name."""

        def call(*dyn: Any) -> Any:
            return fn(*dyn)

        call.__name__ = call.__qualname__ = self.fn_name
        return call

    @property
    def _named(self) -> Callable[..., tuple[Any, ...]]:
        """The function of the array leaves, returning its output leaves flattened."""
        return self._under_name(self._call_flat)

    def _call_flat(self, *dyn: Any) -> tuple[Any, ...]:
        return tuple(jax.tree_util.tree_leaves(self._call(*dyn)))

    def output_info(self, state: TraceState) -> tuple[list[tuple[int, ...]], list[Any]]:
        """Shapes and dtypes of the output leaves: global shapes in jit mode (traced once: a
        layout never changes them); in shard_map mode the body's local shapes (they follow the
        in_specs; the global shape is the local one times the out_spec's axis sizes)."""

        key = None if self.mode == "jit" else (state.mesh_key, state.in_specs)
        hit = self._out_info.get(key)
        if hit is None:
            mesh = self.mesh(state)
            structs = self._structs(state, mesh)
            try:
                with _jax.mesh_context(mesh):
                    if self.mode == "jit":
                        outs = jax.eval_shape(self._under_name(self._call), *structs)
                    else:
                        in_specs = tuple(spec_mod.to_partition_spec(s) for s in state.in_specs)
                        probe = jax.shard_map(
                            self._under_name(self._call),
                            mesh=mesh,
                            in_specs=in_specs,
                            out_specs=PartitionSpec(),
                            check_vma=False,
                        )
                        outs = jax.eval_shape(probe, *structs)
            except Exception as e:  # a shape or sharding error in f, found while tracing
                raise ValueError(self._user_error(e)) from None
            flat = jax.tree_util.tree_flatten_with_path(outs)[0]
            self._out_tree[key] = jax.tree_util.tree_structure(outs)  # for view.code
            hit = (
                [tuple(int(d) for d in o.shape) for _, o in flat],
                [o.dtype for _, o in flat],
                ["out" + jax.tree_util.keystr(p) for p, _ in flat],
            )
            self._out_info[key] = hit
        return hit[0], hit[1]

    def out_paths(self, state: TraceState) -> list[str]:
        """Names of the output leaves ("out", "out[0]", "out['loss']", …)."""
        self.output_info(state)
        return self._out_info[None if self.mode == "jit" else (state.mesh_key, state.in_specs)][2]

    def arg_template(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """(args, kwargs) as given, each leaf replaced by a :class:`shardwidget.trace.result.Slot`:
        the array leaves numbered in order, the static ones marked (for ``view.code``)."""

        dyn = {pos: k for k, pos in enumerate(self._dyn_pos)}
        slots = [Slot(dyn[i]) if i in dyn else Slot(i, True) for i in range(len(self._all))]
        args, kwargs = jax.tree_util.tree_unflatten(self._treedef, slots)
        return tuple(args), dict(kwargs)

    def out_template(self, state: TraceState) -> Any:
        """The outputs' pytree with leaf i replaced by ``Slot(i)`` (from the trace that
        :meth:`output_info` keeps)."""

        self.output_info(state)
        tree = self._out_tree[None if self.mode == "jit" else (state.mesh_key, state.in_specs)]
        return jax.tree_util.tree_unflatten(tree, [Slot(i) for i in range(tree.num_leaves)])

    def global_out_shapes(self, state: TraceState) -> list[tuple[int, ...]]:
        """Global shapes of the output leaves (shard_map: local shapes times out_spec axes)."""
        shapes, _ = self.output_info(state)
        if self.mode == "jit":
            return shapes
        sizes = dict(zip(state.axis_names, state.mesh_shape, strict=True))
        return [
            tuple(
                d * math.prod(sizes[a] for a in entry)
                for d, entry in zip(shape, spec or ((),) * len(shape), strict=True)
            )
            for shape, spec in zip(shapes, state.out_specs, strict=False)
        ]
