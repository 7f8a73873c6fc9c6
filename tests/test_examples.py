"""The example notebooks run top to bottom in a real kernel and show what they say they show.

Each notebook is executed with nbclient in a kernel running this interpreter (a kernelspec
written to a temporary folder and found first through JUPYTER_PATH, so a ``python3`` kernelspec
elsewhere on the machine cannot substitute another Python), with ``src/`` on PYTHONPATH and
JAX on CPU. Cells that display a view have ids starting with ``view-``.
"""

from __future__ import annotations

import os
import pathlib
import re
import sys
from collections.abc import Iterator
from typing import Any

import jax
import pytest

from shardwidget import _jax
from shardwidget.plan import kept_on_disk

from .helpers import said_in, svgs_in

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _ids(paths: list[pathlib.Path]) -> list[str]:
    return [p.name for p in paths]


# ---------------------------------------------------------------- helpers
def _cell(nb: Any, cell_id: str) -> Any:
    for c in nb.cells:
        if c.get("id") == cell_id:
            return c
    raise AssertionError(f"no cell with id {cell_id!r}")


def _stream(cell: Any, name: str = "stdout") -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == name)


def _plain(cell: Any) -> str:
    """text/plain of the cell's result (the view's text grid)."""
    for o in cell.outputs:
        if o.output_type == "execute_result":
            return str(o.data.get("text/plain", ""))
    raise AssertionError(f"cell {cell.get('id')!r} has no result; outputs: {cell.outputs}")


def _snapshot(cell: Any) -> tuple[str, str]:
    """(text/plain, text/html) of a cell whose result is a view.snapshot(): a picture, no widget."""
    results = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert results, f"cell {cell.get('id')!r} has no result"
    data = results[-1].data
    assert WIDGET_MIME not in data, f"cell {cell.get('id')!r} shows a live widget, not a snapshot"
    assert 'class="shardwidget-snapshot"' in data["text/html"]
    return str(data["text/plain"]), str(data["text/html"])


def _src(cell: Any) -> str:
    return "".join(cell.source)


# ---------------------------------------------------------------- fast checks, no kernel
def test_there_are_examples() -> None:
    assert NOTEBOOKS, f"no notebooks in {EXAMPLES}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_committed_clean(path: pathlib.Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [], f"{path.name}: cell {c.get('id')!r} has stored outputs"
            assert c.execution_count is None, f"{path.name}: cell {c.get('id')!r} has a count"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert 'jax.config.update("jax_num_cpu_devices", 8)' in _src(code[0]), (
        f"{path.name}: the first code cell must ask for 8 CPU devices before JAX starts"
    )


# ---------------------------------------------------------------- execution
@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Environment for kernels: this Python, the working tree's package, CPU JAX."""
    from ipykernel.kernelspec import install
    from jupyter_client.kernelspec import KernelSpecManager

    prefix = tmp_path_factory.mktemp("kernel")
    with pytest.MonkeyPatch.context() as mp:
        # JUPYTER_PATH is searched before the user's and the system's kernelspecs.
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
        # Writes argv [sys.executable, "-m", "ipykernel_launcher", ...] under prefix/share/jupyter.
        install(kernel_name="python3", prefix=str(prefix))
        argv = KernelSpecManager().get_kernel_spec("python3").argv
        assert argv[0] == sys.executable, f"kernel python3 would run {argv[0]}"
        mp.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        paths = [
            str(ROOT / "src"),
            *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)),
        ]
        mp.setenv("PYTHONPATH", os.pathsep.join(paths))
        mp.setenv("JAX_PLATFORMS", "cpu")  # the examples are written for 8 simulated CPU devices
        # ./dev test's folder for the notebooks' TPU and GPU compiles between runs (their
        # kernels only: the notebooks as readers run them keep compiles in memory)
        kept = os.environ.get("SHARDWIDGET_TEST_COMPILE_CACHE", "")
        if kept:
            mp.setenv(kept_on_disk.ENV, kept)
        yield


