"""view.save_html: one file, no network, the notebook's renderer, precomputed layouts that work."""

import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import nbformat
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from ..helpers import svgs_in

pytestmark = pytest.mark.e2e
ROOT = pathlib.Path(__file__).parents[2]
LOCAL = ("file:", "blob:", "data:", "about:")


@pytest.fixture
def view():
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jnp.arange(64.0 * 32).reshape(64, 32)
    return ShardView(jax.device_put(x, NamedSharding(mesh, P("x", "y"))))


def open_offline(page, path):
    """Open a saved page with every network request blocked; return the list of attempts."""
    attempts = []

    def route(r):
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            attempts.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("request", lambda q: None if q.url.startswith(LOCAL) else attempts.append(q.url))
    page.goto(path.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    return attempts


def blocks(page):
    return page.locator(".sw-grid .sw-block").count()


def test_saved_page_renders_offline(page, tmp_path, view):
    report = view.save_html(tmp_path / "v.html")
    text = (tmp_path / "v.html").read_text()
    assert "<script src=" not in text
    assert "<link" not in text
    assert report.variants == 1
    assert report.bytes == (tmp_path / "v.html").stat().st_size
    attempts = open_offline(page, tmp_path / "v.html")
    assert attempts == []
    assert page.errors == []
    assert blocks(page) == 8
    # nothing else was saved: other choices are unavailable, not broken
    opt = page.locator("[data-key=spec-1] option[value='']")
    assert opt.is_disabled()
    assert "not in this page" in opt.inner_text()


def test_precomputed_specs_answer_the_controls(page, tmp_path, view):
    report = view.save_html(tmp_path / "v.html", variants="specs")
    assert report.variants == 11  # every valid spec of a (64, 32) array on a 2x4 mesh
    assert report.skipped == 0
    attempts = open_offline(page, tmp_path / "v.html")
    page.select_option("[data-key=spec-1]", "")
    page.wait_for_function("document.querySelectorAll('.sw-grid .sw-block').length === 2")
    assert "P('x', None)" in page.inner_text(".sw-root, .shardwidget")
    page.select_option("[data-key=spec-0]", "x+y")
    page.wait_for_function("document.querySelectorAll('.sw-grid .sw-block').length === 8")
    assert page.eval_on_selector_all(".sw-tick-row", "e => e.length") == 8
    # the mesh was not varied: other shapes are unavailable
    shape_opts = page.eval_on_selector_all(
        "[data-key=shape] option", "os => os.map(o => [o.value, o.disabled])"
    )
    assert dict(shape_opts) == {"1,8": True, "2,4": False, "4,2": True, "8,1": True}
    assert attempts == []
    assert page.errors == []
    # the view in the kernel was left as it was
    assert view.spec == ["x", "y"]
    assert view.array.sharding.spec == P("x", "y")


def test_author_variants_budget_and_errors(tmp_path, view):
    r = view.save_html(
        tmp_path / "a.html",
        variants=[{"spec": ["x", None]}, {"mesh_shape": [4, 2], "spec": ["x", "y"]}],
    )
    assert r.variants == 3
    small = view.save_html(tmp_path / "b.html", variants="specs", budget=20_000)
    assert small.skipped > 0
    assert small.variants + small.skipped == 11
    assert "left out to stay within 20,000 bytes" in str(small)
    with pytest.raises(ValueError, match=r"variant 1 .*'z' is not in the mesh"):
        view.save_html(tmp_path / "c.html", variants=[{"spec": ["x", None]}, {"spec": ["z"]}])
    with pytest.raises(ValueError, match="unknown key 'spce'"):
        view.save_html(tmp_path / "c.html", variants=[{"spce": ["x"]}])
    assert view.array.sharding.spec == P("x", "y")


def test_display_bundle_carries_a_static_snapshot(view):
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert "<script" not in html
    (svg,) = svgs_in(html)
    assert svg.count('<g class="block">') == 8
    assert "float32[64@x,32@y]" in html


@pytest.mark.slow
def test_nbconvert_html_shows_the_snapshot(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import jax\njax.config.update('jax_num_cpu_devices', 8)\n"
            "import jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
            "from shardwidget import ShardView\n"
            "mesh = jax.make_mesh((2, 4), ('x', 'y'))\n"
            "ShardView(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('x', 'y'))))"
        )
    ]
    src = tmp_path / "nb.ipynb"
    nbformat.write(nb, src)
    from ipykernel.kernelspec import install

    prefix = tmp_path / "kernel"
    install(prefix=str(prefix), kernel_name="python3")  # this interpreter, found first
    env = {
        **os.environ,
        "JUPYTER_PATH": str(prefix / "share" / "jupyter"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "JAX_PLATFORMS": "cpu",
    }
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "nbconvert",
        "--to",
        "html",
        "--execute",
        "--ExecutePreprocessor.kernel_name=python3",
        # As JupyterLab saves by default (no widget state): viewers then show text/html.
        "--ExecutePreprocessor.store_widget_state=False",
        str(src),
    ]
    subprocess.run(cmd, check=True, env=env, timeout=240, capture_output=True)
    out = (tmp_path / "nb.html").read_text()
    assert "shardwidget-snapshot" in out
    assert "float32[8@x,8@y]" in out
    assert sum(svg.count('<g class="block">') for svg in svgs_in(out)) >= 8


def test_saved_page_with_script_comment_text_is_not_blank(page, tmp_path, view):
    bad = "<!--<script>"
    view._on_custom_msg(
        view,
        {
            "type": "request",
            "seq": 1,
            "state": {**view.layout_state.to_wire(), "spec": [bad, None]},
        },
        [],
    )
    assert bad in view.error
    view.save_html(tmp_path / "v.html")
    open_offline(page, tmp_path / "v.html")
    assert page.errors == []
    assert blocks(page) == 8
    # the same text as an axis name, in every part of the page's data
    mesh = jax.make_mesh((2, 4), (bad, "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.ones((64, 32)), NamedSharding(mesh, P(bad, "y")))
    ShardView(x).save_html(tmp_path / "n.html", variants=[{"spec": ["y", bad]}])
    open_offline(page, tmp_path / "n.html")
    assert page.errors == []
    assert blocks(page) == 8
    assert bad in page.inner_text(".sw-root, .shardwidget")
