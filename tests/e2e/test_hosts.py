"""What docs/hosts.md claims about marimo, checked in a real ``marimo run`` in Chromium: a plain
``ShardView(arr)`` as a cell's last expression (no ``mo.ui.anywidget``) renders, and its
controls re-lay the array out on the kernel."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .servers import Server, artifacts_on_failure, marimo_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

APP = pathlib.Path(__file__).with_name("marimo_plain_app.py")
SHOTS = pathlib.Path("/work/shots/perfdocs")


@pytest.fixture(scope="module")
def marimo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with marimo_run(APP, tmp_path_factory.mktemp("marimo_plain")) as server:
        yield server


def test_plain_shardview_is_a_marimo_cell_output(
    request: pytest.FixtureRequest, page: Page, marimo: Server
) -> None:
    artifacts: Any = artifacts_on_failure(request.node.name, page, marimo.log)
    with artifacts:
        page.set_default_timeout(30_000)
        page.goto(marimo.url)
        view = page.locator(".shardwidget")
        expect(view).to_have_count(1, timeout=60_000)
        grid = view.locator(".sw-grid .sw-block")
        expect(grid).to_have_count(8)
        assert "float32[4@x,8@y]" in view.locator(".sw-typeof").inner_text()
        if SHOTS.parent.is_dir():
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / "marimo_plain_shardview.png"), full_page=True)
        view.locator("[data-key=spec-1]").select_option("")  # the kernel re-lays it out
        expect(grid).to_have_count(2)
        expect(view.locator(".sw-typeof")).to_contain_text("float32[4@x,8]")
