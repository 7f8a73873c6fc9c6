"""Plans (issue 22): a training step compiled for an AbstractMesh bigger than the kernel, in the
planning helper, against the same step compiled in a process that really has that many devices."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import jax
import pytest
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

from shardwidget.plan import PlanError, plan
from shardwidget.plan import helper as helper_mod

STEP = textwrap.dedent(
    """
    import jax, jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    def loss(p, x):
        return jnp.mean(jnp.tanh(x @ p["w1"]) @ p["w2"])

    def step(p, x):
        l, g = jax.value_and_grad(loss)(p, x)
        return l, jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

    PARAMS = {"w1": jax.ShapeDtypeStruct((256, 1024), jnp.float32),
              "w2": jax.ShapeDtypeStruct((1024, 256), jnp.float32)}
    X = jax.ShapeDtypeStruct((128, 256), jnp.float32)
    SPECS = [{"w1": P("data", "model"), "w2": P("model", "data")}, P("data")]
    """
)
_ns: dict = {}
exec(STEP, _ns)

REAL = STEP + textwrap.dedent(
    """
    import json, re, sys
    from jax.sharding import NamedSharding
    mesh = jax.make_mesh(SHAPE, ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    sh = lambda s: NamedSharding(mesh, s)
    args = [{k: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sh(SPECS[0][k]))
             for k, a in PARAMS.items()},
            jax.ShapeDtypeStruct(X.shape, X.dtype, sharding=sh(SPECS[1]))]
    c = jax.jit(step).lower(*args).compile()
    kinds = sorted(m.group(1) for m in re.finditer(
        r"= [^=]*? (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\\(",
        c.as_text()))
    m = c.memory_analysis()
    cost = c.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    print(json.dumps({"kinds": kinds, "arguments": m.argument_size_in_bytes,
                      "outputs": m.output_size_in_bytes, "temp": m.temp_size_in_bytes,
                      "flops": cost["flops"]}))
    """
)


def real_compile(shape: tuple[int, int]) -> dict:
    n = shape[0] * shape[1]
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={n}",
           "JAX_PLATFORMS": "cpu"}  # fmt: skip
    code = f"SHAPE = {shape!r}\n" + REAL
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def _stop_helpers():
    yield
    helper_mod.stop_all()


@pytest.mark.parametrize("shape", [(8, 8), (16, 4), (32, 8)])
def test_a_plan_matches_a_real_compile_on_that_many_devices(shape):
    am = AbstractMesh(shape, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    pl = plan(_ns["step"], _ns["PARAMS"], _ns["X"], mesh=am, in_specs=_ns["SPECS"])
    real = real_compile(shape)
    assert len(jax.devices()) < pl.n_devices == shape[0] * shape[1]
    assert sorted(c.kind for c in pl.collectives) == real["kinds"] and real["kinds"]
    assert pl.memory["arguments"] == real["arguments"]
    assert pl.memory["outputs"] == real["outputs"]
    assert pl.memory["temporaries"] == real["temp"]  # the helper's LLVM -O0 changes no buffer
    assert pl.flops == pytest.approx(real["flops"])
    # axes in the plan's mesh, bytes per device, the user's source line
    for c in pl.collectives:
        assert c.axes and set(c.axes) <= {"data", "model"} and c.bytes > 0
        assert c.source.startswith("<string>:") or ".py:" in c.source, c.source
    assert len(pl.output_shardings) == 3 and "planned" in pl.note and "CPU" in pl.note


def test_the_helper_is_reused_for_plans_of_the_same_size_and_ends_with_stop():
    am = AbstractMesh((4, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    plan(_ns["step"], _ns["PARAMS"], _ns["X"], mesh=am, in_specs=_ns["SPECS"])
    h = helper_mod._HELPERS[16]
    pid = h.proc.pid
    plan(_ns["step"], _ns["PARAMS"], _ns["X"], mesh=AbstractMesh((2, 8), ("data", "model"), axis_types=(AxisType.Auto,) * 2),
         in_specs=_ns["SPECS"])  # fmt: skip
    assert helper_mod._HELPERS[16] is h and h.alive
    assert h.proc.pid == pid  # no new start (the same process answered)
    helper_mod.stop_all()
    assert not h.alive


def test_a_dead_helper_is_said_in_words_and_the_next_plan_starts_another():
    am = AbstractMesh((4, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    plan(_ns["step"], _ns["PARAMS"], _ns["X"], mesh=am, in_specs=_ns["SPECS"])
    h = helper_mod._HELPERS[16]
    h.proc.kill()
    h.proc.wait()
    # the registry notices and starts a fresh one; a dead helper mid-request says so
    with pytest.raises(PlanError, match="was killed by SIGKILL"):
        h.compile("module {}")
    pl = plan(_ns["step"], _ns["PARAMS"], _ns["X"], mesh=am, in_specs=_ns["SPECS"])
    assert helper_mod._HELPERS[16] is not h and pl.collectives


def test_a_helper_past_its_time_limit_is_stopped_in_words():
    am = AbstractMesh((4, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    with pytest.raises(PlanError, match=r"took longer than 0\.001 s"):
        plan(_ns["step"], _ns["PARAMS"], _ns["X"], mesh=am, in_specs=_ns["SPECS"], timeout=1e-3)
    assert not helper_mod._HELPERS[16].alive


def test_xla_refusing_a_module_is_an_error_in_words_and_the_helper_ends():
    # (issue 30: a refused 8,192-device plan left a 1 GB helper alive until the kernel ended)
    h = helper_mod.helper(16)
    with pytest.raises(PlanError, match="XLA could not compile the plan for 16 devices"):
        h.compile("this is not a module")
    assert not h.alive
    assert helper_mod.helper(16) is not h


def test_the_helper_ends_when_the_kernel_dies():
    code = textwrap.dedent(
        """
        import os
        from shardwidget.plan import helper
        h = helper.helper(4)
        print(h.proc.pid, flush=True)
        os._exit(0)  # no atexit: the helper must notice on its own
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    pid = int(out.stdout.split()[0])
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    pytest.fail(f"helper {pid} outlived its kernel")


