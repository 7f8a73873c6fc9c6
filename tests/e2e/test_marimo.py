"""examples/marimo_arrays.py served by a real ``marimo run``, in Chromium: the view renders inside
marimo's shadow DOM (Playwright's CSS selectors reach into it), its controls re-lay the array out on
the kernel, and the cell that reads the kernel's side re-runs."""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .servers import ROOT, Server, artifacts_on_failure, marimo_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

APP = ROOT / "examples" / "marimo_arrays.py"


@pytest.fixture(scope="module")
def marimo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with marimo_run(APP, tmp_path_factory.mktemp("marimo")) as server:
        yield server


@pytest.fixture
def artifacts(
    request: pytest.FixtureRequest, page: Page, marimo: Server
) -> contextlib.AbstractContextManager[pathlib.Path]:
    """``with artifacts:`` around a test's body: on failure, its screenshot and the server log."""
    return artifacts_on_failure(request.node.name, page, marimo.log)


def blocks(page: Page) -> list[str]:
    return page.locator(".shardwidget .sw-grid .sw-block").evaluate_all(
        "els => els.map(e => e.innerText.trim())"
    )


def test_marimo_app_view_and_controls(page: Page, marimo: Server, artifacts: Any) -> None:
    with artifacts:
        page.set_default_timeout(30_000)
        page.goto(marimo.url)
        view = page.locator(".shardwidget")
        expect(view).to_have_count(1, timeout=60_000)
        grid = view.locator(".sw-grid .sw-block")
        expect(grid).to_have_count(8)
        assert sorted(blocks(page)) == [str(i) for i in range(8)]
        assert view.locator(".sw-mesh .sw-dev").count() == 8  # 8 simulated CPU devices
        assert "float32[4@x,8@y]" in view.locator(".sw-typeof").inner_text()
        # the cell that shows the kernel's side
        expect(page.get_by_text("P('x', 'y') over {'x': 2, 'y': 4}")).to_be_visible()

        view.locator("[data-key=spec-1]").select_option("")  # dim 1 replicated: 2 row blocks
        expect(grid).to_have_count(2)
        assert sorted(blocks(page)) == ["0–3 ×4", "4–7 ×4"]
        assert "float32[4@x,8]" in view.locator(".sw-typeof").inner_text()
        # the cell reading the kernel's side re-ran
        expect(page.get_by_text("P('x', None) over {'x': 2, 'y': 4}")).to_be_visible()

        view.locator("[data-key=shape]").select_option("4,2")  # x now 4 ways: 4 row blocks
        expect(grid).to_have_count(4)
        ticks = [t.strip() for t in view.locator(".sw-tick-row").all_inner_texts()]
        assert ticks == ["0:1", "1:2", "2:3", "3:4"], ticks
        expect(page.get_by_text("P('x', None) over {'x': 4, 'y': 2}")).to_be_visible()
        expect(page.get_by_text("the original array is unchanged: P('x', 'y')")).to_be_visible()

        view.locator("[data-key=reset]").click()
        expect(grid).to_have_count(8)
        expect(page.get_by_text("P('x', 'y') over {'x': 2, 'y': 4}")).to_be_visible()
        widget_errors = [e for e in page.errors if "widget" in e.lower() or "sw-" in e]  # type: ignore[attr-defined]
        assert widget_errors == []
