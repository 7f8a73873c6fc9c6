"""view.snapshot() and the static picture (to_svg's drawing, snapshot.picture_html): geometry checked against JAX's own
devices_indices_map, values against numpy, frozen against later changes; the notebook picture
beside a displayed view is redrawn lazily (never on the update path)."""

from __future__ import annotations

import base64
import html as html_mod
import re
import threading
import xml.etree.ElementTree as ET
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model.units import fmt_bytes
from shardwidget.render import picture, png
from shardwidget.views import fallback
from tests.helpers import said_in, svgs_in

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def x() -> Any:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    return jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32), NamedSharding(mesh, P("x", "y")))


def _svg(html: str) -> ET.Element:
    found = svgs_in(html) if not html.startswith("<svg") else [html]
    assert found, html[:500]
    return ET.fromstring(found[0])


def _blocks_of(html: str) -> dict[tuple[tuple[int, int], ...], set[int]]:
    """index ranges -> holders, read back from each block's hover title."""
    out = {}
    for g in _svg(html).iter(f"{SVG}g"):
        title = g.find(f"{SVG}title")
        assert title is not None and title.text
        first = title.text.splitlines()[0]
        rng = tuple((int(a), int(b)) for a, b in re.findall(r"\[(\d+):(\d+)\)", first))
        devs = {int(d) for d in first.split(" on device")[1].lstrip("s ").split(", ")}
        out[rng] = devs
    return out


def _jax_blocks(arr: Any) -> dict[tuple[tuple[int, int], ...], set[int]]:
    out: dict[tuple[tuple[int, int], ...], set[int]] = {}
    for d, idx in arr.sharding.devices_indices_map(arr.shape).items():
        key = tuple(s.indices(n)[:2] for s, n in zip(idx, arr.shape, strict=True))
        out.setdefault(key, set()).add(d.id)
    return out


def test_snapshot_draws_the_layout_jax_made(x: Any) -> None:
    v = ShardView(x)
    s = v.snapshot()
    assert _blocks_of(s.html) == _jax_blocks(x)
    # axes (the mesh axes each dimension is split over) and the index where blocks start
    texts = [t.text for t in _svg(s.html).iter(f"{SVG}text")]
    assert "dim 1 (32) · sharded over y →" in texts and "dim 0 (64) · sharded over x →" in texts
    assert {"0:8", "8:16", "16:24", "24:32", "0:32", "32:64"} <= set(texts)
    assert {str(i) for i in range(8)} <= set(texts)  # every holder written on its block
    # statistics in the hover text, against numpy
    host = np.asarray(x)
    title = next(t.text for t in _svg(s.html).iter(f"{SVG}title") if t.text.startswith("[0:32)"))
    blk = host[0:32, 0:8]
    assert f"min {blk.min():.4g} · max {blk.max():.4g} · mean {blk.mean():.4g}" in title
    # heatmap thumbnails as images, and their scale (the colour bar is a gradient)
    assert len(list(_svg(s.html).iter(f"{SVG}image"))) == 8
    lo, hi = v._stats["vmin"], v._stats["vmax"]  # the range of the pooled means
    assert host.min() <= lo < hi <= host.max()
    assert "heatmap" in texts and {f"{lo:.6g}", f"{hi:.6g}"} <= set(texts)
    # hover: an image map area per block, with the block's title, over the block's rectangle
    areas = re.findall(r'<area shape="rect" coords="([\d,]+)" title="([^"]*)"', s.html)
    titles = [g.findtext(f"{SVG}title") for g in _svg(s.html).iter(f"{SVG}g")]
    assert [html_mod.unescape(t) for _, t in areas] == titles and len(areas) == 8
    assert s.text == repr(v) and repr(s) == s.text
    assert s._repr_mimebundle_() == {"text/plain": s.text, "text/html": s.html}