_executed: dict[pathlib.Path, Any] = {}


def _skip_without_requirements(nb: Any, name: str) -> None:
    """Skip, with the reason, a notebook whose optional extras (``metadata.shardwidget.requires``,
    e.g. flax and optax for 05_models) are not installed."""
    import importlib.util

    needs = nb.metadata.get("shardwidget", {}).get("requires", [])
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{name} needs {', '.join(missing)} (pip install .[models])")


CELL_S = 120.0
"""A cell's budget on a quiet machine. The budget catches a hang, not slowness: it scales with
the machine's load, and a cell that compiles at pod size gets a multiple of its quiet time."""
QUIET_S = {
    ("06_plan_a_pod.ipynb", "tpu-plan"): 75.0,
    ("06_plan_a_pod.ipynb", "tpu-overflow"): 30.0,
    ("06_plan_a_pod.ipynb", "gpu-plan"): 30.0,
    # the searches stop at their own budgets (120 s, 180 s) plus their last compiles
    ("06_plan_a_pod.ipynb", "view-search"): 150.0,
    ("06_plan_a_pod.ipynb", "search-tpu"): 240.0,
}
"""Seconds a long cell takes on a quiet 2-core machine (libtpu compiling a v5e-256's and a
v6e-256's step: 31.7 s + 40.3 s, issue 38); CELL_S covers the rest."""
HEADROOM = 6.0
"""A long cell's budget as a multiple of its quiet time, before the load factor."""


def load_factor() -> float:
    """How much slower than quiet this machine runs now: the 1-minute load per core (at least
    1, at most 8), read when a cell starts (./dev test installs venvs beside the tests)."""
    return min(8.0, max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))


def cell_budget(name: str, cell: Any) -> int:
    """Seconds nbclient gives ``cell`` of notebook ``name`` (its ``timeout_func``)."""
    quiet = QUIET_S.get((name, cell.get("id")), 0.0)
    return round(max(CELL_S, HEADROOM * quiet) * load_factor())


_failed: dict[pathlib.Path, str] = {}


def _execute(path: pathlib.Path) -> Any:
    """The notebook executed once per session; a failure is kept too (the tests that read the
    same notebook fail with its words at once instead of running it again)."""
    if path in _failed:
        pytest.fail(_failed[path], pytrace=False)
    if path not in _executed:
        nb = nbformat.read(path, as_version=4)
        _skip_without_requirements(nb, path.name)
        client = nbclient.NotebookClient(
            nb,
            timeout_func=lambda cell: cell_budget(path.name, cell),
            kernel_name="python3",
            resources={"metadata": {"path": str(EXAMPLES)}},
        )
        try:
            client.execute()
        except (nbclient.exceptions.CellExecutionError, TimeoutError) as e:
            msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # IPython colours its tracebacks
            _failed[path] = f"{path.name} failed (load {os.getloadavg()[0]:.1f}):\n{msg}"
            pytest.fail(_failed[path], pytrace=False)
        _executed[path] = nb
    return _executed[path]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path: pathlib.Path, kernel_env: None) -> None:
    if path.name == "02_functions.ipynb" and _jax.shardy_missing():  # its "why" section
        pytest.skip(f"02's why-this-collective section needs Shardy: {_jax.shardy_missing()}")
    nb = _execute(path)
    views = 0
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        cid = c.get("id")
        assert c.execution_count is not None, f"{path.name}: cell {cid!r} did not run"
        errors = [o for o in c.outputs if o.output_type == "error"]
        assert not errors, f"{path.name}: cell {cid!r} raised {errors[0].ename}"
        stderr = _stream(c, "stderr")
        assert not stderr, f"{path.name}: cell {cid!r} wrote to stderr:\n{stderr}"
        if str(cid).startswith("view-"):
            views += 1
            results = [o for o in c.outputs if o.output_type == "execute_result"]
            assert results, f"{path.name}: cell {cid!r} should end with a ShardView"
            data = results[-1].data
            assert WIDGET_MIME in data, f"{path.name}: cell {cid!r} shows no widget: {list(data)}"
            assert data[WIDGET_MIME].get("model_id"), f"{path.name}: cell {cid!r}: no model id"
            assert str(data.get("text/plain", "")).startswith("ShardView"), (
                f"{path.name}: cell {cid!r} text/plain is {data.get('text/plain')!r}"
            )
            # the view's picture just before it, for the notebook read without a kernel
            # (views/fallback.py): on ipywidgets 7 (Colab) as on 8
            before = c.outputs[c.outputs.index(results[-1]) - 1]
            assert before.output_type == "display_data", f"{path.name}: cell {cid!r}: no picture"
            assert 'class="shardwidget-fallback"' in before.data.get("text/html", ""), (
                f"{path.name}: cell {cid!r}: the output before the view is not its picture"
            )
    assert views, f"{path.name} displays no view (cells with ids 'view-…')"


