"""The cost traits the view kinds share: the hardware the estimates are for, and its presets.

A mixin, so every kind gains the same ``hardware`` trait without a change to their base (the
array and function views' estimates; the tree view's memory chart, which marks the preset's
HBM, redefines the trait with its own default). Each view says what to re-publish when the
hardware changes (``_cost_changed``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import traitlets
from traitlets.utils.bunch import Bunch

from .. import wire
from ..cost import hardware as hw_mod
from .boundary import InvalidValue


class HardwareName(traitlets.Unicode):  # type: ignore[type-arg]  # (a str trait: the defaults)
    """A preset's name; a :class:`~shardwidget.cost.hardware.Hardware` given instead is
    registered under its name, which the trait then holds (the front end sees names only)."""

    def validate(self, obj: object, value: object) -> Any:
        if isinstance(value, hw_mod.Hardware):
            try:
                value = hw_mod.register(value).name
            except ValueError as e:
                raise InvalidValue(str(e)) from None
        return super().validate(obj, value)


class CostMixin(traitlets.HasTraits):
    """``hardware`` (the dropdown's choice) and ``_hardware_presets`` (its options)."""

    _QUIET_TRAITS: ClassVar[tuple[str, ...]] = ("_hardware_presets",)
    """A new preset in the dropdown leaves the picture as it is (see ShardView._QUIET_TRAITS)."""

    hardware = HardwareName(hw_mod.DEFAULT).tag(sync=True)
    """str, default "tpu-v5p": the hardware preset estimates are for ("tpu-v4", "tpu-v5e",
    "tpu-v5p", "tpu-v6e", "h100", "a100", "local", or a name given to
    ``shardwidget.hardware(name=..., ...)``); a ``shardwidget.Hardware`` is taken too (and
    registered under its name). Both directions; an unknown name is refused."""
    _hardware_presets: Any = traitlets.List().tag(sync=True)  # wire.HardwareWire items
    """list[wire.HardwareWire]: the presets the dropdown offers. Python → JS."""

    @traitlets.default("_hardware_presets")
    def _default_presets(self) -> list[wire.HardwareWire]:
        return wire.hardware_presets(hw_mod.listed())

    @traitlets.validate("hardware")
    def _validate_hardware(self, proposal: Bunch) -> Any:
        try:
            hw_mod.hardware(proposal["value"])  # "local" is measured here, once per process
        except (ValueError, TypeError) as e:
            raise InvalidValue(str(e)) from None
        return proposal["value"]

    @traitlets.observe("hardware")
    def _on_hardware(self, _change: Bunch) -> None:
        if getattr(self, "_quiet", True):  # a view being made publishes its estimates once made
            return
        presets = wire.hardware_presets(hw_mod.listed())  # "local" or a user preset may be new
        if presets != self._hardware_presets:
            self._hardware_presets = presets
        self._cost_changed()

    def _cost_changed(self) -> None:
        """Re-publish what depends on ``hardware`` (the view's estimate)."""
