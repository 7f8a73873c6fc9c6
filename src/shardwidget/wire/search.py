"""The search panel's payload (a function view's ``_search`` trait) and its one message.

``_search`` (:class:`SearchWire`): the newest ``view.search(...)``, republished as its results
arrive: progress, the target, the HBM line, and one :class:`SearchRowWire` per compiled
candidate, ranked (fit first, then estimated step time). The front end applies a row with
``{"type": "search_apply", "id": id}`` (the row's ``id``: its place in arrival order, which a
later re-ranking does not change). TypeScript twin: ``js/wire/search.ts``.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from ..layout_search import Candidate, Search
from ..layout_search.tree import TreeCandidate, TreeSearch


class SearchRowWire(TypedDict):
    """One compiled candidate."""

    id: int
    name: str
    layout: str
    fits: bool | None
    peak: int | None
    peak_is_totals: bool
    step_s: float | None
    moved: int
    summary: str


class SearchWire(TypedDict):
    """The newest search of the view (``key`` 0 and no rows: none yet). ``kind``: "step" (a
    function view's: compiled, ranked by fit and estimated step time) or "tree" (a tree
    view's: laid out, not compiled, ranked by fit and bytes per device; no step time)."""

    key: int
    kind: str
    state: str
    done: int
    total: int
    cached: int
    compiler: str
    """The compiler, in words; a tree's: the chips it is laid out over (nothing compiled)."""
    hardware: str
    hbm: float | None
    dropped: int
    failed: int
    rows: list[SearchRowWire]


def empty() -> SearchWire:
    """No search yet."""
    return {
        "key": 0, "kind": "step", "state": "none", "done": 0, "total": 0, "cached": 0,
        "compiler": "", "hardware": "", "hbm": None, "dropped": 0, "failed": 0, "rows": [],
    }  # fmt: skip


def _row(k: int, c: Candidate | TreeCandidate) -> SearchRowWire:
    mesh = " × ".join(f"{a}={s}" for a, s in zip(c.axis_names, c.mesh_shape, strict=True))
    return {
        "id": k,
        "name": c.name,
        "layout": mesh,
        "fits": c.fits,
        "peak": c.peak,
        "peak_is_totals": c.peak_is_totals,
        "step_s": c.step_time if c.step_time is not None and math.isfinite(c.step_time) else None,
        "moved": int(sum(x.bytes for x in c.collectives)),
        "summary": c.summary,
    }


def search(s: Search | TreeSearch, key: int) -> SearchWire:
    """The payload of search ``s`` as it stands now (``key``: increases per publish)."""
    arrived: list[Candidate | TreeCandidate] = list(s.arrived)  # one snapshot: results keep
    # arriving from the helpers' threads
    order = {id(c): k for k, c in enumerate(arrived)}
    hbm = s.target.hbm_bytes(s.hardware)[0]
    p = s.progress
    return {
        "key": key, "kind": "tree" if isinstance(s, TreeSearch) else "step",
        "state": p.state, "done": p.done, "total": p.total, "cached": p.cached,
        "compiler": s.chips if isinstance(s, TreeSearch) else s.target.compiler,
        "hardware": s.hardware.name, "hbm": float(hbm),
        "dropped": len(s.dropped), "failed": len(s.failed),
        "rows": [_row(order[id(c)], c) for c in sorted(arrived, key=lambda c: c.rank_key())],
    }  # fmt: skip


def parse_apply(content: Any) -> int | None:
    """The row id of a ``{"type": "search_apply", "id": k}`` message, else None."""
    if not isinstance(content, dict) or content.get("type") != "search_apply":
        return None
    k = content.get("id")
    return k if isinstance(k, int) and not isinstance(k, bool) else None
