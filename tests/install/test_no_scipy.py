"""No scipy in the base install: scipy and its libraries are ~143 MB of the 150 MB
goal, and its import cost ``benchlab compare`` ~0.15 s. benchlab's special functions are
:mod:`benchlab.stats.distributions` (checked against scipy in tests/stats/test_distributions.py);
here: no module of benchlab imports scipy at all (module level, inside functions, or through
``importlib`` with a literal name), so no command, base or extra, can need it, and neither the
base dependencies nor any extra lists it. The wheel test (tests/install/test_wheel.py) runs
the base commands in a venv where scipy is absent."""

from __future__ import annotations

import ast
import tomllib

from tests.conftest import REPO

SRC = REPO / "src" / "benchlab"


def _scipy_imports(path) -> list[str]:
    """'file:line: module' for every import of scipy in the Python file ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    label = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            names = [str(node.args[0].value)]
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "require_extra"
              and node.args and isinstance(node.args[0], ast.Constant)):
            names = [str(node.args[0].value)]
        found += [f"{label}:{node.lineno}: {name}" for name in names
                  if name.split(".")[0] == "scipy"]
    return found


def test_no_benchlab_module_imports_scipy():
    found = [hit for path in sorted(SRC.rglob("*.py")) for hit in _scipy_imports(path)]
    assert not found, "scipy is not installed by benchlab (use benchlab.stats.distributions):\n" \
        + "\n".join(found)


def test_the_scan_sees_every_form_of_import(tmp_path):
    """The checker itself: each way of importing scipy is found (so the test above can fail)."""
    sample = tmp_path / "sample.py"
    sample.write_text("import scipy\nfrom scipy import special\nimport os\n"
                      "def f():\n    from scipy.stats import t\n"
                      "    importlib.import_module('scipy.optimize')\n"
                      "    require_extra('scipy.special')\n")
    assert len(_scipy_imports(sample)) == 5


def test_pyproject_lists_scipy_only_for_the_developers():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    base = project["project"]["dependencies"]
    extras = project["project"]["optional-dependencies"]
    assert not [d for d in base if d.lower().startswith("scipy")]
    assert not [d for deps in extras.values() for d in deps if d.lower().startswith("scipy")]
    assert any(d.startswith("scipy") for d in project["dependency-groups"]["dev"])
