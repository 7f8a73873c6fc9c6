"""The machine a ``gpu_mesh`` plan stands for, in the static picture (saved pages, nbconvert):
its GPUs grouped by host (a row per host; an NVLink domain that spans hosts, a GB200 NVL72
rack's, framed and named), each in its device's colour, and what a step along each mesh axis
travels over, the axes that cross the network marked. The live view's physical pane and link
lines draw the same (js/array/mesh/physical.ts, links.ts)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..model.layout import Layout, MeshInfo
from . import budget
from .colors import text_color_on
from .picture import FG, FG2, FG3, Svg, wrap_text
from .scene import array_scene

NETWORK = "network"
"""The word a link starts with where it crosses the network (``GpuMeshInfo.link``)."""


def has_machine(lay: Layout) -> bool:
    """Whether the layout's mesh says what its axes travel over, on GPUs with hosts."""
    return bool(lay.mesh is not None and lay.mesh.axis_links and lay.devices)


def link_lines(mesh: MeshInfo) -> list[tuple[str, bool]]:
    """("data=2: network (InfiniBand / Ethernet, across hosts)", crosses the network) per axis."""
    return [
        (f"{n}={s}: {link}", link.startswith(NETWORK))
        for n, s, link in zip(mesh.axis_names, mesh.axis_sizes, mesh.axis_links, strict=True)
    ]


def hosts_of(lay: Layout) -> dict[int, list[int]]:
    """Host (its process, numbered over every slice) -> its devices' ids, by GPU on the host."""
    out: dict[int, list[tuple[int, int]]] = {}
    for d in lay.devices:
        gpu = d.coords[0] if d.coords else d.id
        out.setdefault(d.process_index, []).append((gpu, d.id))
    return {h: [i for _, i in sorted(out[h])] for h in sorted(out)}


def machine(
    svg: Svg, lay: Layout, x0: float, y0: float, width: float, color_of: Callable[[int], str]
) -> float:
    """Draws the machine of a layout whose mesh says its links (:func:`has_machine`); the
    height drawn (0 for any other layout)."""
    if not has_machine(lay) or lay.mesh is None:
        return 0.0
    hosts = hosts_of(lay)
    per = max(len(v) for v in hosts.values())
    n = sum(len(v) for v in hosts.values())
    svg.text(x0, y0 + 10, f"Physical: {n} GPUs on {len(hosts)} hosts", size=12, weight="bold")
    svg.text(x0 + 220, y0 + 10, "a row per host, GPUs across", size=10.5, fill=FG3)
    y = y0 + 22
    for line, net in link_lines(lay.mesh):
        for part in wrap_text(("⇄ " if net else "") + line, width - 8, 11):
            svg.text(x0 + 4, y + 10, part, size=11, fill=FG if net else FG2,
                     weight="bold" if net else "normal", mono=True)  # fmt: skip
            y += 15
    if n > budget.MAX_MESH_CELLS:  # words only: a rectangle per GPU would outgrow the page
        svg.text(x0 + 4, y + 12, f"{n} GPUs: too many to draw one by one", size=11, fill=FG3)
        return y + 18 - y0
    return _hosts(svg, lay.mesh.domain_hosts, hosts, per, x0, y + 6, width, color_of) - y0


def with_machine(picture: str, lay: Layout, width: int, n_devices: int) -> str:
    """An array picture ``width`` wide (``array_svg`` of ``lay``) with the machine drawn below
    it where the layout's mesh says its links (:func:`has_machine`: the tree view's leaf on a
    ``gpu_mesh``), in the picture's device colours (``n_devices`` as it was drawn with); else
    the picture as it is."""
    high = re.search(r'height="([\d.]+)"', picture)
    if not has_machine(lay) or high is None:
        return picture
    top = float(high.group(1))
    svg = Svg()
    svg.parts.append(picture.replace("<svg ", '<svg x="0" y="0" ', 1))
    color_of = array_scene(lay, n_devices=n_devices).color_of
    h = machine(svg, lay, 12, top + 8, width - 24, color_of)
    return svg.done(width, top + h + 16, "the array and the GPUs it is planned for, by host")


def _hosts(
    svg: Svg,
    domain_hosts: int,
    hosts: dict[int, list[int]],
    per: int,
    x0: float,
    y: float,
    width: float,
    color_of: Callable[[int], str],
) -> float:
    """The host rows from ``y``; where an NVLink domain spans hosts (``domain_hosts`` > 1),
    each domain's hosts headed and framed. The y below them."""
    left = 56.0
    cell = max(4.0, min(26.0, (width - left - 8) / per, 420 / len(hosts)))
    rows = list(hosts.items())
    size = domain_hosts if domain_hosts > 1 else len(rows)
    for d, first in enumerate(range(0, len(rows), size)):
        group = rows[first : first + size]
        if domain_hosts > 1:
            last = first + len(group) - 1
            svg.text(x0 + 4, y + 12, f"NVLink domain {d}: hosts {first}–{last}", size=10.5,
                     fill=FG2)  # fmt: skip
            y += 20
            _frame(svg, x0 + left - 3, y - 3, per * cell + 4, len(group) * cell + 4)
        for h, ids in group:
            _host(svg, h, ids, x0, left, y, cell, color_of)
            y += cell
        y += 8
    return y


def _host(
    svg: Svg,
    h: int,
    ids: list[int],
    x0: float,
    left: float,
    y: float,
    cell: float,
    color_of: Callable[[int], str],
) -> None:
    """One host's row: its number, then its GPUs in their devices' colours."""
    gap = 2.0 if cell >= 10 else 1.0
    size = min(10.0, cell - 1)  # every host named, small where the rows are
    svg.text(x0 + left - 6, y + cell / 2 + size / 2 - 1, f"host {h}", size=size, fill=FG2,
             anchor="end")  # fmt: skip
    for g, d in enumerate(ids):
        col = color_of(d)
        x = x0 + left + g * cell
        extra = f' data-device="{d}"' + (' rx="2"' if cell >= 10 else "")
        svg.rect(x, y, cell - gap, cell - gap, col, extra)
        if cell >= 16:
            mid = x + (cell - gap) / 2
            ink = text_color_on(col)
            svg.text(mid, y + cell / 2 + 3, str(d), size=min(10, cell / 2.4), anchor="middle",
                     mono=True, fill=ink, weight="bold")  # fmt: skip


def _frame(svg: Svg, x: float, y: float, w: float, h: float) -> None:
    svg.parts.append(
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="none" '
        f'stroke="{FG3}" stroke-dasharray="4 3"/>'
    )
