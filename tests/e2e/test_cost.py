"""The cost parts in Chromium, driven by real views (issue 12): the array view's "moved" line,
heat and reshard collectives after a spec change; the function view's estimated time, its
hardware dropdown, and hovering a collective lighting its device groups; a saved page."""

import os
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.cost import reshard
from shardwidget.cost.estimate import fmt_seconds
from shardwidget.model.units import fmt_bytes

from .harness import STATIC, Loop, page_html, state_of

pytestmark = pytest.mark.e2e

# Screenshots for people to look at (not compared): SHARDWIDGET_SHOTS=dir keeps them there.
SHOTS = os.environ.get("SHARDWIDGET_SHOTS", "")


def shot(page, name):
    if SHOTS:
        pathlib.Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(pathlib.Path(SHOTS) / f"{name}.png"), full_page=True)


def js_bytes(n):
    """Bytes as the renderer writes them (fmt_bytes follows formatBytes; kept for old ".0")."""
    return fmt_bytes(n).replace(".0 ", " ")


def open_view(page, tmp_path, view):
    assert STATIC.exists(), "the JS bundle is missing: npm run build"
    f = tmp_path / "view.html"
    f.write_text(page_html(view))
    page.goto(f.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    return Loop(view, page)


def settle(page, loop):
    """Wait for the page's request and answer it as the kernel would."""
    for _ in range(200):
        page.wait_for_timeout(20)
        if loop.pump():
            page.wait_for_timeout(50)
            return
    raise AssertionError("the page sent no request")


def received_from_jax(old, new, shape, itemsize):
    """Bytes each device must receive: the elements of its new block it did not hold before,
    from devices_indices_map alone."""
    old_map = old.devices_indices_map(shape)
    new_map = new.devices_indices_map(shape)
    out = {}
    for d, idx in new_map.items():
        want = np.zeros(shape, bool)
        want[idx] = True
        had = np.zeros(shape, bool)
        had[old_map[d]] = True
        out[d.id] = int((want & ~had).sum()) * itemsize
    return out


def colours(page, scope):
    """Device id -> the background its cell shows under `scope` (a selector or a locator)."""
    loc = page.locator(scope) if isinstance(scope, str) else scope
    js = "el => [...el.querySelectorAll('.sw-dev')].map(e => [Number(e.dataset.device), e.style.background])"
    return dict(loc.evaluate(js))


def assert_lit(page, scope, groups, before):
    """One colour per group, a different one for each; devices in no group as they were."""
    now = colours(page, scope)
    for g in groups:
        assert len({now[d] for d in g}) == 1, (g, now)
    assert len({now[g[0]] for g in groups}) == len(groups)
    for d in set(now) - {d for g in groups for d in g}:
        assert now[d] == before[d]


def test_array_view_moved_line_heat_partners_and_groups(page, tmp_path):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32), NamedSharding(mesh, P("x", "y")))
    view = ShardView(x)
    reshard.clear_cache()  # the pair below is compiled here, as the page asks
    compiled = reshard.stats["compiles"]
    loop = open_view(page, tmp_path, view)
    assert "nothing moves" in page.inner_text(".sw-moved")
    assert page.is_hidden(".sw-xfer")

    page.select_option("[data-key=spec-1]", "")  # dim 1 replicated: all-gather over y
    settle(page, loop)
    assert view.spec == ["x", None] or tuple(view.spec) == ("x", None)
    want = received_from_jax(x.sharding, NamedSharding(mesh, P("x", None)), x.shape, 4)
    assert view.transfer.received == want
    total = sum(want.values())
    assert view.transfer.total == total
    line = page.inner_text(".sw-moved")
    assert fmt_bytes(total) in line, line
    # Closed, the reshard is not compiled (issue 38): the bytes only, nothing said to follow.
    assert "all-gather" not in line and "compiling" not in line, line
    assert view._transfer["status"] == "pending" and reshard.stats["compiles"] == compiled
    page.click("[data-key=transfer-open]")
    assert page.get_attribute("[data-key=transfer-open]", "aria-expanded") == "true"
    view.cost_open = True  # what the widget manager syncs to the kernel
    page.evaluate("(p) => window.__push(p)", state_of(view))
    page.wait_for_function("document.querySelector('.sw-moved').innerText.includes('all-gather')")
    assert reshard.stats["compiles"] == compiled + 1
    assert page.errors == []

    # Heat: bytes in, with its key up to the most any device receives.
    page.click("[data-key=heat-in]")
    assert js_bytes(max(want.values())) in page.inner_text(".sw-heat-key")
    # Hover device 0: whom it receives from, with bytes, and those devices outlined.
    page.hover(".sw-mesh .sw-dev[data-device='0']")
    text = page.inner_text(".sw-xfer-pairs")
    assert f"receives {js_bytes(want[0])}" in text, text
    senders = sorted({s for s, r, _ in view.transfer.pairs if r == 0})
    assert senders
    got = page.eval_on_selector_all(
        ".sw-mesh .sw-dev.sw-recvfrom", "els => els.map(e => Number(e.dataset.device))"
    )
    assert sorted(got) == senders
    shot(page, "array_heat_hover")

    # The reshard's collectives: hovering one lights its device groups.
    colls = view.transfer.collectives
    assert colls, "XLA compiles an all-gather for this reshard"
    rows = page.locator(".sw-xfer .sw-tr-coll-row")
    assert rows.count() == len(colls)
    page.mouse.move(0, 0)
    page.click("[data-key=heat-off]")
    before = colours(page, ".sw-main .sw-mesh")
    rows.nth(0).hover()
    assert_lit(page, ".sw-main .sw-mesh", colls[0].groups, before)
    assert set(colours(page, ".sw-main .sw-mesh").values()) != set(before.values())
    est = view.transfer.estimate(view.hardware)
    assert f"total {fmt_seconds(est.total_s)}" in page.inner_text(".sw-xfer")
    shot(page, "array_collective_hover")

    # The dropdown writes `hardware`; the kernel answers with the reshard's time on that preset.
    page.select_option(".sw-xfer select[data-key=transfer-hardware]", "a100")
    view.hardware = page.eval_on_selector(".sw-xfer select", "s => s.value")  # synced
    page.evaluate("(p) => window.__push(p)", state_of(view))
    a100 = view.transfer.estimate("a100")
    page.wait_for_function(
        "(t) => document.querySelector('.sw-xfer').innerText.includes(t)",
        arg=f"total {fmt_seconds(a100.total_s)}",
    )
    assert "estimating" not in page.inner_text(".sw-xfer")


