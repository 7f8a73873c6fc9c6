"""One of two JAX processes on loopback: the front end reaches process 0 only (a layout request,
a trait change, an undo step), then both make the same Python call. Prints JSON."""

import json
import sys
import time

import jax

pid, port = int(sys.argv[1]), int(sys.argv[2])
jax.config.update("jax_num_cpu_devices", 4)
jax.distributed.initialize(
    coordinator_address=f"127.0.0.1:{port}",
    num_processes=2,
    process_id=pid,
    initialization_timeout=60,
)
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from shardwidget import ShardView  # noqa: E402

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
y = np.ones((8, 8), np.float32)
sharding = NamedSharding(mesh, P("x", "y"))
a = jax.make_array_from_callback(x.shape, sharding, lambda idx: x[idx])
b = jax.make_array_from_callback(y.shape, sharding, lambda idx: y[idx])
fv = ShardView(lambda p, q: p @ q, a, b)
sent = []
fv.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
want = {"mesh_shape": [4, 2], "axis_names": ["x", "y"], "in_specs": [["x", "y"], ["y", None]]}
shown_before = fv.trace.state
t0 = time.perf_counter()
if pid == 0:  # what the front end can send; process 1 idles meanwhile
    state = {**fv._trace_options["original"], **want}
    fv._on_custom_msg(fv, {"type": "trace_request", "seq": 1, "state": state}, [])
    fv.set_state({"in_specs": [["y", None], ["x", None]]})
    fv._on_custom_msg(fv, {"type": "history", "step": -1}, [])
refused_s = time.perf_counter() - t0
unchanged = fv.trace.state == shown_before
fv.set_layout(**want)  # the same call on every process
out = fv.outputs[0]
local = [(s.index, np.asarray(s.data)) for s in out.addressable_shards]
print(
    "RESULT"
    + json.dumps(
        {
            "pid": pid,
            "refused_s": refused_s,
            "unchanged": unchanged,
            "messages": [m.get("error", m.get("ok")) for m in sent],
            "in_specs": fv.in_specs,
            "mesh_shape": fv.mesh_shape,
            "error": fv.error,
            "values_ok": all(np.allclose(d, (x @ y)[idx]) for idx, d in local),
        }
    ),
    flush=True,
)
jax.distributed.shutdown()