@pytest.mark.slow
def test_arrays_notebook_shows_the_story(kernel_env: None) -> None:
    path = EXAMPLES / "01_arrays.ipynb"
    nb = _execute(path)
    out = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}

    assert "CpuDevice(id=7)" in _plain(out["imports"]), "8 simulated devices were not created"
    assert "SingleDeviceSharding" in _plain(out["view-single"])
    assert "float32[4@x,8@y]" in _plain(out["view-named"])
    assert "8 blocks of shape (2, 2)" in _plain(out["view-named"])
    assert "shardings match: True" in _stream(out["view-elementwise"])

    # x.sum(axis=0): split over y, two copies of each piece.
    assert "replication: 2" in _stream(out["view-sum"])
    grid = _plain(out["view-sum"])
    assert "float32[8@y]" in grid
    assert "replication 2" in grid
    assert "0,4" in grid, "devices 0 and 4 should hold the first piece of the sum"

    assert "jax.typeof: int32[4@X,2]" in _stream(out["view-explicit"])
    assert "view.layout.typeof: int32[4@X,2]" in _stream(out["view-explicit"])
    assert "replication 4" in _plain(out["view-explicit"])
    assert "int32[4@X,8@Y]" in _plain(out["view-broadcast"])
    assert "memory=pinned_host" in _plain(out["view-pinned"])
    pmap_view = _plain(out["view-pmap"])
    assert "float32[8@pmap,5]" in pmap_view and "spec P('pmap', None)" in pmap_view
    assert "_internal_pmap_axis_name" not in pmap_view  # named in words, not JAX's internal name
    assert "one device: cpu 0" in _plain(out["view-single"])
    assert "float32[2@x,4,8@y]" in _plain(out["view-3d"])

    # Each step shows its own layout (a snapshot), not the view's last one (P(None, 'd')).
    text, pic = _snapshot(out["snap-respec"])
    assert "P('y', 'x')" in text and "re-laid out" in text
    (svg,) = svgs_in(pic)
    assert "P(&#x27;y&#x27;, &#x27;x&#x27;)" in pic
    assert re.search(r"dim 0 \(\d+\) · sharded over y →", svg), svg[:300]
    assert svg.count('<g class="block">') == 8
    text, pic = _snapshot(out["snap-setlayout"])
    assert "float32[4,8@d]" in text and "mesh d=8" in svgs_in(pic)[0]
    live = [o for o in out["view-python"].outputs if o.output_type == "execute_result"]
    assert WIDGET_MIME in live[0].data  # the live view stays, above the steps
    shown = _stream(out["sharding"])
    assert re.search(r"shown:.*spec=(P|PartitionSpec)\(None, 'd'\)", shown), shown  # (JAX's repr)
    assert re.search(r"original:.*spec=(P|PartitionSpec)\('x', 'y'\)", shown), (
        "the user's array was changed"
    )

    err = _stream(out["error"])
    assert "ValueError: dimension 0 has size 4" in err, err
    assert "spec is still [None, 'd']" in err, err