def test_snapshot_is_frozen(x: Any) -> None:
    v = ShardView(x)
    before = v.snapshot()
    html, text = before.html, before.text
    v.spec = ["y", None]
    after = v.snapshot()
    assert (before.html, before.text) == (html, text)  # unaffected by the change
    assert _blocks_of(after.html) == _jax_blocks(v.array) != _jax_blocks(x)
    assert "P(&#x27;y&#x27;, None)" in after.html and "P(&#x27;y&#x27;, None)" not in html
    assert not hasattr(before, "__dict__")  # strings only: no view, no arrays kept


def test_snapshot_shows_the_error_the_view_shows(x: Any) -> None:
    v = ShardView(x)
    v._on_custom_msg(v, {"type": "request", "seq": 1, "state": {"spec": ["z", None]}}, [])
    assert v.error
    s = v.snapshot()
    assert 'role="alert"' in s.html and v.error.split("'")[0] in s.html
    assert _blocks_of(s.html) == _jax_blocks(x)  # and the last good layout


def test_function_view_snapshot_names_its_collectives(x: Any) -> None:
    f = ShardView(lambda a: a.sum(axis=0), x)
    s = f.snapshot()
    # in words for search and screen readers (the picture draws them too): a ring all-reduce of
    # the f32[8] per-device result over 2 devices sends 2 (n - 1) / n of its 32 bytes
    assert "all-reduce over x: 32 B sent per device" in said_in(s.html)
    # each leaf drawn as its layout (the input as JAX laid it out, the output as compiled), in
    # the one picture to_svg draws (2-d input blocks, 1-d output blocks)
    (svg,) = svgs_in(s.html)
    assert svg == f.to_svg()
    assert _blocks_of(svg) == {**_jax_blocks(x), **_jax_blocks(f.outputs[0])}
    texts = [t.text or "" for t in _svg(svg).iter(f"{SVG}text")]
    assert any(t.startswith("• all-reduce over x · ") for t in texts)
    f.in_specs = [[None, "y"]]
    assert "all-reduce" not in repr(f) and "all-reduce" in s.html  # frozen
    assert said_in(f._static_html()) == ["collectives: none (every device computes its part alone)"]


def test_tall_arrays_keep_their_aspect() -> None:
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    t = jax.device_put(jnp.ones((2048, 1024)), NamedSharding(mesh, P("x")))
    svg = _svg(ShardView(t).snapshot().html)
    rects = [r for r in svg.iter(f"{SVG}rect") if r.get("stroke") == "#ffffff"]
    w = max(float(r.get("x", 0)) + float(r.get("width", 0)) for r in rects) - min(
        float(r.get("x", 0)) for r in rects
    )
    h = max(float(r.get("y", 0)) + float(r.get("height", 0)) for r in rects) - min(
        float(r.get("y", 0)) for r in rects
    )
    assert h / w == pytest.approx(2.0, rel=0.02)


def test_png_is_a_png() -> None:
    import zlib

    uri = png.png_data_uri(np.zeros((2, 3, 3), np.uint8) + 7)
    raw = base64.b64decode(uri.split(",", 1)[1])
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(raw[16:20], "big") == 3 and int.from_bytes(raw[20:24], "big") == 2
    idat = raw[raw.index(b"IDAT") + 4 : raw.index(b"IEND") - 8]
    assert zlib.decompress(idat) == (b"\x00" + b"\x07" * 9) * 2


