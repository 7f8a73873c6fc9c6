"""The memory peak read from XLA:CPU's own reports (trace/hlo_peak.py), checked against what
the compiler says elsewhere (``memory_analysis()``, the report's own peak) and against programs
whose peak is known by construction. Compiled with plain ``jax.jit(...).lower().compile()``
here, never through the widget, except where the widget's own ``view.trace.peak`` is checked
against such a compile."""

from __future__ import annotations

import math
import shutil
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import _jax
from shardwidget.hlo import peak as hlo_peak

N = 8


def mesh():
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def compile_peak(f, *args, donate=(), in_paths=()):
    """(peak, memory_analysis) of ``jax.jit(f)`` compiled for args, read from the dump;
    skipped (the reason checked) where this jaxlib's XLA:CPU writes no live-range report."""
    folder = tempfile.mkdtemp()
    try:
        lowered = jax.jit(f, donate_argnums=donate).lower(*args)
        compiled = lowered.compile(compiler_options={"xla_dump_to": folder, **_jax.PEAK_DUMP})
        peak = hlo_peak.peak_of(hlo_peak.dump_texts(folder), in_paths)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if peak == hlo_peak.NO_LIVE_RANGE and jax.__version_info__ < (0, 10):
        pytest.skip(peak)
    assert not isinstance(peak, str), peak
    return peak, compiled.memory_analysis()


def bound(m) -> int:
    """argument + output - alias + temp of memory_analysis()."""
    return (
        m.argument_size_in_bytes
        + m.output_size_in_bytes
        - m.alias_size_in_bytes
        + m.temp_size_in_bytes
    )


def check_agrees(peak, m) -> None:
    """What must hold of any peak: its buffers sum to it, it is the timeline's top, and no
    more than memory_analysis' total (XLA:CPU holds arguments, outputs and one block of
    temporaries)."""
    assert sum(b.bytes for b in peak.buffers) == peak.bytes
    assert max(peak.timeline) == peak.bytes == peak.timeline[peak.at.index]
    assert peak.bytes <= bound(m)
    assert len(peak.timeline) == peak.instructions


def sharded(shape, spec, dtype=jnp.float32):
    return jax.device_put(jnp.ones(shape, dtype), NamedSharding(mesh(), spec))


def test_copy_without_donation_holds_input_and_output():
    x = sharded((1024, 512), P("x", "y"))  # 64 KiB per device
    per_device = 1024 * 512 * 4 // N
    peak, m = compile_peak(lambda a: a * 2, x, in_paths=["x"])
    check_agrees(peak, m)
    assert peak.bytes == 2 * per_device == peak.reported_bytes  # nothing shares bytes here
    kinds = sorted((b.kind, b.bytes) for b in peak.buffers)
    assert kinds == [("argument", per_device), ("output", per_device)]
    arg = next(b for b in peak.buffers if b.kind == "argument")
    assert (arg.path, arg.aliased, arg.shape) == ("x", False, "f32[512,128]")


def test_donated_argument_is_reused_by_the_output():
    x = sharded((1024, 512), P("x", "y"))
    per_device = 1024 * 512 * 4 // N
    peak, m = compile_peak(lambda a: a * 2, x, donate=(0,), in_paths=["x"])
    assert m.alias_size_in_bytes == per_device  # XLA says it aliased it
    check_agrees(peak, m)
    assert peak.bytes == per_device  # the output lives in the argument's bytes
    (arg,) = [b for b in peak.buffers if b.kind == "argument"]
    assert arg.aliased and arg.bytes == per_device


def test_one_big_temporary_is_named_by_its_line():
    x = sharded((2048,), P(None))

    def f(v):
        t = v[:, None] * v[None, :]  # 2048 x 2048 f32 = 16 MiB, the big temporary
        return (t @ t)[0]

    peak, m = compile_peak(f, x, in_paths=["v"])
    check_agrees(peak, m)
    # at the matmul: v, t and t @ t (its operand is read while its result is written)
    assert peak.bytes == 2048 * 4 + 2 * 2048 * 2048 * 4
    assert peak.at.op_name == "jit(f)/dot_general"
    big = [b for b in peak.buffers if b.kind == "temporary" and b.shape == "f32[2048,2048]"]
    assert [b.bytes for b in big] == [2048 * 2048 * 4] * 2
    assert {b.op_name for b in big} == {"jit(f)/mul", "jit(f)/dot_general"}
    assert all(b.source.startswith("test_peak.py:") for b in big)
    # XLA's live-range report leaves the dying operand out of its own peak (one 16 MiB
    # value fewer), though its buffer assignment gives both values their own bytes
    assert peak.reported_bytes < peak.bytes


def layer_model(layers, scan):
    def loss(ws, x):
        if scan:
            x, _ = jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)
        else:
            for w in ws:
                x = jnp.tanh(x @ w)
        return (x**2).mean()

    return loss


