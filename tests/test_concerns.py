"""Each concern in its layer (docs/architecture.md), checked on the source of src/benchlab.

The layer table (tests/test_layers.py) says who may import whom; this says who may do what:

- **SQL** is written only in ``benchlab.store``: a string constant (or the text of an f-string)
  that reads as a SQL statement, or a call ``X.conn.execute(...)``, anywhere else fails;
- **processes** are started only by ``measure``, ``control``, ``environment`` and the build
  helpers: ``import subprocess`` anywhere else fails;
- **private modules** (``_name.py``) are private to their package: importing one from outside
  the package that holds it fails (make the helper a public name of the package instead).

Exceptions are listed below by file, each with its reason. The lists only shrink: a module not
listed fails; an entry that no longer matches anything is reported (a warning) so that it leaves
the list with its fix (a warning, not a failure: a fix and its list entry may land apart).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "benchlab"

#: Packages whose job is SQL.
SQL_HOME = ("benchlab.store",)
#: Files outside them that still hold SQL, with the reason (owned by others; each moves to a
#: store query, see Queries.harness_series / newest_session_uid / commands_of ...).
SQL_ALLOWED: dict[str, str] = {
}

#: Packages that start processes: measured runs, machine control, probes.
SUBPROCESS_HOME = ("benchlab.measure", "benchlab.control", "benchlab.environment",
                   "benchlab.workloads")
#: Other modules that start processes, with the reason.
SUBPROCESS_ALLOWED: dict[str, str] = {
    "benchlab/machines/stressng.py": "asks stress-ng for its version and its list of methods "
                                     "(a query of the tool, not a measured run)",
    "benchlab/cli/hyperfine_options.py": "checks that -S SHELL behaves like a shell "
                                         "(SHELL -c 'exit 3') before any session exists",
    "benchlab/ci/revisions.py": "checks out and builds git revisions (git, the build "
                                  "command) before they are measured",
    "benchlab/ci/worktrees.py": "runs git on the job's worktrees and sweeps what a killed "
                                "job left",
    "benchlab/ci/watchdog.py": "starts the process that cleans up a job's builds and trees "
                               "should the job be killed with -9",
}

#: Imports of another package's private module, with the reason.
PRIVATE_ALLOWED: dict[str, str] = {}

_SQL = re.compile(r"^\s*(SELECT\s.+\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s"
                  r"|CREATE\s+(TABLE|INDEX|VIEW)\s|DROP\s+(TABLE|INDEX)\s|ALTER\s+TABLE\s"
                  r"|PRAGMA\s+\w)", re.S)


def _modules(root: Path):
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        dotted = rel[:-3].replace("/", ".").removesuffix(".__init__")
        yield rel, dotted, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _inside(dotted: str, packages: tuple[str, ...]) -> bool:
    return any(dotted == p or dotted.startswith(p + ".") for p in packages)


def _text_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
    return None


def sql_uses(tree: ast.AST) -> list[int]:
    """Lines of SQL statements in string constants and of ``X.conn.execute(...)`` calls."""
    lines = []
    for node in ast.walk(tree):
        text = _text_of(node)
        if text is not None and _SQL.match(text):
            lines.append(node.lineno)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("execute", "executemany")
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "conn"):
            lines.append(node.lineno)
    return sorted(set(lines))


def subprocess_imports(tree: ast.AST) -> list[int]:
    """Lines importing ``subprocess`` (module level or inside functions)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "subprocess" for a in node.names):
            out.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            out.append(node.lineno)
    return out


def private_module_imports(dotted: str, is_package: bool, tree: ast.AST,
                           modules: set[str] | None = None) -> list[tuple[int, str]]:
    """(line, module) for each import of a private module (a ``_name`` part) from outside the
    package that holds it. ``modules``: the dotted names of existing modules (``from pkg
    import _name`` names a module only when one exists; None: assume it does)."""
    here = dotted if is_package else dotted.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                     if modules is None or f"{node.module}.{a.name}" in modules]
        for name in names:
            parts = name.split(".")
            for k, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__") and k > 0:
                    holder = ".".join(parts[:k])
                    if name.startswith("benchlab") and not (here == holder
                                                             or here.startswith(holder + ".")):
                        out.append((node.lineno, ".".join(parts[:k + 1])))
                    break
    return sorted(set(out))


