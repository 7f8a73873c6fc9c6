"""ShardView: the base of every view kind. The request boundary and the one path of a change.

Two ways in, one way through:

- the front end sends a request message with a whole state (it coalesces bursts itself: one
  request in flight, only the newest pending); a bad request sets ``error``, keeps the last good
  view and raises nothing into the kernel;
- Python sets traits (``view.spec = ...``) or calls ``set_layout``; a bad value raises ValueError
  and nothing changes.

Both end in :meth:`ShardView._change`: validate the candidate state (cheap, no device work),
compute (``device_put``, or compile and run), then publish once. Trait validators only
validate; the compute runs in the trait observer, which puts the traits back quietly and raises
when it fails. ``ShardView[S, R]`` is generic over the kind's layout state ``S`` and what its
compute returns ``R``: each kind hands the base its change path (a
:class:`~shardwidget.views.path.ChangePath` of S and R, a plain class without widget code) and
says how to publish a result. The base names no kind.

The contract of a kind (checked when the kind's class is made, :data:`CONTRACT`): a rank among
the kinds (``_KIND_RANK``) and ``_accepts``, its state traits and request type, ``_build``
(the constructor's body, which calls :meth:`ShardView._open` once it has its path),
``_publish``, and its pictures (``to_svg``, ``save_html``, ``_static_html``,
``_picture_name``). Everything else every kind needs is the base's: the state traits'
validation (registered once for every kind), the lifecycle (a failed constructor closed and
its references dropped, re-run registration, see :mod:`~shardwidget.views.rerun`), ``busy``,
``error``, the history (undo/redo), and the hand-over of results computed on another thread
(:meth:`ShardView._later`). README "Adding a kind of view" lists the files a kind touches.
"""

from __future__ import annotations

import difflib
import functools
import os
import pathlib
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import jax
import numpy as np
import traitlets
from traitlets.utils.bunch import Bunch

from .. import wire
from ..model.mesh import default_axis_names
from . import rerun
from .boundary import SUPERSEDED, Boundary, InvalidValue, capped, split_buffers
from .history import History
from .path import ChangePath, State
from .pictures import Pictures

if TYPE_CHECKING:
    from ..export.page import ExportReport

S = TypeVar("S", bound=State)
"""A view kind's layout state (LayoutState, TraceState, TreeState)."""
R = TypeVar("R")
"""What a view kind's compute returns (the array laid out; the compiled result; the rules
applied), which its ``_publish`` shows."""

CONTRACT = ("_build", "_publish", "to_svg", "save_html", "_static_html", "_picture_name")
"""The members a kind of view must define itself (see the module's doc): a class that sets
``_KIND_RANK`` without one of them is refused when it is made (TypeError)."""

STATIC = pathlib.Path(__file__).parents[1] / "static"

SEQ_WINDOW = 10 * 60 * 1000
"""How far below the newest request's ``seq`` a request counts as older (superseded). The front
end numbers requests from its millisecond clock; a seq further below starts a new sequence (a
front end that numbers afresh, or one bogus huge seq that must not lock the front end out)."""


BUNDLE = STATIC / "widget.js"


@functools.cache
def _bundle() -> str | pathlib.Path:
    """The bundle's text, read once. anywidget keeps a reference to every widget whose ``_esm``
    is a file path (it watches the file for hot reload), so only SHARDWIDGET_DEV=1 gets the
    path; a missing bundle also stays a path, so anywidget names the file it could not find."""
    if os.environ.get("SHARDWIDGET_DEV") == "1" or not BUNDLE.is_file():
        return BUNDLE
    return BUNDLE.read_text(encoding="utf-8")


def is_function(obj: object) -> bool:
    """Whether ShardView(obj, ...) makes a function view (a callable that is not an array)."""
    return callable(obj) and not isinstance(obj, jax.Array | np.ndarray | np.generic | type)


