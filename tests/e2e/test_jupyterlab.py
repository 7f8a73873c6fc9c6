"""The example notebook in a real JupyterLab, in Chromium: every view renders, and the controls of a
4096×4096 view re-lay the array out on the kernel, fast.

One server and one browser page for the module: the notebook is run once, and the tests then use
its last view (``bigview``) in order. Each test leaves a screenshot, the console errors and the
server log in ``test-artifacts/<test name>/`` when it fails.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from playwright.sync_api import Locator, Page, expect

from .jupyter_page import CELL_TEXT, blocks, new_page, open_and_run_all, run_cell, widget_errors
from .servers import ARTIFACTS, ROOT, Server, artifacts_on_failure, jupyter_lab

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NOTEBOOK = ROOT / "examples" / "01_arrays.ipynb"

BIG = """\
big = jax.device_put(
    jnp.zeros((4096, 4096), jnp.float32),
    NamedSharding(jax.make_mesh((2, 4), ("x", "y")), P("x", "y")),
)
bigview = ShardView(big)
bigview"""

# Set a <select> of the view the way a user does, and time it until the grid's blocks change.
TIME_SELECT = """(root, [key, value]) => new Promise((resolve, reject) => {
  const grid = root.querySelector('.sw-grid');
  const blocks = () => [...root.querySelectorAll('.sw-grid .sw-block')]
    .map((b) => b.innerText.trim()).join('|');
  const before = blocks();
  const sel = root.querySelector(`[data-key="${key}"]`);
  let t0 = 0;
  const obs = new MutationObserver(() => {
    if (blocks() === before) return;
    const dom = performance.now() - t0;
    obs.disconnect();
    clearTimeout(timer);
    requestAnimationFrame(() => resolve({dom, frame: performance.now() - t0}));
  });
  obs.observe(root, {childList: true, subtree: true, characterData: true});
  const timer = setTimeout(() => { obs.disconnect(); reject(new Error('grid did not change')); },
                           15000);
  t0 = performance.now();
  sel.value = value;
  sel.dispatchEvent(new Event('input', {bubbles: true}));
  sel.dispatchEvent(new Event('change', {bubbles: true}));
})"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "root"
    root.mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(BIG, id="e2e-big"))
    nb.cells.append(
        nbformat.v4.new_code_cell(
            'print("spec:", bigview.spec)\nprint("sharding:", bigview.array.sharding)',
            id="e2e-print",
        )
    )
    nbformat.write(nb, root / "e2e.ipynb")
    with jupyter_lab(root, tmp / "server") as server:
        yield server


@pytest.fixture(scope="module")
def nb_page(browser: Any, lab: Server) -> Iterator[Page]:
    """The notebook open in JupyterLab, run top to bottom, every view rendered."""
    page = new_page(browser)
    opened: dict[str, Any] = {}
    with artifacts_on_failure("jupyterlab-open", page, lab.log):
        open_and_run_all(page, lab.url + "lab/tree/e2e.ipynb")
        nb = nbformat.read(NOTEBOOK, as_version=4)
        opened["views"] = sum(1 for c in nb.cells if str(c.get("id")).startswith("view-")) + 1
        expect(page.locator(".shardwidget")).to_have_count(opened["views"], timeout=30_000)
    page.opened = opened  # type: ignore[attr-defined]
    page.server_log = lab.log  # type: ignore[attr-defined]  # for `artifacts`
    yield page
    page.context.close()


def big_view(page: Page) -> Locator:
    view = page.locator(".shardwidget", has=page.locator(".sw-typeof", has_text="4096"))
    expect(view).to_have_count(1)
    view.scroll_into_view_if_needed()
    return view


def reset_big(page: Page) -> Locator:
    """Back to the original layout (P('x', 'y') on a 2×4 mesh) through the Reset button."""
    view = big_view(page)
    state = "print(bigview.spec, bigview.mesh_shape, bigview.axis_names)"
    original = "['x', 'y'] [2, 4] ['x', 'y']"
    if view.locator(".sw-grid .sw-block").count() != 8 or run_cell(page, state) != original:
        view.locator("[data-key=reset]").click()
        expect(view.locator(".sw-grid .sw-block")).to_have_count(8)
        out = run_cell(page, state)
        assert out == original, out
    return view