def _stale(text: str) -> None:
    """An exception that no longer applies: say so (remove it from its list)."""
    import warnings

    warnings.warn(f"tests/test_concerns.py: {text}", stacklevel=2)


def _check(find, home: tuple[str, ...], allowed: dict[str, str], what: str) -> list[str]:
    problems, used = [], set()
    for rel, dotted, tree in _modules(ROOT):
        if _inside(dotted, home):
            continue
        found = find(rel, dotted, tree)
        if not found:
            continue
        if rel in allowed:
            used.add(rel)
            continue
        problems.append(f"src/{rel}:{found[0]}: {what}")
    for rel in sorted(set(allowed) - used):
        _stale(f"src/{rel}: listed as an exception for {what}, but has none: remove it "
               f"from the list")
    return problems


def test_sql_is_written_only_in_the_store():
    problems = _check(lambda rel, dotted, tree: sql_uses(tree), SQL_HOME, SQL_ALLOWED,
                      "SQL outside benchlab.store (add a query to store/queries.py)")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_processes_are_started_only_by_measure_control_environment_and_builders():
    problems = _check(lambda rel, dotted, tree: subprocess_imports(tree), SUBPROCESS_HOME,
                      SUBPROCESS_ALLOWED,
                      "subprocess outside measure/control/environment (run it through "
                      "benchlab.measure, or list the module here with its reason)")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_private_modules_stay_inside_their_package():
    problems = []
    used = set()
    parsed = list(_modules(ROOT))
    modules = {dotted for _, dotted, _ in parsed}
    for rel, dotted, tree in parsed:
        found = private_module_imports(dotted, rel.endswith("__init__.py"), tree, modules)
        if not found:
            continue
        if rel in PRIVATE_ALLOWED:
            used.add(rel)
            continue
        line, module = found[0]
        problems.append(f"src/{rel}:{line}: imports {module}, private to its package (make "
                        f"what it needs a public name of the package)")
    for rel in sorted(set(PRIVATE_ALLOWED) - used):
        _stale(f"src/{rel}: listed as importing a private module, but does not: remove it")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# --- the checkers themselves --------------------------------------------------------------

def test_checkers_on_synthetic_code():
    tree = ast.parse('x = "SELECT a FROM t"\ny = f"UPDATE {t} SET a = 1"\n'
                     'store.conn.execute(q)\nz = "select the best"\nw = "SELECTORS: one"\n')
    assert sql_uses(tree) == [1, 2, 3]
    tree = ast.parse("import os, subprocess\ndef f():\n    from subprocess import run\n")
    assert subprocess_imports(tree) == [1, 3]
    tree = ast.parse("from benchlab.store.formats._common import x\n"
                     "from benchlab.store.formats import _gather\n"
                     "import benchlab.control.cgroups._fs\n")
    assert private_module_imports("benchlab.report.a", False, tree) == [
        (1, "benchlab.store.formats._common"), (2, "benchlab.store.formats._gather"),
        (3, "benchlab.control.cgroups._fs")]
    # inside the package (or a subpackage of it) a private module is fine
    assert private_module_imports("benchlab.store.formats.csv_long", False, tree)[-1][1] == \
        "benchlab.control.cgroups._fs"
    assert len(private_module_imports("benchlab.store.formats.csv_long", False, tree)) == 1


# --- private names ------------------------------------------------------------------------

def private_name_imports(dotted: str, tree: ast.AST,
                         modules: set[str] | None = None) -> list[tuple[int, str]]:
    """(line, module.name) for each private name (``_name``, not a dunder) that module
    ``dotted`` takes from another benchlab module: ``from benchlab.x import _name``, or
    ``m._name`` where ``m`` is another benchlab module imported by name. ``modules``: the dotted
    names of existing modules (a ``_name`` that is a module is the private-module check's)."""
    modules = modules or set()
    aliases: dict[str, str] = {}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and node.module.split(".")[0] == "benchlab":
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in modules:
                    aliases[a.asname or a.name] = full
                elif _private(a.name) and node.module != dotted:
                    out.append((node.lineno, full))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name.split(".")[0] == "benchlab":
                    aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and _private(node.attr)
                and aliases[node.value.id] != dotted
                and f"{aliases[node.value.id]}.{node.attr}" not in modules):
            out.append((node.lineno, f"{aliases[node.value.id]}.{node.attr}"))
    return sorted(set(out))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


