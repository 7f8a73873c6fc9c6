"""What the docs claim about hosts, checked in Chromium: in a real ``marimo run``, a plain
``ShardView(arr)`` as a cell's last expression (no ``mo.ui.anywidget``) renders and its
controls re-lay the array out on the kernel (docs/hosts.md); the course page of
docs/teaching.md works from disk with no network."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .servers import ROOT, Server, artifacts_on_failure, marimo_run

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


def test_course_page_works_offline(page: Page, tmp_path: pathlib.Path) -> None:
    """examples/course_page.py (docs/teaching.md): the course page, opened from disk with every
    request outside the folder refused, shows each step's layout, live in its frame."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_page", ROOT / "examples/course_page.py")
    assert spec is not None and spec.loader is not None
    course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(course)
    index, *steps = course.build(tmp_path / "course")
    outside: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(("file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(index.as_uri())
    assert len(steps) == 4
    expect(page.locator("figure .shardwidget-snapshot img")).to_have_count(4)  # the pictures
    for i, blocks in enumerate([8, 8, 2, 8], start=1):
        page.locator(f"#step-{i} summary").click()  # "Try it": the step's saved page
        frame = page.frame_locator(f"#step-{i} iframe")
        expect(frame.locator(".shardwidget .sw-grid .sw-block")).to_have_count(blocks)
    # step 2's frame answers its controls from the page: P('y', 'x') -> P('y', None)
    frame = page.frame_locator("#step-2 iframe")
    frame.locator("[data-key=spec-1]").select_option("")
    expect(frame.locator(".sw-typeof")).to_contain_text("float32[8@y,8]")
    expect(frame.locator(".shardwidget .sw-grid .sw-block")).to_have_count(4)
    if SHOTS.parent.is_dir():
        SHOTS.mkdir(exist_ok=True)
        page.locator("#step-3 figure").scroll_into_view_if_needed()
        page.wait_for_timeout(300)  # the first paint after scrolling, for the screenshot
        page.screenshot(path=str(SHOTS / "course_page.png"), full_page=False)
        page.locator("#step-3 iframe").scroll_into_view_if_needed()
        frame = page.frame_locator("#step-3 iframe")
        expect(frame.locator(".shardwidget .sw-grid .sw-block")).to_have_count(2)
        page.wait_for_timeout(300)
        page.screenshot(path=str(SHOTS / "course_page_try.png"), full_page=False)
    assert outside == []
