"""``view.largest_fit(..., wait=False)``: the bisection of :func:`shardwidget.plan.largest_fit`
in a thread of its own, its progress shown in the memory panel as compiles finish.

The thread only compiles (in the planning helper: it mostly waits) and hands over: each step
is recorded here and the view is told through ``on_step``, which hands the publish to the
kernel's thread (:meth:`ShardView._later`) before any trait is touched; ipywidgets is not
thread-safe."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..model.units import fmt_bytes
from ..plan.largest_fit import Fit

Progress = Callable[[int, int, int, bool], None]


class FitRun:
    """A largest_fit at work in the background.

    Attributes:
        input: the input leaf sized; dim: its dimension.
        hbm: the device memory judged against (bytes per device).
        tried: (size, fits) of each compile finished so far, in order.
        of: the most compiles it makes.
        result: the :class:`~shardwidget.plan.largest_fit.Fit` once done (None before, or
            when it failed: ``error`` says why).
        error: why it failed ("" while running or when it found an answer).
    """

    def __init__(
        self,
        find: Callable[[Progress], Fit],
        on_step: Callable[[FitRun], None],
        *,
        input: str,
        dim: int,
        hbm: float,
        of: int,
    ) -> None:
        self.input, self.dim, self.hbm, self.of = input, dim, hbm, of
        self.tried: list[tuple[int, bool]] = []
        self.result: Fit | None = None
        self.error = ""
        self._find, self._on_step = find, on_step
        self._done = threading.Event()
        threading.Thread(target=self._run, daemon=True, name="shardwidget-largest-fit").start()

    @property
    def done(self) -> bool:
        """Whether it is over (an answer in ``result``, or ``error``)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> Fit:
        """The answer, once the compiles are over; ValueError in words when it failed,
        TimeoutError when ``timeout`` seconds pass first."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"largest_fit: still at work after {timeout} s ({self.text})")
        if self.result is None:
            raise ValueError(f"largest_fit of {self.input} dim {self.dim}: {self.error}")
        return self.result

    @property
    def text(self) -> str:
        """Where it stands, in words (the memory panel's line)."""
        head = f"largest {self.input} dim {self.dim} that fits in {fmt_bytes(self.hbm)}"
        if self.error:
            return f"{head}: failed ({self.error})"
        if self.result is not None:
            return f"{head}: {fit_words(self.result)}"
        last = self.tried[-1] if self.tried else None
        seen = f": {last[0]} {'fits' if last[1] else 'does not'}" if last else ""
        return f"{head}: compile {len(self.tried) + 1} of at most {self.of}{seen} …"

    def _step(self, i: int, of: int, size: int, fits: bool) -> None:
        self.tried.append((size, fits))
        self._on_step(self)

    def _run(self) -> None:
        try:
            self.result = self._find(self._step)
        except Exception as e:  # said in words by whoever reads it; the thread ends quietly
            self.error = str(e) or type(e).__name__
        finally:
            self._done.set()
            self._on_step(self)

    def __repr__(self) -> str:
        return f"<FitRun {self.text}>"


def fit_words(fit: Fit) -> str:
    """A Fit in words with its bytes readable: "4096 (peak 14.2 GiB); 4352 does not (16.1
    GiB)", in ``compiles`` compiles."""
    if not fit.fits:
        return f"none: even {fit.over} does not ({_b(fit.over_peak)}); {fit.compiles} compiles"
    over = f"; {fit.over} does not ({_b(fit.over_peak)})" if fit.over is not None else ""
    bound = "" if fit.exact else " (a bound: the compiles allowed ran out)"
    return f"{fit.fits} (peak {_b(fit.peak)}){over}{bound}; {fit.compiles} compiles"


def _b(n: Any) -> str:
    return "unknown" if n is None else fmt_bytes(n)