#: Modules that take a private name from another module, with the reason.
PRIVATE_NAME_ALLOWED: dict[str, str] = {}


def test_private_names_stay_in_their_module():
    """A ``_name`` is its module's own: a helper two modules share is a public name (with a
    docstring), so a reader knows it is used elsewhere and a rename finds every user."""
    problems, used = [], set()
    parsed = list(_modules(ROOT))
    modules = {dotted for _, dotted, _ in parsed}
    for rel, dotted, tree in parsed:
        found = private_name_imports(dotted, tree, modules)
        if not found:
            continue
        if rel in PRIVATE_NAME_ALLOWED:
            used.add(rel)
            continue
        problems += [f"src/{rel}:{line}: uses {name}, private to its module (make it a public "
                     f"name with a docstring)" for line, name in found]
    for rel in sorted(set(PRIVATE_NAME_ALLOWED) - used):
        _stale(f"src/{rel}: listed as using another module's private name, but does not: "
               f"remove it")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_private_name_checker_on_synthetic_code():
    modules = {"benchlab.measure.spawn", "benchlab.measure.spawn._process",
               "benchlab.measure.build", "benchlab.stats.rank"}
    tree = ast.parse("from benchlab.measure.build import _build_cached, find_c_compiler\n"
                     "from benchlab import _python_interrupts\n"
                     "from benchlab.measure.spawn import _process\n"
                     "import benchlab.stats.rank as rank\n"
                     "def f():\n"
                     "    return rank._average_ranks(x), _process.kill_group, rank.__name__\n"
                     "from benchlab.stats import rank as r2\n"
                     "r2._x = 1\n")
    assert private_name_imports("benchlab.report.a", tree, modules) == [
        (1, "benchlab.measure.build._build_cached"), (2, "benchlab._python_interrupts"),
        (6, "benchlab.stats.rank._average_ranks"), (8, "benchlab.stats.rank._x")]
    # a module's own private names, and its package's private modules, are fine
    own = ast.parse("from benchlab.stats.rank import _average_ranks\n")
    assert private_name_imports("benchlab.stats.rank", own, modules) == []


# --- session metadata ---------------------------------------------------------------------

#: The one module that changes a session's metadata after its row is made.
METADATA_OWNER = "benchlab/store/session_metadata.py"
#: Modules that still write it themselves, each with its reason; the list only shrinks.
METADATA_PENDING: dict[str, str] = {}


def metadata_writes(tree: ast.AST) -> list[int]:
    """Lines that write a session's metadata: a call ``X.update(metadata=...)`` or
    ``X.update_session(..., metadata=...)``, or SQL that updates the column."""
    lines = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("update", "update_session")
                and any(k.arg == "metadata" for k in node.keywords)):
            lines.append(node.lineno)
        text = _text_of(node)
        if text is not None and re.search(r"UPDATE\s+sessions\s+SET\b[^;]*\bmetadata\b", text,
                                          re.I | re.S):
            lines.append(node.lineno)
    return sorted(set(lines))


def test_session_metadata_is_written_in_one_module():
    """Every change of a session's metadata is a named, atomic update of
    ``benchlab.store.session_metadata``: two read-modify-writes of the one JSON document
    elsewhere could lose each other's change, and a report that wrote it would make what is
    stored depend on what was printed."""
    problems, used = [], set()
    for rel, dotted, tree in _modules(ROOT):
        found = metadata_writes(tree)
        if not found or rel == METADATA_OWNER:
            continue
        if rel in METADATA_PENDING:
            used.add(rel)
            continue
        problems.append(f"src/{rel}:{found[0]}: writes a session's metadata (use a named "
                        f"update of benchlab.store.session_metadata)")
    for rel in sorted(set(METADATA_PENDING) - used):
        _stale(f"src/{rel}: listed as writing session metadata, but does not: remove it")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def test_metadata_write_checker_on_synthetic_code():
    tree = ast.parse("writer.update(metadata=meta)\nstore.update_session(1, metadata={})\n"
                     "writer.update(protocol=p)\nq = 'UPDATE sessions SET metadata = ? WHERE id = ?'\n"
                     "meta.update(x=1)\n")
    assert metadata_writes(tree) == [1, 2, 4]
