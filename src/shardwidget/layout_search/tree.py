"""A tree's search: the layouts a practitioner would try for a pytree (a model's parameters,
an optimizer state), as partition rules on the target's chips, ranked by fit, then by the
bytes a device holds.

A tree has no step: nothing is compiled and no step time is estimated ("unknown: a tree has no
step"). What is ranked is each candidate's bytes per device, exact from its shardings' shard
shapes (every dimension divided by the mesh axes its spec names: the candidates divide every
shape evenly, so every device holds one block of each leaf, sub-byte dtypes packed as XLA
stores them), against the memory a device of the target has (plan/machine.py's rule, as the
function view's fit).

The candidates, on every factorization of the chip count over data, FSDP and tensor:
- data alone: every leaf replicated (what data parallelism holds on each chip);
- fsdp: each leaf's largest dimension the axis divides (ties: the first), replicated over
  data where data is a role too (hybrid sharding);
- tensor: each 2-D leaf's second dimension (the output features of a ``(in, out)`` kernel: a
  column split; a tree has no dataflow to alternate column and row splits by);
- and the user's own strategies (rules, ``mesh -> rules`` or ``(mesh, rules)``).
A candidate that cannot divide a shape is dropped with the reason.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jax.sharding import PartitionSpec

from ..cost.hardware import Hardware
from ..model import paths
from ..model.units import fmt_bytes
from . import candidates as c
from . import strategies as strat
from . import tree_compiled
from .run import Progress
from .target import Target, target_of

ROLES = ("data", "fsdp", "tensor")
"""The roles a tree is laid out over (a tree has no batch and no sequence to split)."""
NO_STEP = "unknown: a tree has no step (make a function view: ShardView(step, tree, batch))"
"""What a tree candidate's step time is, in words."""


@dataclass(frozen=True)
class TreeLeafShape:
    """What a tree search reads of a leaf: its keystr path, shape, bits per element and
    dtype (its name: what a compile of the tree needs)."""

    path: str
    shape: tuple[int, ...]
    bits: int
    dtype: str = ""


@dataclass(frozen=True)
class TreeCandidate:
    """One layout of a tree: a mesh and partition rules, with its bytes per device.

    Attributes:
        name: "FSDP 8", "DP 8 (replicated)", or the user's strategy's name.
        mesh_shape, axis_names: the mesh.
        strategy: "standard" or the user's strategy's name.
        rules: ``[(regex, PartitionSpec), ...]`` that lay every leaf out so (first match).
        specs: each leaf's spec, in the tree's leaf order.
        fits: whether the bytes per device fit in a device's memory.
        peak: the bytes a device holds of the tree (every device the same).
        sources: where each figure comes from, in words.
    """

    name: str
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    strategy: str
    rules: tuple[tuple[str, PartitionSpec], ...] = field(repr=False)
    specs: tuple[c.Spec, ...] = field(repr=False)
    fits: bool
    peak: int
    sources: dict[str, str] = field(repr=False)
    notes: tuple[str, ...] = field(repr=False, default=())
    step_time: None = None
    step_time_words: str = field(repr=False, default=NO_STEP)
    peak_is_totals: bool = field(repr=False, default=False)
    collectives: tuple[Any, ...] = field(repr=False, default=())
    compiler: str = field(repr=False, default="none: a tree is laid out, not compiled")
    data_bytes: int = field(repr=False, default=0)
    """The data's bytes per device (from the shard shapes); :attr:`peak` is the compiler's
    argument bytes where the search compiled (``compile=True``), else these."""

    def rank_key(self) -> tuple[int, float]:
        """Fit first, then the fewest bytes per device."""
        return (0 if self.fits else 2), float(self.peak)

    @property
    def fit_word(self) -> str:
        """ "fits" or "does not fit"."""
        return "fits" if self.fits else "does not fit"

    @property
    def summary(self) -> str:
        """ "fits, 508 MiB per device (step time unknown: a tree has no step)"."""
        return f"{self.fit_word}, {fmt_bytes(self.peak)} per device; step time {NO_STEP}"

    @property
    def line(self) -> str:
        """One line: name, fit, bytes per device."""
        return f"{self.name:<28} {self.fit_word:<13} held {fmt_bytes(self.peak):>10}  step —"


