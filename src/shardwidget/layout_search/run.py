"""The search: propose the layouts, lower each here, compile them in parallel helpers, rank
what comes back, as it comes back.

A coordinating thread lowers one candidate after another (the kernel's JAX, no device) and
queues each module for the :class:`.pool.Pool`; results stream into :attr:`Search.results`
(ranked on every read) and to the listeners (a view's panel). Every compile is cached by
(function, argument shapes, target, layout): a second search of the same step asks no helper.
A budget in seconds stops the search with what it has: nothing more is lowered, and compiles
still running are stopped; but never with nothing: where no result has come in by then (a
loaded machine), the search runs on to its first result, and says so.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax

from ..cost.hardware import Hardware
from ..model import spec as spec_mod
from ..plan import compile as compile_mod
from ..plan import helper as helper_mod
from . import candidate as cand_mod
from . import candidates as c
from . import gc_quiet
from . import leaves as leaves_mod
from . import strategies as strat
from .candidate import Candidate
from .pool import Job, Pool
from .target import Target, target_of

KEEP = 1024
"""Compiles kept in the search's cache (least recently used out first)."""
_CACHE: OrderedDict[tuple[Any, ...], compile_mod.Plan] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_BUDGETED: OrderedDict[tuple[Any, ...], None] = OrderedDict()
"""Searches a budget stopped (function, shapes, target, layouts, budget): the same search
again answers with the compiles the first one made, in the cache, and compiles nothing more
(a bigger budget, or none, goes on from there)."""


def _signature(args: Sequence[Any]) -> tuple[Any, ...]:
    flat, treedef = jax.tree_util.tree_flatten(args)
    return (str(treedef), tuple((tuple(x.shape), str(x.dtype)) for x in flat))


def _cached(key: tuple[Any, ...] | None) -> compile_mod.Plan | None:
    if key is None:
        return None
    with _CACHE_LOCK:
        plan = _CACHE.get(key)
        if plan is not None:
            _CACHE.move_to_end(key)
        return plan


def _store(key: tuple[Any, ...] | None, plan: compile_mod.Plan) -> None:
    if key is None:
        return
    with _CACHE_LOCK:
        _CACHE[key] = plan
        while len(_CACHE) > KEEP:
            _CACHE.popitem(last=False)


def clear_cache() -> None:
    """Forget every cached compile (tests, or to measure a cold search)."""
    with _CACHE_LOCK:
        _CACHE.clear()
        _BUDGETED.clear()


@dataclass
class Progress:
    """How far a search is: candidates ``done`` of ``total`` (compiled, failed or cached),
    ``cached`` of them from the cache, and the ``state``: "running", "done", "cancelled",
    "budget" (stopped by its time budget)."""

    done: int = 0
    total: int = 0
    cached: int = 0
    state: str = "running"


