"""The layer rule of docs/architecture.md, checked on every import in src/benchlab.

The table is read from docs/architecture.md itself (rank and package of each row), so the doc and
the test cannot drift apart. Every import counts: module level, inside functions and methods,
under ``if TYPE_CHECKING`` (a dependency on a type is still a dependency), relative imports, and
``importlib.import_module("benchlab...")`` with a literal name.

Failures are listed all at once, one line each, so a refactor sees everything left to move:

- an import from a package to a package of higher rank, or between two packages of one rank;
- any import of ``benchlab.cli`` from outside ``benchlab.cli``;
- a module whose package is not in the table;
- a cycle between modules (Tarjan's strongly connected components on the module graph).

The one documented exception: ``benchlab/__init__.py`` may expose a lazy ``open`` through a module
``__getattr__``; imports inside that function are exempt from the rank rule and, since they run
only on attribute access after every module is loaded, from the cycle check.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
ARCHITECTURE = REPO / "docs" / "architecture.md"

_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([A-Za-z_][\w.]*)`\s*(\(([^)]*)\))?")


def read_layer_table(doc: Path) -> tuple[str, dict[str, int], set[str]]:
    """(root package, {package: rank}, rank-0 module names) from the Markdown table in ``doc``.

    The rank-0 row names the root package and, in parentheses, its own modules
    (``__init__``, ``errors``, ``units``); every other row names one package.
    """
    ranks: dict[str, int] = {}
    root = ""
    root_modules: set[str] = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line.strip())
        if not match:
            continue
        rank, package = int(match.group(1)), match.group(2)
        ranks[package] = rank
        if rank == 0:
            root = package
            for name in re.findall(r"`(\w+)`", match.group(4) or ""):
                root_modules.add(package if name == "__init__" else f"{package}.{name}")
    if not root:
        raise AssertionError(f"{doc}: no rank-0 row in the layer table")
    return root, ranks, root_modules


@dataclass
class Import:
    """One import statement: who imports what, where, and whether it is lazily exempt."""

    importer: str
    target: str
    path: Path
    line: int
    exempt: bool = False


@dataclass
class Report:
    """What the checker found; ``problems`` is empty for a clean tree."""

    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def discover_modules(src: Path, root: str) -> dict[str, Path]:
    """Every module of package ``root`` under ``src`` as {dotted name: path}."""
    modules: dict[str, Path] = {}
    for path in sorted((src / root).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve_relative(importer: str, is_package: bool, level: int, module: str | None) -> str:
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _imports_of(name: str, path: Path, modules: dict[str, Path], root: str) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def add(target: str, node: ast.AST, exempt: bool) -> None:
        if target == root or target.startswith(root + "."):
            found.append(Import(name, target, path, node.lineno, exempt))

    def visit(node: ast.AST, exempt: bool) -> None:
        for child in ast.iter_child_nodes(node):
            child_exempt = exempt or (
                name == root and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                and child.name == "__getattr__" and node is tree)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, child_exempt)
            elif isinstance(child, ast.ImportFrom):
                base = (_resolve_relative(name, is_package, child.level, child.module)
                        if child.level else child.module or "")
                for alias in child.names:
                    # ``from pkg import sub`` imports the submodule when one exists by that name.
                    sub = f"{base}.{alias.name}"
                    add(sub if sub in modules else base, child, child_exempt)
            elif (isinstance(child, ast.Call) and child.args
                  and isinstance(child.args[0], ast.Constant)
                  and isinstance(child.args[0].value, str)
                  and ((isinstance(child.func, ast.Attribute)
                        and child.func.attr == "import_module")
                       or (isinstance(child.func, ast.Name)
                           and child.func.id in {"import_module", "__import__"}))):
                add(child.args[0].value, child, child_exempt)
            visit(child, child_exempt)

    visit(tree, False)
    return found


def package_of(module: str, root: str, ranks: dict[str, int], root_modules: set[str]) -> str | None:
    """The table package ``module`` belongs to (longest matching prefix), or None."""
    if module in root_modules:
        return root
    best = None
    for package in ranks:
        if package != root and (module == package or module.startswith(package + ".")):
            if best is None or len(package) > len(best):
                best = package
    return best


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's SCCs of ``graph`` with more than one node, or a node importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    # Iterative, so a long import chain cannot hit Python's recursion limit.
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    result.append(sorted(component))
    return result


def _cycle_path(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One concrete cycle inside an SCC, as a -> b -> ... -> a (shortest back to the start)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if child not in previous:
                    previous[child] = node
                    nxt.append(child)
        frontier = nxt
    return component + [start]


def check_layers(src: Path, doc: Path) -> Report:
    """Every import under ``src`` checked against the table in ``doc``; problems one per line."""
    root, ranks, root_modules = read_layer_table(doc)
    report = Report(modules=discover_modules(src, root))
    cli = next((p for p, r in ranks.items() if r == max(ranks.values())), None)
    for name, path in report.modules.items():
        report.imports.extend(_imports_of(name, path, report.modules, root))
    for name, path in report.modules.items():
        if package_of(name, root, ranks, root_modules) is None:
            report.problems.append(f"{path.relative_to(src)}: module {name} belongs to no "
                                   f"package of the table in {doc.name}")
    graph: dict[str, set[str]] = {name: set() for name in report.modules}
    for imp in report.imports:
        where = f"{imp.path.relative_to(src)}:{imp.line}"
        src_pkg = package_of(imp.importer, root, ranks, root_modules)
        dst_pkg = package_of(imp.target, root, ranks, root_modules)
        if not imp.exempt and imp.target in report.modules:
            graph[imp.importer].add(imp.target)
        if imp.exempt or src_pkg is None:
            continue
        if dst_pkg is None:
            report.problems.append(f"{where}: {imp.importer} imports {imp.target}, "
                                   f"which belongs to no package of the table")
            continue
        if src_pkg == dst_pkg:
            continue
        if dst_pkg == cli:
            report.problems.append(f"{where}: {imp.importer} imports {imp.target}: "
                                   f"nothing outside {cli} may import {cli}")
        elif ranks[dst_pkg] > ranks[src_pkg]:
            report.problems.append(
                f"{where}: {imp.importer} (rank {ranks[src_pkg]}, {src_pkg}) imports "
                f"{imp.target} (rank {ranks[dst_pkg]}, {dst_pkg}): upward import")
        elif ranks[dst_pkg] == ranks[src_pkg]:
            report.problems.append(
                f"{where}: {imp.importer} ({src_pkg}) imports {imp.target} ({dst_pkg}): "
                f"same-rank packages (rank {ranks[src_pkg]}) must not import each other")
    # ``from x import a, b`` is one import statement: one line per statement, not per name.
    report.problems = list(dict.fromkeys(report.problems))
    for component in strongly_connected(graph):
        report.problems.append("import cycle: " + " -> ".join(_cycle_path(component, graph))
                               + f" (strongly connected: {', '.join(component)})")
    return report


def test_every_import_obeys_the_layer_table():
    report = check_layers(SRC, ARCHITECTURE)
    assert len(report.modules) > 50, "the checker found too few modules to be reading src/"
    assert report.imports, "the checker found no imports at all"
    if report.problems:
        text = "\n".join(report.problems)
        pytest.fail(f"{len(report.problems)} imports break docs/architecture.md:\n{text}",
                    pytrace=False)


# --- the checker itself, on a synthetic package -------------------------------------------

_DOC = """\
| rank | package | what | may import |
|---|---|---|---|
| 0 | `pkg` (`__init__`, `errors`) | base | nothing |
| 1 | `pkg.low` | low | rank 0 |
| 1 | `pkg.side` | side | rank 0 |
| 2 | `pkg.high` | high | ranks 0-1 |
| 3 | `pkg.cli` | cli | anything |
"""


def _write_tree(root: Path, files: dict[str, str]) -> Path:
    src = root / "src"
    for rel, text in files.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "arch.md").write_text(_DOC)
    return src


_CLEAN = {
    "pkg/__init__.py": "def __getattr__(name):\n    from pkg.high import api\n    return api\n",
    "pkg/errors.py": "",
    "pkg/low/__init__.py": "from pkg import errors\n",
    "pkg/low/a.py": "from . import b\n",
    "pkg/low/b.py": "import pkg.errors\n",
    "pkg/side/__init__.py": "",
    "pkg/high/__init__.py": "",
    "pkg/high/api.py": "def f():\n    import pkg.low.a\n    from ..side import __name__\n",
    "pkg/cli/__init__.py": "import importlib\nimportlib.import_module('pkg.high.api')\n",
}


def test_checker_passes_a_clean_tree(tmp_path):
    src = _write_tree(tmp_path, _CLEAN)
    report = check_layers(src, tmp_path / "arch.md")
    assert report.problems == []
    targets = {(i.importer, i.target) for i in report.imports}
    # relative, function-level, and import_module imports are all seen
    assert ("pkg.low.a", "pkg.low.b") in targets
    assert ("pkg.high.api", "pkg.low.a") in targets
    assert ("pkg.high.api", "pkg.side") in targets
    assert ("pkg.cli", "pkg.high.api") in targets


def test_checker_finds_upward_same_rank_cli_and_unplaced_imports(tmp_path):
    files = dict(_CLEAN)
    files["pkg/low/b.py"] = "def g():\n    from pkg.high import api\n"     # upward, in a function
    files["pkg/side/s.py"] = "from ..low import a\n"                       # same rank, relative
    files["pkg/high/h.py"] = "import importlib\nimportlib.import_module('pkg.cli')\n"
    files["pkg/stray.py"] = ""                                            # not in the table
    src = _write_tree(tmp_path, files)
    problems = check_layers(src, tmp_path / "arch.md").problems
    text = "\n".join(problems)
    assert "pkg/low/b.py:2: pkg.low.b (rank 1, pkg.low) imports pkg.high.api" in text
    assert "upward import" in text
    assert "pkg.side.s (pkg.side) imports pkg.low.a (pkg.low): same-rank" in text
    assert "nothing outside pkg.cli may import pkg.cli" in text
    assert "module pkg.stray belongs to no package" in text


def test_checker_reports_a_cycle_with_its_path(tmp_path):
    files = dict(_CLEAN)
    files["pkg/low/b.py"] = "def late():\n    import pkg.low.c\n"
    files["pkg/low/c.py"] = "from pkg.low import a\n"
    src = _write_tree(tmp_path, files)
    problems = check_layers(src, tmp_path / "arch.md").problems
    cycles = [p for p in problems if p.startswith("import cycle")]
    assert len(cycles) == 1, problems
    assert "pkg.low.a -> pkg.low.b -> pkg.low.c -> pkg.low.a" in cycles[0]
    # the lazy __getattr__ import of the root package is not an edge of the graph
    assert not any("pkg ->" in c for c in cycles)


def test_tarjan_on_a_long_chain_does_not_recurse():
    graph = {str(i): {str(i + 1)} for i in range(5000)}
    graph["5000"] = {"0"}
    (component,) = strongly_connected(graph)
    assert len(component) == 5001
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
    assert strongly_connected({"a": {"a"}}) == [["a"]]