def leaves_of(shapes: Sequence[TreeLeafShape]) -> list[c.Leaf]:
    """The search's leaves of a tree: every leaf a parameter (argument 0), 2-D ones split
    column-wise by tensor."""
    return [
        c.Leaf(0, f"[0]{x.path}", x.shape, "param", ("column", 1) if len(x.shape) == 2 else None)
        for x in shapes
    ]


def place(leaves: Sequence[c.Leaf], roles: dict[str, int]) -> c.Proposal:
    """The standard placement of ``roles`` on a tree; ValueError (Indivisible naming the leaf)
    when it cannot be laid out."""
    if "tensor" in roles and not any(leaf.tp for leaf in leaves):
        raise ValueError("no 2-D leaf for tensor parallelism")
    unsplit: list[str] = []
    specs = tuple(c.param_spec(leaf, roles, unsplit) if leaf.shape else () for leaf in leaves)
    arrays = [leaf for leaf in leaves if leaf.shape]
    if "fsdp" in roles and len(unsplit) == len(arrays):
        raise c.Indivisible(f"fsdp = {roles['fsdp']} divides no dimension of any leaf")
    notes = (
        (f"FSDP leaves whole (no dimension divisible): {', '.join(unsplit)}",) if unsplit else ()
    )
    name = c.name_of(roles) + (" (replicated)" if set(roles) == {"data"} else "")
    return c.Proposal(name, tuple(roles.values()), tuple(roles), specs, notes=notes)


def propose(
    n: int, leaves: Sequence[c.Leaf], strategies: dict[str, Any] | None
) -> tuple[list[c.Proposal], list[c.Dropped]]:
    """The user's strategies' proposals, then the standard ones (one of each layout), and
    those dropped with the reason."""
    props, dropped = strat.propose(strategies, ([0] * len(leaves),), leaves, n)
    # a strategy's factorized meshes without a sequence axis (a tree has none to split); a
    # fixed (mesh, layout) is kept as given: its label is the strategy's own name
    props = [p for p in props if p.name == p.strategy or "seq" not in p.axis_names]
    if n == 1:
        std = [
            c.Proposal("one device", (1,), ("data",), tuple(((),) * len(x.shape) for x in leaves))
        ]
    else:
        std = []
        for roles in c.tried_first(c.meshes(n)):
            if not set(roles) <= set(ROLES):
                continue
            try:
                std.append(place(leaves, roles))
            except ValueError as e:
                dropped.append(c.Dropped(c.name_of(roles), str(e)))
    seen = {p.key for p in props}
    return props + [p for p in std if p.key not in seen], dropped


