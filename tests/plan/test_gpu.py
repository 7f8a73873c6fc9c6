"""Plans by XLA's GPU compiler (shardwidget.gpu_mesh) against that compiler run directly.

They need the GPU compiler's venv (``python -m shardwidget.compilers install gpu``; ./dev test
makes .venvs/gpu and sets SHARDWIDGET_GPU_PYTHON); skipped with the reason elsewhere. The
direct compile runs with PATH and CUDA_HOME hidden, so that ptxas and libdevice come from the
venv's nvcc wheel as they would on a machine without a CUDA toolkit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter

import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from shardwidget.plan import PlanError, background, compilers, gpu, plan, shardings
from shardwidget.plan import compile as plan_compile
from tests.plan import gpu_direct

pytestmark = pytest.mark.skipif(
    bool(compilers.unavailable("gpu")), reason=compilers.unavailable("gpu") or ""
)

DIRECT = os.path.join(os.path.dirname(__file__), "gpu_direct.py")


def _hidden_toolkit_env() -> dict[str, str]:
    """This process's environment without any CUDA toolkit on PATH (this machine has one in
    /usr/local/cuda-13.0 that users do not)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")}
    env["PATH"] = "/usr/bin:/bin"
    env["JAX_PLATFORMS"] = "cpu"
    return env


def _direct(
    gpu_name: str, topology: str, shape: tuple[int, ...], axes: tuple[str, ...], program: str
) -> dict:
    """XLA's GPU compiler run directly on a program (the issue's recipe, in the venv)."""
    spec = gpu.SPECS / gpu.preset(gpu_name).spec
    out = subprocess.run(
        [
            compilers.python_for("gpu"),
            DIRECT,
            str(spec),
            topology,
            "x".join(map(str, shape)),
            ",".join(axes),
            program,
        ],
        capture_output=True,
        text=True,
        env=_hidden_toolkit_env(),
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout)


def _groups(text: str) -> Counter:
    """Collectives of an HLO text by (op, replica groups), as XLA wrote them."""
    ops = re.findall(
        r"= [^=\n]*? (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
        r"(?:-start)?\("
        # (a mesh-form group names its axes after a space: "mesh[...] {'axis_1'}")
        r"[^\n]*?(replica_groups=(?:mesh\[[^\]]*\] \{[^}]*\}|\S+)|source_target_pairs=\S+)",
        text,
    )
    return Counter(ops)


@pytest.fixture(autouse=True, scope="module")
def _toolkit_hidden():
    """The helper sees no CUDA toolkit either (it inherits this environment)."""
    saved, hidden = dict(os.environ), _hidden_toolkit_env()
    hidden["JAX_PLATFORMS"] = saved.get("JAX_PLATFORMS", "cpu")
    gpu.stop()
    os.environ.clear()
    os.environ.update(hidden)
    yield
    gpu.stop()
    os.environ.clear()
    os.environ.update(saved)


CASES = [
    # (gpu, hosts, gpus per host, slices, mesh shape, program)
    ("h100", 1, 8, 1, (2, 4), "mlp"),
    ("h100", 2, 8, 1, (2, 8), "tanh_matmul"),
    ("b200", 2, 8, 1, (4, 4), "scanned"),
    ("a100-80", 2, 8, 4, (8, 8), "mlp"),
]


def _axes(entry) -> tuple[str, ...]:
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _spec_entries(spec, ndim: int) -> list[tuple[str, ...]]:
    entries = [_axes(e) for e in spec] if spec is not None else []
    return entries + [()] * (ndim - len(entries))