def refuse_unknown(what: str, given: Iterable[str], accepted: Sequence[str]) -> None:
    """TypeError for the first keyword of ``given`` not in ``accepted``, with a close match."""
    for k in given:
        if k not in accepted:
            close = difflib.get_close_matches(k, accepted, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(
                f"{what} got an unexpected keyword argument {k!r}{hint} Accepted: "
                + ", ".join(accepted)
            )


def fit_axes(d: dict[str, Any], changes: dict[str, Any]) -> None:
    """A new number of mesh axes with names/types not given: keep those that still fit and fill
    in defaults (the rule the front end's controls follow). Edits d in place."""
    k = len(d["mesh_shape"]) if isinstance(d["mesh_shape"], list | tuple) else 0
    names = list(d["axis_names"])
    if "axis_names" not in changes and len(names) != k:
        extra = [n for n in default_axis_names(k + len(names)) if n not in names]
        d["axis_names"] = (names + extra)[:k]
    if "axis_types" not in changes and len(d["axis_types"]) != k:
        d["axis_types"] = (list(d["axis_types"]) + ["auto"] * k)[:k]


class ShardView(Pictures, Boundary, Generic[S, R]):
    """A live view of how JAX lays data out across devices, with controls to change the layout.

    ``ShardView(arr)`` shows a jax.Array (or a numpy array / scalar, placed on the default
    device) and returns an :class:`~shardwidget.ArrayView`; ``ShardView(f, *args)`` shows what
    XLA does with a function for a layout of its array arguments and returns a
    :class:`~shardwidget.FunctionView`; ``ShardView(tree)`` shows a whole pytree (a model's
    parameters, an optimizer state) laid out by partition rules and returns a
    :class:`~shardwidget.TreeView`. All are ShardViews::

        view = ShardView(x)            # the grid of blocks and devices
        view.spec = ["x", None]        # re-lay out (ValueError, nothing changed, when invalid)
        view.save_html("x.html")       # one self-contained page
    """

    _esm = _bundle()
    _ipython_display_ = None
    """Displayed through :meth:`_repr_mimebundle_` on ipywidgets 7 as on 8 (see _widgets.py)."""

    STATE_TRAITS: ClassVar[tuple[str, ...]] = ()
    """The synced traits that make up the state a request carries."""
    REQUEST_TYPE: ClassVar[str] = "request"
    """The ``type`` of the front end's request messages for this view."""
    SYNCED: ClassVar[tuple[str, ...]] = ()
    """The kind's own synced traits that a page of this view needs: the base adds its
    STATE_TRAITS and :data:`BASE_SYNCED` (all of them: :func:`synced_traits`)."""
    PLAIN_TRAITS: ClassVar[tuple[str, ...]] = ()
    """Synced traits whose values never hold binary data: :meth:`send_state` does not search
    them for buffers (a 4096-device geometry is 20,000 lists and dicts to walk)."""
    TOP_BUFFER_TRAITS: ClassVar[tuple[str, ...]] = ()
    """Synced dict traits whose binary values (bytes) sit at the top level only, everything
    under them JSON types: :meth:`send_state` looks for buffers there alone (the statistics'
    4096 per-block rows need no search)."""
    FRONT_END_TRAITS: ClassVar[tuple[str, ...]] = ()
    """Synced traits the front end may set through trait sync besides STATE_TRAITS; every other
    synced trait is Python → JS only (a front-end change to it is put back)."""

    _fallback_id = traitlets.Unicode("").tag(sync=True)
    """str: the display id of the picture shown beside the widget (views/fallback.py), which the
    live widget hides. Python → JS."""
    _history: Any = traitlets.Dict().tag(sync=True)  # a wire TypedDict
    """wire.HistoryWire: how many steps :meth:`undo` and :meth:`redo` can take, and to what.
    Python → JS (the undo/redo buttons send a ``history`` message)."""

    _QUIET_TRAITS: ClassVar[tuple[str, ...]] = ("busy",)
    """Synced traits whose change leaves the picture as it is (a kind or a mixin adds its own:
    every class in the MRO is asked)."""
    _HOLDS: ClassVar[tuple[str, ...]] = ()
    """Attributes of a view that may hold the user's arrays or copies (dropped when its
    constructor fails)."""
    _path: ChangePath[S, R]
    """The kind's change path: read, check, compute (set by the kind's ``_build``)."""

    HISTORY_LIMIT: ClassVar[int] = 50
    """The most layouts a view remembers (the oldest are forgotten first)."""

    _KIND_RANK: ClassVar[int | None] = None
    """Where a view kind stands when ``ShardView(obj, ...)`` picks one: the kinds that set it
    are asked in rising rank whether they accept obj (:meth:`_accepts`), and the first that
    does is made. The kinds register themselves (a subclass that sets it), so this base
    imports none of them."""
    _KINDS: ClassVar[list[type[ShardView[Any, Any]]]] = []

    @classmethod
    def _accepts(cls, obj: object) -> bool:
        """Whether ``ShardView(obj, ...)`` makes this kind of view."""
        return False

    @classmethod
    def _accepts_call(cls, obj: object, kwargs: dict[str, Any]) -> bool:
        """Whether ``ShardView(obj, **kwargs)`` makes this kind of view (default: as
        :meth:`_accepts` says for obj alone)."""
        return cls._accepts(obj)

    def __new__(cls, obj: object = None, /, *args: Any, **kwargs: Any) -> Any:
        """Pick the subclass: a callable first argument makes a FunctionView, anything else an
        ArrayView (the first registered kind that accepts obj); Python then runs that
        subclass's ``__init__``."""
        if cls is ShardView:
            cls = next(k for k in ShardView._KINDS if k._accepts_call(obj, kwargs))
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class that sets ``_KIND_RANK`` is a kind: its contract is checked (TypeError
        naming what is missing) and ``ShardView(obj, ...)`` asks it from then on."""
        super().__init_subclass__(**kwargs)
        if "_KIND_RANK" not in cls.__dict__:
            return
        _check_contract(cls)
        name = (cls.__module__, cls.__qualname__)  # a module imported again replaces its kinds
        kinds = [k for k in ShardView._KINDS if (k.__module__, k.__qualname__) != name]
        ShardView._KINDS[:] = sorted([*kinds, cls], key=lambda k: k._KIND_RANK or 0)

    def __init__(self, obj: object = None, /, *args: Any, **kwargs: Any) -> None:
        """The kind's ``_build(obj, *args, **kwargs)``; a constructor that fails closes the
        widget it opened and drops its references to the user's arrays (no orphan open
        widget). A view made is registered for re-runs (views/rerun.py), whatever its kind."""
        try:
            self._build(obj, *args, **kwargs)
        except BaseException:
            self._abandon()
            raise
        rerun.register(self)

    def _build(self, obj: Any, /, *args: Any, **kwargs: Any) -> None:
        """The kind's constructor: its path, :meth:`_open`, its first state published."""
        raise NotImplementedError

    def _abandon(self) -> None:
        """Close a view whose constructor failed and let go of what it holds."""
        if getattr(self, "comm", None) is not None:
            self.close()
        for k in self._HOLDS:
            if k in self.__dict__:
                self.__dict__[k] = None

    def _open(self, **kwargs: Any) -> None:
        """Open the widget (called by the kind's ``_build`` once its path is set) and register
        what every kind has: the state traits' validator and observer (a Python setter is
        validated once), the message handler, the picture's observer."""
        self._key = 0
        self._last_seq = -1
        self._quiet = True  # while True, trait validators/observers stand aside
        self._proposed: S | None = None  # the state a trait validator accepted, for its observer
        self._shown: S | None = None  # the state in the traits now (of what is published)
        self._failed = ""  # why the state in the traits did not compute ("" when it did)
        self._fallback_shown = False  # whether a picture output of this view was displayed
        self._steps: History[S] = History()  # the layouts shown (undo/redo)
        self._init_boundary()
        super().__init__(**kwargs)
        self._fallback_id = f"shardwidget-{uuid.uuid4().hex}"
        self.on_msg(self._on_custom_msg)
        names = tuple(self.STATE_TRAITS)
        # traitlets calls an instance's validators as handler(obj, proposal): the function
        self._register_validator(ShardView._validate_state, names)
        self.observe(self._on_state_trait, names=list(names))
        quiet = {n for k in type(self).__mro__ for n in k.__dict__.get("_QUIET_TRAITS", ())}
        shown = [k for k in synced_traits(type(self)) if k not in quiet]
        self.observe(self._on_shown_change, names=shown)

    # ---------------------------------------------------------------- public protocol
    def send_state(self, key: object = None) -> None:
        """ipywidgets' ``send_state``, except that PLAIN_TRAITS are sent as they are and
        TOP_BUFFER_TRAITS searched at their top level only, not with ipywidgets' search of every
        nested list and dict for binary buffers (at 4096 devices the geometry, the transfer and
        the statistics spent ~20 ms there per update). The message is the same, buffers in the
        same order (tests/views/test_send_state.py checks it against ipywidgets' own)."""
        state = self.get_state(key=key)
        if not state:
            return
        lock = self._property_lock
        for name, value in state.items() if lock else ():
            if name in lock:  # as ipywidgets does: keep it up to date with the front end
                lock[name] = value
        out, buffer_paths, buffers = split_buffers(state, self.PLAIN_TRAITS, self.TOP_BUFFER_TRAITS)
        msg = {"method": "update", "state": out, "buffer_paths": buffer_paths}
        self._send(msg, buffers=buffers)

    def synced_state(self) -> dict[str, Any]:
        """The synced traits of this view (binary values as bytes), as the front end has them
        once the work left for after the cell is done (it is done now)."""
        self._take_later()
        return {k: getattr(self, k) for k in synced_traits(type(self))}

    def save_html(self, path: str | pathlib.Path) -> ExportReport:
        """Write one self-contained HTML file (no network, no kernel) showing this view."""
        raise NotImplementedError

    def undo(self) -> None:
        """Show the layout shown before the current one (the controls follow); ValueError when
        there is none, or when it cannot be shown any more (nothing changes then). Reset and
        every change, from Python or the controls, is a step."""
        self._step(-1)

    def redo(self) -> None:
        """Show again the layout that :meth:`undo` stepped back from; ValueError when there is
        none (a new change after an undo forgets the layouts undone)."""
        self._step(1)

    @property
    def history(self) -> list[S]:
        """The layouts shown, oldest first (``LayoutState``, ``TraceState``, ``TreeState``); the
        one shown now is ``history[history_index]``."""
        return list(self._steps.states)

    @property
    def history_index(self) -> int:
        """The index in :attr:`history` of the layout shown (-1 before the first)."""
        return self._steps.at

    def _step(self, by: int) -> None:
        steps = self._steps
        to = steps.target(by)
        steps.stepping = True
        try:
            self._change(steps.states[to])
        finally:
            steps.stepping = False
        steps.at = to
        self._history = wire.history(steps.states, steps.at, self._state_label)

    def _remember(self, st: S) -> None:
        """Note that st is shown now (called by each kind's ``_publish``): a new step unless
        undo/redo is showing a remembered one; the layouts undone are forgotten."""
        if self._steps.remember(st, self.HISTORY_LIMIT):
            self._history = wire.history(self._steps.states, self._steps.at, self._state_label)

    def _state_label(self, st: S) -> str:
        """A state in a few words, for the undo/redo buttons' tooltips (the path's label)."""
        return self._path.label(st)

    # ---------------------------------------------------------------- the kind's path
    def _from_wire(self, d: dict[str, Any]) -> S:
        """The state of trait values / a request; ValueError when malformed."""
        return self._path.from_wire(d)

    def _check(self, st: S) -> None:
        """Cheap validation (no device work); ValueError naming what is wrong."""
        self._path.check(st)

    def _compute(self, st: S) -> R:
        """The device work for a valid state (device_put, or compile and run); ValueError."""
        return self._path.compute(st)

    def _publish(self, st: S, result: R) -> None:
        """Show result: set every synced trait it changes, once (the kind's own)."""
        raise NotImplementedError

    def _adjust(self, d: dict[str, Any], changes: dict[str, Any]) -> None:
        """Complete a candidate's trait values after ``changes`` (beyond the axis rule)."""
        self._path.adjust(d, changes)

    # ---------------------------------------------------------------- the one path
    def _candidate(self, changes: dict[str, Any]) -> S:
        """The state of the current traits with ``changes`` applied; ValueError if malformed."""
        d = {k: getattr(self, k) for k in self.STATE_TRAITS}
        d.update(changes)
        if {"mesh_shape", "axis_names", "axis_types"} <= d.keys():  # a kind with mesh axes
            fit_axes(d, changes)
        self._adjust(d, changes)
        return self._from_wire(d)

    def _is_shown(self, st: S) -> bool:
        """True when st is what is shown already, so a change to it does no device work."""
        return False

    def _change(
        self,
        st: S,
        current: Callable[[], bool] = lambda: True,
        *,
        checked: bool = False,
        again: bool = False,
        known: R | None = None,
    ) -> bool:
        """Validate, compute, publish once. Raises ValueError and changes nothing when st fails.
        The state shown already is a no-op: checked, its error cleared, nothing computed
        (``again=True`` computes it all the same: the same layout by another compiler).
        ``current`` is asked after the compute: False (a newer change was handled meanwhile)
        publishes nothing, and the result is False. ``checked``: st was validated already (by
        the trait validator of the same change); ``known``: st's result, not computed again."""
        if not checked:
            self._check(st)
        if not again and self._is_shown(st):
            if self.error:
                self.error = ""
            return True
        result = self._compute(st) if known is None else known
        if not current():
            return False
        self._publish(st, result)
        return True

    def set_layout(self, **changes: Any) -> None:
        """Change several layout traits at once; ValueError (nothing changed) when invalid."""
        bad = [k for k in changes if k not in self.STATE_TRAITS]
        if bad:
            raise TypeError(f"set_layout got {bad[0]!r}; it takes: {', '.join(self.STATE_TRAITS)}")
        try:
            self._change(self._candidate(changes))
        except ValueError as e:
            raise capped(e) from None

    def __setattr__(self, name: str, value: object) -> None:
        """Trait assignment; a refused value raises ValueError (also a TraitError), capped."""
        try:
            super().__setattr__(name, value)
        except (ValueError, traitlets.TraitError) as e:
            raise capped(e) from None

    def set_state(self, sync_data: dict[str, Any]) -> None:
        """Trait sync from the front end (or ipywidgets' ``set_state``): only the layout traits
        (and FRONT_END_TRAITS) are taken; an invalid value is rolled back and shown in
        ``error``; a change to a Python → JS trait is refused. The front end is then sent the
        values the kernel kept. Raises nothing into the kernel."""
        writable = set(self.STATE_TRAITS) | set(self.FRONT_END_TRAITS)
        take = {k: v for k, v in sync_data.items() if k in writable}
        back = [k for k in sync_data if k in self.keys and k not in take]
        if take:
            try:
                super().set_state(take)
            except Exception as e:  # the boundary: shown, never raised into the kernel
                self.error = wire.cap_message(str(e) or type(e).__name__)
                back += list(take)
        if back:
            self.send_state(back)

    def _set_traits(self, values: dict[str, Any]) -> None:
        """Set traits without running the validators and observers of the change path."""
        quiet, self._quiet = self._quiet, True
        try:
            with self.hold_sync():
                for k, v in values.items():
                    setattr(self, k, v)
        finally:
            self._quiet = quiet

    def _on_custom_msg(self, _widget: object, content: object, _buffers: object) -> None:
        """The request boundary: sequence numbers, ``busy``, ``error`` and the result message.

        A request older than the newest one handled (within SEQ_WINDOW) is answered as
        superseded; one that a newer request overtook while it computed (re-entrant handling)
        is not published. Every request gets its result message, an interrupt included."""
        if wire.is_picture_request(content):
            self._send_picture()
            return
        step = wire.parse_history(content)
        if step is not None:
            self._on_history(step)
            return
        req = wire.parse_request(content, self.REQUEST_TYPE)
        if req is None:
            if isinstance(content, dict) and content.get("type") == self.REQUEST_TYPE:
                self._malformed(content.get("seq"))
            return
        seq, raw = req
        if self._last_seq - SEQ_WINDOW < seq <= self._last_seq:  # a newer one was handled
            self.send(wire.result_msg(seq, SUPERSEDED))
            return
        self._last_seq = seq
        with self._busy():
            try:
                # A newer request handled while this one computed stays shown.
                done = self._change(self._from_wire(raw), lambda: self._last_seq == seq)
                self.send(wire.result_msg(seq, "" if done else SUPERSEDED))
            except KeyboardInterrupt:  # end the request in words now; the controls stay usable
                self.error = "interrupted (the kernel was interrupted); the last good view is shown"
                self.send(wire.result_msg(seq, self.error))
            except Exception as e:  # the boundary: a bad request is shown, never raised
                self.error = wire.cap_message(str(e) or type(e).__name__)
                self.send(wire.result_msg(seq, self.error))

    def _malformed(self, seq: object) -> None:
        """A request of this view's type without an integer ``seq`` and a ``state`` object:
        said in ``error``, answered when its seq can be (nothing else changes)."""
        self.error = (
            f"a malformed {self.REQUEST_TYPE} was ignored: it needs an integer seq and a state "
            "object; the last good view is shown"
        )
        if isinstance(seq, int) and not isinstance(seq, bool):
            self.send(wire.result_msg(seq, self.error))

    def _on_history(self, step: int) -> None:
        """The undo/redo buttons: step through the history; a failure is shown in ``error``,
        never raised into the kernel."""
        with self._handling():
            self._step(step)

    # Python setters: the validator checks the whole new state; the observer computes and
    # publishes it, or puts the traits back and raises.
    def _validate_state(self, proposal: Bunch) -> Any:
        value = proposal["value"]
        if self._quiet:
            return value
        try:
            st = self._candidate({proposal["trait"].name: value})
            self._check(st)
        except ValueError as e:
            raise capped(e) from None
        if st == self._shown and self._failed:  # no change follows, and this state fails
            raise InvalidValue(wire.cap_message(self._failed))
        self._proposed = st
        return value

    def _on_state_trait(self, _change: Bunch) -> None:
        if self._quiet:
            return
        st, self._proposed = self._proposed, None
        if st is None or st == self._shown:  # a later notice of one held change: done
            if st is not None:  # another spelling of what is shown: the traits in normal form
                self._set_traits(st.to_wire())
            return
        try:
            self._change(st, checked=True)  # the validator of this change checked st
        except BaseException as e:  # an interrupt too: the traits go back to what is shown
            if self._shown is not None:
                self._set_traits(self._shown.to_wire())
            if isinstance(e, ValueError):
                raise capped(e) from None
            raise


