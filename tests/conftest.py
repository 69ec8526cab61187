"""Shared fixtures: the benchlab console script, a fresh database path, ../shared; the
parallel phase's scheduling (tests/scheduling.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BENCHLAB = str(Path(sys.executable).parent / "benchlab")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A database file path in a fresh temporary directory."""
    return tmp_path / "bench.db"


@pytest.fixture
def shared() -> Path:
    """The ../shared directory beside the repository; skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent: the published data sets are not available here")
    return SHARED


#: Tools scripts/setup.sh installs; a test that needs one skips without it here, but FAILS in
#: CI (CI=true), so a half-failed setup cannot pass quietly.
SETUP_TOOLS = {"stress-ng": "stress-ng", "valgrind": "valgrind", "hyperfine": "hyperfine",
               "chromium": "chromium", "postgres": "initdb", "sshd": "sshd", "perf": "perf"}


def in_ci() -> bool:
    """True when the suite runs in CI (``CI=true``), where every tool setup installs is there."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_tool(name: str, path: str | None = None, why: str = "") -> str:
    """The path of tool ``name`` (a key of SETUP_TOOLS, or any executable name), else skip the
    test here and FAIL it in CI (CI=true), where setup must have installed it.

    ``path``: look for this file instead of searching PATH (e.g. /usr/sbin/sshd, a PostgreSQL
    binary under /usr/lib/postgresql). ``why``: appended to the message.
    """
    import glob
    import shutil

    exe = SETUP_TOOLS.get(name, name)
    found = None
    if path is not None:
        found = next((p for p in glob.glob(path) if os.access(p, os.X_OK)), None)
    else:
        found = shutil.which(exe) or next(
            (p for p in (f"/usr/sbin/{exe}", *glob.glob(f"/usr/lib/postgresql/*/bin/{exe}"))
             if os.access(p, os.X_OK)), None)
    if found:
        return found
    message = f"{name} is not installed (scripts/setup.sh installs it){': ' + why if why else ''}"
    if in_ci():
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


def needs_tool(name: str, path: str | None = None):
    """Mark a test (or ``pytestmark``) as needing tool ``name``: skipped here without it,
    FAILED in CI (CI=true); see :func:`require_tool`."""
    return pytest.mark.requires_tool(name, path)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "requires_tool(name, path=None): the test needs a tool "
                                       "setup installs: skipped without it, failed in CI")
    from tests.scheduling import register_recorder

    register_recorder(config)


@pytest.hookimpl(trylast=True)  # the order left is this one (pytest reorders by fixtures)
def pytest_collection_modifyitems(config, items) -> None:
    """The parallel phase's order: users of a shared fixture together, longest first
    (tests/scheduling.py)."""
    from tests.scheduling import schedule

    schedule(config, items)


def pytest_runtest_setup(item) -> None:
    for mark in item.iter_markers("requires_tool"):
        require_tool(*mark.args, **mark.kwargs)


def run_cli(*args: str, db: Path | None = None, check: bool = False, timeout: float = 120,
            cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real ``benchlab`` console script and capture its output (text)."""
    argv = [BENCHLAB, *args]
    if db is not None:
        argv += ["--db", str(db)]
    full_env = dict(os.environ, COLUMNS="160", **(env or {}))
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(f"benchlab {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def sigint_as_in_a_terminal() -> None:
    """``preexec_fn`` for a child a test will Ctrl-C: SIGINT at its default action, as in a
    terminal's foreground job. A shell starting the suite as a background job (``make test &``
    in a script, a CI step without job control) ignores SIGINT, every child inherits that,
    and the Ctrl-C under test would be ignored."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit code 2, a single 'benchlab: error:' line on stderr, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("benchlab: error:"), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), (needle, lines[0])