@dataclass
class Search:
    """A search's candidates, streaming in while it runs (see :func:`search`).

    Attributes:
        target: the compiler and mesh searched for.
        hardware: the preset the step times are estimated on.
        dropped: the layouts left out, each with the reason.
        failed: (name, the compiler's or helper's words) of candidates that did not compile.
        progress: how far it is.
        workers: parallel helpers.
        wall_s: seconds from start to the last result (so far).
        compile_s: seconds of the compiles this search ran (the helpers' own times, summed).
    """

    target: Target
    hardware: Hardware
    dropped: list[c.Dropped] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    progress: Progress = field(default_factory=Progress)
    workers: int = 1
    wall_s: float = 0.0
    compile_s: float = 0.0
    first_s: float | None = None
    """Seconds from the start to the first result."""
    overran: str = ""
    """Where the budget passed with no result and the search ran on to its first: in words."""
    _found: list[Candidate] = field(default_factory=list, repr=False)
    _listeners: list[Callable[[Search], None]] = field(default_factory=list, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _pool: Pool | None = field(default=None, repr=False)
    _t0: float = field(default_factory=time.perf_counter, repr=False)
    args: tuple[Any, ...] = field(default=(), repr=False)
    """The function's arguments (their shapes and dtypes are what is laid out)."""
    fn_name: str = field(default="f", repr=False)
    """How :meth:`code` names the function."""
    view: Any = field(default=None, repr=False)
    """The function view :meth:`apply` lays out (None for ``shardwidget.search``)."""
    donate: tuple[int, ...] = field(default=(), repr=False)
    """The argument leaves donated (indices into the flattened arguments): every candidate is
    compiled so, as ``jax.jit(f on its leaves, donate_argnums=donate)``."""

    @property
    def results(self) -> list[Candidate]:
        """The candidates compiled so far, ranked: fit first, then estimated step time."""
        with self._lock:
            return cand_mod.ranked(self._found)

    @property
    def arrived(self) -> list[Candidate]:
        """The candidates compiled so far, in the order they arrived (a candidate keeps its
        place here while :attr:`results` re-ranks)."""
        with self._lock:
            return list(self._found)

    @property
    def done(self) -> bool:
        """Whether the search is over (finished, cancelled or out of budget)."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> Search:
        """Wait until the search is over (or ``timeout`` seconds); returns itself."""
        self._done.wait(timeout)
        return self

    def cancel(self) -> None:
        """Stop now, keeping what has arrived: nothing more is lowered, running compiles are
        stopped (their helpers end)."""
        self._stop.set()
        self.progress.state = "cancelled"
        if self._pool is not None:
            self._pool.cancel()

    def on_result(self, listener: Callable[[Search], None]) -> None:
        """Call ``listener(search)`` (from a helper's thread) after each result and at the
        end."""
        self._listeners.append(listener)

    def code(self, i: int) -> str:
        """Python for candidate i (of :attr:`results`): its mesh, its specs, the jitted step."""
        cand = self._pick(i)
        lines = [
            "import jax",
            "from jax.sharding import NamedSharding",
            "from jax.sharding import PartitionSpec as P",
            "",
            f"# {cand.name}: {cand.summary} (compiled by {cand.compiler})",
            f"mesh = jax.make_mesh({cand.mesh_shape}, {cand.axis_names})",
            "in_specs = [",
            *(f"    {strat.code_of(s)}," for s in cand.in_specs),
            "]",
            "in_shardings = jax.tree.map(",
            "    lambda s: NamedSharding(mesh, s), in_specs, is_leaf=lambda x: isinstance(x, P)",
            ")",
            f"{self.fn_name}_sharded = jax.jit({self.fn_name}, in_shardings=tuple(in_shardings)"
            + self._donate_code(),
        ]
        return "\n".join(lines) + "\n"

    def _donate_code(self) -> str:
        """ ", donate_argnums=(0,))" where whole arguments are donated; a comment where only
        some of an argument's leaves are (jax.jit donates whole arguments)."""
        if not self.donate:
            return ")"
        sizes = [len(jax.tree_util.tree_leaves(a)) for a in self.args]
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        whole = [i for i, (k, n) in enumerate(zip(starts, sizes, strict=True)) if n and
                 set(range(k, k + n)) <= set(self.donate)]  # fmt: skip
        if {d for i in whole for d in range(starts[i], starts[i] + sizes[i])} == set(self.donate):
            return f", donate_argnums={tuple(whole)})"
        return (
            f")  # compiled with leaves {list(self.donate)} of the flattened arguments donated: "
            "jax.jit donates whole arguments (flatten f to donate these alone)"
        )

    def why(self, i: int = 0, j: int | None = None) -> str:
        """Why candidate i ranks above candidate j (default: the next one), in the ranking's
        own terms: fit, then the part of the step time that differs most."""
        j = i + 1 if j is None else j
        return cand_mod.why(self._pick(i), self._pick(j))

    def apply(self, i: int) -> None:
        """Lay the view out as candidate i (a layout change: the view's undo restores)."""
        if self.view is None:
            raise ValueError(
                "this search has no view to apply to: use view.search(...) on a function "
                "view, or take search.code(i)"
            )
        self.view.apply_candidate(self._pick(i))

    def _pick(self, i: int) -> Candidate:
        found = self.results
        if not -len(found) <= i < len(found):
            raise IndexError(f"no candidate {i}: the search has {len(found)} so far")
        return found[i]

    def __repr__(self) -> str:
        p = self.progress
        head = (
            f"search on {self.target.compiler}, estimated on {self.hardware.name}: "
            f"{p.done}/{p.total} ({p.state}), {len(self.dropped)} dropped, "
            f"{len(self.failed)} failed, {self.workers} helper(s), {self.wall_s:.1f} s"
            + (f" ({self.overran})" if self.overran else "")
        )
        rows = [f"{k:>3}  {cand.line}" for k, cand in enumerate(self.results)]
        return "\n".join([head, *rows])

    # ------------------------------------------------------------------ the run
    def _add(self, cand: Candidate, compiled: bool) -> None:
        with self._lock:
            self._found.append(cand)
            self.progress.done += 1
            if compiled:
                self.compile_s += cand.compile_s
            else:
                self.progress.cached += 1
            self.wall_s = time.perf_counter() - self._t0
            if self.first_s is None:
                self.first_s = self.wall_s
        self._tell()

    def _fail(self, name: str, why: str) -> None:
        with self._lock:
            self.progress.done += 1
            if why != "cancelled":
                self.failed.append((name, why))
        self._tell()

    def _tell(self) -> None:
        for listener in list(self._listeners):
            listener(self)


@dataclass(frozen=True)
class _Tag:
    proposal: c.Proposal
    in_specs: tuple[Any, ...]
    key: tuple[Any, ...] | None


class _Run:
    """The coordinating thread of one search."""

    def __init__(
        self,
        s: Search,
        f: Callable[..., Any],
        props: list[c.Proposal],
        budget_s: float | None,
        timeout: float | None,
        fkey: tuple[Any, ...] | None,
    ) -> None:
        self.s, self.f, self.props, self.fkey = s, f, props, fkey
        self.frozen = False
        """Whether this run ends the kernel's freeze it joined (:mod:`.gc_quiet`)."""
        self.deadline = None if budget_s is None else s._t0 + budget_s
        self.timeout = timeout
        self._on_leaves: tuple[Callable[..., Any], list[Any]] | None = None
        self.whole = None
        if fkey is not None and budget_s is not None:
            self.whole = (*fkey, tuple(p.key for p in props), budget_s)

    def key(self, p: c.Proposal) -> tuple[Any, ...] | None:
        return None if self.fkey is None else (*self.fkey, p.key)

    def start(self) -> None:
        threading.Thread(target=self.run, daemon=True, name="shardwidget-search").start()

    def run(self) -> None:
        s = self.s
        try:
            self._search()
        finally:
            gc_quiet.leave(self.frozen)
            if s.progress.state == "running":
                s.progress.state = "done"
            self._remember_budget()
            s.wall_s = time.perf_counter() - s._t0
            s._done.set()
            s._tell()

    def _search(self) -> None:
        s = self.s
        todo = self._from_cache()
        if todo and s.progress.cached and self._repeated():
            todo = []
        if todo:
            s._pool = Pool(s.target, min(s.workers, len(todo)), self.timeout, self.done)
            self._lower_all(todo)
            s._pool.close()
            self._join()

    def _from_cache(self) -> list[c.Proposal]:
        todo = []
        for p in self.props:
            plan = _cached(self.key(p))
            if plan is None:
                todo.append(p)
            else:
                trees = strat.to_trees(self.s.args, p.specs)
                self.s._add(cand_mod.make(p, trees, plan, self.s.hardware, self.s.target), False)
        return todo

    def _repeated(self) -> bool:
        """Whether a budget stopped this same search before: then it is answered whole from
        the cache, stopped where the first one was ("budget")."""
        with _CACHE_LOCK:
            if self.whole is None or self.whole not in _BUDGETED:
                return False
        self.s.progress.state = "budget"
        return True

    def _remember_budget(self) -> None:
        if self.s.progress.state != "budget" or self.whole is None:
            return
        with _CACHE_LOCK:
            _BUDGETED[self.whole] = None
            while len(_BUDGETED) > KEEP:
                _BUDGETED.popitem(last=False)

    def _out_of_time(self, queued: int = 1) -> bool:
        """Whether to lower no more: cancelled, or past the budget with a compile queued (one
        is always lowered, so that the search has a first result to run on to)."""
        if self.s._stop.is_set():
            return True
        if self.deadline is not None and time.perf_counter() > self.deadline and queued:
            self.s.progress.state = "budget"
            return True
        return False

    def _lower_all(self, todo: list[c.Proposal]) -> None:
        s = self.s
        assert s._pool is not None
        queued = 0
        for p in todo:
            if self._out_of_time(queued):
                return
            trees = strat.to_trees(s.args, p.specs)
            try:
                mesh = s.target.mesh_for(p.mesh_shape, p.axis_names)
                text = self._lower(mesh, p, trees)
            except (ValueError, TypeError, helper_mod.PlanError) as e:
                with s._lock:
                    s.progress.total -= 1
                    s.dropped.append(c.Dropped(p.name, str(e).strip().splitlines()[0]))
                continue
            s._pool.put(Job(text, mesh, _Tag(p, tuple(trees), self.key(p))))
            queued += 1

    def _lower(self, mesh: Any, p: c.Proposal, trees: list[Any]) -> str:
        """The module of ``jax.jit(f)`` for proposal p, traced once for every layout
        (:func:`~shardwidget.plan.compile.lower_shared`); with donated leaves, of f on its
        leaves with those donated, as a function view compiles it."""
        s = self.s
        if not s.donate:
            return compile_mod.lower_shared(self.f, s.args, mesh, trees)
        if self._on_leaves is None:  # one function for the whole search: one trace
            flat, treedef = jax.tree_util.tree_flatten(s.args)
            f = self.f

            def on_leaves(*leaves: Any) -> Any:
                return f(*jax.tree_util.tree_unflatten(treedef, leaves))

            on_leaves.__name__ = on_leaves.__qualname__ = s.fn_name  # (HLO op names read f's)
            self._on_leaves = (on_leaves, flat)
        g, flat = self._on_leaves
        specs = [spec_mod.to_partition_spec(x) for x in p.specs]
        return compile_mod.lower_shared(g, flat, mesh, specs, donate_argnums=s.donate)

    def _join(self) -> None:
        s = self.s
        assert s._pool is not None
        left = None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())
        s._pool.join(left)
        if self.deadline is not None:
            self._first_result()
        if s._pool.running:  # out of budget: stop what runs
            s.progress.state = "budget" if s.progress.state == "running" else s.progress.state
            s._pool.cancel()
            s._pool.join(30.0)

    def _first_result(self) -> None:
        """Past the budget with no result while compiles still run: wait for the first (or
        for every compile to end, or a cancel), and say so in :attr:`Search.overran`."""
        s = self.s
        assert s._pool is not None and self.deadline is not None
        waited = False
        while not s._found and not s._stop.is_set() and s._pool.running:
            waited = True
            s._pool.join(0.5)
        if waited:
            budget = self.deadline - s._t0
            s.overran = (
                f"no result within the {budget:.0f} s budget: ran on to the first, "
                f"{time.perf_counter() - s._t0:.0f} s"
            )

    def done(self, job: Job, reply: dict[str, Any] | None, why: str, t0: float) -> None:
        tag: _Tag = job.tag
        if reply is None:
            self.s._fail(tag.proposal.name, why)
            return
        plan = compile_mod.plan_of(reply, job.mesh, t0)
        _store(tag.key, plan)
        self.s._add(
            cand_mod.make(tag.proposal, tag.in_specs, plan, self.s.hardware, self.s.target), True
        )


def _fkey(
    f: Any, args: Sequence[Any], target: Target, donate: tuple[int, ...]
) -> tuple[Any, ...] | None:
    try:
        hash(f)
    except TypeError:
        return None
    return (f, _signature(args), target.key, donate)


def _donated(donate: Sequence[int], n: int) -> tuple[int, ...]:
    """The donated leaves, sorted; ValueError in words for an index that is no leaf."""
    out = tuple(sorted({int(i) for i in donate}))
    if any(not 0 <= i < n for i in out):
        raise ValueError(f"donate names leaves {list(out)}; the arguments have {n} (0…{n - 1})")
    return out


def default_workers() -> int:
    """Parallel helpers: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS has no affinity
        return max(1, os.cpu_count() or 1)


def search(
    f: Callable[..., Any],
    *args: Any,
    mesh: Any,
    hardware: Any = None,
    strategies: dict[str, Any] | None = None,
    budget_s: float | None = None,
    workers: int | None = None,
    wait: bool = True,
    timeout: float | None = None,
    donate: Sequence[int] = (),
    _view: Any = None,
) -> Search:
    """Find a layout for ``jax.jit(f)(*args)`` on ``mesh``'s chips.

    ``mesh``: a :func:`shardwidget.tpu_mesh` (candidates compiled by the TPU's own compiler on
    that topology), a :func:`shardwidget.gpu_mesh` (XLA's GPU compiler for those hosts of
    GPUs; collectives over NVLink within a host or NVLink domain, the network across) or a
    ``jax.sharding.AbstractMesh`` (XLA's CPU compiler); only its device count and target are
    read: the candidates factor that count over the roles data, FSDP, sequence and tensor
    (:mod:`.candidates`). ``hardware``: the preset the step times are estimated on (default:
    the TPU's or GPU's own, else ``tpu-v5e``). ``strategies``: your own,
    ``{name: rules | mesh -> in_specs | (AbstractMesh, in_specs)}`` (:mod:`.strategies`).
    ``budget_s``: stop after that many seconds with what has arrived. ``workers``: parallel
    helpers (default: one per core). ``wait=False`` returns at once; results stream into
    :attr:`Search.results` (:meth:`Search.wait`, :meth:`Search.cancel`). ``donate``: argument
    leaves (indices into the flattened arguments) donated in every candidate's compile, as
    ``jax.jit(f on its leaves, donate_argnums=donate)`` (a function view's donation)."""
    frozen = gc_quiet.enter()  # short full collections from here on: the kernel answers
    try:
        s, coordinator = _prepare(
            f, args, mesh, hardware, strategies, budget_s, workers, timeout, donate
        )
    except BaseException:
        gc_quiet.leave(frozen)
        raise
    s.view, coordinator.frozen = _view, frozen
    coordinator.start()
    return s.wait() if wait else s


def _prepare(
    f: Callable[..., Any],
    args: Sequence[Any],
    mesh: Any,
    hardware: Any,
    strategies: dict[str, Any] | None,
    budget_s: float | None,
    workers: int | None,
    timeout: float | None,
    donate: Sequence[int],
) -> tuple[Search, _Run]:
    """The search's proposals (the function traced for its leaves), and its run, not started."""
    target = target_of(mesh)
    hw = target.preset(hardware)
    leaves = leaves_mod.leaves(f, args)
    props, dropped = strat.propose(strategies, args, leaves, target.n)
    std, std_dropped = c.propose(target.n, leaves)
    seen = {p.key for p in props}
    props += [p for p in std if p.key not in seen]
    s = Search(target, hw, dropped=dropped + std_dropped, workers=workers or default_workers())
    s.args = tuple(args)
    s.donate = _donated(donate, len(leaves))
    name = str(getattr(f, "__name__", ""))
    s.fn_name = name if strat.IDENT.match(name) else "f"
    s.progress.total = len(props)
    return s, _Run(s, f, props, budget_s, timeout, _fkey(f, args, target, s.donate))
