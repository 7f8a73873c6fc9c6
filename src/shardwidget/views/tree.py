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
import difflib
import pathlib
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import traitlets
from jax.sharding import AbstractMesh, Mesh
from traitlets.utils.bunch import Bunch

from .. import wire
from ..cost import hardware as hw_mod
from ..export.page import save_tree_view
from ..export.tree_code import tree_code
from ..model import mesh as mesh_mod
from ..model import rules as rules_mod
from ..model import tree_input
from ..model.layout import Layout
from ..model.summary import Summary
from ..model.tree import StaticLeaf, TreeLeaf, flatten, mesh_of, on_mesh
from ..render import snapshot
from ..render import tree as tree_render
from ..render.machine import with_machine
from ..render.picture import array_svg
from ..render.tree import tree_svg
from ..wire import search as search_wire
from .array_path import layout_wire
from .base import ShardView, refuse_unknown
from .boundary import InvalidValue
from .cost import CostMixin, HardwareName
from .tree_path import Computed, TreePath, TreeState, leaf_dims, pick_leaf
from .tree_search import TreeSearchMixin

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


def is_tree(obj: object) -> bool:
    """Whether ShardView(obj) makes a tree view: a pytree container (a dict, list, tuple, flax
    State, …; one without array leaves is refused by the tree view, in words), or a lone
    ShapeDtypeStruct."""

    return isinstance(obj, jax.ShapeDtypeStruct) or tree_input.is_container(obj)