@pytest.mark.parametrize("scan", [True, False], ids=["scan", "python-loop"])
def test_gradient_of_several_layers_agrees(scan):
    layers, b, d = 4, 512, 256
    w = sharded((layers, d, d), P(None, "x", "y")) if scan else sharded((d, d), P("x", "y"))
    ws = w if scan else [w] * layers
    x = sharded((b, d), P("y", None))
    paths = ["ws"] if scan else [f"ws[{i}]" for i in range(layers)]
    peak, m = compile_peak(jax.grad(layer_model(layers, scan)), ws, x, in_paths=[*paths, "x"])
    check_agrees(peak, m)
    # the arguments at the peak are the input leaves' bytes per device, each once
    args = {b.path: b.bytes for b in peak.buffers if b.kind == "argument"}
    leaves = [ws] if scan else list(ws)
    want = {
        p: math.prod(a.sharding.shard_shape(a.shape)) * 4
        for p, a in zip(paths, leaves, strict=True)
    }
    want["x"] = math.prod(x.sharding.shard_shape(x.shape)) * 4
    assert args == want
    if scan:  # the activations saved for the backward pass: one stacked buffer per layer
        per_device_acts = layers * (b // 4) * d * 4
        saved = [
            b_
            for b_ in peak.buffers
            if b_.kind == "temporary" and b_.shape.startswith(f"f32[{layers},")
        ]
        assert saved and max(s.bytes for s in saved) >= per_device_acts // 2, peak.buffers


def test_by_source_groups_every_byte():
    x = sharded((512, 256), P("x", None))
    w = sharded((256, 256), P(None, "y"))
    peak, _ = compile_peak(jax.grad(lambda w, x: jnp.tanh(x @ w).sum()), w, x, in_paths=["w", "x"])
    groups = peak.by_source()
    assert sum(groups["leaf"].values()) == peak.of_kind("argument")
    assert set(groups["leaf"]) == {"w", "x"}
    assert sum(groups["leaf"].values()) + sum(groups["source"].values()) == peak.bytes


def test_the_view_reads_the_same_peak_as_a_plain_compile():
    import shardwidget as sw

    x = sharded((512, 256), P("x", None))
    w = sharded((256, 256), P(None, "y"))

    def f(w, x):
        return jnp.tanh(x @ w).sum()

    g = jax.grad(f)
    view = sw.ShardView(g, w, x)
    t = view.trace
    if jax.__version_info__ < (0, 10):  # no live-range report: None, and the view says why
        assert t.peak is None and t.peak_unknown == hlo_peak.NO_LIVE_RANGE
    want, m = compile_peak(g, w, x, in_paths=["w", "x"])
    assert t.peak is not None and t.peak_unknown == ""
    assert t.memory["peak"] == bound(m)  # the same compile as the view's
    assert t.peak.bytes == want.bytes
    assert [(b.kind, b.bytes, b.path) for b in t.peak.buffers] == [
        (b.kind, b.bytes, b.path) for b in want.buffers
    ]


def test_no_report_is_said_in_words():
    assert hlo_peak.peak_of({}) == hlo_peak.NO_REPORT
    fields = hlo_peak.peak_fields({"after_optimizations-live-range.txt": "garbage"})
    assert fields["peak"] is None and "no" in fields["peak_unknown"]


def test_timeline_counts_shared_bytes_once():
    """A hand-written report: two values in the same bytes (in place) count once, and the
    argument for the whole program."""
    live = "\n".join(
        [
            "HloLiveRange (max 3):",
            "  InstructionSequence:",
            "    0:p.1",
            "    1:a",
            "    2:b",
            "  BufferLiveRange:",
            "    p.1{}:0-3",
            "    a{}:1-2",
            "    b{}:2-3",
            "  Live ranges at 2 (peak):",
            "    p.1{}: 4 bytes (cumulative: 4 bytes)",
            "    a{}: 8 bytes (cumulative: 12 bytes)",
            "    b{}: 8 bytes (cumulative: 20 bytes)",
            "  Stack trace breakdown for peak usage: 20 bytes",
        ]
    )
    assign = "\n".join(
        [
            "allocation 0: size 4, parameter 0, shape |f32[1]| at ShapeIndex {}:",
            " value: <1 p.1 @0> (size=4,offset=0): f32[1]{0}",
            "allocation 1: size 8, output shape is |f32[2]|, maybe-live-out:",
            " value: <2 a @0> (size=8,offset=0): f32[2]{0}",
            " value: <3 b @0> (size=8,offset=0): f32[2]{0}",
        ]
    )
    peak = hlo_peak.peak_of({hlo_peak.LIVE_RANGE: live, hlo_peak.ASSIGNMENT: assign}, ["p"])
    assert not isinstance(peak, str)
    assert peak.timeline == (4, 12, 12)
    assert (peak.bytes, peak.reported_bytes, peak.at.index) == (12, 20, 1)
    assert np.array_equal(sorted(b.bytes for b in peak.buffers), [4, 8])


def test_the_peak_in_words():
    from shardwidget.hlo import peak_text

    x = sharded((1024, 512), P("x", "y"))
    peak, _ = compile_peak(lambda a: a * 2, x, in_paths=["x"])
    per_device = 1024 * 512 * 4 // N
    assert peak_text.title(peak).startswith("peak 512 KiB at jit(<lambda>)/mul at test_peak.py:")
    assert peak_text.title(peak, hbm=2**30).endswith("(0.049 % of 1 GiB HBM)")
    assert peak_text.title(peak, hbm=per_device).endswith("(256 KiB over the 256 KiB of HBM)")
    groups = {g: total for g, total, _ in peak_text.grouped(peak)}
    assert groups == {"parameters and inputs": per_device, "outputs": per_device}
    lines = peak_text.compact(peak)
    assert lines[1] == "  parameters and inputs 256 KiB: x 256 KiB"
