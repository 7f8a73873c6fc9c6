"""The donate fix of view.memory_fixes(): an argument whose buffer an output can reuse, donated
as ``jax.jit(f, donate_argnums=k)`` donates it. Built so the answer is known (an update
``w - lr * g`` whose output has w's shape, dtype and sharding: donating w lets XLA write the
result into w's buffer, one w fewer per device) and checked against plain
``jax.jit(f, donate_argnums=k).lower(...).compile()``: its alias bytes and its peak (read from
its own dump where this jax writes one, else argument + output - alias + temp)."""

from __future__ import annotations

import json
import shutil
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView, _jax
from shardwidget.hlo import peak as hlo_peak

W = (512, 512)  # 1 MiB of float32 per device, replicated
MIB = 2**20


def update(w, g):
    return w - 0.1 * g


def direct(donate: tuple[int, ...]) -> tuple[int, int]:
    """(peak, alias bytes) per device of plain jax.jit with this donation."""
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    sds = jax.ShapeDtypeStruct(W, jnp.float32, sharding=NamedSharding(mesh, P()))
    folder = tempfile.mkdtemp()
    try:
        lowered = jax.jit(update, donate_argnums=donate).lower(sds, sds)
        compiled = lowered.compile(compiler_options={"xla_dump_to": folder, **_jax.PEAK_DUMP})
        peak = hlo_peak.peak_of(hlo_peak.dump_texts(folder), ["w", "g"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    m = compiled.memory_analysis()
    alias = int(m.alias_size_in_bytes)
    if isinstance(peak, str):  # no live-range report on this jax: the totals
        total = m.argument_size_in_bytes + m.output_size_in_bytes - alias + m.temp_size_in_bytes
        return int(total), alias
    return peak.bytes, alias


@pytest.fixture
def arrays():
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    rep = NamedSharding(mesh, P())
    w = jax.device_put(jnp.ones(W, jnp.float32), rep)
    g = jax.device_put(jnp.full(W, 2.0, jnp.float32), rep)
    return w, g


def test_donating_w_is_offered_and_agrees_with_plain_jit(arrays):
    v = ShardView(update, *arrays)
    assert v.trace.memory["alias"] == 0
    fixes = [f for f in v.memory_fixes() if f.what.startswith("donate")]
    assert [f.what.split(" (")[0] for f in fixes] == ["donate w", "donate g"]
    for k, fix in enumerate(fixes):
        assert not fix.error and fix.state.donate == (k,)
        peak, alias = direct((k,))
        assert alias == W[0] * W[1] * 4  # the compiler reuses one 1 MiB buffer
        assert fix.peak == peak and fix.memory["alias"] == alias
        assert fix.lowers and fix.before - fix.peak >= MIB  # one w fewer per device
    assert fixes[0].before == direct(())[0]


def test_apply_donates_copies_and_undo_restores(arrays):
    w, g = arrays
    v = ShardView(update, w, g)
    before = v.trace.memory
    k = next(i for i, f in enumerate(v.memory_fixes()) if f.what.startswith("donate w"))
    v.apply_memory_fix(k)
    assert v.donate == ["w"] and v.trace.state.donate == (0,)
    assert v.trace.memory["alias"] == direct((0,))[1] > 0
    assert not w.is_deleted() and not g.is_deleted()  # the run donated copies
    np.testing.assert_allclose(np.asarray(v.outputs[0]), np.full(W, 0.8, np.float32))
    assert "donate_argnums=(0,)" in v.code and "donate w" in v._state_label(v.trace.state)
    v.in_specs = [P("d"), P("d")]  # a change of the specs keeps the donation
    assert v.trace.state.donate == (0,) and v.trace.memory["alias"] > 0
    v.undo()
    v.undo()
    assert v.donate == [] and v.trace.memory == before
    v.donate = ["g"]
    assert v.trace.memory["alias"] == direct((1,))[1]
    v.reset()
    assert v.donate == [] and "donate_argnums" not in v.code


def request(v, state, seq):
    """What the widget sends (JSON, as the comm carries it); it must compile."""
    msg = {"type": "trace_request", "seq": seq, "state": json.loads(json.dumps(state))}
    v._on_custom_msg(v, msg, [])
    assert not v.error, v.error


def test_the_widgets_reset_returns_to_the_donation_as_view_reset_does(arrays):
    """Reset is the view as first made, in both places: Python's reset() and the widget's
    button (a request with the options' original, donation included) clear a donation made
    since; a request of the controls (no donation in it) keeps it."""
    v = ShardView(update, *arrays)
    original = v._trace_options["original"]
    assert original["donate"] == []
    v.donate = ["g"]
    assert v.trace.memory["alias"] == direct((1,))[1] > 0
    moved = {**v._trace_options["original"], "in_specs": [["d", None], ["d", None]]}
    del moved["donate"]
    request(v, moved, 1)  # a spec change from the controls
    assert v.in_specs == moved["in_specs"] and v.donate == ["g"] and v.trace.memory["alias"] > 0
    request(v, original, 2)  # the Reset button
    assert v.donate == [] and v.in_specs == original["in_specs"]
    assert v.trace.memory["alias"] == direct(())[1] == 0
    v.donate = ["w"]
    v.reset()
    assert v.donate == [] and v.trace.memory["alias"] == 0


def test_donate_refuses_what_is_not_an_input_in_words(arrays):
    v = ShardView(update, *arrays)
    with pytest.raises(ValueError, match=r"donate: 'y' is not one of the 2 array inputs \(w, g\)"):
        v.donate = ["y"]
    with pytest.raises(ValueError, match="donate: 5 is not one of"):
        v.set_layout(donate=[5])
    assert v.donate == []


def test_a_plan_carries_the_donation_to_its_compile():
    mesh = AbstractMesh((8,), ("d",), axis_types=(AxisType.Auto,))
    sds = jax.ShapeDtypeStruct(W, jnp.float32)
    v = ShardView(update, sds, sds, mesh=mesh)
    plain = v.trace.memory
    v.donate = [0]
    assert v.trace.memory["alias"] == direct((0,))[1] > 0
    assert v.trace.memory["peak"] == plain["peak"] - v.trace.memory["alias"]
    if v.trace.peak is not None:
        assert v.trace.peak.bytes == direct((0,))[0]
    v.undo()  # the cache of compiles answers for the layout asked, donation included
    assert v.trace.memory == plain
