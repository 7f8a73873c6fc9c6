"""Which inputs of a function are weights, and how Megatron would split them, read from the
function's dataflow (its jaxpr): no name is guessed.

A weight is an input leaf that a ``dot_general`` multiplies an activation by (directly, or
through a transpose or a dtype conversion); when both operands are input leaves, the right one
(``x @ w``). Along the chain of layers, Megatron-style tensor parallelism alternates: a weight
whose activation comes out of a column-split weight's product (through element-wise ops,
reshapes and the activations' own products, such as attention) is split by rows (its
contracting dimension), and the product after it is whole again (the all-reduce); any other
weight is split by columns (its output dimension). Each weight is decided at its first product,
so the backward pass of a training step decides nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.extend.core import Jaxpr, JaxprEqn, Var

_VIEWS = frozenset({"convert_element_type", "copy", "copy_p", "sharding_constraint", "pvary"})
"""Operations whose result is the same array as their input (another dtype, a copy)."""


@dataclass(frozen=True)
class Weight:
    """A weight and its tensor-parallel split.

    Attributes:
        leaf: its index among the flattened arguments' leaves.
        split: "column" (its output dimension over the tensor axis) or "row" (its
            contracting dimension).
        dim: the leaf's dimension that the tensor axis splits.
    """

    leaf: int
    split: str
    dim: int


@dataclass
class _Alias:
    """A value that is an input leaf, seen through transposes: ``dims[k]`` is the leaf's
    dimension at the value's dimension k."""

    leaf: int
    dims: tuple[int, ...]


class _Reader:
    """One walk over the jaxpr (and the jaxprs inside it) in program order."""

    def __init__(self) -> None:
        self.weights: dict[int, Weight] = {}
        self.alias: dict[Any, _Alias] = {}
        self.col: set[Any] = set()  # values that carry a column split's output
        self.acts: set[int] = set()  # leaves multiplied as activations (a batch): never weights

    def walk(self, jaxpr: Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if name == "dot_general":
                self._dot(eqn)
            elif name == "transpose":
                self._transpose(eqn)
            elif name in _VIEWS and _is_var(eqn.invars[0]) and eqn.invars[0] in self.alias:
                self.alias[eqn.outvars[0]] = self.alias[eqn.invars[0]]
            else:
                self._other(eqn)

    def _transpose(self, eqn: JaxprEqn) -> None:
        a = self.alias.get(eqn.invars[0]) if _is_var(eqn.invars[0]) else None
        if a is not None:
            perm = eqn.params["permutation"]
            self.alias[eqn.outvars[0]] = _Alias(a.leaf, tuple(a.dims[p] for p in perm))
        elif eqn.invars[0] in self.col:
            self.col.add(eqn.outvars[0])

    def _other(self, eqn: JaxprEqn) -> None:
        subs = _sub_jaxprs(eqn)
        for sub in subs:
            self._enter(eqn, sub)
        if subs:
            return
        if any(_is_var(v) and v in self.col for v in eqn.invars):
            self.col.update(eqn.outvars)

    def _enter(self, eqn: JaxprEqn, sub: Jaxpr) -> None:
        """A call, a scan, a remat: the inner jaxpr's inputs are the outer operands (a scan's
        slices drop leading dimensions), its outputs the outer results."""
        if len(sub.invars) == len(eqn.invars):
            for outer, inner in zip(eqn.invars, sub.invars, strict=True):
                if not _is_var(outer):
                    continue
                a = self.alias.get(outer)
                if a is not None:
                    drop = len(a.dims) - _rank(inner)
                    self.alias[inner] = _Alias(a.leaf, a.dims[drop:])
                if outer in self.col:
                    self.col.add(inner)
        self.walk(sub)
        if len(sub.outvars) == len(eqn.outvars):
            for result, out in zip(sub.outvars, eqn.outvars, strict=True):
                if _is_var(result) and result in self.col:
                    self.col.add(out)

    def _dot(self, eqn: JaxprEqn) -> None:
        lhs, rhs = eqn.invars
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        la = self.alias.get(lhs) if _is_var(lhs) else None
        ra = self.alias.get(rhs) if _is_var(rhs) else None
        if ra is not None and ra.leaf not in self.acts:
            w, wc, wb, act = ra, rc, rb, lhs
            if la is not None and la.leaf not in self.weights:
                self.acts.add(la.leaf)
        elif la is not None and la.leaf not in self.acts:
            w, wc, wb, act = la, lc, lb, rhs
        else:  # two activations (attention): the split carries through
            if any(_is_var(v) and v in self.col for v in (lhs, rhs)):
                self.col.add(eqn.outvars[0])
            return
        if len(w.dims) < 2 or w.leaf in self.weights:
            if w.leaf in self.weights and self.weights[w.leaf].split == "column":
                self.col.add(eqn.outvars[0])
            return
        if _is_var(act) and act in self.col:
            self.weights[w.leaf] = Weight(w.leaf, "row", w.dims[int(wc[0])] if wc else w.dims[0])
            return
        free = [k for k in range(len(w.dims)) if k not in wc and k not in wb]
        if not free:
            return
        self.weights[w.leaf] = Weight(w.leaf, "column", w.dims[free[-1]])
        self.col.add(eqn.outvars[0])


def _is_var(v: object) -> bool:
    """A variable, not a literal constant (literals carry their value)."""
    return not hasattr(v, "val")


def _rank(v: Var) -> int:
    """A variable's rank (JAX types avals as AbstractValue, which declares no shape; a token's
    has none: rank 0)."""
    return len(getattr(v.aval, "shape", ()))


def _sub_jaxprs(eqn: JaxprEqn) -> list[Jaxpr]:
    """The jaxprs an equation runs (pjit, scan, remat, custom_jvp/vjp calls, while, cond)."""
    out = []
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr", "body_jaxpr"):
        j = eqn.params.get(key)
        if j is not None:
            out.append(getattr(j, "jaxpr", j))
    return [j for j in out if hasattr(j, "eqns")]


def weights(f: Callable[..., Any], args: Sequence[Any]) -> dict[int, Weight]:
    """Each weight among the flattened leaves of ``args`` (by leaf index) with its Megatron
    split, read from ``jax.make_jaxpr(f)(*args)`` (module docstring)."""
    closed = jax.make_jaxpr(f)(*args)
    reader = _Reader()
    for k, v in enumerate(closed.jaxpr.invars):
        reader.alias[v] = _Alias(k, tuple(range(len(v.aval.shape))))
    reader.walk(closed.jaxpr)
    return reader.weights
