"""Views left behind by a cell that ran again are closed, so they can be freed.

ipywidgets keeps every open widget in its registry (and its comm keeps a callback on it), so a
view that nobody uses any more is never freed until it is closed: re-running a cell
``view = ShardView(x)`` would keep one view (and the array it shows) per run. When a view is
made, :func:`register` records where; after each IPython cell (or, in other front ends, when
the next view is made) :func:`reap` closes the views made at the same place (the same notebook
cell and line, or the same file and line) by an earlier run that nothing but the widget
machinery or IPython's output cache still references. Views made in the same run (a loop that
displays several) and views the user still holds (a variable, a list, a closure) are kept.
Without a kernel no front end can show a view, and the registry does not keep it at all.
"""

from __future__ import annotations

import pathlib
import re
import sys
import types
import weakref
from typing import TYPE_CHECKING, Any

from .._widgets import no_front_end as _no_front_end
from .._widgets import registry as _registry
from ..layout_search import gc_quiet

if TYPE_CHECKING:
    from .base import ShardView

_PACKAGE = str(pathlib.Path(__file__).resolve().parents[1])
_HIDDEN = re.compile(r"^_+\d*$|^_[io]?\d+$")  # IPython's output-cache names: _, __, _5, _i5
_views: list[tuple[weakref.ref[Any], tuple[Any, ...], Any]] = []


def _site() -> tuple[Any, ...]:
    """(cell id or None, file, line) of the code that made the view: the first frame outside
    this package and the widget libraries."""
    f: types.FrameType | None = sys._getframe(1)
    skip = (_PACKAGE, "anywidget", "ipywidgets", "traitlets")
    while f is not None and any(s in f.f_code.co_filename for s in skip):
        f = f.f_back
    where = (f.f_code.co_filename, f.f_lineno) if f is not None else ("?", 0)
    return (_cell_id(), *where)


def _ipython() -> Any:
    mod = sys.modules.get("IPython")
    get = getattr(mod, "get_ipython", None)
    return get() if get is not None else None


def _cell_id() -> Any:
    ip = _ipython()
    header = getattr(getattr(ip, "kernel", None), "get_parent", lambda: None)() or getattr(
        ip, "parent_header", None
    )
    meta = header.get("metadata", {}) if isinstance(header, dict) else {}
    return meta.get("cellId") if isinstance(meta, dict) else None


def _run() -> Any:
    """Which run this is: IPython's execution count (None outside IPython: every earlier view
    counts as made by an earlier run)."""
    ip = _ipython()
    return getattr(ip, "execution_count", None) if ip is not None else None


def _held_by_user(view: ShardView[Any, Any]) -> bool:
    """Whether anything but the widget registry, the view's own bound methods (comm callbacks)
    and IPython's output cache references view. (No comprehension here mentions view: that
    would put it in a closure cell, one more referrer.)"""
    registry = _registry()
    found = gc_quiet.referrers(view)
    if found is None:  # the kernel froze objects: its namespace may hold view unseen
        return True
    for r in found:
        if r is registry or r is _views:
            continue  # the registries
        if isinstance(r, types.FrameType) and r.f_code.co_filename == __file__:
            continue  # this module's own frames
        if isinstance(r, types.MethodType) and r.__self__ is view:
            continue  # comm and trait callbacks
        if isinstance(r, dict) and _only_cache_names(r, view):
            continue  # IPython's Out dict, and _, __, ___ in the user's namespace
        return True
    return False


def _only_cache_names(d: dict[Any, Any], view: ShardView[Any, Any]) -> bool:
    found = False
    for k, v in d.items():
        if v is view:
            found = True
            if not (isinstance(k, int) or (isinstance(k, str) and _HIDDEN.match(k))):
                return False
    return found


def register(view: ShardView[Any, Any]) -> None:
    """Record view, and close views made at the same place by an earlier run that nobody uses
    (see the module's doc). Without a kernel (a script, a test) nothing can display a view, so
    the widget and comm registries let go of it at once: it is freed with its last reference."""
    if _no_front_end(view):
        _registry().pop(view.model_id, None)
        try:
            import comm  # optional: older ipykernels have no comm package
        except ImportError:  # an ipykernel before the comm package registers comms nowhere here
            pass
        else:
            comm.get_comm_manager().comms.pop(view.comm.comm_id, None)
        view.comm._closed = True  # unregistered already: close() has nothing left to undo
        return
    _views.append((weakref.ref(view), _site(), _run()))
    ip = _ipython()
    if ip is None:
        reap()  # another front end: at the next view made
    elif not getattr(ip, "_shardwidget_reaps", False):
        # after each cell: by then a re-run `view = ShardView(x)` has rebound `view`
        ip.events.register("post_run_cell", lambda *_: reap())
        ip._shardwidget_reaps = True


def reap() -> None:
    """Close the views superseded by a view made at the same place in a later run and held by
    nothing but the widget machinery; forget freed and closed views."""
    newest: dict[tuple[Any, ...], Any] = {}
    live = []
    for ref, s, r in _views:
        v = ref()
        if v is not None and getattr(v, "comm", None) is not None:
            live.append((ref, s, r))
            newest[s] = r
    keep = []
    for i, (ref, s, r) in enumerate(live):
        later = any(s2 == s for _, s2, _ in live[i + 1 :])
        if later and (r is None or r != newest[s]):
            old = ref()
            if old is not None and not _held_by_user(old):
                old.close()
                continue
        keep.append((ref, s, r))
    _views[:] = keep
