"""The import graph of ``editf1``: no cycles, and no module imports a layer above its own;
``research/`` (what reproduces the project's own figures) imports the package, never the
reverse.

Read from the source with ``ast`` (imports inside functions count too: a lazy import is
still a dependency). The layers, bottom to top, are the pipeline's steps and then the
jobs around them (CONTRIBUTING.md, "Architecture").
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
RESEARCH = SRC.parent / "research"

#: Bottom to top. A module may import its own unit (a folder, or a core module) and any
#: unit of a lower layer, nothing else.
LAYERS: list[tuple[str, ...]] = [
    ("editf1.data",),
    (
        "editf1.themes",
        "editf1.versions",
        "editf1.stats",
        "editf1.citation",
        "editf1.caches",
        "editf1.privacy",
        "editf1.naming",
    ),
    ("editf1.ppi",),
    ("editf1.segment",),
    ("editf1.inputs",),
    ("editf1.io", "editf1.judges"),
    ("editf1.options",),
    ("editf1.results",),
    ("editf1.count",),
    ("editf1.aggregate",),
    ("editf1.scorer",),
    ("editf1.builders",),
    ("editf1.drafting",),
    ("editf1.validation",),
    ("editf1.gold",),
    ("editf1.cards",),
    ("editf1.training",),
    ("editf1.analysis", "editf1.integrations"),
    ("editf1.cli",),
    ("editf1",),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "editf1").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1] if parts[-1] == "__init__" else parts
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the ``editf1`` modules it imports (anywhere in its source)."""
    modules = _modules()

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {known(a.name) for a in node.names if a.name.startswith("editf1")}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("editf1"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in modules else known(node.module))
        graph[name] = deps - {name}
    return graph


def unit(module: str) -> str:
    """The layer unit of a module: ``editf1.<first part>``, or ``editf1`` itself."""
    return ".".join(module.split(".")[:2])


def layer(module: str) -> int:
    for rank, units in enumerate(LAYERS):
        if unit(module) in units:
            return rank
    raise AssertionError(f"{module} is in no layer: add its unit to LAYERS")


def test_the_graph_reader_sees_lazy_imports(tmp_path):
    graph = import_graph()
    assert "editf1.scorer" in graph["editf1.integrations.hf_metric"]
    # editf1/__init__ imports its exports lazily, inside TYPE_CHECKING and functions
    assert {"editf1.scorer", "editf1.judges"} <= graph["editf1"]


def test_no_import_cycles():
    try:
        list(TopologicalSorter(import_graph()).static_order())
    except CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")


def test_every_module_has_a_layer_and_imports_only_downwards():
    upward = [
        f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
        for a, deps in sorted(import_graph().items())
        for b in sorted(deps)
        if unit(a) != unit(b) and layer(b) >= layer(a)
    ]
    assert upward == []


def imported(path: Path) -> set[str]:
    """The absolute module names ``path`` imports (``from a.b import c``: ``a.b.c`` and
    ``a.b``), anywhere in its source."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_the_package_never_imports_research():
    assert [
        name
        for name, path in sorted(_modules().items())
        if any(n == "research" or n.startswith("research.") for n in imported(path))
    ] == []


def test_research_imports_modules_that_exist():
    """A module moved out of the package is imported from its new place: every
    ``editf1`` or ``research`` module research/ names is there (a name may also be a
    function or class of the module before it)."""
    modules = set(_modules()) | {
        f"research.{p.stem}" for p in RESEARCH.glob("*.py") if p.stem != "__init__"
    }
    missing = [
        f"{path.name}: {name}"
        for path in sorted(RESEARCH.glob("*.py"))
        for name in sorted(imported(path))
        if name.split(".")[0] in ("editf1", "research")
        and name not in modules | {"research"}
        and name.rpartition(".")[0] not in modules | {"research"}
    ]
    assert missing == []
