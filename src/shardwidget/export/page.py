"""Self-contained HTML pages of a view: the notebook's own renderer, no kernel, no network.

A page carries the view's synced state and, for an array view, optionally precomputed
*variants* (other layouts of the same array). It reads them through the views' public protocol
(:meth:`ShardView.synced_state`, :meth:`ArrayView.variant`, :meth:`ArrayView.propose`,
:meth:`ArrayView.every_spec`) and hands them to :func:`shardwidget.export._page.page`, which writes
the HTML around the built renderer.

The path: an existing regular file there is replaced (the page is written beside it and renamed
over it, so it is never half-written); a symbolic link or a directory there is refused with
ValueError, and nothing is written. When the controls ask for a layout, the page answers from
its variants, and controls whose layout it does not carry are shown as unavailable
(``_options.static_states``).
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .. import wire
from ..model.layout import Layout
from ..model.state import LayoutState
from ..render.snapshot import picture_html
from . import _page


class ArrayViewLike(Protocol):
    """What a page of an array view reads from it: the views' public protocol (ArrayView
    has it), so this module needs no view class."""

    @property
    def layout(self) -> Layout: ...
    @property
    def layout_state(self) -> LayoutState: ...
    def to_svg(self, width: int = 760) -> str: ...
    def synced_state(self) -> dict[str, Any]: ...
    def every_spec(self, limit: int | None = None) -> list[LayoutState]: ...
    def propose(self, changes: dict[str, Any]) -> LayoutState: ...
    def variant(self, st: LayoutState, key: int) -> wire.Variant: ...


class FunctionViewLike(Protocol):
    """What a page of a function view reads from it (FunctionView has it)."""

    @property
    def fn_name(self) -> str: ...
    def to_svg(self, width: int = 760) -> str: ...
    def synced_state(self) -> dict[str, Any]: ...


class TreeViewLike(Protocol):
    """What a page of a tree view reads from it (TreeView has it)."""

    def synced_state(self) -> dict[str, Any]: ...
    def leaf_grid(self, i: int, key: int) -> wire.LeafGrid: ...


NO_KERNEL_TREE = "saved page: no kernel to lay the tree out again (rules and mesh are as saved)"


DEFAULT_BUDGET = 4 << 20  # bytes of variant data a page may carry
VARIANT_KEYS = 1_000_000  # layout keys of stored variants start above any live view's
NO_KERNEL = "saved page: no kernel to re-compile the function"
MAX_SPECS = 256  # layouts variants="specs" tries at most (their number is exponential in rank)


@dataclass(frozen=True)
class ExportReport:
    """What ``save_html`` wrote.

    Attributes:
        path: the file written.
        bytes: its size.
        variants: layouts the page answers, the shown one included.
        skipped: variants left out to stay within the budget (once the budget is spent, the
            rest are counted here without being computed).
        budget: bytes of variant data the page was allowed.
        truncated: ``variants="specs"`` stopped after MAX_SPECS specs; more valid specs exist
            and were neither tried nor counted in ``skipped``.
    """

    path: str
    bytes: int
    variants: int
    skipped: int
    budget: int
    truncated: bool = False

    def __str__(self) -> str:
        s = f"{self.path}: {self.bytes:,} bytes, {self.variants} layout(s)"
        if self.skipped:
            s += f", {self.skipped} more left out to stay within {self.budget:,} bytes"
        if self.truncated:
            s += f"; specs beyond the first {MAX_SPECS} were not tried"
        return s


def _size(v: object) -> int:
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False))


def variant_states(
    view: ArrayViewLike, variants: str | Sequence[dict[str, Any]] | None
) -> list[LayoutState]:
    """The layouts ``variants`` asks for: None, "specs" (every valid spec for the current mesh,
    the first MAX_SPECS + 1 of them: one more tells that the list was cut) or a list of dicts of
    layout traits. ValueError naming the bad entry."""
    if variants is None:
        return []
    if variants == "specs":
        return view.every_spec(limit=MAX_SPECS + 1)
    if isinstance(variants, str) or not isinstance(variants, Sequence):
        raise ValueError(
            "variants must be None, 'specs' or a list of layout dicts, not "
            + wire.cap_message(repr(variants), 80)
        )
    states = []
    for i, change in enumerate(variants):
        if not isinstance(change, dict):
            raise ValueError(
                f"variant {i} must be a dict of layout traits, got "
                + wire.cap_message(repr(change), 80)
            )
        try:
            states.append(view.propose(change))
        except ValueError as e:
            raise ValueError(
                wire.cap_message(f"variant {i} ({wire.cap_message(str(change), 80)}): {e}")
            ) from None
    return states


def array_page_data(
    view: ArrayViewLike, variants: Iterable[LayoutState] = (), budget: int = DEFAULT_BUDGET
) -> tuple[wire.PageData, int, int]:
    """(page data, layouts carried, variants skipped) of an array view: its synced state, the
    layout shown, and the variants, in order, until the next one would pass ``budget`` bytes of
    encoded JSON (the rest are skipped without being computed)."""
    state = view.synced_state()
    current = view.layout_state
    here = wire.state_key(current)
    answers: dict[str, Any] = {}
    used, skipped, spent = 0, 0, False
    key = VARIANT_KEYS
    for st in variants:
        k = wire.state_key(st)
        if k in answers or k == here:
            continue
        if spent:  # the budget is spent: count the rest, compute nothing more
            skipped += 1
            continue
        key += 1
        v = wire.encode(view.variant(st, key))
        size = _size(v)
        if used + size > budget:
            skipped += 1
            spent = True
            continue
        used += size
        answers[k] = v
    answers[here] = wire.variant(current, state["_layout"], state["_stats"])
    state["_options"] = {**state["_options"], "static_states": sorted(answers)}
    return wire.page_data(state, answers), len(answers), skipped


def function_page_data(view: FunctionViewLike) -> wire.PageData:
    """Page data of a function view as compiled now; its controls say there is no kernel."""
    state = view.synced_state()
    state["_trace_options"] = {**state["_trace_options"], "static": NO_KERNEL}
    return wire.page_data(state, {})


def _picture(view: ArrayViewLike | FunctionViewLike) -> str:
    """The view's static picture (to_svg's drawing) for the page's no-script fallback; "" when
    it has nothing drawn (a function view that never compiled)."""
    try:
        return picture_html(view.to_svg())
    except ValueError:  # nothing compiled to draw
        return ""


def _write(
    path: str | pathlib.Path, title: str, data: wire.PageData, picture: str = ""
) -> pathlib.Path:
    missing = _page.bundle_missing()
    if missing:
        raise FileNotFoundError(missing)
    p = pathlib.Path(path)
    if p.is_symlink():
        raise ValueError(
            f"{str(p)[:200]} is a symbolic link; save_html does not write through links: "
            "give the path of the file itself, or remove the link"
        )
    if p.is_dir():
        raise ValueError(f"{str(p)[:200]} is a directory; give the path of an .html file")
    text = _page.page(title, dict(data), picture)
    # Write beside it, then rename: an existing file is replaced whole, never half-written.
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def save_array_view(
    view: ArrayViewLike,
    path: str | pathlib.Path,
    variants: str | Sequence[dict[str, Any]] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> ExportReport:
    """Write one self-contained HTML file showing an array view; see ArrayView.save_html."""
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise ValueError(f"budget must be a number of bytes (an int >= 0), not {budget!r:.80}")
    states = variant_states(view, variants)
    truncated = variants == "specs" and len(states) > MAX_SPECS
    if truncated:
        states = states[:MAX_SPECS]
    data, n, skipped = array_page_data(view, states, budget)
    p = _write(path, f"shardwidget · {view.layout.typeof}", data, _picture(view))
    return ExportReport(str(p), p.stat().st_size, n, skipped, budget, truncated)


def save_function_view(view: FunctionViewLike, path: str | pathlib.Path) -> ExportReport:
    """Write one self-contained HTML file showing a function view; see FunctionView.save_html."""
    p = _write(path, f"shardwidget · {view.fn_name}", function_page_data(view), _picture(view))
    return ExportReport(str(p), p.stat().st_size, 1, 0, 0)


def tree_page_data(
    view: TreeViewLike, budget: int = DEFAULT_BUDGET
) -> tuple[wire.PageData, int, int]:
    """(page data, leaves whose grid it carries, leaves left out) of a tree view. The selected
    leaf's grid as shown (with its statistics), then every other leaf's layout in tree order
    until ``budget`` bytes of encoded JSON are spent; leaves with the same layout share one
    stored grid (``answers["leaf:i"] = {"grid": "grid:k"}``). ``state["_static"]`` tells the
    front end it is a page, and how many grids it carries."""
    state = view.synced_state()
    n = len(state["_tree"].get("paths", []))
    sel = state["selected"]
    answers: dict[str, Any] = {}
    grids: dict[str, str] = {}  # a grid's JSON (keys zeroed) -> its answer's name
    used, saved, skipped, spent = 0, 0, 0, False
    if 0 <= sel < n and state.get("_layout"):
        shown = {k: state[k] for k in ("_layout", "_options", "_stats")}
        answers["grid:0"] = shown
        answers[f"leaf:{sel}"] = {"grid": "grid:0"}
        used, saved = _size(wire.encode(shown)), 1
    for i in range(n):
        if i == sel:
            continue
        if spent:  # the budget is spent: count the rest, compute nothing more
            skipped += 1
            continue
        g = wire.encode(view.leaf_grid(i, 0))
        sig = json.dumps(g, sort_keys=True, separators=(",", ":"))
        name = grids.get(sig)
        if name is None:
            if used + len(sig) > budget:
                skipped, spent = skipped + 1, True
                continue
            name = grids[sig] = f"grid:{len(grids) + 1}"
            answers[name] = g
            used += len(sig)
        answers[f"leaf:{i}"] = {"grid": name}
        saved += 1
    state["_static"] = {"note": NO_KERNEL_TREE, "saved": saved, "leaves": n}
    return wire.page_data(state, answers), saved, skipped


def save_tree_view(
    view: TreeViewLike,
    path: str | pathlib.Path,
    variants: object = None,
    budget: int | None = None,
) -> ExportReport:
    """Write one self-contained HTML file showing a tree view as laid out now (the selected
    leaf's grid with it, and every leaf's grid that fits ``budget``); see TreeView.save_html."""
    if variants is not None:
        raise TypeError(
            "TreeView.save_html takes no variants: a tree page carries the tree as laid out "
            "now, with each leaf's grid (within budget=); other rules or meshes need a kernel "
            "(save one page per layout, or an array view's page with variants for one leaf)"
        )
    if budget is None:
        budget = DEFAULT_BUDGET
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise ValueError(f"budget must be a number of bytes (an int >= 0), not {budget!r:.80}")
    data, saved, skipped = tree_page_data(view, budget)
    p = _write(path, "shardwidget · tree", data)
    return ExportReport(str(p), p.stat().st_size, saved, skipped, budget)