# --------------------------------------------------------------------------------------- tests
def test_notebook_runs_and_every_view_renders(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        assert page.locator(".jp-OutputArea-output[data-mime-type*=error]").count() == 0
        assert page.locator(".shardwidget").count() == page.opened["views"]  # type: ignore[attr-defined]
        # the 2×4 NamedSharding view of section 2: 8 blocks, devices 0..7
        named = page.locator(
            ".shardwidget", has=page.locator(".sw-typeof", has_text="float32[4@x,8@y]")
        )
        assert sorted(blocks(named.first)) == [str(i) for i in range(8)]
        view = big_view(page)
        assert sorted(blocks(view)) == [str(i) for i in range(8)]
        ticks = view.locator(".sw-tick-row").all_inner_texts()
        assert [t.strip() for t in ticks] == ["0:2048", "2048:4096"]
        assert view.locator(".sw-mesh .sw-dev").count() == 8
        assert "float32[4096@x,4096@y]" in view.locator(".sw-typeof").inner_text()
        printed = page.evaluate(CELL_TEXT, "e2e-print")  # the notebook's own last cell
        assert "spec: ['x', 'y']" in printed, printed
        assert "sharding: NamedSharding(" in printed and "spec=P('x', 'y')" in printed, printed
        out = run_cell(page, "print(len(jax.devices()), bigview.spec)")
        assert out == "8 ['x', 'y']", out
        assert widget_errors(page) == []


def test_controls_relayout_on_the_kernel(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        view = reset_big(page)
        view.locator("[data-key=spec-1]").select_option("")  # dim 1 replicated: 2 row blocks
        expect(view.locator(".sw-grid .sw-block")).to_have_count(2)
        # devices 0–3 hold rows 0:2048 (4 copies), devices 4–7 the rest
        assert sorted(blocks(view)) == ["0–3 ×4", "4–7 ×4"]
        assert "float32[4096@x,4096]" in view.locator(".sw-typeof").inner_text()
        view.locator("[data-key=shape]").select_option("4,2")  # x now 4 ways: 4 row blocks
        expect(view.locator(".sw-grid .sw-block")).to_have_count(4)
        ticks = [t.strip() for t in view.locator(".sw-tick-row").all_inner_texts()]
        assert ticks == ["0:1024", "1024:2048", "2048:3072", "3072:4096"], ticks
        assert view.locator(".sw-mesh .sw-dev").count() == 8
        # what the page shows is what the kernel holds
        out = run_cell(
            page,
            "s = bigview.array.sharding\n"
            "print('spec:', bigview.spec, bigview.mesh_shape)\n"
            "print('sharding:', s.spec, dict(s.mesh.shape))\n"
            "print('blocks:', len(bigview.layout.blocks))",
        )
        assert "spec: ['x', None] [4, 2]" in out, out
        assert "sharding: P('x', None) {'x': 4, 'y': 2}" in out, out
        assert "blocks: 4" in out, out
        assert widget_errors(page) == []


def test_click_to_grid_time(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        view = reset_big(page)
        dom: list[float] = []
        frame: list[float] = []
        for value, n in [("", 2), ("y", 8)] * 4:
            t = view.evaluate(TIME_SELECT, ["spec-1", value])
            expect(view.locator(".sw-grid .sw-block")).to_have_count(n)
            dom.append(t["dom"])
            frame.append(t["frame"])
        # the kernel agrees with the last picture
        out = run_cell(page, "print(bigview.array.sharding.spec)")
        assert out == "P('x', 'y')", out
        med, med_frame = statistics.median(dom), statistics.median(frame)
        line = (
            f"click → updated grid, 4096×4096 float32 on a 2×4 mesh, dim 1 'y' ↔ None, "
            f"{len(dom)} changes: median {med:.0f} ms to the DOM, {med_frame:.0f} ms to the next "
            f"frame (all, ms: {', '.join(f'{x:.0f}' for x in dom)})"
        )
        print("\n" + line)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "click_to_grid.txt").write_text(line + "\n")
        assert med < 1500, line  # the aim is ≤ 150 ms; the bound is loose so that CI is not flaky


def test_invalid_choices_are_explained_and_keep_the_view(nb_page: Page, artifacts: Any) -> None:
    with artifacts:
        page = nb_page
        view = reset_big(page)
        before = blocks(view)
        # The controls explain a duplicate axis name, and send nothing.
        name1 = view.locator("[data-key=name-1]")
        name1.fill("x")
        name1.press("Enter")
        expect(name1).to_have_attribute("aria-invalid", "true")
        assert '"x" is already used' in (name1.get_attribute("title") or "")
        assert run_cell(page, "print(bigview.axis_names, bigview.spec)") == "['x', 'y'] ['x', 'y']"
        name1.fill("y")
        name1.press("Enter")
        expect(name1).not_to_have_attribute("aria-invalid", "true")
        # A request the kernel refuses, sent the way the front end sends one: message, same view.
        bad = {
            "mesh_shape": [2, 4],
            "axis_names": ["x", "y"],
            "axis_types": ["auto", "auto"],
            "spec": ["y", "y"],
            "memory_kind": "device",
        }
        out = run_cell(
            page,
            f"bigview._on_custom_msg(bigview, "
            f"{{'type': 'request', 'seq': bigview._last_seq + 1, 'state': {bad!r}}}, [])\n"
            "print('error:', bigview.error)",
        )
        assert "'y' is used by dimensions 0 and 1" in out, out
        banner = view.locator(".sw-error")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("used by dimensions 0 and 1")
        assert blocks(view) == before
        # The kernel is alive, and the array is the one it was.
        out = run_cell(page, "print(bigview.array is big, bigview.spec, 1 + 1)")
        assert out == "True ['x', 'y'] 2", out
        # The controls still work, and a good layout clears the message.
        view.locator("[data-key=spec-1]").select_option("")
        expect(view.locator(".sw-grid .sw-block")).to_have_count(2)
        expect(banner).to_be_hidden()
        assert widget_errors(page) == []


def test_function_view_recompiles_on_the_kernel(nb_page: Page, artifacts: Any) -> None:
    """ShardView(f, x) in JupyterLab: the collectives table, and a spec control that re-compiles
    f in the kernel (checked from a following cell)."""
    with artifacts:
        page = nb_page
        out = run_cell(
            page,
            "from IPython.display import display\n"
            "def f_contract(a):\n    return a.sum(axis=0)\n"
            "fv = ShardView(f_contract, big)\ndisplay(fv)",
        )
        assert "Error" not in out, out
        view = page.locator(".shardwidget:has(.sw-tr-leaf)", has_text="f_contract")
        expect(view).to_have_count(1)
        expect(view.locator("tr[data-kind='all-reduce']")).to_have_count(1)
        view.scroll_into_view_if_needed()
        assert "f_contract" in view.inner_text()
        view.locator("select[data-key='in-0-dim-0']").select_option("")
        expect(view.locator("tr[data-kind]")).to_have_count(0, timeout=30_000)
        expect(view).to_contain_text("No collectives")
        state = run_cell(page, "print(fv.in_specs, [c.kind for c in fv.trace.collectives])")
        assert state == "[[None, 'y']] []", state
        assert widget_errors(page) == []


def test_tree_view_on_the_kernel(nb_page: Page, artifacts: Any) -> None:
    """ShardView(tree) in JupyterLab: a leaf click, a rules edit and the hardware picker reach
    the kernel through the real widget manager (checked from following cells)."""
    with artifacts:
        page = nb_page
        out = run_cell(
            page,
            "from IPython.display import display\n"
            "tmesh = jax.make_mesh((4, 2), ('data', 'model'))\n"
            "tree = {'embed': jax.device_put(jnp.ones((512, 64)), NamedSharding(tmesh, P())),\n"
            "        'w': jnp.ones((64, 128)), 'step': 3}\n"
            "tv = ShardView(tree, mesh=tmesh)\ndisplay(tv)",
        )
        assert "Error" not in out, out
        view = page.locator(".shardwidget.sw-tree")
        expect(view).to_have_count(1)
        view.scroll_into_view_if_needed()
        view.locator(".sw-tree-row[data-leaf='1']").click()
        expect(view.locator(".sw-tree-leafhead")).to_contain_text("['w']")
        assert run_cell(page, "print(tv.selected)") == "1"
        view.locator("textarea[data-key='tree-rules']").fill(
            "embed  P('data')\nw  P(None, 'model')"
        )
        expect(view.locator(".sw-tree-row[data-leaf='0'] .sw-tree-spec")).to_have_text(
            "P('data', None)", timeout=30_000
        )
        rules = run_cell(page, "print(tv.rules)")
        assert rules == "[('embed', P('data',)), ('w', P(None, 'model'))]"
        view.locator("select[data-key='tree-hw']").select_option("tpu-v5e")
        expect(view.locator(".sw-tree-mem-note")).to_contain_text("tpu-v5e")
        # trait sync: ipywidgets may hold an update back until the kernel is idle again
        seen = [run_cell(page, "print(tv.hardware)") for _ in range(3)]
        assert seen[-1] == "tpu-v5e", seen
        assert widget_errors(page) == []