def _check_contract(cls: type[ShardView[Any, Any]]) -> None:
    """TypeError naming what a kind's class lacks of :data:`CONTRACT`, its state traits, or
    the synced traits every kind has."""
    missing = [m for m in CONTRACT if getattr(cls, m) is getattr(ShardView, m, None)]
    missing += [t for t in ("STATE_TRAITS",) if not getattr(cls, t)]
    if missing:
        raise TypeError(f"view kind {cls.__name__} lacks {', '.join(missing)} (see CONTRACT)")
    again = [t for t in cls.SYNCED if t in (*cls.STATE_TRAITS, *BASE_SYNCED)]
    if again:
        raise TypeError(
            f"view kind {cls.__name__} lists in SYNCED what the base adds: {', '.join(again)} "
            "(SYNCED holds the kind's own traits only)"
        )


BASE_SYNCED = ("error", "busy")
"""The synced traits every kind has (views/boundary.py's) and a page needs."""


def synced_traits(cls: type[ShardView[Any, Any]]) -> tuple[str, ...]:
    """Every synced trait a page of a view of kind ``cls`` needs: its state traits, the base's
    (:data:`BASE_SYNCED`), then the kind's own (``SYNCED``)."""
    return (*cls.STATE_TRAITS, *BASE_SYNCED, *cls.SYNCED)
