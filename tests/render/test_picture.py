"""Pictures (issue 14, item 2): view.to_svg() and view.to_png(path). The SVG parses as XML, names
every holder, and its rulers and block titles give the index ranges JAX's devices_indices_map
gives; heatmaps are the block's data; the PNG has the PNG magic and the SVG's size × scale."""

from __future__ import annotations

import base64
import pathlib
import re
import xml.etree.ElementTree as ET
import zlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.render import png
from shardwidget.render.colors import VIRIDIS
from shardwidget.render.colors import heat_ramp as ramp
from shardwidget.render.text import holder_candidates

NS = "{http://www.w3.org/2000/svg}"
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _put(data: Any, mesh_shape: tuple[int, ...], names: tuple[str, ...], spec: P) -> Any:
    mesh = jax.make_mesh(mesh_shape, names, axis_types=(AxisType.Auto,) * len(names))
    return jax.device_put(data, NamedSharding(mesh, spec))


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def _jax_ranges(a: Any) -> dict[int, str]:
    """Device id -> "[a:b), [c:d)" from JAX itself."""
    out = {}
    for d, idx in a.sharding.devices_indices_map(a.shape).items():
        rng = [s.indices(n)[:2] for s, n in zip(idx, a.shape, strict=True)]
        out[d.id] = ", ".join(f"[{lo}:{hi})" for lo, hi in rng)
    return out


@pytest.mark.parametrize(
    ("mesh_shape", "names", "spec"),
    [((2, 4), ("x", "y"), P("x", "y")), ((2, 4), ("x", "y"), P("y")), ((8,), ("x",), P())],
)
def test_array_svg_parses_names_every_holder_and_jax_ranges(
    mesh_shape: Any, names: Any, spec: P
) -> None:
    a = _put(jnp.arange(32.0 * 16).reshape(32, 16), mesh_shape, names, spec)
    v = ShardView(a)
    root = ET.fromstring(v.to_svg())
    assert root.tag == f"{NS}svg" and int(root.get("width", 0)) == 760
    texts = _texts(root)
    # every block: a group whose title gives its range and holders, as JAX has them
    jr = _jax_ranges(a)
    # (the first line of each title: its second has the shard shape and statistics)
    titles = [(g.findtext(f"{NS}title") or "").split("\n")[0] for g in root.iter(f"{NS}g")]
    holders = {}
    for t in titles:
        m = re.fullmatch(r"(.*) on devices? ([\d, ]+)", t)
        assert m, t
        for d in map(int, m.group(2).split(", ")):
            holders[d] = m.group(1)
    assert holders == jr
    # every block's holders written on it, every device in the mesh
    for b in v.layout.blocks:
        assert holder_candidates(b.devices)[0] in texts  # as the widget labels it
    for d in range(8):
        assert str(d) in texts
    # rulers: every distinct range along the drawn dimensions
    for dim in (0, 1):
        for lo, hi in {b.index[dim] for b in v.layout.blocks}:
            assert f"{lo}:{hi}" in texts
    assert any(t.startswith("dim 0 (32) · ") for t in texts)
    # the legend, in words
    for line in ("Legend", "border", "inner heatmap", "stripes", "labels"):
        assert line in texts
    for line in v._layout["legend"]["replication"]:
        assert f"• {line}" in texts


def _decode(data: bytes) -> np.ndarray:
    w, h = png.png_size(data)
    i, raw = 8, b""
    while i < len(data):
        n = int.from_bytes(data[i : i + 4], "big")
        if data[i + 4 : i + 8] == b"IDAT":
            raw += data[i + 8 : i + 8 + n]
        i += 12 + n
    rows = np.frombuffer(zlib.decompress(raw), np.uint8).reshape(h, 1 + 3 * w)
    assert (rows[:, 0] == 0).all()  # no filter
    return rows[:, 1:].reshape(h, w, 3)


def test_heatmaps_are_the_blocks_data_on_the_renderers_ramp() -> None:
    a = _put(jnp.arange(8.0 * 8).reshape(8, 8), (2, 4), ("x", "y"), P("x", "y"))
    v = ShardView(a)
    root = ET.fromstring(v.to_svg())
    images = list(root.iter(f"{NS}image"))
    assert len(images) == 8
    href = images[0].get("{http://www.w3.org/1999/xlink}href", "")
    px = _decode(base64.b64decode(href.split(",", 1)[1]))
    host = np.asarray(a)
    b = v.layout.blocks[0]
    block = host[b.slices]
    rep = px.shape[0] // block.shape[0]  # each value a square of rep × rep pixels
    assert rep >= 1 and px.shape[:2] == (block.shape[0] * rep, block.shape[1] * rep)
    px = px[::rep, ::rep]
    lo, hi = 0.0, 63.0  # the whole array's range
    for (r, c), val in np.ndenumerate(block):  # quantized to 256 levels, as on the wire
        assert tuple(px[r, c]) == ramp(round((val - lo) * 255 / (hi - lo)) / 255)


