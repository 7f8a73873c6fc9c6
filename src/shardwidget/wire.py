"""The wire format: the only module that knows the shapes of ``_options``, ``_layout``, ``_stats``
and the custom messages. Its TypeScript twin is ``js/types.ts``; change both together.

Size: the synced state plus binary buffers of one view stay within
``16 KiB + 400 bytes × n_devices`` whatever the array's element count; thumbnails and small-block
values get fixed budgets below, and everything else is a few numbers per block or device.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import mesh as mesh_mod
from .layout import Layout
from .state import LayoutState
from .summary import Summary

if TYPE_CHECKING:
    from .trace import Traced, TraceResult, TraceState

# Budgets (bytes) for the binary parts; the JSON parts are ~150 bytes per device at most.
THUMB_BASE, THUMB_PER_DEVICE = 4096, 144
VALUES_BASE, VALUES_PER_DEVICE = 4096, 64


def size_budget(n_devices: int) -> int:
    return 16 * 1024 + 400 * n_devices


def thumb_pixel_budget(n_devices: int) -> int:
    return THUMB_BASE + THUMB_PER_DEVICE * n_devices


def values_budget(n_devices: int) -> int:
    return VALUES_BASE + VALUES_PER_DEVICE * n_devices


def _num(x: float) -> float | None:
    """7 significant digits keep the JSON small; JSON has no NaN/Inf, so those become None."""
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.7g}")


def _round_rows(rows: Sequence[np.ndarray | None]) -> list[list[float | None] | None]:
    """7 significant digits (small JSON), NaN/Inf as None (JSON has neither), vectorized."""
    present = [r for r in rows if r is not None]
    if not present:
        return [None] * len(rows)
    a = np.asarray(present, dtype=np.float64)
    fin = np.isfinite(a)
    mag = np.where(fin & (a != 0), np.floor(np.log10(np.abs(np.where(fin & (a != 0), a, 1)))), 0)
    scale = 10.0 ** (6 - mag)
    r = np.where(fin, np.round(a * scale) / scale, 0.0).tolist()
    it = iter(
        [
            [v if ok else None for v, ok in zip(row, oks, strict=True)]
            for row, oks in zip(r, fin.tolist(), strict=True)
        ]
    )
    return [None if row is None else next(it) for row in rows]


def options(
    *,
    n_devices: int,
    platform: str,
    shape: Sequence[int],
    dtype: str,
    memory_kinds: Sequence[str],
    original: LayoutState | None,
    reshard_disabled: str,
) -> dict[str, Any]:
    return {
        "n_devices": n_devices,
        "platform": platform,
        "ndim": len(shape),
        "shape": list(shape),
        "dtype": dtype,
        "factorizations": mesh_mod.all_factorizations(n_devices),
        "memory_kinds": list(memory_kinds),
        "original": original.to_wire() if original is not None else None,
        "reshard_disabled": reshard_disabled,
    }


def layout(lay: Layout, *, key: int, source: str, note: str, local_process: int) -> dict[str, Any]:
    devs = lay.devices
    has_coords = any(d.coords is not None for d in devs)
    has_core = any(d.core_on_chip is not None for d in devs)
    mesh = None
    if lay.mesh is not None:
        mesh = {
            "axis_names": list(lay.mesh.axis_names),
            "axis_sizes": list(lay.mesh.axis_sizes),
            "axis_types": list(lay.mesh.axis_types),
            "device_ids": list(lay.mesh.device_ids),
        }
    return {
        "key": key,
        "shape": list(lay.shape),
        "dtype": lay.dtype,
        "itemsize": lay.itemsize,
        "typeof": lay.typeof,
        "sharding": lay.sharding_type,
        "source": source,
        "mesh": mesh,
        "spec": [None if not a else a[0] if len(a) == 1 else list(a) for a in lay.spec]
        if lay.spec is not None
        else [None] * len(lay.shape),
        "spec_str": lay.spec_text,
        "memory_kind": lay.memory_kind,
        "devices": {
            "ids": [d.id for d in devs],
            "process": [d.process_index for d in devs],
            "platform": devs[0].platform if devs else "",
            "kind": devs[0].kind if devs else "",
            "coords": [list(d.coords or ()) for d in devs] if has_coords else None,
            "core_on_chip": [d.core_on_chip or 0 for d in devs] if has_core else None,
            "local_process": local_process,
        },
        "blocks": [{"i": [list(r) for r in b.index], "d": list(b.devices)} for b in lay.blocks],
        "bytes_per_device": lay.bytes_per_device,
        "logical_bytes": lay.logical_bytes,
        "replication": lay.replication,
        "note": note,
    }


def pending_stats(key: int) -> dict[str, Any]:
    return {
        "key": key,
        "status": "pending",
        "message": "",
        "blocks": [],
        "values": None,
        "values_offsets": [],
        "thumbs": None,
        "thumb_shapes": [],
        "thumb_offsets": [],
        "thumbs_dims": [],
        "vmin": 0.0,
        "vmax": 0.0,
    }


def stats(summary: Summary, *, key: int) -> dict[str, Any]:
    out = pending_stats(key)
    out["status"] = summary.status
    out["message"] = summary.message
    out["blocks"] = _round_rows(summary.stats)
    # Values: float64 little-endian, complex interleaved (re, im).
    chunks: list[np.ndarray] = []
    offsets: list[int] = []
    pos = 0
    for v in summary.values:
        if v is None:
            offsets.append(-1)
            continue
        arr = np.asarray(v)
        flat = (
            np.stack([arr.real, arr.imag], -1).astype("<f8").reshape(-1)
            if np.iscomplexobj(arr)
            else arr.astype("<f8").reshape(-1)
        )
        offsets.append(pos)
        pos += arr.size
        chunks.append(flat)
    out["values_offsets"] = offsets
    out["values"] = np.concatenate(chunks).tobytes() if chunks else None
    # Thumbnails: uint8 between the finite min and max of all thumbnails; non-finite pixels 0.
    present = [t for t in summary.thumbs if t is not None]
    flat = np.concatenate([t.reshape(-1) for t in present]) if present else np.zeros(0)
    fin = flat[np.isfinite(flat)]
    vmin = float(fin.min()) if fin.size else 0.0
    vmax = float(fin.max()) if fin.size else 0.0
    if vmax > vmin:
        q = np.where(np.isfinite(flat), (flat - vmin) * (255.0 / (vmax - vmin)), 0.0)
    else:
        q = np.where(np.isfinite(flat), 128.0, 0.0)
    quant = np.clip(np.rint(q), 0, 255).astype(np.uint8)
    shapes: list[list[int]] = []
    toffs: list[int] = []
    tpos = 0
    for t in summary.thumbs:
        if t is None:
            shapes.append([0, 0])
            toffs.append(-1)
            continue
        shapes.append([int(t.shape[0]), int(t.shape[1])])
        toffs.append(tpos)
        tpos += t.size
    out["thumbs"] = quant.tobytes() if present else None
    out["thumb_shapes"] = shapes
    out["thumb_offsets"] = toffs
    out["thumbs_dims"] = list(summary.thumb_dims)
    out["vmin"], out["vmax"] = _num(vmin) or 0.0, _num(vmax) or 0.0
    return out


def result_msg(seq: int, error: str) -> dict[str, Any]:
    return {"type": "result", "seq": seq, "ok": not error, "error": error}


def parse_request(content: Any) -> tuple[int, dict[str, Any]] | None:
    """(seq, state dict) of a front-end request, or None when the message is something else."""
    if not isinstance(content, dict) or content.get("type") != "request":
        return None
    seq, st = content.get("seq"), content.get("state")
    if not isinstance(seq, int) or not isinstance(st, dict):
        return None
    return seq, st


def wire_size(*values: Any) -> int:
    """Bytes of JSON plus binary buffers, as ipywidgets would send these trait values."""
    total = 0

    def strip(v: Any) -> Any:
        nonlocal total
        if isinstance(v, bytes | bytearray | memoryview):
            total += len(v)
            return None
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [strip(x) for x in v]
        return v

    for v in values:
        total += len(json.dumps(strip(v), separators=(",", ":")))
    return total


# ---------------------------------------------------------------------- traced-function views
# Twin: js/trace_types.ts. Traits: _trace_options, _trace, _trace_stats; message TraceRequestMsg.
MAX_OUTPUT_STATS = 8  # outputs beyond this get no per-shard data (the payload stays bounded)


def trace_options(
    traced: Traced,
    *,
    n_devices: int,
    platform: str,
    memory_kinds: Sequence[str],
    original: TraceState,
    outputs: Sequence[tuple[str, Sequence[int], str]],
) -> dict[str, Any]:
    from .layout import _dtype_name

    return {
        "n_devices": n_devices,
        "platform": platform,
        "factorizations": mesh_mod.all_factorizations(n_devices),
        "memory_kinds": list(memory_kinds),
        "mode": traced.mode,
        "fn_name": traced.fn_name,
        "inputs": [
            {"path": lf.path, "shape": list(lf.shape), "dtype": _dtype_name(lf.dtype)}
            for lf in traced.leaves
        ],
        "outputs": [{"path": p, "shape": list(sh), "dtype": dt} for p, sh, dt in outputs],
        "static_args": list(traced.static_args),
        "original": original.to_wire(),
        "run_disabled": ""
        if traced.runnable
        else "not run: some inputs are jax.ShapeDtypeStruct (compiled only)",
    }


def _leaf(path: str, lay: Layout, local_shape: Sequence[int], *, key: int) -> dict[str, Any]:
    return {
        "path": path,
        "shape": list(lay.shape),
        "dtype": lay.dtype,
        "typeof": lay.typeof,
        "spec_str": lay.spec_text,
        "local_shape": list(local_shape),
        "layout": layout(lay, key=key, source="original", note="", local_process=0),
    }


def out_paths(n: int, tree: Any) -> list[str]:
    """Names of the output leaves: "out" for a single array, else "out[0]", "out['loss']"…"""
    if tree is None or n == 0:
        return [f"out[{i}]" for i in range(n)]
    import jax

    if tree.num_leaves == 1 and tree.num_nodes == 1:
        return ["out"]
    paths = jax.tree_util.tree_flatten_with_path(jax.tree_util.tree_unflatten(tree, [0] * n))[0]
    return ["out" + jax.tree_util.keystr(p) for p, _ in paths]


def trace(
    res: TraceResult | None,
    traced: Traced,
    *,
    key: int,
    message: str = "",
    cached: bool = False,
) -> dict[str, Any]:
    """_trace for a result (or, with res None, an empty error trace carrying message)."""
    from .layout import layout_of, layout_of_sharding

    out: dict[str, Any] = {
        "key": key,
        "status": "error" if message else "ok",
        "message": message,
        "mode": traced.mode,
        "inputs": [],
        "outputs": [],
        "constraints": [],
        "collectives": [],
        "memory": None,
        "flops": None,
        "compile_ms": 0.0,
        "run_ms": 0.0,
        "cached": False,
        "ran": False,
    }
    if res is None:
        return out
    out["inputs"] = [
        _leaf(lf.path, layout_of_sharding(sh, lf.shape, lf.dtype), loc, key=key)
        for lf, sh, loc in zip(traced.leaves, res.in_shardings, res.local_shapes["in"], strict=True)
    ]
    paths = out_paths(len(res.out_shapes), res.out_tree)
    outs = []
    for i, (sh, shape, dt) in enumerate(
        zip(res.out_shardings, res.out_shapes, res.out_dtypes, strict=True)
    ):
        lay = (
            layout_of(res.outputs[i])
            if res.outputs is not None
            else layout_of_sharding(sh, tuple(shape), dt)
        )
        outs.append(_leaf(paths[i], lay, res.local_shapes["out"][i], key=key))
    out["outputs"] = outs
    out["constraints"] = [
        {
            "kind": c.kind,
            "shape": list(c.shape),
            "dtype": c.dtype,
            "spec_str": c.spec_text,
            "source": c.source,
        }
        for c in res.constraints
    ]
    out["collectives"] = [
        {
            "kind": c.kind,
            "axes": list(c.axes),
            "shape": list(c.shape),
            "dtype": c.dtype,
            "bytes": c.bytes,
            "group_size": c.group_size,
            "n_groups": c.n_groups,
            "op_name": c.op_name,
            "source": c.source,
            "groups_text": c.groups_text[:400],
        }
        for c in res.collectives
    ]
    out["memory"] = dict(res.memory) if res.memory else None
    out["flops"] = res.flops
    out["cached"] = cached
    out["compile_ms"] = 0.0 if cached else round(res.compile_ms, 1)
    out["run_ms"] = round(res.run_ms, 1)
    out["ran"] = res.outputs is not None
    if res.run_error:
        out["status"] = "error"
        out["message"] = f"compiled, but the run failed: {res.run_error}"
    return out


def trace_stats(
    summaries: Sequence[Summary], *, key: int, inputs: Sequence[Summary] = ()
) -> dict[str, Any]:
    """Per-leaf statistics of a function view: outputs, and inputs as laid out for the run."""
    return {
        "key": key,
        "outputs": [stats(s, key=key) for s in summaries],
        "inputs": [stats(s, key=key) for s in inputs],
    }


def parse_trace_request(content: Any) -> tuple[int, dict[str, Any]] | None:
    """(seq, TraceState dict) of a function view's request, or None for other messages."""
    if not isinstance(content, dict) or content.get("type") != "trace_request":
        return None
    seq, st = content.get("seq"), content.get("state")
    if not isinstance(seq, int) or not isinstance(st, dict):
        return None
    return seq, st
