"""Build a small course page, "Sharding a matrix, step by step", from one ShardView.

    python examples/course_page.py [OUT_DIR]        # default: course/

Writes OUT_DIR/index.html, the lesson: each step's text, the Python that makes its layout
(``view.code``) and its picture (``view.snapshot()``: the view frozen at that step, hover a
block for its ranges and holders), and OUT_DIR/step-N.html, one page per step written by
``view.save_html(..., variants="specs")``: self-contained (no kernel, no network), with controls
that answer every spec of the step's mesh, shown in the lesson under "Try it". Open index.html
from disk or put the folder on any static web server. docs/teaching.md walks through it;
tests/test_docs.py runs it, and tests/e2e/test_hosts.py opens the page in Chromium with the
network cut off.
"""

from __future__ import annotations

import html
import pathlib
import sys
from typing import Any

STEPS: list[tuple[str, dict[str, Any], str]] = [
    (
        "Both dimensions split",
        {},
        "P('x', 'y') splits the rows over the mesh axis x (2 ways) and the columns over y "
        "(4 ways): eight blocks, one per device, no copies.",
    ),
    (
        "Rows over y, columns over x",
        {"spec": ["y", "x"]},
        "Swapping the axes keeps eight blocks, but now the rows are cut in four and the columns "
        "in two: every device holds a different block than before.",
    ),
    (
        "Only the rows split: copies",
        {"spec": ["x", None]},
        "With the columns not split, each half of the rows is held by the four devices along y: "
        "replication 4, and four times the bytes per device.",
    ),
    (
        "Another mesh of the same devices",
        {"mesh_shape": [4, 2], "spec": ["x", "y"]},
        "The same eight devices as a 4×2 mesh: the same spec now cuts the rows in four.",
    ),
]


def build(out: pathlib.Path) -> list[pathlib.Path]:
    """Write the course into ``out`` (created if needed); return the files written, index first.
    Needs 8 devices (simulated CPU devices will do: see main)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardwidget import ShardView

    out.mkdir(parents=True, exist_ok=True)
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))
    view = ShardView(x)
    files: list[pathlib.Path] = []
    sections: list[str] = []
    try:
        for i, (title, change, text) in enumerate(STEPS, start=1):
            if change:
                view.set_layout(**change)
            picture = view.snapshot().html  # frozen: the later steps do not change it
            page = out / f"step-{i}.html"
            report = view.save_html(page, variants="specs")
            files.append(page)
            sections.append(
                _section(i, title, text, view.code, picture, page.name, report.variants)
            )
    finally:
        view.close()
    index = out / "index.html"
    index.write_text(_page(sections), encoding="utf-8")
    return [index, *files]


def _section(
    i: int, title: str, text: str, code: str, picture: str, page: str, n_layouts: int
) -> str:
    return f"""
<section id="step-{i}">
  <h2>{i}. {html.escape(title)}</h2>
  <p>{html.escape(text)}</p>
  <pre><code>{html.escape(code)}</code></pre>
  <figure>{picture}</figure>
  <details>
    <summary>Try it: this step with working controls ({n_layouts} layouts of this mesh, no
    kernel)</summary>
    <iframe src="{page}" title="step {i}: {html.escape(title)}"></iframe>
  </details>
  <p class="try"><a href="{page}">Open step {i} on its own page</a></p>
</section>"""


def _page(sections: list[str]) -> str:
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sharding a matrix, step by step</title>
<style>
  body {{ font: 15px/1.5 system-ui, sans-serif; max-width: 980px; margin: 2em auto; }}
  pre {{ background: #f6f8fa; padding: 0.8em; overflow-x: auto; }}
  iframe {{ width: 100%; height: 960px; border: 1px solid #ddd; }}
  figure {{ margin: 1em 0; }}
</style>
</head>
<body>
<h1>Sharding a matrix, step by step</h1>
<p>An 8×8 array on 8 devices, laid out four ways. Each step shows the Python that makes the
layout and a picture of it (hover a block for its ranges and holders); open "Try it" to change
the layout yourself.</p>
{"".join(sections)}
</body>
</html>
"""


def main(argv: list[str]) -> int:
    import jax

    jax.config.update("jax_num_cpu_devices", 8)  # before anything starts JAX's backend
    out = pathlib.Path(argv[0] if argv else "course")
    for f in build(out):
        print(f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
