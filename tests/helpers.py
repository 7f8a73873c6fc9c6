"""Helpers shared by the view tests: stand in for the front end's side of the comm."""

import gc
import inspect
from typing import Any

import jax
import pytest

UNREDUCED = "out_sharding" in inspect.signature(jax.lax.reduce_sum).parameters
"""Whether this JAX can make an unreduced array (lax.reduce_sum(..., out_sharding=P(...,
unreduced=...))): from jax 0.8; 0.7 has no out_sharding there, so no unreduced array exists."""


PARTIALS = UNREDUCED and jax.__version_info__ >= (0, 9)
"""Whether a view can read each device's partial value of an unreduced array: jax 0.8 refuses
to reduce an unreduced operand inside a shard_map ("operand passed to reduce_sum cannot be
unreduced"), so the view shows the layout and says why there are no statistics."""


def require_unreduced(partials: bool = False) -> None:
    """Skip the calling test on a JAX that cannot make an unreduced array (or, with
    ``partials``, whose per-device partial values the view cannot read)."""
    if not UNREDUCED:
        pytest.skip(
            f"jax {jax.__version__} cannot make an unreduced array "
            "(lax.reduce_sum has no out_sharding before jax 0.8)"
        )
    if partials and not PARTIALS:
        pytest.skip(
            f"jax {jax.__version__} refuses to reduce an unreduced operand in a shard_map, "
            "so per-device partial values are read from jax 0.9"
        )


def collect() -> None:
    """Run the cyclic garbage collector until a pass frees nothing (at most 10 passes).

    On jax 0.8 and 0.9 an array that the collector frees leaves the per-shard arrays of its
    ``addressable_shards`` (each holding itself through its own cached ``addressable_shards``,
    as ``jax.live_arrays()`` walkers make them) to the next pass; on jax 0.10 one pass frees
    both. A test that counts live device bytes after one ``gc.collect()`` would then count
    garbage that an earlier test left, and see it vanish later."""
    for _ in range(10):
        if not gc.collect():
            return


class Sent:
    """Collects the custom messages and state updates the widget sends to the front end."""

    def __init__(self, view: Any) -> None:
        self.msgs: list[Any] = []
        self.states: list[Any] = []
        view.send = lambda content, buffers=None: self.msgs.append(content)
        orig = view.send_state

        def send_state(key: Any = None) -> None:
            self.states.append(key)
            orig(key)

        view.send_state = send_state


def state_of(view: Any, **changes: Any) -> dict[str, Any]:
    """The view's layout state as the front end sends it, with changes."""
    st = {k: getattr(view, k) for k in view.STATE_TRAITS}
    st.update(changes)
    return st


def request(view: Any, seq: int, **changes: Any) -> None:
    """A front-end request for the view's state with changes, handled as the comm would."""
    msg = {"type": "request", "seq": seq, "state": state_of(view, **changes)}
    view._on_custom_msg(view, msg, [])


def svgs_in(html: str) -> list[str]:
    """The SVG pictures of a static picture's HTML (each an <img> of a data: URI)."""
    import base64
    import re

    uris = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    return [base64.b64decode(u).decode() for u in uris]


def said_in(html: str) -> list[str]:
    """The words a static picture keeps out of sight for search and screen readers (its
    caption's list: a function's collectives, a tree's leaves), unescaped."""
    import html as html_mod
    import re

    block = re.search(r'<div class="shardwidget-said"[^>]*>(.*?)</div>', html, re.S)
    items = re.findall(r"<li>(.*?)</li>", block.group(1), re.S) if block else []
    return [html_mod.unescape(i) for i in items]
