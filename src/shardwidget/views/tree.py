"""TreeView: ShardView(tree). A whole pytree (a model's parameters, an optimizer state, an
``eval_shape`` tree) laid out by partition rules, with memory per device.

A change (rules, logical rules, mesh) runs :meth:`ShardView._change
<shardwidget.views.base.ShardView._change>`: the rules are applied to every leaf from shardings
alone (no device work, :mod:`shardwidget.model.rules`); a rule that cannot apply is refused in
words and nothing changes. Only the selected leaf is placed on the devices, for its per-shard
statistics, and released at once. ``view.tree`` places the changed leaves on demand.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import TYPE_CHECKING, Any, ClassVar

import traitlets

from .. import _jax, wire
from ..cost import hardware as hw_mod
from ..export.tree_code import tree_code
from ..model import mesh as mesh_mod
from ..model import rules as rules_mod
from ..model import rules_text as editor_text
from ..model.layout import Layout
from ..model.summary import Summary, plan_for, summarize
from ..model.tree import Flat, StaticLeaf, TreeLeaf, flatten, mesh_of, on_mesh
from ..plan import tpu as tpu_mod
from ..render import tree as tree_render
from .base import InvalidValue, ShardView, refuse_unknown

if TYPE_CHECKING:
    from ..export.page import ExportReport

STATE_TRAITS = ("mesh_shape", "axis_names", "axis_types", "rules_text")
INIT_KWARGS = (
    "mesh",
    "rules",
    "logical_rules",
    "name",
    "hardware",
    "large_bytes",
    "stats",
    "selected",
    "spec",
)


@dataclasses.dataclass(frozen=True)
class TreeState:
    """The layout a tree view shows, as data: the mesh, the regex rules, the logical rules.

    Attributes:
        mesh_shape, axis_names, axis_types: the mesh the rules lay out on.
        rules: the regex rules (first match wins); logical: the logical axis rules.
        text: the rules as the editor holds them (comments kept); not part of equality.
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    axis_types: tuple[str, ...]
    rules: tuple[rules_mod.Rule, ...] = ()
    logical: rules_mod.LogicalRules = ()
    text: str | None = dataclasses.field(default=None, compare=False)

    def to_wire(self) -> dict[str, Any]:
        """The trait values of this state."""
        return {
            "mesh_shape": list(self.mesh_shape),
            "axis_names": list(self.axis_names),
            "axis_types": list(self.axis_types),
            "rules_text": self.text
            if self.text is not None
            else editor_text.to_text(self.rules, self.logical),
        }


def is_tree(obj: Any) -> bool:
    """Whether ShardView(obj) makes a tree view: a pytree (not itself an array) with at least
    one jax.Array or ShapeDtypeStruct leaf, or a lone ShapeDtypeStruct."""
    import jax
    import numpy as np

    if isinstance(obj, jax.Array | np.ndarray | np.generic | int | float | complex | bool):
        return False
    leaves = jax.tree_util.tree_leaves(obj)
    return any(isinstance(x, jax.Array | jax.ShapeDtypeStruct) for x in leaves)


