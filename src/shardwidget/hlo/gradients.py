"""Which parameter a collective carries the gradient of, told from what the program says.

JAX names the ops of a backward pass ``transpose(jvp())/…`` (``grad``, ``value_and_grad``,
``vjp``), and XLA keeps that name on the collective (or, combined, on each element). An element
of such a collective whose result reaches, by dataflow through the compiled program, only
output leaves that sit at one input leaf's place in their own tree (``out[1]['w1']`` and
``out[2][0].mu['w1']`` for ``params['w1']``: the updated parameter and its optimizer state, or
the gradient returned as it is) carries that leaf's gradient. Where several input leaves sit
there alike, or none, it is not told: never by shape. Pure text; no JAX.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

BACKWARD = "transpose("
"""In an op's name: an op of a backward pass (JAX's transpose of the forward jvp)."""

NOT_TOLD = (
    "a gradient (an op of the backward pass); whose is not told: the outputs it reaches do not "
    "all sit at one input leaf's place in their trees"
)


def backward(op_name: str) -> bool:
    """Whether op_name names an op of a backward pass."""
    return BACKWARD in op_name


def key_path(path: str) -> str:
    """A leaf's place in its tree: its path less the argument's name ("['w1']" of
    "params['w1']"); "" for a leaf that is an argument itself."""
    m = re.match(r"[A-Za-z_]\w*", path)
    return path[m.end() :] if m else ""


def gradient_of(op_name: str, outs: Sequence[str], in_paths: Sequence[str]) -> str:
    """The input leaf whose gradient a collective's element carries ("" where not told): the
    element is of a backward pass and every output leaf it reaches ends at that leaf's place
    in its tree; of several such leaves, the one nearest its tree's root (``params['w1']``
    before ``opt_state[0].mu['w1']``), where exactly one is."""
    if not backward(op_name) or not outs:
        return ""
    found = [
        p for p in in_paths if (k := key_path(p)) and all(o.endswith(k) and o != p for o in outs)
    ]
    if not found:
        return ""
    near = min(len(key_path(p)) for p in found)
    best = [p for p in found if len(key_path(p)) == near]
    return best[0] if len(best) == 1 else ""
