"""The one place that knows what differs between the ipywidgets versions the package runs on:
7.7.1 (Google Colab's) and 8.x (JupyterLab, Notebook 7, VS Code), with anywidget 0.9 or later.

- Display. ipywidgets 8 displays a widget through ``_repr_mimebundle_`` (the cell's result, an
  ``execute_result``; anywidget adds Colab's widget-manager metadata there). ipywidgets 7 gives
  every widget an ``_ipython_display_``, which IPython prefers: it displays a bundle of its own
  (a ``display_data``: text/plain cut at 110 characters, no text/html) and never calls
  ``_repr_mimebundle_``, so a view's picture beside it (views/fallback.py) would be missing. A
  view therefore sets ``_ipython_display_ = None`` (ipywidgets 7 does that itself on close): on
  both versions it displays through its ``_repr_mimebundle_``. :func:`mimebundle` gives any
  widget's bundle (ipywidgets 7's own widgets, a box, have no ``_repr_mimebundle_``).
- Closing. ``close()`` sets ``_repr_mimebundle_`` to None on the instance in ipywidgets 8, and
  ``_ipython_display_`` in 7; :func:`is_open` tells either way.
- The registry of live widgets by model id: the module's ``_instances`` in 8, the class
  attribute ``Widget.widgets`` in 7 (:func:`registry`).
- No kernel (a script, a test): ipywidgets 8 gives a widget a ``DummyComm`` and still syncs its
  traits through it; ipywidgets 7 an ipykernel ``Comm`` whose ``kernel`` is None, and it sends
  nothing (its ``_send`` and trait notifications check the kernel): :func:`no_front_end`. Both
  versions hand every message to the widget's ``_send(msg, buffers)``; benchmarks and tests
  catch them there (:func:`route_messages`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ipywidgets.widgets import widget as ipw

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def registry() -> dict[str, Any]:
    """ipywidgets' dict of live widgets by model id: the module's ``_instances`` in 8,
    the class attribute ``Widget.widgets`` in 7 (Colab's 7.7.1)."""
    found = getattr(ipw, "_instances", None)
    return found if isinstance(found, dict) else ipw.Widget.widgets


def no_front_end(widget: object) -> bool:
    """Whether no front end can ever reach widget: no kernel. ipywidgets 8 then gives it a
    DummyComm; ipywidgets 7 an ipykernel Comm whose ``kernel`` is None."""
    c = getattr(widget, "comm", None)
    if c is None:
        return False
    return type(c).__name__ == "DummyComm" or getattr(c, "kernel", False) is None


def is_open(widget: object) -> bool:
    """Whether widget has not been closed (it still has its comm)."""
    return getattr(widget, "comm", None) is not None


def mimebundle(widget: Any, **kwargs: Any) -> Any:
    """The (data, metadata) a front end shows widget by, as its ipywidgets displays it: its
    ``_repr_mimebundle_`` (ipywidgets 8, any anywidget), else (an ipywidgets 7 widget) the
    bundle its ``_ipython_display_`` would display, with anywidget's Colab metadata. None for a
    closed widget."""
    own = getattr(widget, "_repr_mimebundle_", None)
    if callable(own):
        bundle = own(**kwargs)  # data alone (ipywidgets 8's widgets) or (data, metadata)
        return (bundle, {}) if isinstance(bundle, dict) else bundle
    if not is_open(widget) or getattr(widget, "_view_name", None) is None:
        return None
    text = repr(widget)
    data = {
        "text/plain": text if len(text) <= 110 else text[:110] + "…",
        WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": widget.model_id},
    }
    return data, _colab_metadata()


def _colab_metadata() -> dict[str, Any]:
    """What anywidget adds to a widget's display metadata on Colab (its custom widget manager,
    which third-party widgets need there); {} elsewhere, or where anywidget lacks it."""
    try:
        # private, and absent from older anywidget: imported here, under the try
        from anywidget._util import get_repr_metadata
    except ImportError:
        return {}
    return dict(get_repr_metadata())


def route_messages(widget: Any, send: Callable[..., Any]) -> None:
    """Hand every message widget sends (trait sync and custom messages alike) to
    ``send(msg, buffers)`` instead of its comm, with a kernel or without: a stand-in for the
    kernel's side of the comm (benchmarks/update.py, tests). ipywidgets 7 syncs a trait change
    only through a comm that has a kernel, so a kernel-less comm is given a stand-in one, past
    the trait's type check (nothing uses it: the messages go to send)."""
    widget._send = send
    comm = getattr(widget, "comm", None)
    if comm is not None and getattr(comm, "kernel", False) is None:
        comm._trait_values["kernel"] = object()