@pytest.mark.slow
def test_functions_notebook_shows_the_story(kernel_env: None) -> None:
    if _jax.shardy_missing():  # its "why" section
        pytest.skip(f"02's why-this-collective section needs Shardy: {_jax.shardy_missing()}")
    nb = _execute(EXAMPLES / "02_functions.ipynb")
    out = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}

    assert "collectives: []" in _stream(out["view-elementwise"])
    assert "none (every device computes its part alone)" in _plain(out["view-elementwise"])
    sum_out = _stream(out["snap-sum"])
    assert "same as JAX: True" in sum_out and "all-reduce over ('x',)" in sum_out
    # section 2 shows the all-reduce it talks about, though the next cell removes it
    text, pic = _snapshot(out["snap-sum"])
    assert "all-reduce" in text and "all-reduce over x" in svgs_in(pic)[0]
    # under the picture its collectives in words (search, screen readers), not its text
    assert [s.split(":")[0] for s in said_in(pic)[1:]] == ["all-reduce over x"]
    assert "<pre" not in pic
    assert "collectives now: []" in _stream(out["view-respec"])
    assert "all-reduce" not in _plain(out["view-respec"])
    assert "[('all-reduce', ('y',))]" in _stream(out["view-matmul"])
    con = _stream(out["view-constraint"])
    assert "pinned: with_sharding_constraint P(None, 'x')" in con
    assert "[('all-to-all', ('x',))]" in con
    assert "[('collective-permute', ('x',))]" in _stream(out["view-roll"])
    assert "device local shape: (4,)" in _stream(out["view-shardmap"])
    psum = _stream(out["view-psum"])
    assert "out_specs=P():    [496.]" in psum
    assert "out_specs=P('x'): [496. 496. 496. 496. 496. 496. 496. 496.]" in psum
    assert "reduce-scatter" in _stream(out["view-scatter"])
    exp = _stream(out["snap-explicit-error"])
    assert "error: ShardingTypeError: Contracting dimensions are sharded" in exp
    _, pic = _snapshot(out["snap-explicit-error"])  # section 7's error, visible
    assert 'role="alert"' in pic and "ShardingTypeError: Contracting dimensions" in pic
    assert "after the fix: float32[8@x,4] | error: ''" in _stream(out["view-explicit"])
    three = _stream(out["three"])
    assert "outputs agree: True" in three
    assert three.count("all-reduce over x") == 3
    assert "shard_map" in _plain(out["compare"])
    why = _stream(out["view-why"])  # section 9: a collective explained, then removed
    assert "0: all-gather of w at the matmul on " in why and "by the constraint on " in why
    assert "checked: agrees with XLA's own dump of this compile" in why
    fix = _stream(out["why-fix"])
    assert "lay w out as P(None, None) (as the op wants it): removes it" in fix
    assert "before: ['all-gather', 'collective-permute']" in fix
    assert "together): removes it; 0 collectives" in fix  # both inputs as the matmul wants
    assert "after the fix: [] " in fix
    assert "after undo: ['all-gather', 'collective-permute']" in fix


