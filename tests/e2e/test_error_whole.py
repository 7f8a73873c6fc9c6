"""JAX's own error reaches the page whole (issue 38 item 10: a ShardingTypeError was cut at
"via…"): the text JAX raises for a plain jax.jit of the same function, in the view's error and
in the widget's error box, followed by the view's hint."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

from .test_function_view import open_fn

pytestmark = pytest.mark.e2e


def test_sharding_type_error_is_shown_whole(page: Any, tmp_path: Any) -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("y", None)))

    def f(a: Any, b: Any) -> Any:
        return a @ b

    with pytest.raises(Exception, match="Contracting dimensions") as raised:  # what JAX says
        jax.jit(f).lower(a, b)
    jax_says = str(raised.value)
    assert type(raised.value).__name__ == "ShardingTypeError" and len(jax_says) > 200
    view = ShardView(f, a, b)
    assert f"ShardingTypeError: {jax_says}" in view.error
    open_fn(page, tmp_path, view)
    shown = page.locator(".sw-error").first.inner_text()
    assert " ".join(jax_says.split()) in " ".join(shown.split()), (jax_says, shown)
    assert "To fix it" in shown  # and the way out, after it
