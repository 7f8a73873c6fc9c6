"""Free device memory, and the guard that runs before device work. Imports no widget code.

Before a re-layout (``device_put``) or a function run, the views ask :func:`check_fits` whether
the bytes it needs on each device are free, and refuse in words (nothing done, nothing lost)
when they are not. Where free memory comes from:

- accelerators: ``device.memory_stats()``: ``bytes_limit - bytes_in_use`` per device;
- CPU devices (and any backend that gives no stats): they share the host's memory, so the sum
  of what they need is compared with the host's available memory (``MemAvailable`` of
  ``/proc/meminfo``); unknown there, nothing is refused.

:func:`free_memory` is looked up at call time, so tests can monkeypatch it to act out a small
device.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import jax

GIB = 1 << 30


def host_available_bytes() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is no such file)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def free_memory(devices: Sequence[Any]) -> tuple[dict[int, int], int | None]:
    """(free bytes per device id, for devices whose backend reports them; free bytes of the
    host memory that the other devices share, or None when unknown)."""
    per_device: dict[int, int] = {}
    for d in devices:
        if getattr(d, "platform", "") == "cpu":
            continue
        try:
            stats = d.memory_stats()
        except Exception:  # some backends raise instead of returning None
            stats = None
        if stats and "bytes_limit" in stats:
            per_device[int(d.id)] = int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    return per_device, host_available_bytes()


def gib(n: float) -> str:
    """Bytes in GiB for a message: "1.50 GiB" (three significant digits below 1 GiB)."""
    return f"{n / GIB:.2f} GiB" if n >= GIB / 100 or n == 0 else f"{n / GIB:.2g} GiB"


def check_fits(need: Mapping[Any, int], what: str) -> None:
    """ValueError in words when ``need`` (bytes per jax device) does not fit in free memory:
    per device where the backend reports it, else summed over the devices that share the
    host's memory. ``what`` names the work ("re-laying out to P('x', None)")."""
    here = jax.process_index()
    devices = [d for d in need if getattr(d, "process_index", here) == here]  # this process's
    per_device, host = free_memory(devices)
    # Devices that do not report their own memory share the host's. When none reports (CPU,
    # thousands of simulated devices on the path of every layout change), one sum does.
    shared = 0 if per_device else sum(int(need[d]) for d in devices)
    for d in devices if per_device else ():
        n = int(need[d])
        free = per_device.get(int(d.id))
        if free is None:
            shared += n
        elif n > free:
            raise ValueError(
                f"{what} needs {gib(n)} on device {d.id} ({d.platform}), but only {gib(free)} "
                "is free there; nothing was changed. Free some memory (delete arrays you no "
                "longer need) or choose a layout that shards more"
            )
    if host is not None and shared > host:
        k = sum(1 for d in devices if int(d.id) not in per_device)
        raise ValueError(
            f"{what} needs {gib(shared)} in all on {k} device(s) that share the host's memory, "
            f"but only {gib(host)} is available; nothing was changed. Free some memory or "
            "choose a layout that shards more"
        )


def buffers(arrays: Iterable[jax.Array]) -> dict[tuple[int, int], int]:
    """{(device id, buffer address): bytes} of the device buffers under arrays (deleted ones
    skipped). Per-shard views that JAX caches on an array share its buffers: counted once."""
    out: dict[tuple[int, int], int] = {}
    for a in arrays:
        try:
            if a.is_deleted():
                continue
            for s in a.addressable_shards:
                d = s.data
                out[(int(s.device.id), int(d.unsafe_buffer_pointer()))] = int(d.nbytes)
        except Exception:  # a buffer that went away while we looked
            continue
    return out


def held_bytes(own: Iterable[jax.Array] = ()) -> int:
    """Bytes of live device buffers (``jax.live_arrays()``, each buffer once) beyond those of
    the arrays in own (the user's arrays): what views and caches hold."""
    mine = buffers(own)
    live = buffers(jax.live_arrays())
    return int(sum(n for k, n in live.items() if k not in mine))


def compiled_memory(compiled: jax.stages.Compiled) -> dict[str, int]:
    """Per-device bytes of a compiled executable (``memory_analysis()``): argument, output,
    alias, temp, generated code, and the peak (argument + output - alias + temp); {} where the
    backend says nothing."""
    try:
        m = compiled.memory_analysis()
    except Exception:
        return {}
    if m is None:
        return {}
    if isinstance(m, list | tuple):
        m = m[0]

    def g(k: str) -> int:
        return int(getattr(m, k, 0) or 0)

    arg, out, alias, temp = (
        g("argument_size_in_bytes"),
        g("output_size_in_bytes"),
        g("alias_size_in_bytes"),
        g("temp_size_in_bytes"),
    )
    return {
        "argument": arg,
        "output": out,
        "alias": alias,
        "temp": temp,
        "generated_code": g("generated_code_size_in_bytes"),
        "peak": arg + out - alias + temp,
    }
