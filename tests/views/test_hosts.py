"""docs/hosts.md's Colab note, checked without Colab: in a kernel where ``google.colab.output``
is imported, making a view turns on Colab's custom widget manager (anywidget does it, once) and
the display bundle names the manager's URL. Both views go through anywidget's own code."""

from __future__ import annotations

import sys
import types

import jax.numpy as jnp
import pytest

from shardwidget import ShardView

MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def fake_colab(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from anywidget import _util

    calls: list[int] = []
    output = types.ModuleType("google.colab.output")
    output.enable_custom_widget_manager = lambda: calls.append(1)  # type: ignore[attr-defined]
    output._widgets = types.SimpleNamespace(_installed_url="https://colab.example/manager.js")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "google.colab.output", output)
    _util.enable_custom_widget_manager_once.cache_clear()
    yield calls
    _util.enable_custom_widget_manager_once.cache_clear()


@pytest.mark.parametrize("kind", ["array", "function"])
def test_colab_widget_manager_is_enabled_by_anywidget(fake_colab: list[int], kind: str) -> None:
    x = jnp.arange(8.0)
    view = ShardView(x) if kind == "array" else ShardView(lambda a: a * 2, x)
    try:
        assert fake_colab == [1]  # enabled when the view was made
        data, meta = view._repr_mimebundle_()
        assert MIME in data and "text/html" in data  # the widget, and the static picture
        assert meta[MIME]["colab"]["custom_widget_manager"]["url"].endswith("manager.js")
        ShardView(x)  # once per kernel
        assert fake_colab == [1]
    finally:
        view.close()


def test_no_colab_metadata_elsewhere() -> None:
    view = ShardView(jnp.arange(8.0))
    try:
        _data, meta = view._repr_mimebundle_()
        assert "colab" not in str(meta)
    finally:
        view.close()
