"""A tree view's saved page (TreeView.save_html): the grids it carries for clicks on other
leaves (shared between leaves of one layout, bounded by ``budget``), and ``variants`` refused
in words."""

from __future__ import annotations

import json
import re

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.export.page import tree_page_data


@pytest.fixture
def view():
    mesh = jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2
    )
    tree = {
        f"layer{i}": {
            "w": jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data", "model"))),
            "b": jnp.zeros(8),
        }
        for i in range(20)
    }
    v = ShardView(tree, mesh=mesh)
    yield v
    v.close()


def test_every_leaf_has_a_grid_leaves_of_one_layout_share_it(view):
    data, saved, skipped = tree_page_data(view)
    answers = data["answers"]
    n = len(view.leaves)
    assert (saved, skipped) == (n, 0)
    grids = {a["grid"] for k, a in answers.items() if k.startswith("leaf:")}
    assert len(grids) <= 3  # the selected leaf's own, one per distinct layout
    # Each leaf's stored grid is its own layout: JAX's devices_indices_map of that leaf.
    for i, leaf in enumerate(view.leaves):
        lay = answers[answers[f"leaf:{i}"]["grid"]]["_layout"]
        assert lay["shape"] == list(leaf.shape)
        assert len(lay["blocks"]) == len(
            {str(ix) for ix in leaf.sharding.devices_indices_map(leaf.shape).values()}
        )
    assert data["state"]["_static"]["saved"] == n


def test_budget_bounds_the_grids_and_says_how_many(view, tmp_path):
    report = view.save_html(tmp_path / "t.html", budget=0)
    assert (report.variants, report.skipped) == (1, len(view.leaves) - 1)
    page = (tmp_path / "t.html").read_text()
    m = re.search(
        r'<script type="application/json" id="shardwidget-data">(.*?)</script>', page, re.S
    )
    assert m is not None
    assert json.loads(m.group(1))["state"]["_static"] == {
        "note": "saved page: no kernel to lay the tree out again (rules and mesh are as saved)",
        "saved": 1,
        "leaves": len(view.leaves),
    }


def test_variants_are_refused_in_words(view, tmp_path):
    with pytest.raises(TypeError, match="takes no variants: a tree page carries the tree"):
        view.save_html(tmp_path / "t.html", variants="specs")
    assert not (tmp_path / "t.html").exists()
    with pytest.raises(ValueError, match="budget must be a number of bytes"):
        view.save_html(tmp_path / "t.html", budget=-1)