def test_picture_output_is_redrawn_lazily(x: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(
        IPython.display,
        "update_display",
        lambda data, raw, display_id: sent.append((display_id, data["text/html"])),
    )
    v = ShardView(x)
    v._fallback_shown = True  # as after display in a kernel
    drawn = []
    static = v._static_html
    monkeypatch.setattr(v, "_static_html", lambda: drawn.append(1) or static())
    v.spec = ["y", None]
    v.spec = [None, "x"]
    assert drawn == [] and sent == []  # nothing drawn on the update path
    fallback.refresh_stale()  # after the cell (post_run_cell), or once the kernel is quiet
    assert len(drawn) == 1 and [s[0] for s in sent] == [v._fallback_id]
    html = sent[0][1]
    assert f'data-shardwidget-fallback="{v._fallback_id}"' in html and "<style>" in html
    assert _blocks_of(html) == _jax_blocks(v.array)
    fallback.refresh_stale()
    assert len(sent) == 1  # nothing stale: nothing sent


def test_many_blocks_are_one_raster_with_each_holders_colour(
    x: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zlib

    from shardwidget.render.colors import color_scheme

    monkeypatch.setattr(picture, "MAX_TITLES", 4)  # 8 blocks count as many here
    v = ShardView(x)
    svg = _svg(picture.array_svg(v.layout, None, (), n_devices=8))
    assert not [g for g in svg.iter(f"{SVG}g") if g.get("class") == "block"]  # no hover text
    img = next(i for i in svg.iter(f"{SVG}image") if i.get("class") == "blocks")
    w, h = int(img.get("width", 0)), int(img.get("height", 0))
    href = img.get("{http://www.w3.org/1999/xlink}href", "")
    raw = base64.b64decode(href.split(",", 1)[1])
    idat = raw[raw.index(b"IDAT") + 4 : raw.index(b"IEND") - 8]
    px = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * 3)[:, 1:]
    px = px.reshape(h, w, 3)
    colour = color_scheme(8)
    for b in v.layout.blocks:  # the centre of each block has its holder's colour
        (r0, r1), (c0, c1) = b.index
        cy, cx = int((r0 + r1) / 2 / 64 * h), int((c0 + c1) / 2 / 32 * w)
        want = colour(b.devices[0])
        assert "#" + "".join(f"{int(c):02X}" for c in px[cy, cx]) == want.upper()


def test_a_snapshot_holds_no_device_memory(x: Any) -> None:
    import gc

    v = ShardView(x)
    v.spec = ["y", None]
    gc.collect()
    before = {id(a) for a in jax.live_arrays()}
    snaps = [v.snapshot(), ShardView(lambda a: a * 2, x).snapshot()]
    gc.collect()
    assert {id(a) for a in jax.live_arrays()} <= before
    assert all(isinstance(s.html, str) and isinstance(s.text, str) for s in snaps)


@pytest.mark.parametrize(
    ("shape", "spec"), [((0, 8), P(None, "y")), ((8, 0), P("x")), ((1, 64), P(None, "y"))]
)
def test_the_row_title_fits_a_short_or_empty_strip(shape: tuple[int, ...], spec: P) -> None:
    """The rotated row-axis title (reading downwards from the grid's top) lies inside the
    picture: its rough length (6.5 px a character at 11 px) fits the SVG's height."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    v = ShardView(jax.device_put(jnp.zeros(shape), NamedSharding(mesh, spec)))
    for s in [picture.array_svg(v.layout, n_devices=8), *svgs_in(v.snapshot().html)]:
        root = ET.fromstring(s)
        ns = "{http://www.w3.org/2000/svg}"
        rotated = [
            t
            for t in root.iter(f"{ns}text")
            if "rotate(90" in t.get("transform", "") and (t.text or "").startswith("dim ")
        ]
        assert len(rotated) == 1
        title = "".join(rotated[0].itertext())
        assert title.startswith("dim 0 (")
        top = float(rotated[0].get("y", 0))
        assert top >= 0 and top + len(title) * 6.5 <= float(root.get("height", 0)), title


def test_a_quick_picture_is_redrawn_soon_after_a_change_from_the_controls(
    x: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 item 8: a notebook saved ~0.5 s after a change showed the picture before it
    (the redraw waited 1 s of quiet). The wait follows the last redraw's time, never the
    update path: a quick picture waits MIN_QUIET_S, a slow one up to QUIET_S."""
    import asyncio

    v = ShardView(x)
    v._fallback_shown = True
    waits: list[float] = []

    async def change(draw_s: float) -> None:
        monkeypatch.setattr(fallback, "_last_draw_s", draw_s)
        loop = asyncio.get_running_loop()
        v.spec = ["y", None] if list(v.spec) != ["y", None] else [None, "x"]
        timer = fallback._timer
        assert timer is not None
        waits.append(timer.when() - loop.time())
        timer.cancel()

    def run(draw_s: float) -> None:  # a loop of its own, in a thread of its own: an earlier
        # test of the whole suite may leave this thread's loop marked running
        errors: list[BaseException] = []
        t = threading.Thread(target=lambda: _capture(errors, asyncio.run, change(draw_s)))
        t.start()
        t.join(60)
        assert not errors, errors

    run(0.01)
    run(5.0)
    assert waits[0] <= fallback.MIN_QUIET_S < 0.5  # before a save half a second later
    assert fallback.QUIET_S - 0.05 <= waits[1] <= fallback.QUIET_S


def _capture(errors: list[BaseException], f: Any, *args: Any) -> None:
    """f(*args), any exception kept in errors (a thread's are otherwise only printed)."""
    try:
        f(*args)
    except BaseException as e:  # (handed to the test's thread)
        errors.append(e)


def _hlo_collectives(f: Any, *args: Any) -> list[str]:
    """The collectives of f's plain compile, one per op in XLA's own text (async pairs once)."""
    hlo = jax.jit(f).lower(*args).compile().as_text()
    kinds = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
    ops = re.findall(r"= [^=]*? (" + "|".join(kinds) + r")(?:-start)?\(", hlo)
    return sorted(ops)


def test_function_views_picture_keeps_its_collectives_in_words_not_its_text(x: Any) -> None:
    """Issue 38 item 9: the function view's picture was followed by its whole terminal text
    (inputs, outputs, memory: ~40 lines for a real step, repeating the picture's table). The
    text left: the collectives in a few words (out of sight, for search and screen readers),
    as XLA compiled them; the rest is the picture's."""

    def two(a: Any) -> Any:
        return a.sum(axis=0), a.sum(axis=1)

    f = ShardView(two, x)
    page = f._static_html()
    (svg,) = svgs_in(page)
    assert svg == f.to_svg() and "<pre" not in page and "inputs:" not in page
    said = said_in(page)
    want = _hlo_collectives(two, x)
    assert len(want) == 2 and said[0] == f"collectives ({len(want)}):"
    got = sorted(w for line in said[1:] for w in [line.split(" over ")[0]] * _times(line))
    assert got == want
    assert {line.split(":")[0].split(" ×")[0] for line in said[1:]} == {
        f"{c.kind} over {','.join(c.axes)}" for c in f.trace.collectives
    }


def _times(line: str) -> int:
    m = re.search(r" ×(\d+):", line)
    return int(m.group(1)) if m else 1


def test_function_views_text_is_shown_where_nothing_is_drawn(x: Any) -> None:
    """Without a picture (the step failed before it traced) the text says what there is."""
    f = ShardView(lambda a: a @ a, x)  # contracting dims sharded on Explicit axes: refused
    assert f.error and f._result is None
    page = f._static_html()
    assert not svgs_in(page) and "<pre" in page and "ShardView of" in page


def test_tree_views_picture_draws_its_leaves_and_keeps_its_text_in_words(x: Any) -> None:
    """The tree view's picture had the same text under it: its leaves (path, type, spec,
    bytes per device) are drawn in the picture now, and the text kept out of sight."""
    w = jax.device_put(jnp.ones((8, 16)), NamedSharding(x.sharding.mesh, P(None, "y")))
    t = ShardView({"x": x, "w": w})
    page = t._static_html()
    (svg,) = svgs_in(page)
    assert "<pre" not in page and svg == t.to_svg()
    drawn = [e.text or "" for e in _svg(svg).iter(f"{SVG}text")]
    for leaf, arr in (("['x']", x), ("['w']", w)):
        spec = f"P{tuple(arr.sharding.spec)!r}".replace(",)", ")")
        assert leaf in drawn and spec in drawn, (leaf, spec, drawn)
        shard = max(int(np.prod(s.data.shape)) * 4 for s in arr.addressable_shards)
        assert fmt_bytes(shard) in drawn, (shard, drawn)  # the largest shard, from JAX
    assert said_in(page) == repr(t).splitlines()
