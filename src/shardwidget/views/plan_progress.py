"""A function view on a ``tpu_mesh`` while the TPU compiler works (plan/background.py).

:func:`attach` makes the view's PlanTraced compile TPU layouts in the background: the view shows
the CPU compiler's plan of the layout at once, its badge saying that the TPU compiler is at work
and for how long (updated every few seconds), and switches to the TPU result when it arrives,
if the view still shows that layout. An error of the TPU compile is said in ``error``, the CPU
plan staying.

The background threads only wait and hand over: what they learn is handed to the kernel's
thread (:meth:`ShardView._later <shardwidget.views.base.ShardView._later>`: the kernel's event
loop, or the next read of the view where no kernel runs) before any trait is touched, and shown
there through the view's request boundary (``busy``, ``error``). ipywidgets is not thread-safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _jax, wire
from ..cost import hardware as hw_mod
from ..plan import background, gpu, tpu
from ..trace.result import TraceState

if TYPE_CHECKING:
    from .function import FunctionView


def attach(view: FunctionView) -> None:
    """Take TPU results later in ``view`` (a FunctionView whose traced is a PlanTraced on a
    tpu_mesh); nothing for any other view. The callback runs in the background thread: it
    hands the result to the kernel's thread and returns."""
    traced = view.plan_traced
    if traced is None or not hasattr(traced.plan_mesh, "abstract_device"):
        return

    def ready(st: TraceState, error: str) -> None:
        view._later(lambda: _arrived(view, st, error))

    traced.on_tpu_ready = ready


def _which(view: FunctionView) -> str:
    """ "GPU" for a view on a gpu_mesh, else "TPU" (whose compiler the background waits on)."""
    plan = view.plan_traced
    return "GPU" if plan is not None and gpu.is_gpu(plan.plan_mesh) else "TPU"


def _shows(view: FunctionView, st: TraceState) -> bool:
    res = view.shown_trace  # (None while the view is being made)
    return res is not None and res.state == st


def _arrived(view: FunctionView, st: TraceState, error: str) -> None:
    """The TPU compile of ``st`` is over: show it if the view still shows ``st``. On the
    kernel's thread, inside the view's boundary; whatever goes wrong is said in ``error``."""
    try:
        _show_tpu(view, st, error)
    except Exception as e:  # the boundary of a result that arrived later
        view.error = (
            f"the {_which(view)} plan could not be shown: {e}; the CPU compiler's plan stays"
        )


def _show_tpu(view: FunctionView, st: TraceState, error: str) -> None:
    if not _shows(view, st):
        return  # the user left this layout: the result waits in the TPU cache, unseen
    if error:
        view.error = (
            f"the {_which(view)} compiler did not finish ({error}); the CPU compiler's plan stays"
        )
        return
    traced = view.plan_traced
    assert traced is not None  # (attach took only a plan)
    traced.forget(st)  # (the stand-in, should it have been cached after the TPU's came)
    try:
        view._change(st, checked=True, again=True)  # the TPU's result, from its cache
    except ValueError as e:  # e.g. does not fit in HBM: the TPU compiler's answer, in words
        view.error = str(e)
        return
    view.publish_options()


def watch(view: FunctionView) -> None:
    """While the view shows a CPU stand-in, refresh its badge (how long the TPU compiler has
    worked) every few seconds: the ticker's thread hands each refresh to the kernel's."""
    res, traced = view.shown_trace, view.plan_traced
    started = next(iter(res.notes.get("tpu_started", ())), None) if res is not None else None
    if res is None or started is None or traced is None:
        return
    if res.state in traced.tpu_over:  # the TPU's came before this stand-in was shown
        st, error = res.state, traced.tpu_over[res.state]
        view._later(lambda: _arrived(view, st, error))
        return
    background.ticker(
        float(started),
        lambda: view.shown_trace is res,
        lambda: view._later(view.publish_options),
    )


# ------------------------------------------------------------------ "compile with" (a plan view)
def compile_with(view: FunctionView) -> wire.CompileWith | None:
    """``_trace_options``' "compile_with" of a plan view: the compiler in use and what the
    hardware preset's TPU offers (or why not, in one line); None for a view that is not a plan."""
    traced = view.plan_traced
    if traced is None or gpu.is_gpu(traced.plan_mesh):
        return None  # (a gpu_mesh's plan is the GPU compiler's: its note says so, no choice here)
    current = "tpu" if tpu.is_tpu(traced.plan_mesh) else "cpu"
    mi = tpu.info(traced.plan_mesh)
    if mi is not None:
        label, why = f"this TPU: {mi.title}", ""
    else:
        family = hw_mod.hardware(view.hardware).topology
        label, why = tpu.compile_with(family, int(traced.n_positions))
    return {"current": current, "tpu": label, "why": why}


def switch(view: FunctionView, compiler: str) -> None:
    """Re-plan the view's layout with ``compiler`` ("cpu": XLA's CPU compiler on an
    AbstractMesh; "tpu": the hardware preset's TPU, :func:`~shardwidget.plan.tpu.topology_for`
    the plan's size); ValueError in words, nothing changed, where that cannot be."""
    traced = view.plan_traced
    if compiler not in ("cpu", "tpu") or traced is None:
        raise ValueError(f'compile with "cpu" or "tpu" (a plan view only); got {compiler!r}')
    old = traced.plan_mesh
    shape, names = tuple(old.axis_sizes), tuple(old.axis_names)
    if compiler == "cpu":
        new = _jax.abstract_mesh(shape, names, tuple(old.axis_types))
    else:
        family = hw_mod.hardware(view.hardware).topology
        why = tpu.compile_with(family, int(traced.n_positions))[1]
        if why:
            raise ValueError(why)
        name, slices, config = tpu.topology_for(family, int(traced.n_positions)) or ("", 1, "")
        new = tpu.tpu_mesh(
            name, shape, names, num_slices=slices, axis_types=tuple(old.axis_types),
            chip_config_name=config, allow_split_physical_axes=True,
        )  # fmt: skip
    traced.replan(new)
    view._change(view._candidate({}), again=True)  # the same layout, another compiler
    view.publish_options()


def on_message(view: FunctionView, content: dict[str, Any]) -> None:
    """The front end's {"type": "compile_with", "compiler": "cpu" | "tpu"}: :func:`switch`
    inside the view's boundary (``busy``; a refusal said in ``error``, never raised into the
    kernel; the plan as it was)."""
    with view._handling():
        try:
            switch(view, str(content.get("compiler")))
        except Exception:
            view.publish_options()
            raise
