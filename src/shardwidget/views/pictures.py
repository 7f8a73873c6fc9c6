"""How a view draws itself without a browser: its SVG and PNG, the snapshot, the static
picture a notebook keeps beside the live widget (views/fallback.py), the "save picture"
button's answer. A base of :class:`~shardwidget.views.base.ShardView`; each kind draws its own
(``to_svg``, ``_static_html``).
"""

from __future__ import annotations

import pathlib
from typing import Any

import anywidget
from traitlets.utils.bunch import Bunch

from .. import _widgets, wire
from ..render.png import svg_to_png
from ..render.snapshot import Snapshot
from . import fallback


class Pictures(anywidget.AnyWidget):
    """The pictures of a view (see the module's doc)."""

    _fallback_shown = False
    """Whether a picture output of this view was displayed (set by views/fallback.py)."""

    def snapshot(self) -> Snapshot:
        """This view frozen now, to display: the static picture (HTML + SVG, hover a block for its
        details; the error, when one is shown) and the terminal text. Later changes to the view
        do not reach it: use it where a notebook must read right top to bottom."""
        return Snapshot(self._static_html(), repr(self))

    def _static_html(self) -> str:
        """The view's current state as HTML without script (snapshot, the notebook picture)."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget. In a kernel, a picture of the view's last state is displayed just before
        it, for the notebook read without the kernel (views/fallback.py); elsewhere the picture
        rides in the widget's bundle as text/html, for viewers without a widget manager."""
        if not _widgets.is_open(self):  # closed: shown by its text (IPython's plain repr)
            return None
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle

        if not fallback.emit(self):
            data["text/html"] = self._static_html()
        return data, meta

    def _on_shown_change(self, _change: Bunch) -> None:
        if self._fallback_shown:
            fallback.mark_stale(self)

    def to_svg(self, width: int = 760) -> str:
        """The view as a standalone SVG (no browser needed), drawn like the live view: for
        slides and papers. ``width`` in pixels; the height follows from the content."""
        raise NotImplementedError

    def to_png(self, path: str | pathlib.Path, width: int = 760, scale: float = 2.0) -> Any:
        """Write :meth:`to_svg` as a PNG at ``scale`` times its size; returns (width, height)
        in pixels. Converts with ``cairosvg`` when it is installed, else with headless Chromium
        through Playwright (``SHARDWIDGET_CHROMIUM`` or ``chromium`` on PATH); RuntimeError
        naming what to install when neither is available (see :mod:`shardwidget.render.png`)."""
        return svg_to_png(self.to_svg(width), path, scale)

    def _picture_name(self) -> str:
        """The file name the "save picture" button offers (without extension)."""
        return "shardwidget"

    def _send_picture(self) -> None:
        """Answer the "save picture" button with :meth:`to_svg` (or why it failed)."""
        try:
            self.send(wire.picture_msg(self.to_svg(), self._picture_name()))
        except Exception as e:  # the boundary: said in the widget, never raised
            self.send(wire.picture_msg("", "", wire.cap_message(f"no picture: {e}")))
