"""The parallel phase's scheduling (tests/scheduling.py), on a real ``pytest -n 2 --dist
loadgroup`` run of a small suite written here: a module-scoped fixture is built once, the
longest recorded units start first, and a run's durations are recorded without xdist's group
suffixes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.scheduling import base_nodeid

CONFTEST = """
import pytest
from tests.scheduling import register_recorder, schedule, load_durations
from pathlib import Path

def pytest_configure(config):
    register_recorder(config)

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    schedule(config, items, Path(__file__).parent / "durations.json")
"""

SHARED = """
import os, pytest

@pytest.fixture(scope="module")
def built():
    with open(os.environ["LOG"], "a") as f:
        f.write("built\\n")
    return 1

@pytest.mark.parametrize("i", range(6))
def test_uses_it(built, i):
    with open(os.environ["LOG"], "a") as f:
        f.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} shared {i}\\n")
"""

SINGLES = """
import os, time, pytest

@pytest.mark.parametrize("name", ["a", "b", "c", "d", "e", "f"])
def test_single(name):
    with open(os.environ["LOG"], "a") as f:
        f.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} single {name}\\n")
    if name == "c":
        time.sleep(0.6)


@pytest.mark.xdist_group("pair")
@pytest.mark.parametrize("name", ["p", "q", "r"])
def test_grouped(name):
    with open(os.environ["LOG"], "a") as f:
        f.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} grouped {name}\\n")
"""


def _suite(tmp_path: Path, durations: dict[str, float]) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    (root / "conftest.py").write_text(CONFTEST)
    (root / "test_shared.py").write_text(SHARED)
    (root / "test_singles.py").write_text(SINGLES)
    (root / "durations.json").write_text(json.dumps(durations))
    return root


def _run(root: Path, log: Path, *extra: str, env: dict | None = None):
    import os

    outer = {k: v for k, v in os.environ.items()
             # the outer suite's recording file is not this small suite's to overwrite
             if k not in ("PYTEST_XDIST_WORKER", "BENCHLAB_RECORD_DURATIONS")}
    full = dict(outer, LOG=str(log), PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "--rootdir", str(root), *extra, str(root)],
                          capture_output=True, text=True, timeout=120, env=full, cwd=root)


def test_shared_fixture_built_once_and_longest_units_first(tmp_path):
    # d and the shared module are the two longest units: each worker starts with one of them
    root = _suite(tmp_path, {"test_singles.py::test_single[d]": 50.0,
                             "test_shared.py::test_uses_it[0]": 20.0,
                             "test_shared.py::test_uses_it[1]": 20.0,
                             "test_singles.py::test_single[b]": 1.0})
    log = tmp_path / "log"
    proc = _run(root, log, "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = log.read_text().splitlines()
    assert lines.count("built") == 1, lines  # one worker ran all six of its users
    shared_workers = {line.split()[0] for line in lines if " shared " in line}
    assert len(shared_workers) == 1 and len([l for l in lines if " shared " in l]) == 6
    # an explicit xdist_group (tests/control/test_system.py's "aslr") holds too
    assert len({line.split()[0] for line in lines if " grouped " in line}) == 1, lines
    first = {}
    for line in lines:
        if line != "built":
            first.setdefault(line.split()[0], line.split(" ", 1)[1])
    assert sorted(first.values()) == ["shared 0", "single d"], lines
    # b (1 s) is handed out before the unrecorded tests: its worker runs it before any of them.
    # (Across the two workers the log's order is not the hand-out order: each worker runs its
    # own queue, and one ran c before the other reached b in a fresh-clone CI.)
    by_worker: dict[str, list[str]] = {}
    for line in lines:
        if " single " in line:
            by_worker.setdefault(line.split()[0], []).append(line.split()[-1])
    ran_b = next(names for names in by_worker.values() if "b" in names)
    assert all(ran_b.index("b") < ran_b.index(n) for n in "acef" if n in ran_b), by_worker


def test_without_xdist_the_order_is_the_collection_order(tmp_path):
    root = _suite(tmp_path, {"test_singles.py::test_single[f]": 50.0})
    log = tmp_path / "log"
    proc = _run(root, log)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = [line.split(" ", 1)[1] for line in log.read_text().splitlines() if line != "built"]
    assert ran == [f"shared {i}" for i in range(6)] + [f"single {n}" for n in "abcdef"] + [
        f"grouped {n}" for n in "pqr"]


def test_a_run_records_its_durations_without_group_suffixes(tmp_path):
    root = _suite(tmp_path, {})
    record = tmp_path / "recorded.json"
    proc = _run(root, tmp_path / "log", "-n", "2", "--dist", "loadgroup",
                env={"BENCHLAB_RECORD_DURATIONS": str(record)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recorded = json.loads(record.read_text())
    assert list(recorded) == ["test_singles.py::test_single[c]"]  # the one test >= 0.5 s
    assert 0.5 <= recorded["test_singles.py::test_single[c]"] < 30
    # a second phase adds to the file: an entry of another test stays, a rerun test is updated
    record.write_text(json.dumps({"other.py::test_x": 9.0,
                                  "test_singles.py::test_single[c]": 99.0}))
    proc = _run(root, tmp_path / "log2", "-n", "2", "--dist", "loadgroup",
                env={"BENCHLAB_RECORD_DURATIONS": str(record)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recorded = json.loads(record.read_text())
    assert recorded["other.py::test_x"] == 9.0
    assert recorded["test_singles.py::test_single[c]"] < 30
    assert base_nodeid("test_shared.py::test_uses_it[0]@test_shared.py") == \
        "test_shared.py::test_uses_it[0]"
    assert base_nodeid("t.py::test[a@b]") == "t.py::test[a@b]"  # an @ inside parameters stays


def test_every_recorded_duration_names_a_test_that_exists():
    """tests/durations.json only orders the suite, so a stale entry breaks nothing; it must
    still name real tests, or the order would quietly stop following the suite."""
    import ast

    from tests.scheduling import DURATIONS, load_durations

    recorded = load_durations(DURATIONS)
    assert len(recorded) > 100 and all(v > 0 for v in recorded.values())
    defined: dict[str, set[str]] = {}
    missing = []
    for nodeid in recorded:
        path, _, rest = nodeid.partition("::")
        if path not in defined:
            file = REPO / path
            tree = ast.parse(file.read_text()) if file.is_file() else ast.Module([], [])
            defined[path] = {n.name for n in ast.walk(tree)
                             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if rest.split("[", 1)[0].split("::")[-1] not in defined[path]:
            missing.append(nodeid)
    assert not missing, f"tests/durations.json names tests that are gone: {missing[:10]}"