@pytest.mark.parametrize(("name", "hosts", "per", "slices", "shape", "program"), CASES)
def test_a_gpu_plan_is_what_the_gpu_compiler_makes(name, hosts, per, slices, shape, program):
    axes = ("data", "model")
    mesh = gpu.gpu_mesh(name, shape, axes, hosts=hosts, gpus_per_host=per, slices=slices)
    f, args, specs = gpu_direct.PROGRAMS[program]
    pl = plan(f, *args, mesh=mesh, in_specs=specs)
    want = _direct(name, f"{slices}x{hosts}x{per}", shape, axes, program)
    mi = pl.topology
    # the same GPUs in the same mesh order, each on its host (its process)
    assert [[i, h] for i, h in zip(mi.device_ids, mi.host, strict=True)] == want["devices"]
    m = pl.memory
    assert [m["arguments"], m["outputs"], m["temporaries"], m["aliased"]] == want["memory"]
    assert pl.compiler == "gpu" and pl.fits and pl.hbm == ""
    # the same collectives with the same replica groups, as XLA wrote them
    assert _groups(pl.hlo_text) == _groups(want["hlo"])
    assert sum(_groups(want["hlo"]).values()) > 0
    # and as the plan reads them: by kind and device groups on the mesh
    n = int(np.prod(shape))
    coords = {i: tuple(int(c) for c in np.unravel_index(i, shape)) for i in range(n)}
    direct = plan_compile.hlo.collectives(want["hlo"], list(range(n)), coords, axes, shape)
    assert sorted((c.name, c.groups) for c in pl.collectives) == sorted(
        (c.name, c.groups) for c in direct
    )
    # the outputs laid out as the compiler lays them out, read back as specs on the mesh
    shapes = [np.shape(o) for o in jax_outputs(f, args)]
    got = [
        _spec_entries(shardings.spec_of(t, sh, axes, shape), len(sh))
        for t, sh in zip(pl.output_shardings, shapes, strict=True)
    ]
    assert got == [_spec_entries(o, len(sh)) for o, sh in zip(want["outputs"], shapes, strict=True)]


def jax_outputs(f, args):
    import jax

    return jax.tree.leaves(jax.eval_shape(f, *args))


def test_a_plan_past_the_gpus_memory_says_so_with_the_compilers_figures():
    mesh = gpu.gpu_mesh("h100", (1, 8), ("data", "model"))
    f, args, specs = gpu_direct.PROGRAMS["too_big"]
    pl = plan(f, *args, mesh=mesh, in_specs=specs)
    want = _direct("h100", "1x1x8", (1, 8), ("data", "model"), "too_big")
    arg, out, temp, alias = want["memory"]
    peak = arg + out + temp - alias
    assert pl.memory["peak"] == peak
    # JAX's GPU client takes 75 % of the target config's device_memory_size (84,942,979,072 B)
    have = int(84942979072 * 0.75)
    assert peak > have and not pl.fits
    assert pl.hbm.startswith(
        f"does not fit: needs {peak / 2**30:.2f} GiB of {have / 2**30:.2f} GiB on every GPU"
    )
    assert pl.hbm in pl.note


def test_the_kernel_never_loads_the_cuda_plugin():
    import sys

    import jax

    mesh = gpu.gpu_mesh("h100", (8,), ("data",))
    f, args, _ = gpu_direct.PROGRAMS["tanh_matmul"]
    plan(f, *args, mesh=mesh, in_specs=[("data",), None])
    assert not [m for m in sys.modules if "cuda12" in m or m.startswith("jax_plugins.xla_cuda")]
    assert {d.platform for d in jax.devices()} == {"cpu"}


