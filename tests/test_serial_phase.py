"""`make test`'s serial phase names the files that hold serial tests, so it does not collect the
whole suite a second time (~2,500 tests, each test module imported: seconds of a phase that runs
alone); this test keeps that list exact, so a serial test added anywhere cannot be left out.
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

from tests.conftest import REPO


def files_with_serial_marks(root: Path) -> set[str]:
    """Paths (relative to the repository) of the .py files under ``root`` that mention
    ``<something>.mark.serial``: a decorator, a ``pytestmark``, a ``pytest.param(marks=...)``
    or an alias defined there."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Attribute) and node.attr == "serial"
               and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
               for node in ast.walk(tree)):
            found.add(str(path.relative_to(root.parent)))
    return found


def makefile_serial_files(makefile: str) -> list[str]:
    """The words of the Makefile's ``SERIAL_TESTS = ...`` assignment (continuations joined)."""
    joined = makefile.replace("\\\n", " ")
    match = re.search(r"^SERIAL_TESTS\s*=(.*)$", joined, re.M)
    assert match, "the Makefile has no SERIAL_TESTS = ... line"
    return shlex.split(match.group(1))


def test_the_serial_phase_names_every_file_with_a_serial_test_and_only_those():
    makefile = (REPO / "Makefile").read_text()
    listed = makefile_serial_files(makefile)
    assert len(listed) == len(set(listed)), listed
    marked = files_with_serial_marks(REPO / "tests")
    assert len(marked) >= 5, "too few serial files found: is the search right?"
    assert set(listed) == marked, (
        f"Makefile SERIAL_TESTS misses {sorted(marked - set(listed))} and lists "
        f"{sorted(set(listed) - marked)} without a serial test")
    # both phases are still there: everything but serial in parallel, then serial on its own
    recipe = [line.strip() for line in makefile.splitlines() if line.startswith("\t")]
    assert any(re.search(r"-n \d", line) and '-m "not serial"' in line for line in recipe), recipe
    assert any(line.endswith("-m serial $(SERIAL_TESTS)") for line in recipe), recipe


def test_the_search_finds_each_way_of_marking(tmp_path):
    tests = tmp_path / "tests"
    (tests / "sub").mkdir(parents=True)
    (tests / "test_decorated.py").write_text(
        "import pytest\n@pytest.mark.serial\ndef test_a():\n    pass\n")
    (tests / "sub" / "test_module.py").write_text(
        "import pytest\npytestmark = [pytest.mark.slow, pytest.mark.serial]\n")
    (tests / "test_param.py").write_text(
        "import pytest\nP = [pytest.param(1, marks=pytest.mark.serial)]\n")
    (tests / "test_plain.py").write_text(
        "import pytest\n# mark.serial in a comment, 'pytest.mark.serial' in a string\n"
        "@pytest.mark.slow\ndef test_b():\n    serial = 'pytest.mark.serial'\n")
    assert files_with_serial_marks(tests) == {
        "tests/test_decorated.py", "tests/sub/test_module.py", "tests/test_param.py"}
    assert makefile_serial_files("X = 1\nSERIAL_TESTS = a.py \\\n\tb.py\ntest:\n") == [
        "a.py", "b.py"]