class TreeView(ShardView):
    """Live view of a whole pytree's layout: every array leaf with its spec and bytes per
    device, memory per device by top-level group, and partition rules that re-lay it out.

    Made by ``ShardView(tree)``: any pytree (dicts, lists, flax NNX state, optax states, …)
    whose leaves are jax.Arrays or ShapeDtypeStructs (viewed without allocating); other leaves
    are listed as static. Keywords: ``mesh`` (the jax Mesh the rules lay out on; default the
    tree's own, else one axis ``x`` of every device), ``rules``, ``logical_rules``, ``name``
    (the variable :attr:`code` rebinds, "params"), ``hardware`` (the preset whose HBM the
    memory chart marks), ``large_bytes`` (replicated leaves from this size on are flagged),
    ``selected`` (the leaf shown in the device grid), ``stats=False`` (no per-shard data),
    ``spec`` (a lone array or ShapeDtypeStruct: its own layout on ``mesh``).

    ``mesh=jax.sharding.AbstractMesh(...)`` makes a plan for a pod the kernel need not have: the
    leaves are taken as their shapes (jax.Arrays too; nothing is placed or allocated), devices
    are the mesh's positions 0…N-1 (row-major), and layouts, :attr:`per_device` and the
    pictures come from the specs and the mesh alone; per-shard statistics say "planned: no
    data". ``ShardView(x, mesh=AbstractMesh(...), spec=P(...))`` plans one array.
    """

    _KIND_RANK = 50  # after the function view (a callable is a function), before arrays

    @classmethod
    def _accepts(cls, obj: Any) -> bool:
        """A pytree of jax.Arrays / ShapeDtypeStructs that is not itself an array or a
        function: ``ShardView(params)``."""
        return is_tree(obj)

    @classmethod
    def _accepts_call(cls, obj: Any, kwargs: dict[str, Any]) -> bool:
        """A tree, or a lone jax.Array planned on an AbstractMesh (``mesh=``): its shape."""
        import jax

        planned = mesh_mod.is_planned(kwargs.get("mesh"))
        return is_tree(obj) or (planned and isinstance(obj, jax.Array))

    STATE_TRAITS: ClassVar[tuple[str, ...]] = STATE_TRAITS
    REQUEST_TYPE: ClassVar[str] = "tree_request"
    SYNCED: ClassVar[tuple[str, ...]] = (
        "_kind",
        *STATE_TRAITS,
        "error",
        "busy",
        "selected",
        "hardware",
        "large_bytes",
        "_hardware_presets",
        "_tree",
        "_layout",
        "_stats",
        "_options",
    )
    FRONT_END_TRAITS: ClassVar[tuple[str, ...]] = ("selected", "hardware")
    PLAIN_TRAITS: ClassVar[tuple[str, ...]] = ("_tree", "_layout")
    TOP_BUFFER_TRAITS: ClassVar[tuple[str, ...]] = ("_stats",)  # wire.Stats: values, thumbs

    _kind = traitlets.Unicode("tree", read_only=True).tag(sync=True)
    """str, "tree": which view the front end draws. Python → JS."""
    mesh_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    """list[int], default: the tree's own mesh: the mesh the rules lay out on. Both directions."""
    axis_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str]: one name per mesh axis. Both directions."""
    axis_types = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """list[str]: "auto" or "explicit" per mesh axis. Both directions."""
    rules_text = traitlets.Unicode("").tag(sync=True)
    """str, default "": the rules editor's text: regex rules (``regex  P(...)``), then logical
    rules (``name -> axis``), one per line (see :mod:`shardwidget.model.rules_text`). Both
    directions."""
    selected = traitlets.Int(-1).tag(sync=True)
    """int, default: the leaf with the most bytes per device: the array leaf (index into
    :attr:`leaves`) drawn in the device grid. Both directions."""
    hardware = traitlets.Unicode("h100").tag(sync=True)
    """str, default "h100": the preset whose HBM the memory chart draws as a line. Both
    directions."""
    large_bytes = traitlets.Int(1 << 20).tag(sync=True)
    """int, default 1 MiB: replicated leaves holding this many bytes per device or more are
    flagged. Python → JS."""
    _hardware_presets: Any = traitlets.List().tag(sync=True)
    """list[wire.HardwareWire]: the presets the chart offers. Python → JS."""
    _tree: Any = traitlets.Dict().tag(sync=True)
    """wire.TreeWire: every leaf, memory per device. Python → JS."""
    _layout: Any = traitlets.Dict().tag(sync=True)
    """wire.LayoutWire: the selected leaf's geometry. Python → JS."""
    _stats: Any = traitlets.Dict().tag(sync=True)
    """wire.Stats: the selected leaf's per-block statistics. Python → JS."""
    _options: Any = traitlets.Dict().tag(sync=True)
    """wire.Options: the selected leaf's, for the embedded grid. Python → JS."""

    def __init__(self, tree: Any, /, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError(f"ShardView(tree) takes one tree; got {len(args)} more argument(s)")
        refuse_unknown("ShardView(tree)", kwargs, INIT_KWARGS)
        import jax

        self._flat: Flat | None = flatten(tree)
        if not self._flat.leaves:
            raise TypeError("ShardView got a tree with no jax.Array or ShapeDtypeStruct leaf")
        self._devices = list(jax.devices())
        self._name = str(kwargs.get("name", "params"))
        if not self._name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self._name!r}")
        self._with_stats = bool(kwargs.get("stats", True))
        mesh: Any = kwargs.get("mesh")
        if mesh is not None and not isinstance(mesh, jax.sharding.Mesh | jax.sharding.AbstractMesh):
            raise TypeError(
                "mesh must be a jax.sharding.Mesh (the kernel's devices) or an AbstractMesh (a "
                f"plan), got {type(mesh).__name__}"
            )
        mesh = mesh if mesh is not None else mesh_of(self._flat.leaves)
        if mesh is None:
            mesh = mesh_mod.build_mesh((len(self._devices),), ("x",), ("auto",))
        leaves = on_mesh(self._flat.leaves, mesh)
        if kwargs.get("spec") is not None:
            if len(leaves) != 1:
                raise ValueError("spec= lays out one array; give a tree rules= instead")
            leaves = (rules_mod.with_spec(leaves[0], mesh, kwargs["spec"]),)
        self._flat = dataclasses.replace(self._flat, leaves=leaves)
        self._own_mesh = mesh
        self._mesh = mesh
        self._applied = rules_mod.Applied(self._flat.leaves, ("",) * len(self._flat.leaves))
        self._shown_leaf: tuple[int, Layout] | None = None  # the leaf in _layout / _stats
        self._changed_cache: tuple[rules_mod.Applied, tuple[int, ...]] | None = None
        self._leaf_summary: tuple[int, Layout, Summary] | None = None
        super().__init__()
        hw = hw_mod.hardware(kwargs.get("hardware", hw_mod.preset_for(mesh, "h100")))
        if hw.name not in hw_mod.names():
            hw_mod.register(hw)  # a Hardware of the user's own: findable by its name
        self._hardware_presets = wire.hardware_presets(hw_mod.listed())
        self.hardware = hw.name
        self.large_bytes = int(kwargs.get("large_bytes", 1 << 20))
        st = TreeState(
            mesh_mod.mesh_sizes(mesh),
            tuple(str(a) for a in mesh.axis_names),
            tuple(mesh_mod.mesh_axis_types(mesh)),
            rules_mod.make_rules(kwargs.get("rules")),
            rules_mod.make_logical_rules(kwargs.get("logical_rules")),
        )
        self._set_traits(st.to_wire())
        self._pick = kwargs.get("selected")
        if self._pick is not None and (
            isinstance(self._pick, bool) or not isinstance(self._pick, int)
        ):
            raise TypeError(f"selected must be a leaf index (an int), not {self._pick!r}"[:200])
        self._quiet = False
        self._change(st)

    # ---------------------------------------------------------------- public API
    @property
    def leaves(self) -> list[TreeLeaf]:
        """One entry per array leaf, in ``tree_flatten_with_path`` order, laid out as shown:
        ``.path`` (keystr), ``.shape``, ``.dtype``, ``.spec``, ``.layout`` (the array view's
        :class:`~shardwidget.Layout`), ``.sharding``, ``.names`` (logical axis names)."""
        return list(self._applied.leaves)

    @property
    def static(self) -> list[StaticLeaf]:
        """The leaves that are not arrays (ints, strings, …): listed, never laid out."""
        return list(self._flat.static) if self._flat is not None else []

    @property
    def per_device(self) -> dict[int, int]:
        """Device id -> bytes of the tree it holds as shown (each shard on each holder; int4
        packed as XLA stores it)."""
        return rules_mod.per_device(self._applied.leaves)

    @property
    def planned(self) -> str:
        """For a plan (its mesh an AbstractMesh: no devices, no data), what it is in words:
        "planned on AbstractMesh (32, 8) · no devices"; "" for a view on the kernel's devices."""
        return mesh_mod.planned_text(self._mesh) if mesh_mod.is_planned(self._own_mesh) else ""

    @property
    def mesh(self) -> Any:
        """The jax Mesh (an AbstractMesh for a plan) the rules lay out on. Setting it re-lays
        out with the same rules on the new mesh (its own device order kept; a plan takes an
        AbstractMesh of as many positions); ValueError, nothing changed, when a rule does not
        fit it (an axis it lacks, a dimension its axes do not divide)."""
        return self._mesh

    @mesh.setter
    def mesh(self, mesh: Any) -> None:
        import jax

        if self.planned:
            if not mesh_mod.is_planned(mesh) or mesh.size != self._own_mesh.size:
                n = self._own_mesh.size
                raise ValueError(f"a plan of {n} positions takes an AbstractMesh of {n}")
        elif not isinstance(mesh, jax.sharding.Mesh):
            raise ValueError(f"mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
        before = self._own_mesh
        self._own_mesh = mesh  # _mesh_for picks it for its own shape, names and types
        try:
            self._change(
                dataclasses.replace(
                    self._shown,
                    mesh_shape=mesh_mod.mesh_sizes(mesh),
                    axis_names=tuple(str(a) for a in mesh.axis_names),
                    axis_types=tuple(mesh_mod.mesh_axis_types(mesh)),
                )
            )
        except BaseException:
            self._own_mesh = before
            raise

    @property
    def rules(self) -> list[tuple[str, Any]]:
        """``[(regex, PartitionSpec), ...]``: each leaf whose path (``re.search``) matches a
        regex takes the first such rule's spec (padded with None to its rank); unmatched leaves
        keep their layout. Setting it re-lays out at once; a rule that cannot apply raises
        ValueError naming the leaf and the rule, and nothing changes."""
        return [(r.pattern, r.partition_spec) for r in self._shown.rules]

    @rules.setter
    def rules(self, value: Any) -> None:
        self._change(dataclasses.replace(self._shown, rules=rules_mod.make_rules(value), text=None))

    @property
    def logical_rules(self) -> list[tuple[str, Any]]:
        """``[(logical name, mesh axis or axes), ...]``: leaves with logical axis names (flax
        ``nnx.with_partitioning``) no regex rule matches are laid out as flax's
        ``logical_to_mesh_sharding`` would. ValueError (nothing changed) when one cannot."""
        return [(n, a if a is None or len(a) != 1 else a[0]) for n, a in self._shown.logical]

    @logical_rules.setter
    def logical_rules(self, value: Any) -> None:
        logical = rules_mod.make_logical_rules(value)
        self._change(dataclasses.replace(self._shown, logical=logical, text=None))

    @property
    def tree(self) -> Any:
        """The tree laid out as shown: the leaves whose layout changed placed with
        ``jax.device_put`` (a ShapeDtypeStruct gets the sharding), the others the user's own.
        Made when asked for; the view keeps no copy. A plan: every array leaf as a
        ShapeDtypeStruct with its sharding on the AbstractMesh (nothing placed)."""
        import jax

        flat = self._require_flat()
        values = list(flat.values)
        if self.planned:
            for leaf in self._applied.leaves:
                values[leaf.index] = jax.ShapeDtypeStruct(  # type: ignore[no-untyped-call]
                    leaf.shape, leaf.dtype, sharding=leaf.sharding
                )
            return jax.tree_util.tree_unflatten(flat.treedef, values)
        changed = self._changed_leaves()
        for i in changed:
            leaf = self._applied.leaves[i]
            x = values[leaf.index]
            if leaf.abstract:
                values[leaf.index] = jax.ShapeDtypeStruct(  # type: ignore[no-untyped-call]
                    x.shape, x.dtype, sharding=leaf.sharding
                )
        concrete = [i for i in changed if not self._applied.leaves[i].abstract]
        self._check_fits(concrete, "placing the tree's re-laid-out leaves (view.tree)")
        if concrete:
            placed = _jax.device_put(
                [values[self._applied.leaves[i].index] for i in concrete],
                [self._applied.leaves[i].sharding for i in concrete],
            )
            for i, a in zip(concrete, placed, strict=True):
                values[self._applied.leaves[i].index] = a
        return jax.tree_util.tree_unflatten(flat.treedef, values)

    @property
    def code(self) -> str:
        """Python (jax only) that, run with the tree bound to ``name`` (``params``), makes the
        mesh and the shardings and rebinds the name to the tree laid out as shown."""
        return tree_code(
            self._mesh, self._shown.rules, self._applied.leaves, self._applied.sources, self._name
        )

    def leaf(self, path: str) -> TreeLeaf:
        """The array leaf at this path (keystr); KeyError naming close paths when none."""
        for leaf in self._applied.leaves:
            if leaf.path == path:
                return leaf
        import difflib

        close = difflib.get_close_matches(path, [x.path for x in self._applied.leaves], n=3)
        raise KeyError(f"no array leaf at {path!r}" + (f"; close: {close}" if close else ""))

    def __repr__(self) -> str:
        return tree_render.text(self)

    # ---------------------------------------------------------------- the change path
    def _require_flat(self) -> Flat:
        if self._flat is None:
            raise ValueError("this view was closed: it holds no tree")
        return self._flat

    def _changed_leaves(self) -> tuple[int, ...]:
        """The leaves whose layout differs from the user's (worked out once per layout)."""
        if self._changed_cache is None or self._changed_cache[0] is not self._applied:
            idx = tuple(i for i in range(len(self._applied.leaves)) if self._changed(i))
            self._changed_cache = (self._applied, idx)
        return self._changed_cache[1]

    def _changed(self, i: int) -> bool:
        leaf = self._applied.leaves[i]
        if not self._applied.sources[i]:
            return False
        orig = self._require_flat().leaves[i]
        if not orig.placed:
            return True
        return not leaf.sharding.is_equivalent_to(orig.sharding, len(leaf.shape))

    def _check_fits(self, leaves: list[int], what: str) -> None:
        """ValueError in words, before any device work, when the copies of these leaves would
        not fit in free device memory (the user's own leaves stay as they are)."""
        from ..model import memory

        need: dict[int, int] = {}
        for i in leaves:
            ids, b = rules_mod.leaf_bytes(self._applied.leaves[i])
            for d in ids:
                need[d] = need.get(d, 0) + b
        by_id = {int(d.id): d for d in self._devices}
        memory.check_fits({by_id[d]: n for d, n in need.items() if d in by_id}, what)

    def _from_wire(self, d: dict[str, Any]) -> TreeState:
        try:
            shape = tuple(d["mesh_shape"])
            names = tuple(d["axis_names"])
            types = tuple(d["axis_types"])
            text = d["rules_text"]
        except (KeyError, TypeError) as e:
            raise ValueError(f"incomplete tree request: {e}") from None
        if not isinstance(text, str):
            raise ValueError(f"rules must be text, one rule per line; got {type(text).__name__}")
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise ValueError(f"mesh sizes must be integers; got {list(shape)}")
        rules, logical = editor_text.parse(text)
        return TreeState(shape, names, types, rules, logical, text)

    def _mesh_for(self, st: TreeState) -> Any:
        own = self._own_mesh
        if (
            st.mesh_shape == mesh_mod.mesh_sizes(own)
            and st.axis_names == tuple(own.axis_names)
            and st.axis_types == tuple(mesh_mod.mesh_axis_types(own))
        ):
            return own
        if self.planned:
            mesh = mesh_mod.build_abstract_mesh(
                st.mesh_shape, st.axis_names, st.axis_types, own.size
            )
            return tpu_mod.reshaped(own, mesh) if tpu_mod.is_tpu(own) else mesh  # same chips
        return mesh_mod.build_mesh(st.mesh_shape, st.axis_names, st.axis_types, self._devices)

    def _check(self, st: TreeState) -> None:
        mesh = self._mesh_for(st)
        leaves = self._require_flat().leaves
        self._checked: tuple[TreeState, Any, rules_mod.Applied] | None = (
            st,
            mesh,
            rules_mod.apply(leaves, mesh, st.rules, st.logical),
        )

    def _compute(self, st: TreeState) -> Any:
        checked = getattr(self, "_checked", None)
        if checked is None or checked[0] != st:
            self._check(st)
            checked = self._checked
        assert checked is not None
        return checked[1], checked[2]

    def _is_shown(self, st: TreeState) -> bool:
        return bool(st == self._shown) and st.text == self.rules_text

    def _publish(self, st: TreeState, result: Any) -> None:
        self._mesh, self._applied = result
        self._checked = None
        self._shown = st
        self._failed = ""
        self._key += 1
        mesh_text = " × ".join(
            f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=True)
        )
        payload = wire.tree_payload(
            self._applied,
            self._require_flat().static,
            key=self._key,
            mesh_text=mesh_text,
            code=self.code,
            planned=self.planned,
        )
        pick = self._pick if self._pick is not None else self.selected
        if self._pick is not None and not 0 <= pick < len(self._applied.leaves):
            raise ValueError(
                f"selected={pick} is not a leaf index 0…{len(self._applied.leaves) - 1}"
            )
        self._pick = None
        if not 0 <= pick < len(self._applied.leaves):
            pick = max(range(len(payload["bytes"])), key=payload["bytes"].__getitem__)
        self._set_traits({**st.to_wire(), "error": "", "_tree": payload, "selected": pick})
        self._publish_selected()
        self._remember(st)

    def _n_devices(self) -> int:
        """The devices the view lays out over: the kernel's, or a plan's positions."""
        return int(self._own_mesh.size) if self.planned else len(self._devices)

    def _state_label(self, st: Any) -> str:
        mesh = " × ".join(f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=False))
        return f"mesh {mesh} · {len(st.rules)} rule{'' if len(st.rules) == 1 else 's'}"

    @traitlets.validate(*STATE_TRAITS)
    def _validate_tree_state(self, proposal: Any) -> Any:
        return self._validate_state(proposal)

    @traitlets.observe(*STATE_TRAITS)
    def _on_tree_trait(self, change: Any) -> None:
        self._on_state_trait(change)

    @traitlets.validate("hardware")
    def _validate_hardware(self, proposal: Any) -> Any:
        try:
            hw_mod.hardware(proposal["value"])
        except (ValueError, TypeError) as e:  # a TraitError: the front end's value is put back
            raise InvalidValue(str(e)) from None
        return proposal["value"]

    @traitlets.validate("selected")
    def _validate_selected(self, proposal: Any) -> Any:
        i, n = proposal["value"], len(self._applied.leaves)
        if not self._quiet and not (isinstance(i, int) and 0 <= i < n):
            raise InvalidValue(f"selected must be a leaf index 0…{n - 1}; got {i!r}"[:200])
        return i

    @traitlets.observe("selected")
    def _on_selected(self, _change: Any) -> None:
        if not self._quiet:
            self._publish_selected()

    def _on_custom_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        """The leaf table's selection ({"type": "tree_select", "leaf": i}), else the base's
        requests. A bad index is shown in ``error``, never raised into the kernel."""
        if isinstance(content, dict) and content.get("type") == "tree_select":
            leaf = content.get("leaf")
            try:
                if not isinstance(leaf, int) or isinstance(leaf, bool):
                    raise ValueError(f"tree_select wants a leaf index, got {leaf!r}")
                self.selected = leaf
            except ValueError as e:
                self.error = wire.cap_message(str(e))
            return
        super()._on_custom_msg(widget, content, buffers)

    # ---------------------------------------------------------------- the selected leaf
    def _publish_selected(self) -> None:
        """The selected leaf's geometry, options and statistics, for the embedded grid. The
        statistics are computed again (one leaf placed, then released) only when that leaf or
        its layout changed: a rules edit that leaves it as it is does no device work."""
        import jax

        i = self.selected
        leaf = self._applied.leaves[i]
        lay = leaf.layout
        if self._shown_leaf == (i, lay) and self._layout:
            return
        self._shown_leaf = (i, lay)
        self._key += 1
        source = "resharded" if self._changed(i) else "original"
        layout = wire.layout(
            lay, key=self._key, source=source, note="", local_process=jax.process_index()
        )
        options = wire.options(
            n_devices=self._n_devices(),
            platform="planned" if self.planned else self._devices[0].platform,
            shape=list(leaf.shape),
            dtype=lay.dtype,
            memory_kinds=["device"],
            original=None,
            reshard_disabled="the tree view's rules set this layout",
        )
        summ = self._summarize(i, lay)
        self._leaf_summary = (i, lay, summ)  # host data: the static picture draws from it
        stats = wire.stats(summ, key=self._key)
        self._set_traits({"_layout": layout, "_options": options, "_stats": stats})

    def _summarize(self, i: int, lay: Layout) -> Summary:
        """Statistics of leaf i as shown: placed for this, and released at once."""
        leaf = self._applied.leaves[i]
        n = len(lay.blocks)
        if self.planned:
            return Summary.unavailable(n, "planned: no data")
        if not self._with_stats:
            return Summary.unavailable(n, "statistics are off (stats=False)")
        if leaf.abstract:
            return Summary.unavailable(n, "an abstract leaf (ShapeDtypeStruct): no data")
        x = self._require_flat().values[leaf.index]
        if self._changed(i):
            try:
                self._check_fits([i], f"statistics of {leaf.path} as laid out")
            except ValueError as e:
                return Summary.unavailable(n, str(e))
        arr = _jax.device_put(x, leaf.sharding) if self._changed(i) else x
        nd = len(leaf.shape)
        dims = (0, 1) if nd >= 2 else (0,) if nd == 1 else ()
        budget = len(lay.devices)
        plan = plan_for(lay, dims, wire.thumb_pixel_budget(budget), wire.values_budget(budget))
        try:
            return summarize(arr, lay, plan)
        finally:
            del arr

    # ---------------------------------------------------------------- static pictures
    @property
    def memory(self) -> tuple[dict[str, Any], list[str]]:
        """(``{"ids": [...], "by_group": [[bytes per device] per group]}``, group names): memory
        per device split by top-level group (the chart's data)."""
        t = self._tree
        return dict(t["memory"]), list(t["group_names"])

    @property
    def hardware_preset(self) -> hw_mod.Hardware:
        """The preset whose HBM the memory chart marks (``hardware``)."""
        return hw_mod.hardware(self.hardware)

    def to_svg(self, width: int = 760) -> str:
        """The view as a standalone SVG: memory per device by group (the HBM line of
        ``hardware``), then the selected leaf drawn as the array view draws it."""
        return self._svg(width, compute=True)

    def _svg(self, width: int = 760, *, compute: bool) -> str:
        """to_svg's drawing, with the selected leaf's statistics as last published; with
        compute=False never computed here (the display bundle's picture does no device work)."""
        from ..render.picture import array_svg
        from ..render.tree import tree_svg

        i = self.selected
        lay = self._applied.leaves[i].layout
        nd = len(lay.shape)
        dims = (0, 1) if nd >= 2 else (0,) if nd == 1 else ()
        shown = self._leaf_summary
        summ = None
        if shown is not None and shown[0] == i and shown[1] is lay:
            summ = shown[2]
        elif compute:
            summ = self._summarize(i, lay)
        leaf = array_svg(lay, summ, dims, width=width, n_devices=self._n_devices())
        return tree_svg(self, leaf, width)

    def _picture_name(self) -> str:
        return f"shardwidget-{self._name}"

    def _static_html(self) -> str:
        """The shared static picture (chart and selected leaf), the text table under it."""
        from ..render import snapshot

        leaf = self._applied.leaves[self.selected]
        caption = f"{len(self._applied.leaves)} array leaves · mesh {self._tree.get('mesh', '')}"
        if self.planned:
            caption += f" · {self.planned}"
        caption += f" · leaf {leaf.path}"
        return snapshot.picture_html(self._svg(compute=False), self.error, repr(self), caption)

    def save_html(self, path: str | pathlib.Path) -> ExportReport:
        """Write one self-contained HTML file (no network, no kernel) showing this view with the
        notebook's renderer: the table, the chart and the selected leaf's grid (the rules
        editor says there is no kernel to re-lay out)."""
        from ..export.page import save_tree_view

        return save_tree_view(self, path)