@pytest.mark.slow
def test_pmap_vmap_notebook_shows_the_story(kernel_env: None) -> None:
    nb = _execute(EXAMPLES / "03_pmap_vmap.ipynb")
    out = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}

    assert "CpuDevice(id=7)" in _plain(out["imports"]), "8 simulated devices were not created"
    # vmap under jit: the whole batch on every device, no communication.
    vm = _stream(out["view-vmap"])
    assert "output type: float32[8]\n" in vm and "replication: 8" in vm
    assert "collectives: []" in vm
    assert "ShardView of dot (jit)" in _plain(out["view-vmap"])
    # pmap refuses a mapped axis larger than the device count; the view says the same.
    assert "same message: True" in _stream(out["pmap-too-big"])
    # pmap(vmap(dot)): one slice per device, as jax.pmap itself lays it out.
    pv = _stream(out["view-pmap-vmap"])
    assert "output type: float32[8@pmap,1250]" in pv
    assert "same as jax.pmap: True" in pv and "same devices as jax.pmap: True" in pv
    assert "dimension 0 mapped over 8 devices" in pv
    assert "the body sees shape (1250, 3)" in pv  # the tutorial's f_pmap: (d, v) -> (v,)
    plain = _plain(out["view-pmap-vmap"])
    assert "(pmap), mesh {'pmap': 8}" in plain
    assert "_internal_pmap_axis_name" not in plain, "pmap's layout should read in words"
    # The jaxpr is JAX's own: pmap is jit of shard_map from jax 0.8 (0.7 keeps xla_pmap).
    jx = _stream(out["jaxpr"])
    assert "same as jax.make_jaxpr: True" in jx and "\x1b[" not in jx
    old = _jax.is_cpp_pmap(jax.pmap(lambda x: x))
    assert ("xla_pmap[" in jx) == old and ("shard_map[" in jx) == (not old)
    # vmap vs pmap side by side: the tutorial's four versions agree; pmap's is one per device.
    cmp = _stream(out["compare"])
    assert "outputs agree: True" in cmp
    assert "modes: ['jit', 'pmap', 'pmap', 'pmap']" in cmp
    assert "[['float32[8]'], ['float32[8@pmap]'], ['float32[8@pmap]'], ['float32[8@pmap]']]" in cmp
    # Tutorial 004: the convolution on every device, w broadcast, and a psum over 'p'.
    assert "same as numpy: True" in _stream(out["view-convolve"])
    bc = _stream(out["view-broadcast"])
    assert "the same whole value on each of the 8 devices (in_axes=None)" in bc
    assert "same as numpy: True" in bc
    ps = _stream(out["view-psum"])
    assert "all-reduce over ('p',)" in ps
    assert "collectives match pmap's HLO: True" in ps and "same as jax.pmap: True" in ps
    # Today's way: shardings in the jaxpr's types under Explicit axes.
    ex = _stream(out["view-explicit"])
    assert "a:f32[8@x,3] b:f32[8@x,3]" in ex and "output type: float32[8@x]" in ex


@pytest.mark.slow
def test_cost_notebook_shows_the_story(kernel_env: None) -> None:
    """04_cost: the sharded-matmul patterns, their collectives, and estimates that follow the
    ring model on the presets' numbers (TPU v5e: 100 GB/s per axis and 1 µs a step; H100: 450
    GB/s)."""
    nb = _execute(EXAMPLES / "04_cost.ipynb")
    out = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}
    mib4 = 1024 * 1024 * 4  # one f32[1024, 1024] result: V of the all-reduce / reduce-scatter
    # bandwidth time, plus a step latency per ring step (y has 4 devices: an all-reduce takes
    # 2 × 3 steps, a reduce-scatter or all-gather 3)
    from shardwidget import hardware

    lat = hardware("tpu-v5e").ici_latency
    want = {
        "view-rows": ("collectives: []", None),
        "view-contract": ("['all-reduce over y']", 2 * 3 / 4 * mib4 / 100e9 + 6 * lat),
        "view-scatter": ("['reduce-scatter over y']", 3 / 4 * mib4 / 100e9 + 3 * lat),
        "view-gather": ("['all-gather over y']", 3 / 4 * (2048 * 1024 * 4) / 100e9 + 3 * lat),
    }
    for cid, (colls, seconds) in want.items():
        text = _stream(out[cid])
        assert colls in text, (cid, text)
        assert "same as jnp.dot: True" in text, (cid, text)
        assert "estimate on TPU v5e" in text and "estimate on H100 SXM" in text, text
        if seconds is not None:
            v5e = text.split("estimate on H100 SXM")[0]
            assert re.search(rf"over y\s+{seconds * 1e6:.3g} µs", v5e), (cid, seconds, v5e)
    table = _stream(out["compare"])
    assert table.count("agrees") == 4 and "est. tpu-v5e" in table and "est. h100" in table, table
    moved = _stream(out["view-transfer"])
    assert "all-to-all over x · 1 MiB per device" in moved, moved
    assert "total: 8388608 bytes" in moved, moved
    assert "local fields positive: True" in _stream(out["presets"])
    assert _stream(out["view-hardware"]).startswith("h100 communication fits in HBM")