def test_function_view_estimate_dropdown_and_groups(page, tmp_path):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("y", None)))
    view = ShardView(lambda a, b: a @ b, a, b)  # contracts over a sharded J: a reduction over y
    assert view.trace is not None, view.error
    loop = open_view(page, tmp_path, view)
    est = view.trace.estimate(view.hardware)
    sec = page.locator("section", has=page.locator(".sw-est"))
    assert "Estimated time" in sec.inner_text()
    bars = page.locator(".sw-est .sw-est-row:not(.sw-est-axisrow)")
    assert bars.count() == len(est.parts())
    assert f"total {fmt_seconds(est.total_s)}" in sec.inner_text()
    assert view._estimate["fits_text"] in sec.inner_text()

    colls = view.trace.collectives
    assert colls
    # The mesh is drawn once, on the cards: the Communication section keeps only its caption.
    assert page.locator(".sw-tr-devices .sw-dev").count() == 0
    meshes = page.locator(".sw-tr-leaf .sw-mesh")
    assert meshes.count() == 3
    before = colours(page, meshes.nth(0))
    page.locator(".sw-tr-coll-row").nth(0).hover()
    assert colls[0].kind in page.inner_text(".sw-tr-devices-caption")
    for i in range(meshes.count()):  # every card's mesh lights the groups
        assert_lit(page, meshes.nth(i), colls[0].groups, {})
    shot(page, "function_estimate_hover")
    page.mouse.move(0, 0)
    assert colours(page, meshes.nth(0)) == before

    # The dropdown: the page writes `hardware`; the kernel answers with that preset's estimate.
    page.select_option("section select[data-key=hardware]", "h100")
    chosen = page.eval_on_selector("section select[data-key=hardware]", "s => s.value")
    view.hardware = chosen  # what the widget manager syncs
    page.evaluate("(p) => window.__push(p)", state_of(view))
    page.wait_for_timeout(50)
    h100 = view.trace.estimate("h100")
    assert view._estimate["hardware"] == "h100"
    assert f"total {fmt_seconds(h100.total_s)}" in sec.inner_text()
    assert "estimating" not in sec.inner_text()
    assert page.errors == []
    del loop


