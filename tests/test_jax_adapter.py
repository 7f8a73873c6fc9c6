"""JAX's private API and its version differences go through one module, shardwidget._jax.

Every other module uses JAX's public API only: no ``jax._src`` import, no reading of
``PartitionSpec.partitions`` / ``_partitions`` or ``jax.dtypes.itemsize_bits``, no check of
JAX's version, no spelling of JAX's internal pmap axis name, and no ``_``-prefixed attribute of
anyone else's object: a private name (``x._y`` or ``getattr(x, "_y")``) the package does not
define itself is JAX's, unless :data:`NOT_JAX` names whose it is. :data:`JAX_PRIVATE` are
caught even where the package has a field of the same name.
"""

from __future__ import annotations

import ast
import pathlib

import jax
import ml_dtypes
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from shardwidget import _jax

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "src" / "shardwidget"
ADAPTER = PACKAGE / "_jax"  # a package: __init__.py, and shardy.py (Shardy in jaxlib's MLIR)


JAX_PRIVATE = frozenset(
    {
        "_device_assignment",
        "_addressable_device_assignment",
        "_internal_device_list",
        "_partitions",
        "_parsed_pspec",
        "_hlo_sharding",
        "_to_xla_hlo_sharding",
        "_impl",
        "_jit_info",
        "_src",
        "_axis_name",
        "_prepare_pmap",
        "_shard_map",
        "_TempAxisName",
        "_cache_size",
        "_fun",
    }
)
"""Private attributes of JAX objects the package has read (or might): only _jax.py reads them."""

NOT_JAX: dict[str, str] = {
    "_exit": "os._exit (the planning helper's exit)",
    "_getframe": "sys._getframe (the calling cell)",
    "_value2member_map_": "enum: signal.Signals' names",
    "_instances": "ipywidgets 8's registry of live widgets",
    "_property_lock": "ipywidgets: the traits a front-end message is setting",
    "_trait_values": "traitlets: a widget's values",
    "_register_validator": "traitlets: the instance-level form of @validate, for traits named per kind",
    "_view_name": "ipywidgets: a widget's front-end class",
    "_repr_mimebundle_": "IPython's display protocol",
}
"""Private names of other libraries the package reads, with whose they are."""


def own_names(pkg: pathlib.Path) -> frozenset[str]:
    """Every name the package defines: functions, classes, attributes it assigns, variables."""
    out: set[str] = set()
    for path in pkg.rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(n.name)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                out.add(n.attr)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            elif isinstance(n, ast.alias):
                out.add(n.asname or n.name.split(".")[-1])
    return frozenset(out)