def test_viridis_is_the_renderers() -> None:
    ts = (ROOT / "js" / "shared" / "colors.ts").read_text()
    body = ts.split("const VIRIDIS")[1].split("];")[0]
    pts = [tuple(map(int, m)) for m in re.findall(r"\[(\d+), (\d+), (\d+)\]", body)]
    assert tuple(pts) == VIRIDIS


@pytest.mark.usefixtures("png_converter")
def test_to_png_magic_and_size(tmp_path: pathlib.Path) -> None:
    a = _put(jnp.ones((16, 16)), (2, 4), ("x", "y"), P("x", "y"))
    v = ShardView(a)
    svg = v.to_svg(width=500)
    h = int(ET.fromstring(svg).get("height", 0))
    out = tmp_path / "x.png"
    size = v.to_png(out, width=500, scale=2)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert size == png.png_size(data) == (1000, 2 * h)


def test_to_png_without_a_converter_says_what_to_install(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str) -> Any:
        def convert(_svg: str, _scale: float) -> bytes:
            raise ImportError(f"{name} is not importable")

        return convert

    monkeypatch.setattr(png, "_cairosvg", missing("cairosvg"))
    monkeypatch.setattr(png, "_chromium", missing("playwright"))
    v = ShardView(jnp.ones(4))
    with pytest.raises(RuntimeError, match=r"pip install cairosvg.*to_svg"):
        v.to_png(tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_function_svg_draws_leaves_and_collectives() -> None:
    a = _put(jnp.ones((16, 8)), (2, 4), ("x", "y"), P("x", "y"))
    f = ShardView(lambda a: a.sum(axis=1), a)
    res = f.trace
    assert res is not None and res.collectives
    root = ET.fromstring(f.to_svg())
    texts = _texts(root)
    assert any(t.startswith("in a: float32[16@x,8@y]") for t in texts)
    assert any(t.startswith("out: ") for t in texts)
    for c in res.collectives:
        assert any(t.startswith(f"• {c.kind} over {', '.join(c.axes)}") for t in texts), c
    assert "Communication" in texts
    # each leaf's layout in words, and what the marks mean
    words = " ".join(texts)
    assert "dimension 0 split 2 ways over x · dimension 1 split 4 ways over y · no copies" in words
    for mark in ("Legend", "border", "stripes", "labels"):
        assert mark in texts


def test_the_buttons_request_gets_the_svg_and_no_device_memory_stays() -> None:
    a = _put(jnp.arange(64.0).reshape(8, 8), (2, 4), ("x", "y"), P("x", "y"))
    v = ShardView(a)
    v.spec = ["y", None]
    sent: list[Any] = []
    v.send = sent.append  # type: ignore[method-assign]
    before = {id(x) for x in jax.live_arrays()}
    v._on_custom_msg(v, {"type": "picture_request"}, [])
    assert [x for x in jax.live_arrays() if id(x) not in before] == []
    (msg,) = sent
    assert msg["type"] == "picture" and msg["ok"] and msg["error"] == ""
    assert msg["name"] == "shardwidget_float32_8x8_P_y_None"
    assert ET.fromstring(msg["svg"]).tag == f"{NS}svg"


def test_a_function_view_that_did_not_compile_says_so() -> None:
    a = _put(jnp.ones((16, 8)), (2, 4), ("x", "y"), P("x", "y"))

    def bad(a: Any) -> Any:
        raise ValueError("boom")

    f = ShardView(bad, a)
    sent: list[Any] = []
    f.send = sent.append  # type: ignore[method-assign]
    f._on_custom_msg(f, {"type": "picture_request"}, [])
    assert sent[0]["ok"] is False and sent[0]["error"].startswith("no picture: nothing compiled")


@pytest.mark.usefixtures("png_converter")
def test_to_png_inside_a_running_event_loop(tmp_path: pathlib.Path) -> None:
    """A Jupyter kernel runs an event loop in the thread that runs the cell: to_png still works."""
    import asyncio

    v = ShardView(jnp.arange(8.0))

    async def cell() -> tuple[int, int]:
        size: tuple[int, int] = v.to_png(tmp_path / "in_loop.png", width=300, scale=1)
        return size

    # In a thread of its own: the e2e tests' Playwright may have left a loop running in this one.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        w, _h = pool.submit(asyncio.run, cell()).result()
    assert w == 300 and (tmp_path / "in_loop.png").read_bytes()[:8] == png.PNG_MAGIC


def test_narrow_pictures_wrap_their_words() -> None:
    """At 480 px the legend and header lines wrap instead of running past the edge (estimated
    with a sans-serif character of 0.56 em, the width the wrapping assumes)."""
    a = _put(jnp.ones((16, 8)), (2, 4), ("x", "y"), P("x", None))
    root = ET.fromstring(ShardView(a).to_svg(width=480))
    width = int(root.get("width", 0))
    for t in root.iter(f"{NS}text"):
        if "mono" in (t.get("font-family") or "") or t.get("transform"):
            continue
        size, x = float(t.get("font-size", 12)), float(t.get("x", 0))
        n = len("".join(t.itertext()))
        assert x + n * size * 0.56 <= width, "".join(t.itertext())


def test_labels_shrink_before_they_shorten_and_rulers_skip_rather_than_overlap() -> None:
    from shardwidget.render.picture import _every, _fit_label

    assert _fit_label((0,), 40, 30) == ("0", 11.0)  # room: the full size
    label, size = _fit_label((100,), 22, 20)  # 256 devices on a 760 px picture
    assert label == "100" and 6 <= size < 11
    label, size = _fit_label(tuple(range(0, 32, 2)), 22, 20)
    assert label == "×16" and size >= 6  # the ids cannot fit even at 6 px: the count
    assert _fit_label((5,), 3, 3) == ("", 0)  # nothing fits: no label
    # 16 ranges of 25 px, each label needing 55 px: every 3rd, none overlapping
    step = _every(55, 25, 16)
    assert step == 3 and all((k * step) * 25 + 55 <= (k + 1) * step * 25 + 1 for k in range(5))


def test_a_single_device_array_has_a_plain_header() -> None:
    texts = _texts(ET.fromstring(ShardView(np.arange(4.0)).to_svg()))
    assert texts[0] == "float32[4] · device"
    assert texts[1].startswith("SingleDeviceSharding · 1 device · 1 block · replication 1")


@pytest.mark.parametrize(
    ("shape", "spec"), [((0, 8), P(None, "y")), ((8, 0), P("x")), ((1, 64), P(None, "y"))]
)
def test_the_row_title_of_a_short_grid_is_not_covered(shape: tuple[int, ...], spec: P) -> None:
    """The rotated row title reads downwards from the grid's top: its rough length (6.5 px a
    character at 11 px) ends above the legend drawn under the grid."""
    root = ET.fromstring(ShardView(_put(jnp.zeros(shape), (2, 4), ("x", "y"), spec)).to_svg())
    texts = list(root.iter(f"{NS}text"))
    (title,) = [t for t in texts if "rotate(90" in t.get("transform", "") and "dim 0" in t.text]
    legend = next(t for t in texts if t.text == "Legend")
    end = float(title.get("y", 0)) + len(title.text or "") * 6.5
    assert end <= float(legend.get("y", 0)) - 11, (title.text, end, legend.get("y"))


@pytest.mark.parametrize(
    ("shape", "spec"), [((0, 8), P(None, "y")), ((8, 0), P("x")), ((0, 8), P()), ((0, 0), P())]
)
def test_an_empty_array_draws_every_block_of_its_layout(shape: tuple[int, ...], spec: P) -> None:
    """A dimension of size 0: each block is drawn whole along it (the layout, without elements),
    one visible rectangle per block JAX lays out, and the picture stays compact."""
    a = _put(jnp.zeros(shape), (2, 4), ("x", "y"), spec)
    v = ShardView(a)
    root = ET.fromstring(v.to_svg())
    groups = [g for g in root.iter(f"{NS}g") if g.findtext(f"{NS}title")]
    assert len(groups) == len(v.layout.blocks) == len({tuple(map(str, i)) for i in _index_set(a)})
    for g in groups:
        rect = g.find(f"{NS}rect")
        assert rect is not None and float(rect.get("width", 0)) > 4, g.findtext(f"{NS}title")
        assert float(rect.get("height", 0)) > 4, g.findtext(f"{NS}title")
    assert float(root.get("height", 0)) < 600


def _index_set(a: Any) -> list[Any]:
    """The distinct index tuples JAX gives the devices (as (start, stop) per dim)."""
    out = []
    for idx in a.sharding.devices_indices_map(a.shape).values():
        t = tuple(s.indices(n)[:2] for s, n in zip(idx, a.shape, strict=True))
        if t not in out:
            out.append(t)
    return out


def test_many_blocks_heatmaps_are_in_the_one_raster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond MAX_TITLES blocks the grid is one image holding the holders' colours and the
    heatmaps too (a PNG per block made 1.15 MB of a 1.7 MB picture at 4096 blocks)."""
    import base64
    import zlib

    from shardwidget.render import picture
    from shardwidget.render.colors import HEAT_LUT

    monkeypatch.setattr(picture, "MAX_TITLES", 4)  # 8 blocks count as many here
    a = _put(jnp.arange(64.0 * 64).reshape(64, 64), (2, 4), ("x", "y"), P("x", "y"))
    root = ET.fromstring(ShardView(a).to_svg())
    images = list(root.iter(f"{NS}image"))
    assert [i.get("class") for i in images] == ["blocks"]
    img = images[0]
    w, h = int(img.get("width", 0)), int(img.get("height", 0))
    raw = base64.b64decode(img.get("{http://www.w3.org/1999/xlink}href", "").split(",", 1)[1])
    idat = raw[raw.index(b"IDAT") + 4 : raw.index(b"IEND") - 8]
    px = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * 3)[:, 1:]
    colours = {tuple(p) for p in px.reshape(h, w, 3).reshape(-1, 3)}
    ramp = {tuple(c) for c in HEAT_LUT}
    assert len(colours & ramp) >= 8  # the values' ramp colours, inside the blocks
