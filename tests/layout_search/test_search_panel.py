"""The search panel's payload (a function view's ``_search``) against the search it shows:
one row per compiled candidate in the search's own ranking, each figure the candidate's
(its peak the compiler's, bytes moved its collectives' bytes), republished as results stream
in; a click (``search_apply``) lays the view out as that row's candidate, undo restores, and a
stale id is refused in words."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import shardwidget as sw
from shardwidget.layout_search import Search, run
from tests.layout_search.test_view_search import loss

PARAMS = {"w1": jnp.ones((16, 32)), "w2": jnp.ones((32, 16))}
X = jnp.ones((8, 16))


@pytest.fixture(scope="module")
def searched() -> tuple[sw.FunctionView, Search]:
    run.clear_cache()
    view = sw.ShardView(loss, PARAMS, X)
    assert view._search["state"] == "none" and view._search["rows"] == []
    return view, view.search(workers=2)


def test_the_rows_are_the_ranked_candidates(searched: tuple[sw.FunctionView, Search]) -> None:
    view, s = searched
    w = view._search
    assert (w["state"], w["done"], w["total"]) == ("done", s.progress.total, s.progress.total)
    assert w["hbm"] == s.target.hbm_bytes(s.hardware)[0] and w["hardware"] == s.hardware.name
    assert [r["name"] for r in w["rows"]] == [c.name for c in s.results]
    for r, c in zip(w["rows"], s.results, strict=True):
        assert s.arrived[r["id"]] is c
        assert (r["fits"], r["peak"], r["step_s"]) == (c.fits, c.peak, c.step_time)
        assert r["peak"] == c.plan.peak_bytes and r["peak_is_totals"] == (c.plan.peak is None)
        assert r["moved"] == sum(x.bytes for x in c.plan.collectives)
        shape = dict(zip(c.axis_names, c.mesh_shape, strict=True))
        assert r["layout"] == " × ".join(f"{a}={n}" for a, n in shape.items())
    assert len({r["moved"] for r in w["rows"]}) > 1  # the layouts move different bytes


def test_a_click_applies_that_row_and_undo_restores(
    searched: tuple[sw.FunctionView, Search],
) -> None:
    view, s = searched
    before = (list(view.mesh_shape), list(view.axis_names), list(view.in_specs))
    row = view._search["rows"][-1]  # the last ranked: not the layout the view started with
    view._on_custom_msg(view, {"type": "search_apply", "id": row["id"]}, [])
    cand = s.arrived[row["id"]]
    assert view.error == ""
    assert (tuple(view.mesh_shape), tuple(view.axis_names)) == (cand.mesh_shape, cand.axis_names)
    assert view.trace is not None and tuple(view.trace.state.mesh_shape) == cand.mesh_shape
    view.undo()
    assert (list(view.mesh_shape), list(view.axis_names), list(view.in_specs)) == before


def test_a_stale_id_is_refused_in_words(searched: tuple[sw.FunctionView, Search]) -> None:
    view, s = searched
    shown = list(view.mesh_shape)
    view._on_custom_msg(view, {"type": "search_apply", "id": 10_000}, [])
    assert view.error == f"no candidate 10000 in the newest search ({len(s.arrived)} so far)"
    assert list(view.mesh_shape) == shown


def test_results_stream_into_the_panel() -> None:
    """Without a kernel, what the search's threads hand over is taken when the view is next
    read: each read shows the search as it stands then, and the last one all of it."""
    run.clear_cache()
    view = sw.ShardView(loss, PARAMS, X)
    s = view.search(workers=1, wait=False)
    seen = []
    while not s.done:
        s.wait(0.5)
        _ = view.trace  # a read takes the publishes handed over meanwhile
        seen.append((view._search["done"], len(view._search["rows"])))
    _ = view.trace
    assert view._search["done"] == s.progress.total == len(view._search["rows"])
    assert view._search["state"] == "done"
    assert seen == sorted(seen)  # never a step back
    assert all(done == rows for done, rows in seen)  # each publish one consistent snapshot