def _private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of each ``x._name`` and ``getattr/hasattr(x, "_name")``, dunders aside."""
    out = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name = node.args[1].value
        if name and name.startswith("_") and not name.startswith("__"):
            out.append((node.lineno, name))
    return out


def offences(tree: ast.AST, own: frozenset[str] = frozenset()) -> list[str]:
    """What a module does that only the adapter may do, one line per place (own: the names
    the package defines itself)."""
    out = []
    for line, name in _private_reads(tree):
        if name == "_partitions":
            continue  # said below, with the public spelling
        if name in JAX_PRIVATE or (name not in own and name not in NOT_JAX):
            out.append(f"{line}: private {name}")
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            out += [f"{line}: import {a.name}" for a in node.names if a.name.startswith("jax._src")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jax._src"):
            out.append(f"{line}: from {node.module} import ...")
        elif isinstance(node, ast.ImportFrom) and node.module == "jax" and not node.level:
            out += [f"{line}: from jax import _src" for a in node.names if a.name == "_src"]
        elif isinstance(node, ast.Attribute):
            chain = ast.unparse(node)
            if node.attr in ("partitions", "_partitions"):
                out.append(f"{line}: .{node.attr}")
            elif (
                (node.attr == "itemsize_bits" and chain.endswith("dtypes.itemsize_bits"))
                or (node.attr == "__version__" and chain.split(".")[0] in ("jax", "jaxlib"))
                or node.attr == "_src"
            ):
                out.append(f"{line}: {chain}")
        elif isinstance(node, ast.Constant) and node.value == _jax.PMAP_INTERNAL_AXIS:
            out.append(f"{line}: {node.value!r}")
    return out


def test_only_the_adapter_reaches_into_jax():
    found = {}
    own = own_names(PACKAGE)
    for path in PACKAGE.rglob("*.py"):
        if ADAPTER in path.parents:
            continue
        bad = offences(ast.parse(path.read_text(encoding="utf-8")), own)
        if bad:
            found[str(path.relative_to(PACKAGE))] = bad
    assert found == {}


@pytest.mark.parametrize(
    "source",
    [
        "from jax._src import core\n",
        "import jax._src.pmap as p\n",
        "def f(s):\n    return s.spec.partitions\n",
        "def f(s):\n    return s._partitions\n",
        "import jax\nb = jax.dtypes.itemsize_bits\n",
        "import jax\nv = jax.__version__\n",
        "A = '_internal_pmap_axis_name'\n",
        "def f(sh):\n    return list(sh._device_assignment)\n",
        "def f(sh):\n    return sh._internal_device_list\n",
        "def f(sh):\n    return getattr(sh, '_hlo_sharding', None)\n",
        "def f(sh):\n    return hasattr(sh, '_addressable_device_assignment')\n",
        "def f(arr):\n    return arr._committed\n",  # a name the package does not define
    ],
)
def test_the_check_finds_each_kind(source):
    assert offences(ast.parse(source)) != []


def test_a_jax_private_name_is_caught_though_the_package_has_one_like_it():
    own = frozenset({"_device_assignment", "_cached"})
    assert offences(ast.parse("def f(s):\n    return s._device_assignment\n"), own) != []
    assert offences(ast.parse("def f(self):\n    return self._cached\n"), own) == []


def test_the_check_leaves_our_own_fields_alone():
    # Layout.itemsize_bits is the package's own field, not JAX's function
    assert offences(ast.parse("def f(lay):\n    return lay.itemsize_bits\n")) == []


@pytest.mark.parametrize(
    ("spec", "entries"),
    [
        (P(), ()),
        (P("x"), ("x",)),
        (P("x", None), ("x", None)),
        (P(("x", "y"), None), (("x", "y"), None)),
        (P("y", unreduced={"x"}), ("y",)),  # the unreduced set is no dimension's entry
    ],
)
def test_spec_entries_are_the_specs_dimensions(spec, entries):
    assert _jax.spec_entries(spec) == entries


@pytest.mark.parametrize(
    ("dtype", "bits"),
    [
        (np.float32, 32),
        (np.int8, 8),
        (jax.numpy.bfloat16, 16),
        (ml_dtypes.int4, 4),
        (ml_dtypes.uint4, 4),
        (np.bool_, 8),
    ],
)
def test_itemsize_bits_as_xla_stores_them(dtype, bits):
    assert _jax.itemsize_bits(dtype) == bits


def test_pmap_is_told_apart_from_jit():
    from shardwidget.trace.pmap import is_pmapped

    def f(x):
        return x

    assert is_pmapped(jax.pmap(f))
    assert not is_pmapped(jax.jit(f))
    assert not is_pmapped(f)


def test_an_explicitly_typed_array_moves_onto_a_mesh_without_its_axes():
    """jax.device_put refuses this on jax 0.7 (it checks the array's own spec on the target
    mesh); the adapter retypes the array on Auto axes first, sharing its buffers."""
    from jax.sharding import AxisType, NamedSharding

    explicit = (AxisType.Explicit,) * 2
    x = jax.device_put(
        np.arange(32.0).reshape(4, 8),
        NamedSharding(jax.make_mesh((2, 4), ("x", "y"), axis_types=explicit), P("x", "y")),
    )
    d = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
    out = _jax.device_put(x, NamedSharding(d, P(None, "d")))
    assert out.sharding == NamedSharding(d, P(None, "d"))
    assert str(jax.typeof(out)) == "float32[4,8@d]"
    np.testing.assert_array_equal(np.asarray(out), np.arange(32.0).reshape(4, 8))
    both = _jax.device_put([x, x], [NamedSharding(d, P(None, "d")), NamedSharding(d, P())])
    assert [o.sharding.spec for o in both] == [P(None, "d"), P()]
    retyped = _jax._auto_typed(x)
    assert [s.data.unsafe_buffer_pointer() for s in retyped.addressable_shards] == [
        s.data.unsafe_buffer_pointer() for s in x.addressable_shards
    ]
    assert not x.is_deleted()
    with pytest.raises(ValueError, match="not found in mesh"):  # refused for its own reason
        _jax.device_put(x, NamedSharding(d, P("x")))
