"""A function view's ways under its memory peak: ``view.memory_fixes()`` (layouts that lower
the peak, each compiled by the view's own path: :mod:`shardwidget.why.memory_fixes`),
``view.apply_memory_fix(k)`` (a layout change: undo restores) and ``view.largest_fit(path,
dim)`` (the largest size of an input's dimension that fits: :mod:`shardwidget.plan.largest_fit`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

import jax
from jax.sharding import AbstractMesh, AxisType

from ..cost import hardware as hw_mod
from ..hlo import peak_text
from ..model import spec as spec_mod
from ..plan.largest_fit import MAX_COMPILES, Fit, largest_fit
from ..why import memory_fixes
from ..wire import peak as peak_wire
from ..wire.peak import PeakWire
from .boundary import capped
from .fit_run import FitRun

if TYPE_CHECKING:
    from ..trace.result import TraceResult, TraceState


class MemoryMixin:
    """:meth:`memory_fixes`, :meth:`apply_memory_fix` and :meth:`largest_fit`."""

    _path: Any
    _result: TraceResult | None
    _shown: TraceState | None
    _trace: Any  # the view's trait (wire.Trace)
    _fit_run: FitRun | None = None
    _fit_for: TraceResult | None = None  # the result shown when the fit began
    _fit_waiting = False
    _over: PeakWire | None = None  # the memory panel of the layout last refused for its size
    _refused: Any = None  # that refusal (plan.planned_function.Refused)
    error: str
    hardware: str
    STATE_TRAITS: ClassVar[tuple[str, ...]]

    if TYPE_CHECKING:  # the view's own (ShardView.set_layout)

        def _change(self, st: Any, *args: Any, **kwargs: Any) -> bool: ...

        def _candidate(self, changes: dict[str, Any]) -> TraceState: ...

        def _later(self, work: Callable[[], None]) -> None: ...

        def _take_later(self) -> None: ...

    def memory_fixes(self) -> list[memory_fixes.MemoryFix]:
        """The layouts that may lower the peak (``trace.peak``): each input leaf live at the
        peak (every input where the compiler wrote no peak report) split further over a mesh
        axis it does not use (jit mode), and each positional argument an output could reuse donated
        (``donate_argnums``), each compiled now (one compile each): ``.what``, ``.state``,
        ``.peak``, ``.before``, ``.lowers``; the lowest peak first. [] before a layout
        compiled."""
        if self._result is None:
            return []
        return memory_fixes.compute(self._path.traced, self._result)

    def apply_memory_fix(self, k: int = 0) -> None:
        """Show the layout of ``memory_fixes()[k]`` (a layout change: :meth:`undo` restores)."""
        fix = memory_fixes.pick(self.memory_fixes(), k)
        wire = fix.state.to_wire()
        layout = {n: v for n, v in wire.items() if n in self.STATE_TRAITS}
        self.set_layout(**layout, donate=list(fix.state.donate))

    @property
    def donate(self) -> list[str]:
        """list[str], default []: the input leaves donated in the layout shown, as
        ``jax.jit(f, donate_argnums=...)`` donates them (an output may reuse their buffers:
        ``trace.memory["alias"]``). Set it to leaf paths or indices (``view.donate = ["x"]``,
        or ``set_layout(donate=...)``): a layout change (undo restores); it stays through
        later changes of the specs until set again. The arrays given to the view are never
        donated: a run donates copies."""
        st = self._shown
        return [self._path.traced.leaves[i].path for i in st.donate] if st is not None else []

    @donate.setter
    def donate(self, value: object) -> None:
        self.set_layout(donate=value)

    def set_layout(self, **changes: Any) -> None:
        """Change several layout traits at once (and ``donate``: see :attr:`donate`);
        ValueError (nothing changed) when invalid."""
        if "donate" not in changes:
            super().set_layout(**changes)  # type: ignore[misc]  # (ShardView's, after this mixin)
            return
        bad = [k for k in changes if k not in (*self.STATE_TRAITS, "donate")]
        if bad:
            raise TypeError(
                f"set_layout got {bad[0]!r}; it takes: {', '.join(self.STATE_TRAITS)}, donate"
            )
        try:
            self._change(self._candidate(changes))
        except ValueError as e:
            raise capped(e) from None

    def _compute(self, st: TraceState) -> Any:
        """The view's compute; a layout the compiler refuses for not fitting shows, beside the
        error, where its memory goes (``_trace.over``: what is over the device's memory)."""
        traced = self._path.traced
        if hasattr(traced, "refused"):
            traced.refused = None
        self._over, self._refused = None, None
        try:
            return super()._compute(st)  # type: ignore[misc]  # (ShardView's)
        except ValueError:
            self._refused = getattr(traced, "refused", None)
            self._over = _over(self._refused)
            self._show_over()
            raise

    def _over_text(self) -> list[str]:
        """The text view's lines for the layout refused for its size (while its error shows):
        its peak and what is live there, against the memory the compiler says it has."""
        r = self._refused
        lines = peak_text.compact(r.peak, r.unknown, r.available) if r and self.error else []
        return [f"  the layout asked for: {ln.strip()}" if i == 0 else f"  {ln}"
                for i, ln in enumerate(lines)]  # fmt: skip

    def _show_over(self) -> None:
        """Put the refused layout's memory panel (:meth:`_compute`) into ``_trace``."""
        if self._over is not None and self._trace:
            self._trace = {**self._trace, "over": self._over}

    def _from_wire(self, d: dict[str, Any]) -> TraceState:
        """The state of trait values / a request; a request without ``donate`` (the front
        end's, a change of the specs) keeps the donation shown."""
        st: TraceState = super()._from_wire(d)  # type: ignore[misc]  # (ShardView's)
        shown = self._shown
        if "donate" not in d and shown is not None and shown.donate:
            st = dataclasses.replace(st, donate=shown.donate)
        return st

    @overload
    def largest_fit(
        self,
        input_path: str,
        dim: int,
        hbm: float | None = ...,
        *,
        wait: Literal[True] = ...,
        **kw: Any,
    ) -> Fit: ...

    @overload
    def largest_fit(
        self,
        input_path: str,
        dim: int,
        hbm: float | None = ...,
        *,
        wait: Literal[False],
        **kw: Any,
    ) -> FitRun: ...

    def largest_fit(
        self,
        input_path: str,
        dim: int,
        hbm: float | None = None,
        *,
        wait: bool = True,
        **kw: Any,
    ) -> Fit | FitRun:
        """The largest size of dimension ``dim`` of input ``input_path`` whose step, laid out
        (and donated) as shown, fits in ``hbm`` bytes per device (default: the ``hardware``
        preset's HBM), by bisection over at most 8 plans on the view's mesh (a plan's own,
        else an AbstractMesh of the layout's shape) in a thread of its own, the memory panel
        saying how far it got; ``kw`` goes to :func:`shardwidget.plan.largest_fit`. The
        :class:`~shardwidget.plan.largest_fit.Fit` (``wait=False``: at once, a
        :class:`~.fit_run.FitRun` to ``.wait()`` on). Takes f(*arrays)."""
        res = self._result
        if res is None:
            raise ValueError("no layout has compiled yet: nothing to size")
        args = self._array_args()
        if input_path not in res.in_paths:
            raise ValueError(f"input {input_path!r}: the inputs are {', '.join(res.in_paths)}")
        arg = res.in_paths.index(input_path)
        ndim = len(res.in_shapes[arg])
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < ndim:
            raise ValueError(f"dim {dim!r}: {input_path} is {ndim}-d")
        st = res.state
        specs = [spec_mod.to_partition_spec(s) for s in st.in_specs]
        limit = hbm if hbm is not None else hw_mod.hardware(self.hardware).hbm_bytes
        f, mesh = self._path.traced.f, self._mesh(st)

        def find(progress: Any) -> Fit:
            return largest_fit(
                f, *args, mesh=mesh, in_specs=specs, arg=arg, dim=dim, hbm=limit,
                progress=progress, donate_argnums=st.donate, **kw,
            )  # fmt: skip

        of = int(kw.get("max_compiles", MAX_COMPILES))
        run = FitRun(find, self._fit_step, input=input_path, dim=dim, hbm=limit, of=of)
        self._fit_run, self._fit_for = run, res
        if not wait:
            return run
        fit = run.wait()
        self._take_later()  # (the panel's last step, on this thread: no kernel loop waits)
        return fit

    def _fit_step(self, run: FitRun) -> None:
        """From the fit's thread: have the kernel's thread publish, unless a publish already
        waits (it will read the newer steps)."""
        if run is not self._fit_run or self._fit_waiting:
            return
        self._fit_waiting = True
        self._later(self._publish_fit)

    def _publish_fit(self) -> None:
        """``_trace.fit`` as the fit stands (kernel's thread), while the layout it sizes is
        shown (its answer is that layout's, never another's)."""
        self._fit_waiting = False
        run = self._fit_run
        if run is None or self._result is not self._fit_for or not self._trace:
            return
        done = run.done
        payload = peak_wire.fit(
            run.input, run.dim, len(run.tried), run.of, done, run.error, run.text
        )  # fmt: skip
        self._trace = {**self._trace, "fit": payload}

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


def _over(refused: Any) -> PeakWire | None:
    """The memory panel's payload of a plan's refusal (None: nothing was refused)."""
    if refused is None:
        return None
    return peak_wire.peak(refused.peak, refused.unknown, refused.available, refused.whose)