def test_hosts_and_links_per_mesh_axis():
    mi = gpu.info(gpu.gpu_mesh("h100", (2, 8), ("data", "model"), hosts=2))
    assert mi.describe()[1:] == [
        "data: network (InfiniBand / Ethernet, across hosts)",
        "model: NVLink (within a host)",
    ]
    assert mi.network_axes() == ("data",)
    assert mi.host == tuple(i // 8 for i in range(16))  # process_index, as the plugin gives it
    nvl = gpu.info(gpu.gpu_mesh("gb200", (72,), ("data",), gpus_per_host=4, hosts=18))
    assert nvl.describe()[1:] == ["data: NVLink (one NVLink domain of 72 GPUs, across hosts)"]
    assert nvl.network_axes() == () and len(set(nvl.host)) == 18
    two = gpu.info(
        gpu.gpu_mesh("gb200", (2, 72), ("dp", "fsdp"), gpus_per_host=4, hosts=18, slices=2)
    )
    assert two.network_axes() == ("dp",)


def test_a_dead_gpu_helper_is_replaced_by_the_next_plan():
    mesh = gpu.gpu_mesh("h100", (8,), ("data",))
    h = gpu.gpu_helper()
    h.proc.kill()
    h.proc.wait()
    f, args, _ = gpu_direct.PROGRAMS["tanh_matmul"]
    pl = plan(f, *args, mesh=mesh, in_specs=[(None, "data"), ("data",)])
    assert pl.compiler == "gpu" and gpu.gpu_helper() is not h and gpu.gpu_helper().alive


def test_xla_refusing_a_module_is_said_in_words_and_the_helper_ends():
    mesh = gpu.gpu_mesh("h100", (8,), ("data",))
    with pytest.raises(
        PlanError,
        match=r"XLA.s GPU compiler .* could not compile the plan for 1 host × 8 H100 SXM: ",
    ):
        gpu.compile_text("module @broken {", mesh, 60)
    assert not gpu._GPU


def test_function_and_tree_views_take_a_gpu_mesh():
    from jax.sharding import PartitionSpec as P

    import shardwidget

    mesh = gpu.gpu_mesh("h100", (2, 8), ("data", "model"), hosts=2)
    f, args, specs = gpu_direct.PROGRAMS["mlp"]
    gpu._RESULTS.clear()  # compiled in the background: the CPU compiler's plan meanwhile
    v = shardwidget.ShardView(f, *args, mesh=mesh, in_specs=specs)
    assert background.wait(300)  # (the GPU's result replaces the stand-in when it arrives)
    want = _direct("h100", "1x2x8", (2, 8), ("data", "model"), "mlp")
    kinds = Counter(op for op, _ in _groups(want["hlo"]).elements())
    assert Counter(c.kind for c in v.trace.collectives) == kinds
    arg, out, temp, alias = want["memory"]
    m = v.trace.memory
    assert (m["argument"], m["output"], m["temp"], m["alias"]) == (arg, out, temp, alias)
    assert "compiled by XLA's GPU compiler" in v.planned and "2 hosts × 8 H100 SXM" in v.planned
    assert v.hardware == "h100"
    assert "compile_with" not in v._trace_options  # no CPU / TPU choice offered on GPUs
    tv = shardwidget.ShardView({"w": args[0]}, mesh=mesh, rules=[(r"w", P("data", "model"))])
    assert tv.hardware == "h100" and len(tv.per_device) == 16
    assert "planned on NVIDIA H100 80GB HBM3 1x2x8 (2, 8)" in tv.planned
    # the devices as the plugin numbers them: GPU on its host, host; the host's process
    devs = tv.leaf("['w']").layout.devices
    mi = gpu.info(mesh)
    assert [d.process_index for d in devs] == list(mi.host) == want_hosts(want)
    assert [d.coords for d in devs] == [
        (g, h) for g, h in zip(mi.gpu_in_host, mi.host, strict=True)
    ]
    assert {d.platform for d in devs} == {"gpu"}


def want_hosts(direct: dict) -> list[int]:
    return [h for _, h in direct["devices"]]


def test_a_gpu_plan_reads_the_peak_from_the_gpu_compilers_own_report():
    """The memory peak (issue 36's reader) from the dump the GPU compiler wrote for this very
    compile: at least the arguments, at most memory_analysis' arguments + outputs + temporaries
    (the direct compile's figures)."""
    mesh = gpu.gpu_mesh("h100", (2, 4), ("data", "model"))
    f, args, specs = gpu_direct.PROGRAMS["mlp"]
    pl = plan(f, *args, mesh=mesh, in_specs=specs)
    arg, out, temp, alias = _direct("h100", "1x1x8", (2, 4), ("data", "model"), "mlp")["memory"]
    assert pl.peak is not None and pl.peak_unknown == ""
    assert arg <= pl.peak.bytes <= arg + out + temp - alias


def test_a_function_view_waits_on_the_gpu_compiler_in_the_background(monkeypatch):
    """While XLA's GPU compiler works, the view shows the CPU compiler's plan with a note
    saying so; the GPU's result replaces it when it arrives (the compile held back here until
    the stand-in is seen, so the order is certain)."""
    import threading

    import shardwidget

    gate = threading.Event()
    real = gpu.compile_text

    def held(*a, **k):
        gate.wait(120)
        return real(*a, **k)

    monkeypatch.setattr(gpu, "compile_text", held)
    mesh = gpu.gpu_mesh("h100", (8,), ("data",))
    f, args, _ = gpu_direct.PROGRAMS["tanh_matmul"]
    gpu._RESULTS.clear()
    v = shardwidget.ShardView(f, *args, mesh=mesh, in_specs=[P("data", None), P(None, "data")])
    assert "the CPU compiler's plan, shown while XLA's GPU compiler (jaxlib " in v.planned
    gate.set()
    assert background.wait(300)
    said = repr(v)  # read first: the text takes what arrived, as .trace and .planned do
    assert "compiled by XLA's GPU compiler" in said and "shown while" not in said
    assert "compiled by XLA's GPU compiler" in v.planned and "shown while" not in v.planned


def test_a_gpu_plans_bytes_accessed_counts_every_op_not_only_the_gemms():
    """The GPU compiler has no cost analysis: the bytes are counted from its HLO (every
    top-level op's operands and result, hlo/traffic.py), so the estimate's memory time is not
    0 s nor only the gemm calls' traffic; at least the arguments are read and the outputs
    written (the direct compile's figures)."""
    from shardwidget.hlo.flops import matmul_flops
    from shardwidget.hlo.traffic import bytes_accessed

    mesh = gpu.gpu_mesh("h100", (2, 4), ("data", "model"))
    f, args, specs = gpu_direct.PROGRAMS["mlp"]
    pl = plan(f, *args, mesh=mesh, in_specs=specs)
    want = _direct("h100", "1x1x8", (2, 4), ("data", "model"), "mlp")
    arg, out, _temp, _alias = want["memory"]
    assert pl.bytes_accessed == pytest.approx(bytes_accessed(want["hlo"]), rel=0.01)
    assert pl.bytes_accessed >= arg + out
    assert pl.bytes_accessed > matmul_flops(want["hlo"]).custom_bytes
    est = pl.estimate()
    assert est.memory_s == pytest.approx(pl.bytes_accessed / est.hardware.hbm_bandwidth)
    assert est.memory_s > 0


def _usable(name: str) -> int:
    """75 % of the target config's device_memory_size, read from the shipped file itself."""
    text = (gpu.SPECS / gpu.preset(name).spec).read_text()
    size = re.search(r"device_memory_size:\s*(\d+)", text)
    assert size is not None
    return int(int(size.group(1)) * 0.75)


@pytest.mark.parametrize("program", ["mlp", "too_big"])
def test_the_estimate_judges_fit_by_the_plans_rule_and_figure(program):
    """One rule, one figure: the estimate's "fits in HBM" is Plan.fits, against JAX's 75 %
    share of the target config's memory (59.33 GiB of an H100's 79.11), not the preset's 80 GB,
    and its text says which."""
    mesh = gpu.gpu_mesh("h100", (1, 8), ("data", "model"))
    f, args, specs = gpu_direct.PROGRAMS[program]
    pl = plan(f, *args, mesh=mesh, in_specs=specs)
    est = pl.estimate()
    assert est.hardware.hbm_bytes == _usable("h100")
    assert est.fits == pl.fits == (pl.memory["peak"] <= _usable("h100"))
    assert "75% of 79.11 GiB: JAX's share" in est.fits_text
    assert "counted from the HLO" in est.parts()[1]["formula"]


def test_bytes_across_hosts_move_at_the_networks_rate_not_nvlinks():
    """The same program, the same all-reduce over "data" (2 GPUs, the same bytes), on two
    machines that differ only in the link "data" crosses: 2 hosts of 8 H100s (the network,
    50 GB/s per GPU: DGX H100's 400 Gb/s ConnectX-7 per GPU) and one host of 16 (NVLink, 450
    GB/s). By construction the bandwidth terms' ratio is exactly NVLink / network = 9."""
    f, x = lambda a: a.sum(axis=0), np.zeros((2048, 1024), np.float32)

    def data_all_reduce(**machine):
        mesh = gpu.gpu_mesh("h100", (2, 8), ("data", "model"), **machine)
        est = plan(f, x, mesh=mesh, in_specs=[("data", "model")]).estimate()
        (c,) = [c for c in est.collectives if c.collective.axes == ("data",)]
        assert c.kind == "all-reduce" and c.collective.group_size == 2
        return c

    net, nvl = data_all_reduce(hosts=2), data_all_reduce(hosts=1, gpus_per_host=16)
    assert net.collective.bytes == nvl.collective.bytes > 0
    assert net.bandwidth_s / nvl.bandwidth_s == pytest.approx(450 / 50, rel=1e-12)
    assert net.latency_s / nvl.latency_s == pytest.approx(10e-6 / 1.9e-6, rel=1e-12)
    assert net.formula.endswith("/ 50 GB/s network") and "network latency" in net.formula
    assert nvl.formula.endswith("/ 450 GB/s NVLink") and "NVLink latency" in nvl.formula