def shard_shape(shape: tuple[int, ...], spec: c.Spec, axes: dict[str, int]) -> tuple[int, ...]:
    """One block's shape: each dimension over the product of its spec's axes (they divide
    it: the candidates are checked)."""
    return tuple(d // math.prod(axes[a] for a in e) for d, e in zip(shape, spec, strict=True))


def held(shapes: Sequence[TreeLeafShape], p: c.Proposal) -> int:
    """The bytes each device holds of the tree laid out as ``p`` (sub-byte dtypes packed)."""
    axes = dict(zip(p.axis_names, p.mesh_shape, strict=True))
    total = 0
    for x, spec in zip(shapes, p.specs, strict=True):
        n = math.prod(shard_shape(x.shape, spec, axes))
        total += -(-n * x.bits // 8)
    return total


def rules_of(shapes: Sequence[TreeLeafShape], specs: Sequence[c.Spec]) -> list[tuple[str, Any]]:
    """Rules that lay every leaf out as ``specs``: one anchored rule per split leaf (its
    "/"-joined path, or its keystr path where two leaves share that), then ``.*`` replicated
    (so that a leaf the tree had split is laid out as the candidate says)."""
    slashes = [paths.slash_path(x.path) for x in shapes]
    out: list[tuple[str, Any]] = []
    for x, slash, spec in zip(shapes, slashes, specs, strict=True):
        if not any(spec):
            continue
        key = slash if slashes.count(slash) == 1 else x.path
        entries = [e[0] if len(e) == 1 else (e or None) for e in spec]
        out.append((f"^{re.escape(key)}$", PartitionSpec(*entries)))
    out.append((".*", PartitionSpec()))
    return out


def _sources(target: Target, hbm: str) -> dict[str, str]:
    pads = (
        "; a TPU's tiled layout pads a block's small minor dimensions beyond this (libtpu "
        "counts a block of 64 f32 as 128)"
        if target.kind == "tpu"
        else ""
    )
    return {
        "peak": "each leaf's block (its shape over the mesh axes its spec names), in bytes as "
        "XLA stores it, summed over the tree: every device holds one block of each leaf" + pads,
        "fits": f"those bytes <= {hbm} on {target.compiler}",
        "step_time": NO_STEP,
    }


def make(
    shapes: Sequence[TreeLeafShape],
    p: c.Proposal,
    hw: Hardware,
    target: Target,
    compile: bool = False,
) -> TreeCandidate:
    """Proposal ``p`` as a tree candidate on ``target`` (fit against a device's memory); with
    ``compile``, its bytes per device the target compiler's (an identity of the tree)."""
    hbm, source = target.hbm_bytes(hw)
    data = held(shapes, p)
    rules = tuple(rules_of(shapes, p.specs))
    sources = _sources(target, f"{fmt_bytes(round(hbm))} ({source})")
    peak, compiler = data, "none: a tree is laid out, not compiled"
    if compile:
        leaves = [(x.shape, x.dtype) for x in shapes]
        peak, compiler = tree_compiled.argument_bytes(leaves, p, target), target.compiler
        sources["peak"] = (
            f"{compiler}: the argument bytes per device of an identity of the tree laid out "
            f"so (the data: {fmt_bytes(data)})"
        )
    return TreeCandidate(
        p.name, p.mesh_shape, p.axis_names, p.strategy, rules, p.specs, peak <= hbm, peak,
        sources, p.notes, compiler=compiler, data_bytes=data,
    )  # fmt: skip


@dataclass
class TreeSearch:
    """A tree's candidates (see :func:`search`): all there at once (nothing is compiled).

    Attributes:
        target: the chips (and their memory) searched for.
        hardware: the preset whose memory a CPU target's fit reads.
        dropped: the layouts left out, each with the reason.
        progress: how far it is (done at once).
        name: the variable :meth:`code` lays out ("params").
        view: the tree view :meth:`apply` lays out (None without one).
    """

    target: Target
    hardware: Hardware
    dropped: list[c.Dropped] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    progress: Progress = field(default_factory=Progress)
    workers: int = 0
    wall_s: float = 0.0
    compile_s: float = 0.0
    name: str = "params"
    view: Any = field(default=None, repr=False)
    _found: list[TreeCandidate] = field(default_factory=list, repr=False)

    @property
    def chips(self) -> str:
        """The chips laid out over, in words: "TPU v5e 2x2", "8 devices"."""
        info = getattr(self.target, "info", None)
        return str(info.title) if info is not None else f"{self.target.n} devices"

    @property
    def results(self) -> list[TreeCandidate]:
        """The candidates, ranked: fit first, then the fewest bytes per device."""
        return sorted(self._found, key=lambda x: x.rank_key())

    @property
    def arrived(self) -> list[TreeCandidate]:
        """The candidates in the order proposed (a row's id in the panel)."""
        return list(self._found)

    @property
    def done(self) -> bool:
        """Always: a tree's search compiles nothing."""
        return True

    def wait(self, timeout: float | None = None) -> TreeSearch:
        """Itself (there is nothing to wait for)."""
        return self

    def cancel(self) -> None:
        """Nothing to stop: every candidate is there."""

    def on_result(self, listener: Any) -> None:
        """Nothing arrives later: the listener is not kept."""

    def code(self, i: int) -> str:
        """Python (jax only) for candidate i: its mesh, its rules, and ``name`` rebound to
        the tree laid out by them (the first rule whose regex ``re.search``-matches a leaf's
        keystr path or its "/"-joined keys)."""
        cand = self._pick(i)
        return (
            "\n".join(
                [
                    "import re",
                    "",
                    "import jax",
                    "from jax.sharding import NamedSharding",
                    "from jax.sharding import PartitionSpec as P",
                    "",
                    f"# {cand.name}: {cand.summary}",
                    f"mesh = jax.make_mesh({cand.mesh_shape}, {cand.axis_names})",
                    "rules = [",
                    *(f"    ({regex!r}, {strat.code_of(spec)})," for regex, spec in cand.rules),
                    "]",
                    "",
                    "",
                    "def spec_of(path):",
                    "    keys = '/'.join(",
                    "        str(getattr(k, 'key', getattr(k, 'idx', getattr(k, 'name', k))))"
                    " for k in path",
                    "    )",
                    "    where = (jax.tree_util.keystr(path), keys)",
                    "    return next(s for r, s in rules if any(re.search(r, w) for w in where))",
                    "",
                    "",
                    f"{self.name} = jax.tree_util.tree_map_with_path(",
                    "    lambda path, x: jax.device_put(x, NamedSharding(mesh, spec_of(path))),",
                    f"    {self.name},",
                    ")",
                ]
            )
            + "\n"
        )

    def why(self, i: int = 0, j: int | None = None) -> str:
        """Why candidate i ranks above candidate j (default: the next one): fit, then the
        bytes a device holds (a tree has no step time)."""
        a, b = self._pick(i), self._pick(i + 1 if j is None else j)
        if a.fits != b.fits:
            return f"{a.name} {a.fit_word} and {b.name} {b.fit_word}: the layouts that fit first"
        return (
            f"{a.name} holds {fmt_bytes(a.peak)} per device against {b.name}'s "
            f"{fmt_bytes(b.peak)}: the fewest bytes first (step time {NO_STEP})"
        )

    def apply(self, i: int) -> None:
        """Lay the tree view out as candidate i: its mesh and rules, one layout change (the
        view's undo restores)."""
        if self.view is None:
            raise ValueError("this search has no view to apply to: take search.code(i)")
        self.view.apply_tree_candidate(self._pick(i))

    def _pick(self, i: int) -> TreeCandidate:
        found = self.results
        if not -len(found) <= i < len(found):
            raise IndexError(f"no candidate {i}: the search has {len(found)}")
        return found[i]

    def __repr__(self) -> str:
        head = (
            f"search of a tree on {self.target.n} chips ({len(self._found)} layouts, "
            f"{len(self.dropped)} dropped): ranked by fit, then bytes per device; "
            f"step time {NO_STEP}"
        )
        return "\n".join([head, *(f"{k:>3}  {x.line}" for k, x in enumerate(self.results))])


def search(
    shapes: Sequence[TreeLeafShape],
    *,
    mesh: Any,
    hardware: Any = None,
    strategies: dict[str, Any] | None = None,
    name: str = "params",
    view: Any = None,
    compile: bool = False,
) -> TreeSearch:
    """The candidate layouts of a tree of these leaves on ``mesh``'s chips (see the module);
    ``compile``: each one's bytes per device from the target's compiler
    (:mod:`.tree_compiled`: one compile per candidate, in its helper)."""
    t0 = time.perf_counter()
    target = target_of(mesh, compiles=compile)
    hw = target.preset(hardware)
    leaves = leaves_of(shapes)
    props, dropped = propose(target.n, leaves, strategies)
    found = [make(shapes, p, hw, target, compile) for p in props]
    n = len(found)
    s = TreeSearch(target, hw, dropped, progress=Progress(n, n, 0, "done"), name=name, view=view)
    s._found = found
    s.wall_s = time.perf_counter() - t0
    return s