class TreeView(TreeSearchMixin, CostMixin, ShardView[TreeState, Computed]):
    """Live view of a whole pytree's layout: every array leaf with its spec and bytes per
    device, memory per device by top-level group, and partition rules that re-lay it out.

    Made by ``ShardView(tree)``: any pytree (dicts, lists, flax NNX state, optax states, …)
    whose leaves are jax.Arrays, ShapeDtypeStructs (viewed without allocating) or numpy arrays
    (laid out where ``jax.device_put`` puts them); other leaves are listed as static. A tree
    with no such leaf, one that holds itself or nests too deep is refused in words. Keywords:
    ``mesh`` (the jax Mesh the rules lay out on; default the tree's own, else one axis ``x`` of
    every device), ``rules``, ``logical_rules``, ``name``
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
    _HOLDS: ClassVar[tuple[str, ...]] = ("_path", "_applied", "_mesh")
    _path: TreePath

    @classmethod
    def _accepts(cls, obj: object) -> bool:
        """A pytree of jax.Arrays / ShapeDtypeStructs that is not itself an array or a
        function: ``ShardView(params)``."""
        return is_tree(obj)

    @classmethod
    def _accepts_call(cls, obj: object, kwargs: dict[str, Any]) -> bool:
        """A tree, or a lone jax.Array planned on an AbstractMesh (``mesh=``): its shape."""
        planned = mesh_mod.is_planned(kwargs.get("mesh"))
        return is_tree(obj) or (planned and isinstance(obj, jax.Array))

    STATE_TRAITS: ClassVar[tuple[str, ...]] = STATE_TRAITS
    REQUEST_TYPE: ClassVar[str] = "tree_request"
    SYNCED: ClassVar[tuple[str, ...]] = (
        "_kind",
        "selected",
        "hardware",
        "large_bytes",
        "_hardware_presets",
        "_tree",
        "_layout",
        "_stats",
        "_options",
        "_search",
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
    hardware = HardwareName("h100").tag(sync=True)
    """str, default "h100": the preset whose HBM the memory chart draws as a line. Both
    directions."""
    large_bytes = traitlets.Int(1 << 20).tag(sync=True)
    """int, default 1 MiB: replicated leaves holding this many bytes per device or more are
    flagged. Python → JS."""
    _tree: Any = traitlets.Dict().tag(sync=True)
    """wire.TreeWire: every leaf, memory per device. Python → JS."""
    _layout: Any = traitlets.Dict().tag(sync=True)
    """wire.LayoutWire: the selected leaf's geometry. Python → JS."""
    _stats: Any = traitlets.Dict().tag(sync=True)
    """wire.Stats: the selected leaf's per-block statistics. Python → JS."""
    _options: Any = traitlets.Dict().tag(sync=True)
    """wire.Options: the selected leaf's, for the embedded grid. Python → JS."""
    _search: Any = traitlets.Dict(dict(search_wire.empty())).tag(sync=True)
    """wire.SearchWire: the newest ``search()``'s candidates. Python → JS."""

    def _build(self, tree: Any, /, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError(f"ShardView(tree) takes one tree; got {len(args)} more argument(s)")
        refuse_unknown("ShardView(tree)", kwargs, INIT_KWARGS)

        flat = flatten(tree)
        if not flat.leaves:
            raise TypeError(tree_input.no_array_leaf(tree, flat.static))
        self._name = str(kwargs.get("name", "params"))
        if not self._name.isidentifier():
            raise ValueError(f"name must be a Python identifier, got {self._name!r}")
        self._with_stats = bool(kwargs.get("stats", True))
        mesh: Any = kwargs.get("mesh")
        if mesh is not None and not isinstance(mesh, Mesh | AbstractMesh):
            raise TypeError(
                "mesh must be a jax.sharding.Mesh (the kernel's devices) or an AbstractMesh (a "
                f"plan), got {type(mesh).__name__}"
            )
        mesh = mesh if mesh is not None else mesh_of(flat.leaves)
        if mesh is None:
            mesh = mesh_mod.build_mesh((len(jax.devices()),), ("x",), ("auto",))
        leaves = on_mesh(flat.leaves, mesh)
        if kwargs.get("spec") is not None:
            if len(leaves) != 1:
                raise ValueError("spec= lays out one array; give a tree rules= instead")
            leaves = (rules_mod.with_spec(leaves[0], mesh, kwargs["spec"]),)
        self._path = TreePath(dataclasses.replace(flat, leaves=leaves), mesh)
        self._mesh = mesh
        self._applied = rules_mod.Applied(leaves, ("",) * len(leaves))
        self._shown_leaf: tuple[int, Layout] | None = None  # the leaf in _layout / _stats
        self._leaf_summary: tuple[int, Layout, Summary] | None = None
        self._open()
        hw = hw_mod.hardware(kwargs.get("hardware", hw_mod.preset_for(mesh, "h100")))
        if hw.name not in hw_mod.names():
            hw_mod.register(hw)  # a Hardware of the user's own: findable by its name
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
        flat = self._path.flat
        return list(flat.static) if flat is not None else []

    @property
    def per_device(self) -> dict[int, int]:
        """Device id -> bytes of the tree it holds as shown (each shard on each holder; int4
        packed as XLA stores it): every device of the mesh, 0 where it holds nothing."""
        return rules_mod.per_device(self._applied.leaves, mesh_mod.mesh_ids(self._mesh))

    @property
    def notes(self) -> list[str]:
        """Warnings in words on the rules shown (a rule that matches no leaf, a logical name no
        leaf carries, leaves without logical names replicated): the layout stands."""
        return list(self._applied.notes)

    @property
    def planned(self) -> str:
        """For a plan (its mesh an AbstractMesh: no devices, no data), what it is in words:
        "planned on AbstractMesh (32, 8) · no devices"; "" for a view on the kernel's devices."""
        return mesh_mod.planned_text(self._mesh) if self._path.planned else ""

    @property
    def mesh(self) -> Any:
        """The jax Mesh (an AbstractMesh for a plan) the rules lay out on. Setting it re-lays
        out with the same rules on the new mesh (its own device order kept; a plan takes an
        AbstractMesh of as many positions); ValueError, nothing changed, when a rule does not
        fit it (an axis it lacks, a dimension its axes do not divide)."""
        return self._mesh

    @mesh.setter
    def mesh(self, mesh: Mesh | AbstractMesh) -> None:
        self._path.check_mesh(mesh)
        before = self._path.own_mesh
        self._path.own_mesh = mesh  # mesh_for picks it for its own shape, names and types
        try:
            self._change(
                dataclasses.replace(
                    self._state,
                    mesh_shape=mesh_mod.mesh_sizes(mesh),
                    axis_names=tuple(str(a) for a in mesh.axis_names),
                    axis_types=tuple(mesh_mod.mesh_axis_types(mesh)),
                )
            )
        except BaseException:
            self._path.own_mesh = before
            raise

    @property
    def rules(self) -> list[tuple[str, Any]]:
        """``[(regex, PartitionSpec), ...]``: each leaf whose path (``re.search``) matches a
        regex takes the first such rule's spec (padded with None to its rank); unmatched leaves
        keep their layout. Setting it re-lays out at once; a rule that cannot apply raises
        ValueError naming the leaf and the rule, and nothing changes."""
        return [(r.pattern, r.partition_spec) for r in self._state.rules]

    @rules.setter
    def rules(self, value: object) -> None:
        self._change(dataclasses.replace(self._state, rules=rules_mod.make_rules(value), text=None))

    @property
    def logical_rules(self) -> list[tuple[str, Any]]:
        """``[(logical name, mesh axis or axes), ...]``: leaves with logical axis names (flax
        ``nnx.with_partitioning``) no regex rule matches are laid out as flax's
        ``logical_to_mesh_sharding`` would. ValueError (nothing changed) when one cannot."""
        return [(n, a if a is None or len(a) != 1 else a[0]) for n, a in self._state.logical]

    @logical_rules.setter
    def logical_rules(self, value: object) -> None:
        logical = rules_mod.make_logical_rules(value)
        self._change(dataclasses.replace(self._state, logical=logical, text=None))

    @property
    def tree(self) -> Any:
        """The tree laid out as shown: the leaves whose layout changed placed with
        ``jax.device_put`` (a ShapeDtypeStruct gets the sharding), the others the user's own.
        Made when asked for; the view keeps no copy. A plan: every array leaf as a
        ShapeDtypeStruct with its sharding on the AbstractMesh (nothing placed)."""
        return self._path.placed(self._applied, self._changed_leaves())

    @property
    def code(self) -> str:
        """Python (jax only) that, run with the tree bound to ``name`` (``params``), makes the
        mesh and the shardings and rebinds the name to the tree laid out as shown."""
        return tree_code(
            self._mesh, self._state.rules, self._applied.leaves, self._applied.sources, self._name
        )

    def leaf(self, path: str) -> TreeLeaf:
        """The array leaf at this path (keystr); KeyError naming close paths when none."""
        for leaf in self._applied.leaves:
            if leaf.path == path:
                return leaf

        close = difflib.get_close_matches(path, [x.path for x in self._applied.leaves], n=3)
        raise KeyError(f"no array leaf at {path!r}" + (f"; close: {close}" if close else ""))

    def __repr__(self) -> str:
        return tree_render.text(self)

    # ---------------------------------------------------------------- the change path
    @property
    def _state(self) -> TreeState:
        """The state shown (a tree view always shows one once made)."""
        assert self._shown is not None
        return self._shown

    def _changed_leaves(self) -> tuple[int, ...]:
        return self._path.changed_leaves(self._applied)

    def _changed(self, i: int) -> bool:
        return self._path.changed(self._applied, i)

    def _is_shown(self, st: TreeState) -> bool:
        return bool(st == self._shown) and st.text == self.rules_text

    def _publish(self, st: TreeState, result: Computed) -> None:
        self._mesh, self._applied = result
        self._path.forget()
        self._shown = st
        self._failed = ""
        self._key += 1
        payload = self._path.payload(
            st, self._applied, self._key, self.code, self.planned, mesh_mod.mesh_ids(self._mesh)
        )
        pick = pick_leaf(self._pick, self.selected, payload["bytes"])
        self._pick = None
        self._set_traits({**st.to_wire(), "error": "", "_tree": payload, "selected": pick})
        self._publish_selected()
        self._remember(st)

    def _n_devices(self) -> int:
        return self._path.n_devices()

    @traitlets.validate("selected")
    def _validate_selected(self, proposal: Bunch) -> Any:
        i, n = proposal["value"], len(self._applied.leaves)
        if not self._quiet and not (isinstance(i, int) and 0 <= i < n):
            raise InvalidValue(f"selected must be a leaf index 0…{n - 1}; got {i!r}"[:200])
        return i

    @traitlets.observe("selected")
    def _on_selected(self, _change: Bunch) -> None:
        if not self._quiet:
            self._publish_selected()

    def _on_custom_msg(self, widget: object, content: object, buffers: object) -> None:
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
        i = self.selected
        leaf = self._applied.leaves[i]
        lay = leaf.layout
        if self._shown_leaf == (i, lay) and self._layout:
            return
        self._shown_leaf = (i, lay)
        self._key += 1
        source = "resharded" if self._changed(i) else "original"
        layout = layout_wire(lay, self._key, source, "", code=False)
        options = self._path.leaf_options(leaf.shape, lay)
        # Geometry first: the grid is drawn while the statistics are computed (a first leaf of
        # a new shape compiles its statistics pass: hundreds of ms).
        pending = wire.pending_stats(self._key)
        self._set_traits({"_layout": layout, "_options": options, "_stats": pending})
        summ = self._path.summarize(self._applied, i, lay, self._with_stats)
        self._leaf_summary = (i, lay, summ)  # host data: the static picture draws from it
        self._set_traits({"_stats": wire.stats(summ, key=self._key)})

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

        i = self.selected
        lay = self._applied.leaves[i].layout
        dims = leaf_dims(len(lay.shape))
        shown = self._leaf_summary
        summ = None
        if shown is not None and shown[0] == i and shown[1] is lay:
            summ = shown[2]
        elif compute:
            summ = self._path.summarize(self._applied, i, lay, self._with_stats)
        n = self._n_devices()  # (a gpu_mesh leaf: its GPUs by host below it)
        leaf = with_machine(array_svg(lay, summ, dims, width=width, n_devices=n), lay, width, n)
        return tree_svg(self, leaf, width)

    def _picture_name(self) -> str:
        return f"shardwidget-{self._name}"

    def _static_html(self) -> str:
        """The shared static picture (chart, largest leaves, selected leaf); its text (a dozen
        lines at most) kept in the page's words, in sight only where no picture is drawn."""
        leaf = self._applied.leaves[self.selected]
        caption = f"{len(self._applied.leaves)} array leaves · mesh {self._tree.get('mesh', '')}"
        if self.planned:
            caption += f" · {self.planned}"
        caption += f" · leaf {leaf.path}"
        words = repr(self)
        said = words.splitlines()
        return snapshot.picture_html(self._svg(compute=False), self.error, words, caption, said)

    def save_html(
        self, path: str | pathlib.Path, variants: object = None, budget: int | None = None
    ) -> ExportReport:
        """A self-contained HTML file (no network, no kernel): the table, the chart, the selected
        leaf's grid and statistics, and every other leaf's grid within ``budget`` bytes (default
        4 MiB); ``variants`` is refused (other rules or meshes need a kernel)."""
        return save_tree_view(self, path, variants=variants, budget=budget)

    def leaf_grid(self, i: int, key: int) -> wire.LeafGrid:
        """Leaf i's grid as laid out now, without statistics (no device work): what a saved
        page shows when that leaf is clicked."""
        return self._path.leaf_grid(self._applied, i, key, self._changed(i))
