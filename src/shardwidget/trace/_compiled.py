"""Reading a compiled executable: per-device memory and flops, and whether it can run on the
arguments at hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax

from ..hlo import flops as hlo_flops
from ..model import spec as spec_mod
from .result import Leaf


def compiled_flops(compiled: jax.stages.Compiled) -> float | None:
    """FLOPs per device: XLA's cost analysis with the matrix work it leaves out counted from
    the compiled HLO (hlo_flops.count: XLA's GPU cost analysis omits cuBLAS gemms)."""
    try:
        c = compiled.cost_analysis()
    except Exception:
        c = None
    if isinstance(c, list | tuple):
        c = c[0] if c else None
    fl = float(c["flops"]) if c and "flops" in c else None
    try:
        text = compiled.as_text()
    except Exception:  # no text (a deserialized executable): the cost analysis alone
        text = None
    return hlo_flops.count(text, fl, None).flops


SUB_BYTE = ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")
"""Dtypes of fewer than 8 bits: XLA compiles for them a packed layout that the arrays
``jax.device_put`` makes do not have, so a compiled executable refuses them as arguments."""


def run_disabled(leaves: Sequence[Leaf], devices: Sequence[Any]) -> str:
    """Why the compiled function cannot run on these leaves ("" when it can)."""
    if not all(lf.concrete for lf in leaves):
        return "not run: some inputs are jax.ShapeDtypeStruct (compiled only)"
    small = sorted({str(lf.dtype) for lf in leaves if str(lf.dtype) in SUB_BYTE})
    if small:
        kinds = " and ".join(small)
        platform = devices[0].platform if devices else "this backend"
        return (
            f"not run: {kinds} inputs compile, but the compiled executable takes {kinds} arrays "
            f"only in a packed layout that device_put does not make on {platform}; shown: the "
            "compiled layout, without per-shard data"
        )
    return ""


def local_shape(
    shape: Sequence[int], spec: spec_mod.NormSpec, sizes: dict[str, int]
) -> tuple[int, ...]:
    return tuple(
        d // math.prod(sizes[a] for a in entry) for d, entry in zip(shape, spec, strict=True)
    )


def check_alive(leaves: Sequence[Leaf]) -> None:
    """ValueError naming the inputs deleted or donated since the view was made: running on
    them is refused in words (JAX's compiled call on a donated buffer can abort the process)."""
    gone = [lf for lf in leaves if getattr(lf.value, "is_deleted", lambda: False)()]
    if gone:
        what = ", ".join(f"{lf.path} {tuple(lf.shape)} {lf.dtype}" for lf in gone[:3])
        more = f" and {len(gone) - 3} more" if len(gone) > 3 else ""
        raise ValueError(
            f"input {what}{more} was deleted or donated after this view was made, so f cannot "
            "run on it; the compiled layout is still shown (make a new view on live inputs)"
        )
