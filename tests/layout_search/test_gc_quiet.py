"""A search freezes the kernel's existing objects while it runs (``gc.freeze``), so Python's
full collections walk only what the search made and the kernel answers a cell meanwhile
(``benchmarks/search.py`` measures the wait); it thaws them when the last search ends, leaves
a kernel's own freeze alone, and a view the user holds is still seen as held by the re-run
check while objects are frozen (``gc.get_referrers`` does not look at frozen objects)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AbstractMesh, AxisType

from shardwidget.layout_search import gc_quiet, run, search
from shardwidget.views import rerun

X = jax.ShapeDtypeStruct((8, 16), jnp.float32)
W = jax.ShapeDtypeStruct((16, 16), jnp.float32)
MESH = AbstractMesh((8,), ("x",), axis_types=(AxisType.Auto,))


def step(w: jax.Array, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w).sum()


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    assert gc.get_freeze_count() == 0, "a test before left objects frozen"
    yield
    gc.unfreeze()


def test_a_search_freezes_while_it_runs_and_thaws_after() -> None:
    run.clear_cache()
    seen: list[int] = []
    lock = threading.Lock()

    def listen(s: run.Search) -> None:
        if not s.done:
            with lock:
                seen.append(gc.get_freeze_count())

    s = search(step, W, X, mesh=MESH, workers=1, wait=False)
    s.on_result(listen)
    s.wait(600)
    assert s.progress.state == "done" and s.results, s.progress
    assert seen and min(seen) > 0, seen  # frozen while results came in
    assert gc.get_freeze_count() == 0  # thawed after


def test_searches_at_once_share_one_freeze() -> None:
    with gc_quiet.old_objects_frozen():
        n = gc.get_freeze_count()
        assert n > 0
        with gc_quiet.old_objects_frozen():  # a second search starts
            assert gc.get_freeze_count() >= n
        assert gc.get_freeze_count() >= n  # the first still runs: still frozen
    assert gc.get_freeze_count() == 0


def test_a_kernels_own_freeze_is_left_alone() -> None:
    gc.freeze()
    n = gc.get_freeze_count()
    run.clear_cache()
    s = search(step, W, X, mesh=MESH, workers=1)
    assert s.results
    # not thawed (thawing empties it); the count moves only by frozen objects freed since
    assert 0.9 * n < gc.get_freeze_count() <= n


class _View:
    """Stands in for a view: what the re-run check asks is who refers to it."""


@pytest.mark.parametrize("who", ["a search", "the kernel"])
def test_a_view_the_user_holds_is_seen_held_while_objects_are_frozen(
    who: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(rerun, "_views", [])
    view = _View()
    namespace = {"view": view}  # `view = ShardView(...)` in the user's namespace
    if who == "a search":
        with gc_quiet.old_objects_frozen():
            assert rerun._held_by_user(view)  # (any object will do)
    else:
        gc.freeze()
        assert rerun._held_by_user(view)  # (any object will do)
    assert namespace["view"] is view


def test_a_search_refused_at_its_start_leaves_nothing_frozen() -> None:
    with pytest.raises((TypeError, ValueError)):
        search(step, W, X, mesh="not a mesh", workers=1)
    assert gc.get_freeze_count() == 0
