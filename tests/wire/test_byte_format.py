"""Byte formatting, one rule in two languages (issue 34, item 5).

Python's ``units.fmt_bytes`` writes the kernel's lines; the renderer's ``formatBytes``
(js/shared/text.ts) writes the widget's tables. ``js/tests/wire/bytes.gen.json`` holds Python's
text for chosen byte counts (unit edges, exact rounding ties, PiB, negatives, real array sizes)
and vitest (js/tests/wire/bytes.test.ts) checks formatBytes against it.
``SHARDWIDGET_REGEN=1`` rewrites it.
"""

from __future__ import annotations

import json
import math
import random

from shardwidget.model.units import fmt_bytes

from . import pinned

FIXTURE = pinned.FOLDER / "bytes.gen.json"
KIB, MIB, GIB, TIB, PIB = (1 << (10 * i) for i in range(1, 6))


def byte_counts() -> list[int]:
    edges = [0, 1, 512, 1023, KIB, KIB + 1, 1536, 10 * KIB, 100 * KIB - 1, MIB - 1, MIB]
    # Exact ties at the last digit kept (1.125 KiB, 10.25 KiB, ...): the two roundings differ there.
    ties = [1152, 10496, 102912, 1.125 * MIB, 10.25 * GIB, 100.5 * TIB]
    big = [GIB, 1.5 * GIB, TIB, PIB - 1, PIB, 3 * PIB, 1500 * PIB]
    # float32 16M, bf16 shards, a peak's bytes (33028: 32.3 KiB)
    arrays = [4096 * 4096 * 4, 8192 * 8192 * 2 // 256, 7 * 13 * 4, 33028]
    rng = random.Random(34)
    # below 2**53: exact as JSON numbers in JavaScript
    spread = [rng.randrange(1 << rng.randrange(1, 53)) for _ in range(200)]
    values = [int(v) for v in edges + ties + big + arrays + spread]
    return values + [-v for v in [*values[1:12], 10496, 150 * KIB, 3 * PIB]]


def table() -> list[list[object]]:
    return [[n, fmt_bytes(n)] for n in byte_counts()]


def test_fixture_is_what_python_gives() -> None:
    fresh = json.dumps(table(), indent=0) + "\n"
    pinned.check(FIXTURE, fresh)


def test_known_answers() -> None:
    """Worked by hand: ties round half away from zero (as JavaScript's toFixed does), PiB exists."""
    assert fmt_bytes(1152) == "1.13 KiB"  # 1.125 KiB exactly
    assert fmt_bytes(10496) == "10.3 KiB"  # 10.25 KiB exactly
    assert fmt_bytes(4096 * 4096 * 4) == "64 MiB"
    assert fmt_bytes(PIB) == "1 PiB"
    assert fmt_bytes(-1536) == "-1.5 KiB"
    assert fmt_bytes(-10496) == "-10.3 KiB"  # 3 significant digits whatever the sign
    assert fmt_bytes(1023) == "1023 B"
    assert [fmt_bytes(v) for v in (0, 1024, 33028, 3 * GIB // 2, TIB)] == [
        "0 B",
        "1 KiB",
        "32.3 KiB",  # 32.254 KiB
        "1.5 GiB",
        "1 TiB",
    ]
    # not finite: the spelling formatBytes gives (String(n) in JavaScript), no exception
    assert [fmt_bytes(v) for v in (math.inf, -math.inf, math.nan)] == [
        "Infinity",
        "-Infinity",
        "NaN",
    ]
