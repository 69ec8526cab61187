"""docs/ci.md's harness workflows run as written: the Gate step of the Go project's and of the
Python (pytest-benchmark) project's GitHub Actions job, in a throwaway repository with an
``origin`` and a pull-request branch. An A/A pull request (a README change) passes; one that
makes a benchmark three times slower fails (exit 1) naming it alone (3x, not a few per cent:
the suite's machine is loaded, and a regression must be decided within the test's 25 s budget,
which replaces the workflows' 60 s).

Not run here: the ``uses:`` steps (checkout, setup-go, setup-python: the toolchains are on
this machine) and the install step, whose line tests/install/test_installers.py runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tests.ci.conftest import git
from tests.conftest import REPO
from tests.harnesses.toolchains import go_sum_product

pytestmark = pytest.mark.slow
DOC = REPO / "docs" / "ci.md"
VENV_BIN = str(Path(sys.executable).parent)

FIB = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n\nN = SUM\n"
PY_BENCH = ("from fib import N, fib\n\n\ndef test_fib(benchmark):\n    benchmark(fib, N)\n\n\n"
            "def test_fib_small(benchmark):\n    benchmark(fib, 12)\n")


#: The workflows' budget, and the test's: a job's minute is most of this suite's time on two
#: cores (each gate of an unchanged benchmark runs to its budget), and 25 s decide a 3x change.
BUDGET, TEST_BUDGET = "--max-time 60", "--max-time 25"


def gate_step(index: int) -> str:
    """The Gate step of docs/ci.md's ``index``-th workflow, as written but for the budget."""
    workflow = re.findall(r"^```yml\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)[index]
    steps = [s for job in yaml.safe_load(workflow)["jobs"].values() for s in job["steps"]]
    script = next(s["run"] for s in steps if s.get("name") == "Gate")
    assert script.count(BUDGET) == 1, script
    return script.replace(BUDGET, TEST_BUDGET)


def project(tmp_path: Path, files: dict[str, str], slow: dict[str, str] | None) -> Path:
    """A bare origin holding ``files`` on main, and a clone on branch pr with ``slow`` (or a
    README change) committed."""
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    for key, value in (("user.email", "ci@benchlab.invalid"), ("user.name", "ci")):
        git(seed, "config", key, value)
    for name, text in files.items():
        (seed / name).parent.mkdir(parents=True, exist_ok=True)
        (seed / name).write_text(text)
    (seed / ".gitignore").write_text("benchlab.*\n__pycache__/\n.benchmarks/\n")
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "main")
    subprocess.run(["git", "clone", "-q", "--bare", str(seed), str(tmp_path / "origin.git")],
                   check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "origin.git"), str(clone)], check=True)
    for key, value in (("user.email", "ci@benchlab.invalid"), ("user.name", "ci")):
        git(clone, "config", key, value)
    git(clone, "checkout", "-q", "-b", "pr")
    for name, text in (slow or {"README": "docs only\n"}).items():
        (clone / name).write_text(text)
    git(clone, "add", ".")
    git(clone, "commit", "-qm", "the pull request")
    return clone


def run_gate(script: str, clone: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env.update(PATH=VENV_BIN + os.pathsep + os.environ["PATH"],
               XDG_CACHE_HOME=str(tmp_path / "cache"), BENCHLAB_DB=str(tmp_path / "b.db"),
               GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    return subprocess.run(["bash", "-e", "-c", script], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=900)


def _failed(clone: Path) -> list[str]:
    suite = ET.parse(clone / "benchlab.xml").getroot()
    return [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]


@pytest.mark.parametrize("slow", [False, True], ids=["a-a", "3x"])
def test_go_workflow(tmp_path, slow):
    clone = project(tmp_path, go_sum_product(2000), go_sum_product(6000) if slow else None)
    res = run_gate(gate_step(0), clone, tmp_path)
    assert res.returncode == (1 if slow else 0), res.stdout + res.stderr
    assert _failed(clone) == (["Sum"] if slow else [])
    assert (clone / "benchlab.md").exists()


@pytest.mark.parametrize("slow", [False, True], ids=["a-a", "3x"])
def test_python_pytest_benchmark_workflow(tmp_path, slow):
    pytest.importorskip("pytest_benchmark", reason="pytest-benchmark is in the dev group")
    files = {"fib/__init__.py": FIB.replace("SUM", "15"), "benchmarks/test_fib.py": PY_BENCH}
    clone = project(tmp_path, files,
                    {"fib/__init__.py": FIB.replace("SUM", "18")} if slow else None)
    res = run_gate(gate_step(1), clone, tmp_path)
    assert res.returncode == (1 if slow else 0), res.stdout + res.stderr
    assert _failed(clone) == (["test_fib"] if slow else [])
