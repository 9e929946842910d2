"""nard's layers import one way (docs/architecture.md): every import of every module
under ``nard/``, those inside functions and ``if TYPE_CHECKING`` blocks included, is
checked against the allowed graph, and ``nard.core`` imports nothing outside the
standard library."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nard"

# What each layer may import (besides third-party packages). ``nard`` is the package
# root (``nard/__init__.py``, re-exporting the core types); ``computer`` is
# ``nard/computer.py``. Training sits on the engine, beside the analysis; nothing
# below the command line imports it, and nothing but the command line imports
# the server.
ALLOWED: dict[str, set[str]] = {
    "nard": {"core"},
    "core": {"core"},
    "notation": {"core", "notation"},
    "engine": {"core", "notation", "engine"},
    "match": {"core", "notation", "match"},
    "training": {"core", "notation", "engine", "training"},
    "computer": {"core", "notation", "engine", "match"},
    "analysis": {"core", "notation", "engine", "match", "computer", "analysis"},
    "server": {"core", "notation", "engine", "match", "computer", "analysis", "server"},
    "cli": {
        "nard",
        "core",
        "notation",
        "engine",
        "match",
        "training",
        "computer",
        "analysis",
        "server",
        "cli",
    },
}


def _layer_of(path: Path) -> str:
    """The layer of a file under ``nard/``: its top-level package or module."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return "nard" if parts == ("__init__",) else parts[0]


def _imported(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """``(line, module imported)`` for every import in ``tree`` (of ``module``,
    dotted), relative ones resolved; ``from nard import x`` is the module
    ``nard.x`` when that exists, else the root ``nard``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: -node.level]
                base = ".".join([*package, base] if base else package)
            if base == "nard":
                for alias in node.names:
                    sub = PACKAGE / alias.name
                    is_module = sub.is_dir() or sub.with_suffix(".py").exists()
                    found.append((node.lineno, f"nard.{alias.name}" if is_module else "nard"))
            else:
                found.append((node.lineno, base))
    return found


def _modules() -> list[tuple[Path, str, list[tuple[int, str]]]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        dotted = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out.append((path, dotted, _imported(tree, dotted)))
    return out


MODULES = _modules()


def _violations(
    modules: list[tuple[Path, str, list[tuple[int, str]]]],
) -> list[str]:
    bad = []
    for path, dotted, imports in modules:
        layer = _layer_of(path)
        for line, name in imports:
            parts = name.split(".")
            if parts[0] != "nard":
                continue
            target = "nard" if len(parts) == 1 else parts[1]
            if target not in ALLOWED[layer]:
                bad.append(f"{dotted} (line {line}, layer {layer}) imports {name} (layer {target})")
    return bad


def test_every_module_is_in_a_layer() -> None:
    layers = {_layer_of(path) for path, _, _ in MODULES}
    assert layers <= set(ALLOWED), f"modules outside the known layers: {layers - set(ALLOWED)}"
    assert {"core", "engine", "training", "analysis", "cli"} <= layers


def test_imports_point_one_way() -> None:
    bad = _violations(MODULES)
    assert not bad, "imports against the layers (docs/architecture.md):\n" + "\n".join(bad)


def test_core_is_pure_python() -> None:
    bad = [
        f"{dotted} (line {line}) imports {name}"
        for path, dotted, imports in MODULES
        if _layer_of(path) == "core"
        for line, name in imports
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "nard"
    ]
    assert not bad, "nard.core imports outside the standard library:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "where"),
    [
        ("from nard.training.td import train\n", "at the top"),
        ("def f() -> None:\n    from nard.training import dataset\n", "inside a function"),
        ("if TYPE_CHECKING:\n    import nard.training.cli\n", "for types only"),
        ("from ..training import fitting\n", "relatively"),
        ("from nard import training\n", "as a name of the package"),
    ],
)
def test_an_engine_importing_training_is_caught(source: str, where: str) -> None:
    path = PACKAGE / "engine" / "example.py"
    imports = _imported(ast.parse(source), "nard.engine.example")
    bad = _violations([(path, "nard.engine.example", imports)])
    assert len(bad) == 1 and "imports nard.training" in bad[0], where


def _cycles(modules: list[tuple[Path, str, list[tuple[int, str]]]], prefix: str) -> list[str]:
    """The import cycles among the modules whose names start with ``prefix``
    (lazy imports included), each as ``a -> b -> ... -> a``."""
    names = {dotted for _, dotted, _ in modules}
    graph = {
        dotted: sorted(
            {name for _, name in imports if name in names and name.startswith(prefix)} - {dotted}
        )
        for _, dotted, imports in modules
        if dotted.startswith(prefix)
    }
    found: list[str] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                found.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


# (nard.analysis.stats names analyse's types for the type checker only, a circle
# that never runs, so the analysis is not checked here.)
@pytest.mark.parametrize("package", ["nard.engine.", "nard.training."])
def test_no_module_imports_itself_in_a_circle(package: str) -> None:
    cycles = _cycles(MODULES, package)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_a_circle_is_caught() -> None:
    # the circle nard.engine had (supervised -> rollout -> supervised, lazily)
    sources = {
        "nard.training.supervised": "def run():\n    from nard.training.rollout import x\n",
        "nard.training.rollout": "from nard.training.supervised import Dataset\n",
        "nard.training.fitting": "from nard.training.supervised import Dataset\n",
    }
    modules = [
        (PACKAGE / "training" / f"{n.rsplit('.', 1)[1]}.py", n, _imported(ast.parse(s), n))
        for n, s in sources.items()
    ]
    assert _cycles(modules, "nard.training.") == [
        "nard.training.supervised -> nard.training.rollout -> nard.training.supervised"
    ]
