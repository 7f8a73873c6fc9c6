"""One of two JAX processes on loopback; prints what its ShardView says as JSON."""

import json
import sys

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

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
sharding = NamedSharding(mesh, P("x", "y"))
arr = jax.make_array_from_callback(x.shape, sharding, lambda idx: x[idx])
v = ShardView(arr)
local = {d.id for d in jax.local_devices()}
err = ""
try:
    v.spec = ["y", "x"]
except ValueError as e:
    err = str(e)
# A function view: the front end reaches process 0 only, so its requests are refused at once
# (a compile and run are collective); the same change from Python on every process works.
import time  # noqa: E402

fv = ShardView(lambda a: a * 2, arr)
sent = []
fv.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
req = {"type": "trace_request", "seq": 1, "state": {**fv._trace_options["original"]}}
req["state"]["in_specs"] = [["y", "x"]]
t0 = time.perf_counter()
fv._on_custom_msg(fv, req, [])
refused_s = time.perf_counter() - t0
fv.set_layout(in_specs=[["y", "x"]])
fn = {
    "static": fv._trace_options.get("static", ""),
    "result": sent[-1],
    "refused_s": refused_s,
    "in_spec": str(fv.trace.input_leaves[0].sharding.spec),
    "outputs_ok": bool(
        np.allclose(
            np.concatenate(
                [np.asarray(s.data).reshape(-1) for s in fv.outputs[0].addressable_shards]
            ).sum(),
            sum(2 * x[s.index].sum() for s in fv.outputs[0].addressable_shards),
        )
    ),
}
print(
    "RESULT"
    + json.dumps(
        {
            "pid": pid,
            "local": sorted(local),
            "blocks": [[b["i"], b["d"]] for b in v._layout["blocks"]],
            "process": dict(
                zip(
                    map(str, v._layout["devices"]["ids"]),
                    v._layout["devices"]["process"],
                    strict=True,
                )
            ),
            "local_process": v._layout["devices"]["local_process"],
            "stats": v._stats["blocks"],
            "disabled": v._options["reshard_disabled"],
            "error": err,
            "text": repr(v),
            "fn": fn,
        }
    ),
    flush=True,
)
jax.distributed.shutdown()