def test_saved_page_shows_the_cost(page, tmp_path):
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32), NamedSharding(mesh, P("x", "y")))
    view = ShardView(x)
    view.cost_open = True
    view.spec = ["y", "x"]
    assert view._transfer["status"] == "ready"
    path = tmp_path / "saved.html"
    view.save_html(path, variants=[{"spec": ["x", "y"]}, {"spec": ["x", None]}])
    page.goto(path.as_uri())
    page.wait_for_function("window.__ready === true", timeout=15000)
    assert fmt_bytes(view.transfer.total) in page.inner_text(".sw-moved")
    assert page.locator(".sw-xfer .sw-est").count() == 1
    # No kernel to estimate another preset: the dropdown says so.
    assert page.is_disabled(".sw-xfer select")
    assert page.errors == []
    shot(page, "saved_array")
    # Back to the original (a layout the page carries): nothing moves, in words.
    page.click("text=Reset")
    page.wait_for_function("document.querySelector('.sw-typeof').textContent.includes('64@x')")
    assert "nothing moves" in page.inner_text(".sw-moved")
    assert page.is_hidden(".sw-xfer")
    # A layout the page carries but not its transfer: said in words.
    page.select_option("[data-key=spec-1]", "")
    page.wait_for_function("document.querySelector('.sw-typeof').textContent.includes('32]')")
    assert "not saved in this page" in page.inner_text(".sw-moved")


# ------------------------------------------------------------------ a real kernel in JupyterLab
CELL = """\
import jax, jax.numpy as jnp
jax.config.update("jax_num_cpu_devices", 8)
from jax.sharding import NamedSharding, PartitionSpec as P
from shardwidget import ShardView
x = jax.device_put(jnp.arange(64.0 * 32).reshape(64, 32),
                   NamedSharding(jax.make_mesh((2, 4), ("x", "y")), P("x", "y")))
cv = ShardView(x)
cv"""


@pytest.mark.slow
def test_jupyterlab_relayout_and_hardware_sync(browser, tmp_path):
    """Through anywidget's real model: a spec change brings the moved line, then (compiled on
    the kernel's event loop) the collectives; the dropdown sets the kernel's `hardware`."""
    import nbformat
    from playwright.sync_api import expect

    from .jupyter_page import new_page, open_and_run_all, run_cell
    from .servers import artifacts_on_failure, jupyter_lab

    root = tmp_path / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(CELL, id="cost"))
    nbformat.write(nb, root / "cost.ipynb")
    with jupyter_lab(root, tmp_path / "server") as lab:
        page = new_page(browser, 1300)
        with artifacts_on_failure("jupyterlab-cost", page, lab.log):
            open_and_run_all(page, lab.url + "lab/tree/cost.ipynb")
            view = page.locator(".shardwidget")
            expect(view).to_have_count(1)
            expect(view.locator(".sw-moved")).to_contain_text("nothing moves")
            view.locator("[data-key=spec-1]").select_option("")
            expect(view.locator(".sw-moved")).to_contain_text(" in all")
            view.locator("[data-key=transfer-open]").click()  # the kernel compiles it now
            expect(view.locator(".sw-moved")).to_contain_text("all-gather over y")
            expect(view.locator(".sw-xfer .sw-tr-coll-row")).to_have_count(1)
            total = run_cell(page, "print(cv.transfer.total)")
            assert fmt_bytes(int(total)) in view.locator(".sw-moved").inner_text()
            view.locator("select[data-key=transfer-hardware]").select_option("h100")
            want = run_cell(
                page,
                "import time\nfor _ in range(100):\n"
                "    if cv._transfer['estimate']['hardware'] == 'h100': break\n"
                "    time.sleep(0.05)\n"
                "from shardwidget.cost.estimate import fmt_seconds\n"
                "print(cv.hardware, fmt_seconds(cv.transfer.estimate('h100').total_s))",
            )
            hw, seconds = want.split(" ", 1)
            assert hw == "h100", want
            expect(view.locator(".sw-xfer .sw-est-total")).to_contain_text(f"total {seconds}")
            shot(page, "jupyterlab_array_cost")
        page.context.close()


def test_fewer_mesh_axes_keep_the_array_split(page, tmp_path):
    """The "axes" control 3 -> 2 on a 2x2x2 array laid out P('x', None, 'z') lays it out on a
    2 x 4 mesh, still split along dim 0 (JAX's devices_indices_map: 2 row blocks), not on the
    first shape, 1 x 8, where x has size 1 and the array is replicated (issue 38 item 5)."""
    mesh = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AxisType.Explicit,) * 3)
    x = jax.device_put(jnp.ones((8, 8, 8)), NamedSharding(mesh, P("x", None, "z")))
    view = ShardView(x)
    loop = open_view(page, tmp_path, view)
    page.select_option("[data-key=naxes]", "2")
    settle(page, loop)
    assert list(view.mesh_shape) == [2, 4] and view.error == ""
    arr = view.array
    rows = {idx[0].indices(8) for idx in arr.sharding.devices_indices_map(arr.shape).values()}
    assert len(rows) == 2  # dim 0 split in two, as before the change
    assert page.errors == []
