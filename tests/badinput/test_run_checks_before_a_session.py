"""A bad ``--perf-events`` is refused before any session
(perf's usage error, exit 129, was stored as a failed session); ``run ''`` is refused in one line
(it measured the shell); a command killed by a signal under the default shell is stored with
that signal (it was exit 139 and no signal)."""

from __future__ import annotations

import json
import signal

import pytest

from benchlab.store.db import Store
from tests.cli.forked import run_cli
from tests.conftest import assert_one_line_error, needs_tool


def _sessions(db) -> int:
    if not db.exists():
        return 0
    with Store.open(db, readonly=True) as store:
        return len(store.sessions())


@needs_tool("perf")
@pytest.mark.parametrize("events", ["bogus", "cycles,no-such-event", "cpu/foo=1/"])
def test_perf_events_perf_refuses_are_refused_before_the_session(tmp_path, events):
    db = tmp_path / "p.db"
    proc = run_cli("run", "-r", "2", "-w", "0", "--perf-events", events, "true", db=db)
    assert_one_line_error(proc, "perf refuses")
    assert _sessions(db) == 0


@needs_tool("perf")
def test_perf_events_the_machine_cannot_count_still_run(tmp_path):
    """A VM has no PMU: cycles is '<not supported>', which perf accepts (stored unsupported)."""
    db = tmp_path / "p.db"
    proc = run_cli("run", "-r", "2", "-w", "0", "--perf-events", "task-clock,cycles", "true",
                   db=db)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("argv", [("",), ("  ",), ("-N", ""), ("true", "")])
def test_empty_command_is_refused(tmp_path, argv):
    db = tmp_path / "e.db"
    proc = run_cli("run", "-r", "2", "-w", "0", *argv, db=db)
    assert_one_line_error(proc, "empty")
    assert _sessions(db) == 0


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL, signal.SIGABRT])
def test_signal_under_the_default_shell_is_recorded(tmp_path, sig):
    db = tmp_path / "s.db"
    # the shell runs a child shell that kills itself: the outer shell exits 128 + N
    command = f"sh -c 'kill -{int(sig)} $$'; exit $?"
    proc = run_cli("run", "-r", "1", "-w", "0", "-i", command, db=db)
    assert proc.returncode == 0, proc.stderr
    export = json.loads(run_cli("export", "--format", "json", db=db, check=True).stdout)
    [run] = export["sessions"][0]["benchmarks"][0]["runs"]
    assert run["exit_code"] == 128 + int(sig)
    assert run["signal"] == int(sig)
    assert run["status"] == "failed"  # the shell did exit: -i=CODES keeps hyperfine's meaning
    assert sig.name in run["extra"]["signal_via_shell"]


def test_exit_code_of_a_signal_is_still_tolerated_by_its_code(tmp_path):
    db = tmp_path / "c.db"
    proc = run_cli("run", "-r", "1", "-w", "0", "--ignore-failure=139",
                   "sh -c 'kill -11 $$'; exit $?", db=db)
    assert proc.returncode == 0, proc.stderr


def test_no_signal_without_a_shell(tmp_path):
    """-N: the harness sees the program itself; an exit 139 is an exit 139."""
    db = tmp_path / "n.db"
    proc = run_cli("run", "-N", "-r", "1", "-w", "0", "-i", "sh -c 'exit 139'", db=db)
    assert proc.returncode == 0, proc.stderr
    export = json.loads(run_cli("export", "--format", "json", db=db, check=True).stdout)
    [run] = export["sessions"][0]["benchmarks"][0]["runs"]
    assert run["exit_code"] == 139 and run["signal"] is None


@pytest.mark.parametrize("argv", [
    ("run", "--isolation", "no-such-sandbox", "true"),
    ("run", "-r", "2", "--load", "no-such-load", "true"),
    ("study", "no-such-suite.toml"),
])
def test_a_refused_command_leaves_no_new_store_behind(tmp_path, argv):
    """The store is opened before every option is checked; a refusal removes the file it made."""
    db = tmp_path / "new.db"
    proc = run_cli(*argv, db=db)
    assert proc.returncode == 2, proc.stderr
    assert_one_line_error(proc, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_refused_command_keeps_an_existing_store(tmp_path):
    db = tmp_path / "old.db"
    assert run_cli("run", "-r", "1", "-N", "true", db=db).returncode == 0
    proc = run_cli("run", "--isolation", "no-such-sandbox", "true", db=db)
    assert proc.returncode == 2
    assert _sessions(db) == 1
