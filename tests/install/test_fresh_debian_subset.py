"""scripts/fresh-debian-check.sh with FRESH_TEST_ARGS: a phase of ``make test`` that selects
none of the subset's tests passes (pytest exit 5 counted as 0, said in one line), and nothing
else changes: a failing test still fails. The plugin is the one the script writes into the
Debian root (taken from the script's text), run by a real pytest on a throwaway test file; the
debootstrap itself is too slow for the suite (docs/development.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "fresh-debian-check.sh"


def _pytest(tmp_path, *args: str, plugin: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    if plugin:
        env["PYTHONPATH"] = str(tmp_path / "plugin")
        args = ("-p", "fresh_subset", *args)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=tmp_path / "suite", env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_phase_without_a_test_of_the_subset_passes_and_says_so(tmp_path):
    text = SCRIPT.read_text()
    plugin = re.search(r"<<'PLUGIN'\n(.*?)\nPLUGIN\n", text, re.S)
    assert plugin, "the script no longer writes its subset plugin"
    assert "${FRESH_TEST_ARGS:+PYTHONPATH=/root/fresh-check}" in text  # only with a subset
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "fresh_subset.py").write_text(plugin.group(1) + "\n")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_subset.py").write_text(
        "def test_passes():\n    pass\n\ndef test_fails():\n    assert False\n")

    without = _pytest(tmp_path, "-m", "serial", "test_subset.py", plugin=False)
    assert without.returncode == 5, without.stdout  # what made the run at 667d6c2 FAIL
    empty = _pytest(tmp_path, "-m", "serial", "test_subset.py", plugin=True)
    assert empty.returncode == 0, empty.stdout + empty.stderr
    assert "no test of the subset in this phase (pytest exit 5): counted as passed" in empty.stdout
    failing = _pytest(tmp_path, "test_subset.py", plugin=True)
    assert failing.returncode == 1 and "1 failed, 1 passed" in failing.stdout
    passing = _pytest(tmp_path, "test_subset.py::test_passes", plugin=True)
    assert passing.returncode == 0 and "counted as passed" not in passing.stdout
