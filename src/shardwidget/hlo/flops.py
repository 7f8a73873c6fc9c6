"""FLOPs of the matrix work in compiled (per-device) HLO text: what a backend's cost analysis
can leave out.

Pure text: imports no JAX and no widget code.

XLA's GPU cost analysis does not count cuBLAS / cuDNN custom-calls: for ``a @ b`` (bf16,
8192 × 8192) on an H200 it reports no ``flops`` at all, and for ``jnp.tanh(a @ b).sum()``
2.7e8 FLOPs where the gemm alone is 1.1e12 (tests/hlo/fixtures/jax-0.11.2-gpu). So the
program's own text is read:

- ``dot``: 2 × (result elements) × (product of the lhs contracting dimensions);
- ``convolution``: 2 × batch × output features × input features per group × the (output
  position, kernel tap) pairs that land inside the input, per spatial dimension (padding,
  stride and dilation counted as XLA's cost analysis counts them);
- gemm custom-calls (``__cublas$gemm``, ``__cublas$lt$matmul``, …): as a dot, with the
  contracting dimensions of their ``backend_config``; cuDNN convolutions (``__cudnn$conv…``):
  as a convolution, from their ``window`` and ``dim_labels`` (backward ones approximately).

Dots inside fusions (TPU, Triton gemm fusions) are counted where they sit. A computation called
from a loop is counted once, as XLA's cost analysis does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from . import collectives as hlo
from .collectives import HloShape, balanced, parse_shapes

_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul")
_CONV_TARGET = "__cudnn$conv"


@dataclass(frozen=True)
class MatmulFlops:
    """FLOPs per device of the dots, convolutions and matrix custom-calls of one program."""

    native: float
    """Of ``dot`` and ``convolution`` instructions (a cost analysis normally counts these)."""
    custom: float
    """Of gemm and convolution custom-calls (XLA's GPU cost analysis leaves these out)."""
    custom_calls: int
    """How many gemm / convolution custom-calls were counted."""
    custom_bytes: float
    """Bytes the custom-calls read and write (operands and result)."""


@dataclass(frozen=True)
class Counted:
    """FLOPs and bytes per device of one program, and where each figure came from."""

    flops: float | None
    """FLOPs per device; None when neither the cost analysis nor the text has any."""
    bytes_accessed: float | None
    """Bytes read and written per device; None when unknown."""
    source: str
    """Where ``flops`` came from: "cost_analysis", "cost_analysis + N custom-calls counted
    from HLO", "counted from HLO" or "" when unknown."""


def instructions(text: str) -> Iterator[tuple[str, str, str, str]]:
    """(name, result shape text, op, the rest of the line from ``op(`` on) of every
    instruction (hlo's own reading of the text)."""
    for name, shape, op, line in hlo.instructions(text):
        at = line.index(op + "(", line.index(shape) + len(shape))
        yield name, shape, op, line[at + len(op) :]


def _operands(rest: str) -> list[str]:
    """The operand texts of ``(a, b, ...)`` at the start of rest, split at top-level commas."""
    inner = balanced(rest, 0)[1:-1]
    out, depth, cur = [], 0, ""
    for c in inner:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def _operand_shape(op: str, shapes: dict[str, HloShape]) -> HloShape | None:
    found = parse_shapes(op.split("%")[0]) if "%" in op else parse_shapes(op)
    if found:
        return found[0]
    name = op.rsplit("%", 1)[-1].strip()
    return shapes.get(name)


def _dims_attr(rest: str, name: str) -> list[int]:
    m = re.search(re.escape(name) + r"=\{([0-9,]*)\}", rest)
    return [int(v) for v in m.group(1).split(",") if v] if m else []


def _dot(out: HloShape, lhs: HloShape | None, contracting: list[int]) -> float:
    if lhs is None:
        return 0.0
    k = math.prod(lhs.dims[d] for d in contracting if d < len(lhs.dims))
    return 2.0 * math.prod(out.dims) * k


def _valid_pairs(n: int, k: int, n_out: int, stride: int, lo: int, ld: int, rd: int) -> int:
    """(output position, kernel tap) pairs of one spatial dimension that read a real input
    element: position o·stride + t·rd - lo on the lhs-dilated input of (n-1)·ld + 1 elements,
    a multiple of ld."""
    size = (n - 1) * ld + 1
    count = 0
    for o in range(n_out):
        for t in range(k):
            p = o * stride + t * rd - lo
            if 0 <= p < size and p % ld == 0:
                count += 1
    return count


def _conv(out: HloShape, lhs: HloShape | None, rhs: HloShape | None, rest: str) -> float:
    labels = re.search(r"dim_labels=([0-9a-z]+)_([0-9a-z]+)->([0-9a-z]+)", rest)
    if lhs is None or rhs is None or labels is None:
        return 0.0
    ll, rl, ol = labels.groups()
    if not (len(ll) == len(lhs.dims) and len(rl) == len(rhs.dims) and len(ol) == len(out.dims)):
        return 0.0
    win = re.search(r"window=\{([^}]*)\}", rest)
    spatial = [c for c in ol if c.isdigit()]

    def field(key: str, default: int) -> list[int]:
        m = re.search(r"\b" + key + r"=([0-9_x\-]+)", win.group(1)) if win else None
        if m is None:
            return [default] * len(spatial)
        if key == "pad":
            return [int(p.split("_")[0]) for p in m.group(1).split("x")]
        return [int(v) for v in m.group(1).split("x")]

    stride, pad = field("stride", 1), field("pad", 0)
    ld, rd = field("lhs_dilate", 1), field("rhs_dilate", 1)
    pairs = 1
    for j, d in enumerate(spatial):
        n = lhs.dims[ll.index(d)]
        k = rhs.dims[rl.index(d)]
        n_out = out.dims[ol.index(d)]
        pairs *= _valid_pairs(n, k, n_out, stride[j], pad[j], ld[j], rd[j])
    batch = out.dims[ol.index("b")]
    features = out.dims[ol.index("f")]
    in_per_group = rhs.dims[rl.index("i")]
    return 2.0 * batch * features * in_per_group * pairs


def matmul_flops(text: str) -> MatmulFlops:
    """The FLOPs of every dot, convolution and matrix custom-call in per-device HLO text."""
    shapes: dict[str, HloShape] = {}
    native = custom = custom_bytes = 0.0
    calls = 0
    for name, shape_text, op, rest in instructions(text):
        res = parse_shapes(shape_text)
        if res:
            shapes[name] = res[0]
        if op not in ("dot", "convolution", "custom-call") or not res:
            continue
        operands = [_operand_shape(o, shapes) for o in _operands(rest)]
        lhs = operands[0] if operands else None
        rhs = operands[1] if len(operands) > 1 else None
        if op == "dot":
            native += _dot(res[0], lhs, _dims_attr(rest, "lhs_contracting_dims"))
            continue
        if op == "convolution":
            native += _conv(res[0], lhs, rhs, rest)
            continue
        target = re.search(r'custom_call_target="([^"]*)"', rest)
        t = target.group(1) if target else ""
        if t.startswith(_GEMM_TARGETS):
            flops = _dot(res[0], lhs, _gemm_contracting(rest))
        elif t.startswith(_CONV_TARGET):
            flops = _conv(res[0], lhs, rhs, rest)
        else:
            continue
        if flops:
            calls += 1
            custom += flops
            custom_bytes += res[0].nbytes + sum(o.nbytes for o in operands[:2] if o is not None)
    return MatmulFlops(native, custom, calls, custom_bytes)


def _gemm_contracting(rest: str) -> list[int]:
    """lhs contracting dimensions of a gemm custom-call, from its backend_config JSON."""
    m = re.search(r'"lhs_contracting_dimensions":\s*\[([^\]]*)\]', rest)
    if m is None:
        return []
    return [int(v) for v in json.loads("[" + m.group(1) + "]")]


def count(text: str | None, flops: float | None, bytes_accessed: float | None) -> Counted:
    """FLOPs and bytes per device of a program: the cost analysis's ``flops`` and
    ``bytes_accessed`` (None or negative: it has none), with what it leaves out counted from
    the HLO ``text``: the custom-calls' FLOPs added (no backend counts them), and the dots and
    convolutions counted from the text where the cost analysis reports fewer FLOPs than they
    alone take (it left some out). The bytes of the custom-calls stand in for missing bytes."""
    fl = None if flops is None or flops < 0 else float(flops)
    ba = None if bytes_accessed is None or bytes_accessed < 0 else float(bytes_accessed)
    if not text:
        return Counted(fl, ba, "cost_analysis" if fl is not None else "")
    mm = matmul_flops(text)
    if ba is None and mm.custom_bytes:
        ba = mm.custom_bytes
    if fl is None:
        total = mm.native + mm.custom
        return Counted(total if total else None, ba, "counted from HLO" if total else "")
    if mm.native > fl:  # the cost analysis left some dots out (fusions): the text's count
        return Counted(mm.native + mm.custom, ba, "counted from HLO (dots the cost analysis "
                       f"left out: {fl:.4g} of {mm.native:.4g})")  # fmt: skip
    if mm.custom:
        n = mm.custom_calls
        return Counted(
            fl + mm.custom,
            ba,
            f"cost_analysis + {n} matrix custom-call{'s' if n > 1 else ''} counted from HLO",
        )
    return Counted(fl, ba, "cost_analysis")