def test_the_helper_never_sees_the_kernels_accelerator():
    env = helper_mod._env(64)
    assert env["JAX_PLATFORMS"] == "cpu" and "device_count=64" in env["XLA_FLAGS"]


SHARD_MAP_REAL = textwrap.dedent(
    """
    import json, re, jax, jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    mesh = jax.make_mesh((4, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    def f(w, x):
        return jax.lax.psum(x @ w, "model")
    sm = jax.shard_map(f, mesh=mesh, in_specs=(P("model", None), P("data", "model")),
                       out_specs=P("data", None))
    sh = lambda s: jax.sharding.NamedSharding(mesh, s)
    args = (jax.ShapeDtypeStruct((256, 64), jnp.float32, sharding=sh(P("model", None))),
            jax.ShapeDtypeStruct((32, 256), jnp.float32, sharding=sh(P("data", "model"))))
    c = jax.jit(sm).lower(*args).compile()
    kinds = sorted(m.group(1) for m in re.finditer(
        r"= [^=]*? (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\\(",
        c.as_text()))
    print(json.dumps({"kinds": kinds, "arguments": c.memory_analysis().argument_size_in_bytes}))
    """
)


def test_a_shard_map_plan_matches_a_real_compile():
    am = AbstractMesh((4, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

    def f(w, x):
        return jax.lax.psum(x @ w, "model")

    args = (jax.ShapeDtypeStruct((256, 64), "float32"), jax.ShapeDtypeStruct((32, 256), "float32"))
    pl = plan(f, *args, mesh=am, in_specs=[P("model", None), P("data", "model")],
              out_specs=P("data", None), mode="shard_map")  # fmt: skip
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=16",
           "JAX_PLATFORMS": "cpu"}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", SHARD_MAP_REAL], env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    real = json.loads(out.stdout.strip().splitlines()[-1])
    assert sorted(c.kind for c in pl.collectives) == real["kinds"] == ["all-reduce"]
    assert pl.collectives[0].axes == ("model",)
    assert pl.memory["arguments"] == real["arguments"]
    with pytest.raises(ValueError, match="needs out_specs"):
        plan(f, *args, mesh=am, in_specs=[P("model", None), P("data", "model")], mode="shard_map")
