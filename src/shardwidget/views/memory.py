"""A function view's ways under its memory peak: ``view.memory_fixes()`` (layouts that lower
the peak, each compiled by the view's own path: :mod:`shardwidget.why.memory_fixes`),
``view.apply_memory_fix(k)`` (a layout change: undo restores) and ``view.largest_fit(path,
dim)`` (the largest size of an input's dimension that fits: :mod:`shardwidget.plan.largest_fit`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import jax
from jax.sharding import AbstractMesh, AxisType

from ..cost import hardware as hw_mod
from ..model import spec as spec_mod
from ..plan.largest_fit import Fit, largest_fit
from ..why import memory_fixes

if TYPE_CHECKING:
    from ..trace.result import TraceResult


class MemoryMixin:
    """:meth:`memory_fixes`, :meth:`apply_memory_fix` and :meth:`largest_fit`."""

    _path: Any
    _result: TraceResult | None
    hardware: str
    STATE_TRAITS: ClassVar[tuple[str, ...]]

    if TYPE_CHECKING:  # the view's own (ShardView.set_layout)

        def set_layout(self, **changes: Any) -> None: ...

    def memory_fixes(self) -> list[memory_fixes.MemoryFix]:
        """The layouts that may lower the peak (``trace.peak``): each input leaf live at the
        peak split further over a mesh axis it does not use, each compiled now (one compile
        each): ``.what``, ``.state``, ``.peak``, ``.before``, ``.lowers``; the lowest peak
        first. [] before a layout compiled, where the peak is unknown, or in shard_map mode."""
        if self._result is None:
            return []
        return memory_fixes.compute(self._path.traced, self._result)

    def apply_memory_fix(self, k: int = 0) -> None:
        """Show the layout of ``memory_fixes()[k]`` (a layout change: :meth:`undo` restores)."""
        fix = memory_fixes.pick(self.memory_fixes(), k)
        wire = fix.state.to_wire()
        self.set_layout(**{n: v for n, v in wire.items() if n in self.STATE_TRAITS})

    def largest_fit(self, input_path: str, dim: int, hbm: float | None = None, **kw: Any) -> Fit:
        """The largest size of dimension ``dim`` of input ``input_path`` whose step, laid out
        as shown, fits in ``hbm`` bytes per device (default: the ``hardware`` preset's HBM),
        by bisection over plans on the view's mesh (a plan's own, else an AbstractMesh of the
        layout's shape); ``kw`` goes to :func:`shardwidget.plan.largest_fit`. Takes f(*arrays)."""
        res = self._result
        if res is None:
            raise ValueError("no layout has compiled yet: nothing to size")
        args = self._array_args()
        if input_path not in res.in_paths:
            raise ValueError(f"input {input_path!r}: the inputs are {', '.join(res.in_paths)}")
        arg = res.in_paths.index(input_path)
        st = res.state
        specs = [spec_mod.to_partition_spec(s) for s in st.in_specs]
        limit = hbm if hbm is not None else hw_mod.hardware(self.hardware).hbm_bytes
        return largest_fit(
            self._path.traced.f, *args, mesh=self._mesh(st), in_specs=specs, arg=arg, dim=dim,
            hbm=limit, **kw,
        )  # fmt: skip

    def _array_args(self) -> list[Any]:
        """f's positional arguments, each one array leaf; ValueError in words otherwise."""
        traced = self._path.traced
        args, kwargs = jax.tree_util.tree_unflatten(traced._treedef, traced._all)
        if kwargs or traced.static_args or len(args) != len(traced.leaves):
            raise ValueError(
                "largest_fit takes f(*arrays): this view's function has keyword, non-array or "
                "pytree arguments; bind them first (functools.partial) and make a view of the rest"
            )
        return [jax.ShapeDtypeStruct(lf.shape, lf.dtype) for lf in traced.leaves]

    def _mesh(self, st: Any) -> Any:
        """The plan's own mesh where it has the layout's shape, else an AbstractMesh of it."""
        own = getattr(self._path.traced, "plan_mesh", None)
        if own is not None and tuple(own.axis_sizes) == tuple(st.mesh_shape):
            return own
        types = tuple(
            AxisType.Explicit if t == "explicit" else AxisType.Auto for t in st.axis_types
        )
        return AbstractMesh(tuple(st.mesh_shape), tuple(st.axis_names), axis_types=types)
