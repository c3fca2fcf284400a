"""asz_core's imports, read from its source with ``ast``: every import statement counts, at the top
of a module or inside a function (a lazy import), under ``if TYPE_CHECKING:`` or in a ``try``, and
``importlib.import_module("...")`` / ``__import__("...")`` of a literal name. Relative imports are
resolved against the module's package. Two rules:

* core imports no plugin distribution (``asz_adapters_*``, ``asz_evaluators``, any ``asz_*`` but
  ``asz_core``): plugins reach core through the hooks, never the other way round;
* no two modules of asz_core import each other, directly or through others (no circle).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from .helpers import ROOT

CORE = ROOT / "asz_core" / "src" / "asz_core"


def modules_of(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package (``pkg.sub`` for ``sub/__init__.py``)."""
    base = package_dir.parent
    out = {}
    for f in sorted(package_dir.rglob("*.py")):
        parts = list(f.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def imported_names(name: str, path: Path) -> list[tuple[str, int, str | None]]:
    """Every dotted name ``name``'s source imports (relative ones resolved), with its line and,
    for ``from M import n``, the module ``M`` that ``n`` comes from when ``M.n`` is no module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, int, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - (node.level - 1)])
                full = f"{base}.{node.module}" if node.module else base
            else:
                full = node.module or ""
            out += [(f"{full}.{a.name}" if a.name != "*" else full, node.lineno, full) for a in node.names]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            out.append((node.args[0].value, node.lineno, None))
    return out


def import_graph(package_dir: Path) -> tuple[dict[str, set[str]], list[str]]:
    """The package's modules -> the modules of it they import; and every import of a plugin
    distribution, as ``module:line imports name``."""
    mods = modules_of(package_dir)
    top = package_dir.name
    graph: dict[str, set[str]] = {m: set() for m in mods}
    plugins: list[str] = []
    for m, f in mods.items():
        for name, line, source in sorted(imported_names(m, f), key=lambda x: x[1]):
            first = name.split(".")[0]
            if first.startswith("asz_") and first != top:
                plugins.append(f"{m}:{line} imports {name}")
            # `from . import x` imports module x; `from .x import y` (y no module) imports x
            target = name if name in mods else source
            if target in mods and target != m:
                graph[m].add(target)
    return graph, plugins


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan), each as the modules in it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _cycle_path(graph: dict[str, set[str]], part: list[str]) -> str:
    """One circle through the part, for the message: a -> b -> a."""
    inside = set(part)
    start = part[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in inside)
        back = [w for w in nxt if w in seen]
        if back:
            return " -> ".join(path[path.index(back[0]):] + [back[0]])
        path.append(nxt[0])
        seen.add(nxt[0])


def test_core_imports_no_plugin_distribution() -> None:
    graph, plugins = import_graph(CORE)
    assert len(graph) > 30, "the graph must cover asz_core's modules"
    assert plugins == [], "asz_core must reach plugins through the hooks only:\n" + "\n".join(plugins)


def test_core_modules_import_each_other_in_no_circle() -> None:
    graph, _ = import_graph(CORE)
    assert "asz_core.judge.context" in graph["asz_core.judge.stages.targets"]  # relative imports resolved
    assert "asz_core.judge.runner" in graph["asz_core.judge.pick"]
    found = circles(graph)
    assert found == [], "import circles in asz_core:\n" + "\n".join(_cycle_path(graph, p) for p in found)


# --- the checker itself, over small packages that break the rules ---------------------------------

def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, src in files.items():
        p = root / "asz_core" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src))
    return root / "asz_core"


def test_the_checker_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "def f():\n    from .judge import b\n",
        "judge/__init__.py": "",
        "judge/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import X\n",
        "c.py": "from . import a\nimport asz_core.d\n",
        "d.py": ("import importlib\n\ndef g():\n    try:\n        import asz_evaluators.pick\n    except ImportError:\n"
                 "        pass\n    importlib.import_module('asz_adapters_kiro.adapter')\n    from asz_adapters_codex import x\n"),
    })
    graph, plugins = import_graph(pkg)
    assert graph["asz_core.a"] == {"asz_core.judge.b"}  # a submodule, not its package
    assert graph["asz_core.judge.b"] == {"asz_core.c"}
    assert graph["asz_core.c"] == {"asz_core.a", "asz_core.d"}
    assert circles(graph) == [["asz_core.a", "asz_core.c", "asz_core.judge.b"]]
    assert _cycle_path(graph, circles(graph)[0]) == "asz_core.a -> asz_core.judge.b -> asz_core.c -> asz_core.a"
    assert plugins == ["asz_core.d:5 imports asz_evaluators.pick", "asz_core.d:8 imports asz_adapters_kiro.adapter",
                       "asz_core.d:9 imports asz_adapters_codex.x"]


def test_the_checker_finds_no_circle_where_there_is_none(tmp_path: Path) -> None:
    pkg = _package(tmp_path, {"__init__.py": "from .a import x\n", "a.py": "from .b import y\n", "b.py": "import os\n"})
    graph, plugins = import_graph(pkg)
    assert circles(graph) == [] and plugins == []
    assert graph["asz_core"] == {"asz_core.a"} and graph["asz_core.a"] == {"asz_core.b"}
