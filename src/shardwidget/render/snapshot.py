"""The static picture of a view as HTML, for places with no widget manager: GitHub, nbviewer,
``jupyter nbconvert --to html``, a notebook reopened without its kernel, and ``view.snapshot()``.
It goes into the display bundle as text/html.

The picture is the view's ``to_svg()`` drawing (:mod:`.picture`, from the one scene of
:mod:`.scene`), embedded as an image whose map keeps each block's hover text, with the error
the view shows above it; the words a reader must find (a function's collectives) are kept in
the page's text, out of sight, and the terminal text is shown only where no picture is drawn.
"""

from __future__ import annotations

import base64
import html
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from . import budget
from .budget import PICTURE_BUDGET

__all__ = ["PICTURE_BUDGET", "Snapshot", "embed", "picture_html"]


def embed(svg_text: str, areas_too: bool = True) -> str:
    """An SVG as HTML that survives sanitizers: an ``<img>`` of it (a data: URI) with an image map
    whose areas carry each block's hover title. JupyterLab's sanitizer (a notebook it does not
    trust) drops inline ``<svg>`` and ``<style>`` but keeps the text inside them, which reads
    as a jumble; an image keeps the picture whole."""

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg_text)
    areas = []
    for g in root.iter(f"{ns}g") if areas_too else ():
        rect, title = g.find(f"{ns}rect"), g.find(f"{ns}title")
        if rect is None or title is None or not title.text:
            continue
        x, y = float(rect.get("x", 0)), float(rect.get("y", 0))
        w, h = float(rect.get("width", 0)), float(rect.get("height", 0))
        t = html.escape(title.text)
        areas.append(
            f'<area shape="rect" coords="{x:.0f},{y:.0f},{x + w:.0f},{y + h:.0f}" title="{t}" '
            f'alt="{t}">'
        )
    name = f"shardwidget-map-{uuid.uuid4().hex[:12]}"
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg_text.encode()).decode("ascii")
    label = html.escape(root.get("aria-label", "layout"))
    return (
        f'<img class="shardwidget-picture" src="{uri}" width="{root.get("width")}" '
        f'height="{root.get("height")}" alt="{label}" usemap="#{name}" '
        'style="max-width:none">' + (f'<map name="{name}">{"".join(areas)}</map>' if areas else "")
    )


def picture_html(
    svg_text: str, error: str = "", text: str = "", caption: str = "", said: Sequence[str] = ()
) -> str:
    """A view's static picture: ``caption`` (the picture's own title) and ``said`` (the lines a
    reader must find as words in the page, e.g. a function's collectives), as text to search,
    copy and screen readers, out of sight; ``error`` (when the view shows one) as an alert; the
    SVG (embedded, see :func:`embed`; none when the view has nothing drawn); ``text`` (the
    terminal text) in sight only where no picture is drawn (none, or left out over the budget):
    under a picture it repeated the picture's tables (issue 38)."""
    # The picture draws its title and its words already: the caption and the short text form
    # are for search, copy and screen readers (kept in the page's text, out of sight).
    head = _out_of_sight(caption, said)
    err = (
        '<div class="shardwidget-error" role="alert" style="color:#b00020;margin:2px 0">'
        f"⚠ {html.escape(error)}</div>"
        if error
        else ""
    )
    pic, drawn = _bounded_picture(svg_text, len(head) + len(err) + 400)
    pre = (
        '<pre style="font-family:monospace;white-space:pre-wrap;font-size:12px">'
        f"{html.escape(text)}</pre>"
        if text and not drawn
        else ""
    )
    return (
        '<div class="shardwidget-snapshot" style="font-family:system-ui,sans-serif;'
        f'font-size:12px;line-height:1.4">{head}{err}{pic}{pre}</div>'
    )


def _out_of_sight(caption: str, said: Sequence[str]) -> str:
    """The caption and the short text form, in the page's text but not drawn (the clip keeps
    them for screen readers, search and copy, which ``display:none`` would not)."""
    if not caption and not said:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in said)
    return (
        '<div class="shardwidget-said" style="position:absolute;width:1px;height:1px;'
        'overflow:hidden;clip-path:inset(50%);white-space:nowrap">'
        + (f'<b style="font-family:monospace">{html.escape(caption)}</b>' if caption else "")
        + (f"<ul>{items}</ul>" if items else "")
        + "</div>"
    )


_BLOCK_TITLE = re.compile(r"(<g\b[^>]*>)<title>[^<]*</title>")  # a block's hover text


def _bounded_picture(svg_text: str, rest: int) -> tuple[str, bool]:
    """(HTML, whether a picture is in it): the embedded picture within PICTURE_BUDGET (``rest``:
    the bytes of what goes with it), with its hover text, else without it (no map, no block
    titles), else a line saying it was left out and why."""
    if not svg_text:
        return "", False
    plain = _BLOCK_TITLE.sub(r"\1", svg_text)
    said = (
        '<div style="color:#57606a;font-style:italic">hover text left out: the picture with it '
        f"is over the {PICTURE_BUDGET // 1024} KiB a saved picture may take</div>"
    )
    for drawn, areas_too, note in ((svg_text, True, ""), (plain, False, said)):
        pic = f"<div>{embed(drawn, areas_too)}</div>{note}"
        if len(pic.encode("utf-8")) + rest <= PICTURE_BUDGET:
            return pic, True
    size = budget.plural(len(svg_text.encode("utf-8")), "byte")
    return (
        '<div class="shardwidget-left-out" style="color:#57606a;font-style:italic">'
        f"picture left out: its drawing takes {size}, over the {PICTURE_BUDGET // 1024} KiB a "
        "saved picture may take; the text below describes the view</div>",
        False,
    )


class Snapshot:
    """A view frozen at one moment, for narrative notebooks and course pages: ``view.snapshot()``.

    It displays as the static picture (HTML + SVG; hover a block for its ranges, holders and
    statistics) and prints as the terminal text, both taken when it was made: later changes to
    the view do not reach it. It holds strings only (no arrays, no widget).

    Attributes:
        html: the picture, as text/html.
        text: the terminal text (``repr(view)`` when it was made).
    """

    __slots__ = ("html", "text")

    def __init__(self, html: str, text: str) -> None:
        self.html = html
        self.text = text

    def _repr_html_(self) -> str:
        return self.html

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}

    def __repr__(self) -> str:
        return self.text
