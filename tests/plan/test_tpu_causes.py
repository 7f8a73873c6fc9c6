"""The causes of a function view's collectives on a tpu_mesh: compiled by the TPU compiler
(libtpu, in the TPU helper), each cause checked against libtpu's own Shardy dump of that very
compile. Needs libtpu (in this Python, or the one SHARDWIDGET_TPU_PYTHON names); skipped with
the reason elsewhere. A v5e:2x4 only (a compile takes about a second)."""

from __future__ import annotations

import time
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwidget as sw
from shardwidget import _jax
from shardwidget.plan import background, tpu
from shardwidget.why import cause as cause_mod
from shardwidget.why import sdy

pytestmark = pytest.mark.skipif(bool(tpu.unavailable()), reason=tpu.unavailable() or "")


def tpu_trace(view: sw.FunctionView) -> Any:
    """The view's trace once the TPU compiler's plan is shown (a view shows the CPU compiler's
    plan while libtpu compiles in the background)."""
    assert background.wait(300)
    end = time.monotonic() + 60
    while "compiled by the TPU compiler" not in view.planned:
        assert time.monotonic() < end, "the view never switched to the TPU compiler's plan"
        time.sleep(0.05)
    res = view.trace
    assert res is not None and ":T(8,128)" in res.hlo_text  # TPU tiles: libtpu compiled it
    return res


def test_tpu_causes_checked_against_libtpus_dump() -> None:
    missing = _jax.shardy_missing()
    if missing:
        pytest.skip(missing)
    mesh = sw.tpu_mesh("v5e:2x4", (2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def f(x, w):
        y = jnp.tanh(x @ w)  # contracted over x: partial sums
        return jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("y", None)))

    sds = [
        jax.ShapeDtypeStruct((64, 256), jnp.float32),
        jax.ShapeDtypeStruct((256, 512), jnp.float32),
    ]
    view = sw.ShardView(f, *sds, mesh=mesh, in_specs=[P(None, "x"), P("x", None)])
    res = tpu_trace(view)
    assert res.collectives
    explainer = res.collectives[0].explainer
    assert explainer.dump and "sdy.sharding_origins" in explainer.dump  # libtpu's own record
    causes = [c.cause for c in res.collectives]
    assert all(c.known and c.checked == cause_mod.CHECKED for c in causes), [
        (c.text, c.checked) for c in causes
    ]
    line = f.__code__.co_firstlineno + 1
    assert all(c.op is not None and c.op.line in (line, line + 1) for c in causes)
    for c, k in zip(res.collectives, causes, strict=True):
        if c.kind == "all-reduce":  # partial sums over the axes libtpu's program reduces over
            assert " ".join(c.axes) in k.text and "partial sum" in k.text, (c.axes, k.text)
    asked = sdy.Sharding((("y",), ())).words()  # the constraint's P("y", None), in words
    for k in causes:  # each names the constraint where it stands, with the spec it asks
        assert [(p.line, p.spec.split(" (")[0]) for p in k.constraints] == [(line + 1, asked)]


def test_tpu_cause_where_the_output_is_left_to_shardy() -> None:
    """libtpu's dump writes no sharding on a replicated result: read as replicated, the
    in-process propagation agrees with it (before: "Shardy in this process differed")."""
    missing = _jax.shardy_missing()
    if missing:
        pytest.skip(missing)
    mesh = sw.tpu_mesh("v5e:2x4", (2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def f(x, w):
        return x @ w

    sds = [jax.ShapeDtypeStruct((16, 32), jnp.float32), jax.ShapeDtypeStruct((32, 64), jnp.float32)]
    view = sw.ShardView(f, *sds, mesh=mesh, in_specs=[P(None, "x"), P("x", None)])
    res = tpu_trace(view)
    assert res.out_shardings[0].is_fully_replicated  # as JAX compiled it
    reduces = [c for c in res.collectives if c.kind == "all-reduce"]
    assert reduces, [c.kind for c in res.collectives]
    for c in reduces:
        k = c.cause
        assert k.known and k.checked == cause_mod.CHECKED, (k.text, k.checked)
        assert f"split over {' '.join(c.axes)} on both sides" in k.text and "replicated" in k.text


def test_tpu_scanned_gradient_layers() -> None:
    """A gradient through a scan compiled by libtpu: its loop-body collectives read from
    libtpu's dump ("every layer of the scan: 3 iterations", the trip count from the loop's own
    test, which the TPU program carries instead of a known trip count); those inside the
    TPU's asynchronous collective fusions stay "cause unknown", with the reason."""
    missing = _jax.shardy_missing("stablehlo.while")
    if missing or jax.__version_info__ < (0, 10):
        pytest.skip(missing or "the layers of a scan explained as measured on jax 0.10")
    mesh = sw.tpu_mesh("v5e:2x4", (2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def loss(ws, x):
        def layer(h, w):
            return jnp.tanh(h @ w), None

        h, _ = jax.lax.scan(layer, x, ws)
        return (h**2).mean()

    sds = [
        jax.ShapeDtypeStruct((3, 256, 256), jnp.float32),
        jax.ShapeDtypeStruct((128, 256), jnp.float32),
    ]
    view = sw.ShardView(
        jax.grad(loss), *sds, mesh=mesh, in_specs=[P(None, None, "x"), P("y", None)]
    )
    res = tpu_trace(view)
    known = [(c, c.cause) for c in res.collectives if c.cause.known]
    assert known, [c.cause.text for c in res.collectives]
    for c, k in known:
        assert k.checked == cause_mod.IN_BODY and cause_mod.SCAN.format(3) in k.text, k.text
        assert k.op is not None and k.op.line == loss.__code__.co_firstlineno + 2
        if c.kind == "all-reduce":  # partial sums over the axes libtpu's program reduces over
            assert f"contracted dim is split over {' '.join(c.axes)} on both sides" in k.text
    for c in res.collectives:
        assert c.cause.known or c.cause.text == f"cause unknown: {c.cause.reason}"