@pytest.mark.slow
def test_cost_notebook_memory_section(kernel_env: None) -> None:
    """04_cost's last section: an MLP step that does not fit on a v5e-256 (planned for 256
    positions by XLA's CPU compiler), its peak explained, the largest batch that fits (the
    bisection itself is checked against direct compiles in tests/plan/test_largest_fit.py),
    and the fix that gets under it."""
    nb = _execute(EXAMPLES / "04_cost.ipynb")
    out = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}
    before = _stream(out["view-memory"])
    assert before.startswith("does not fit: peak"), before
    if jax.__version_info__ >= (0, 10):  # the compiler's live-range report: what is live
        assert "of HBM)" in before and "saved activations" in before and "tanh" in before
    found = re.search(
        r"fits: (\d+) .*\nfirst size over: (\d+) .*; (\d) compiles", _stream(out["memory-fit"])
    )
    assert found, _stream(out["memory-fit"])
    fits, over, compiles = map(int, found.groups())
    assert fits < over and fits < 2**22 and compiles <= 8
    fixes = _stream(out["memory-fixes"]).splitlines()
    assert fixes[0].startswith("lowers") and "split x further over model" in fixes[0], fixes
    assert _stream(out["view-memory-fixed"]).startswith("fits: peak")


@pytest.mark.slow
def test_plan_notebook_shows_the_story(kernel_env: None) -> None:
    nb = _execute(EXAMPLES / "06_plan_a_pod.ipynb")
    assert "8 devices in this kernel" in _stream(_cell(nb, "setup"))
    assert "planned: compiled by XLA's CPU compiler for 256 simulated devices" in _stream(
        _cell(nb, "plan")
    )
    out = _stream(_cell(nb, "compare"))
    for name in ("FSDP 32 x TP 8: 256 devices", "FSDP 256: 256 devices"):
        assert f"== {name}" in out
    assert out.count("fits in HBM") + out.count("does not fit in HBM") == 2
    assert out.count("estimated step on TPU v5p") == 2 and "collective latency" in out
    assert "over tp" in out and "over fsdp" in out  # the pod plan's collectives name both axes
    tree = _cell(nb, "tree")
    assert "256 positions, 160 KiB on the fullest" in _stream(tree)
    assert "planned on AbstractMesh (32, 8) · no devices" in _plain(tree)
    assert "per device: max 160 KiB" in _plain(tree)  # the number printed, as drawn
    # the TPU compiler's section: its plans, or in one line why they are skipped
    out = _stream(_cell(nb, "tpu-plan"))
    if out.startswith("TPU plans skipped:"):
        assert "shardwidget.compilers install tpu" in out or "libtpu" in out, out
        return
    assert "compiled by the TPU compiler (libtpu " in out and "a v5e-256 runs" in out, out
    assert "TPU (v5e) vs CPU compiler, per device:" in out and "TPU (v6e) vs CPU" in out, out
    machine = _stream(_cell(nb, "tpu-machine"))
    assert "v5e-256 (v5e 16×16; 256 chips" in machine and "across slices: DCN" in machine
    over = _stream(_cell(nb, "tpu-overflow"))
    assert "fits: False" in over and "does not fit: needs" in over and "15.75 GiB" in over


@pytest.mark.slow
def test_plan_notebook_gpu_section(kernel_env: None) -> None:
    """The 06 notebook's GPU section: plans by XLA's GPU compiler, or in one line why not."""
    nb = _execute(EXAMPLES / "06_plan_a_pod.ipynb")
    out = _stream(_cell(nb, "gpu-plan"))
    if out.startswith("GPU plans skipped:"):
        assert "shardwidget.compilers install gpu" in out, out
        return
    assert "== 2 × 8 H100: compiled by XLA's GPU compiler (jaxlib " in out, out
    assert "fsdp: network (InfiniBand / Ethernet, across hosts)" in out, out
    assert "tp: NVLink (within a host)" in out, out
    assert "dp: NVLink (one NVLink domain of 72 GPUs, across hosts)" in out, out
    assert "over network" in out and "estimate on H100 SXM" in out, out
    fit = _stream(_cell(nb, "gpu-fit"))
    assert "fits: False; does not fit: needs 96.13 GiB of 59.33 GiB on every GPU" in fit, fit


@pytest.mark.slow
def test_plan_notebook_search_section(kernel_env: None) -> None:
    nb = _execute(EXAMPLES / "06_plan_a_pod.ipynb")
    out = _stream(_cell(nb, "view-search"))
    assert out.startswith(
        "search on XLA's CPU compiler for 16 simulated devices, estimated on h100"
    )
    # ranked rows "  0  ...": a budget on a loaded machine may leave one (the search runs on
    # to its first result), else the first is said to beat the second, in the ranking's terms
    rows = [ln for ln in out.splitlines() if re.match(r"\s+\d+  ", ln)]
    assert rows, out
    if len(rows) > 1:
        assert " beats " in out and "the largest difference is" in out, out
    else:
        assert "(budget)" in out, out  # stopped by its budget, not finished with one
    assert "jax.make_mesh(" in _stream(_cell(nb, "search-code"))
    out = _stream(_cell(nb, "search-tpu"))
    if not out:  # no libtpu: the TPU section above said why
        return
    assert out.startswith("search on the TPU compiler (libtpu "), out
    assert "estimated on tpu-v5e" in out and "compute" in out and "ICI" in out, out


@pytest.mark.slow
def test_models_notebook_shows_the_story(kernel_env: None) -> None:
    path = EXAMPLES / "05_models.ipynb"
    nb = _execute(path)
    out = {c.get("id"): c for c in nb.cells if c.cell_type == "code"}

    assert "23 array leaves" in _plain(out["view-model"])
    on0 = "{0: 14704640, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0}"
    assert on0 in _stream(out["view-model"]), "a fresh model sits on device 0, 7 devices empty"
    # each cell that prints a number shows a picture of the state it describes: a snapshot
    # of that step (the chart's maximum is the number printed), not the live widget
    steps = {
        "optimizer": ("42.1 MiB with AdamW", "max 42.1 MiB"),
        "fsdp": ("FSDP: max per device 5.32 MiB", "max 5.32 MiB"),
        "tp": ("TP: max per device 33.1 MiB", "max 33.1 MiB"),
        "replicated": ("max per device: 33.1 MiB", "max 33.1 MiB"),
        "abstract": ("unsharded: 29.6 GiB", "max 29.6 GiB"),
    }
    for cid, (printed, drawn) in steps.items():
        assert printed in _stream(out[cid]), (cid, _stream(out[cid]))
        svg = " ".join(svgs_in(_snapshot(out[cid])[1]))
        assert drawn in svg, (cid, drawn)
    replicated = _stream(out["replicated"])
    assert "['params']['embed']['embedding'].value" in replicated
    assert "large and replicated: []" in _stream(out["view-fixed"])
    fixed = re.search(r"max per device: ([\d.]+) MiB", _stream(out["view-fixed"]))
    assert fixed is not None and f"per device: max {fixed.group(1)} MiB" in _plain(
        out["view-fixed"]
    )
    assert "P('model', None)" in _plain(out["view-fixed"])
    assert "large replicated" not in _plain(out["view-fixed"])
    assert "('vocab', 'embed')   P('model', 'data')" in _stream(out["view-logical"])
    assert "as the view shows: True" in _stream(out["code"])
    fsdp_big = re.search(r"FSDP: ([\d.]+) GiB per device", _stream(out["view-abstract"]))
    assert fsdp_big is not None
    assert f"per device: max {fsdp_big.group(1)} GiB" in _plain(out["view-abstract"])
