"""Every way out of a session is clean: real `benchlab` processes, real signals, real SQLite.

SIGTERM acts as Ctrl-C (exit 143, runs kept, session interrupted, resume to the exact count);
kill -9 leaves a session that reads as crashed and resumes; two resumes never both write; bad
input stops before a session exists; a failing hook or metric never leaves a session running;
no scratch directory (/tmp/benchlab-*) survives any of it.
"""

from __future__ import annotations

import glob
import os
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from benchlab.store import Store
from tests.conftest import BENCHLAB, assert_one_line_error, run_cli


def _scratch(pid: int) -> list[str]:
    """Scratch directories of benchlab process ``pid`` (named benchlab-<session>-p<pid>-*)."""
    return glob.glob(os.path.join(tempfile.gettempdir(), f"benchlab-*-p{pid}-*"))


def _start(*args: str, db: Path) -> subprocess.Popen:
    return subprocess.Popen([BENCHLAB, *args, "--db", str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _count_runs(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _wait_for_runs(db: Path, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists() and _count_runs(db) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} runs stored after {timeout} s")


def _only_session(db: Path) -> dict:
    with Store.open(db) as store:
        sessions = store.sessions()
        assert len(sessions) == 1, sessions
        return sessions[0]


def _runs(db: Path, uid: str) -> list[dict]:
    with Store.open(db) as store:
        return store.runs(session_id=store.get_session(uid)["id"])


def test_sigterm_is_an_interruption_and_resume_completes_the_exact_count(db_path):
    marker = f"benchlab-sigterm-{os.getpid()}"
    # explicit sh -c: the same program whether or not benchlab runs commands through a shell
    proc = _start("run", "--runs", "12", "-n", marker, f"/bin/sh -c 'sleep 0.15; : {marker}'",
                  db=db_path)
    _wait_for_runs(db_path, 3)
    assert _scratch(proc.pid), "a running session has its scratch directory"
    proc.send_signal(signal.SIGTERM)
    code, _, err = _finish(proc)
    assert code == 143, err
    assert "Traceback" not in err and "benchlab run --resume" in err
    session = _only_session(db_path)
    assert session["status"] == "interrupted"
    stored = len(_runs(db_path, session["uid"]))
    assert 3 <= stored < 12
    ps = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert ps.stdout.strip() == "", "the benchmarked program survived SIGTERM"
    assert not _scratch(proc.pid), "SIGTERM left the scratch directory behind"

    resume = _start("run", "--resume", session["uid"], "-q", db=db_path)
    code, _, err = _finish(resume)
    assert code == 0, err
    runs = _runs(db_path, session["uid"])
    assert len([r for r in runs if not r["warmup"]]) == 12
    assert [r["seq"] for r in runs] == list(range(len(runs)))
    assert _only_session(db_path)["status"] == "complete"
    assert not _scratch(resume.pid)


def test_sigterm_during_parallel_workers_stores_no_killed_run_and_resume_completes(db_path):
    """Two workers each have a program running when SIGTERM lands: both programs are killed,
    neither killed run is stored (they once were, as errors), and the main thread finishes the
    session only after both workers have ended (a worker still writing once crashed the exit)."""
    marker = f"benchlab-sigterm-par-{os.getpid()}"
    proc = _start("run", "--runs", "16", "--workers", "2", "-n", marker,
                  f"/bin/sh -c 'sleep 0.3; : {marker}'", db=db_path)
    _wait_for_runs(db_path, 3)
    proc.send_signal(signal.SIGTERM)
    code, _, err = _finish(proc)
    assert code == 143, err
    assert "Traceback" not in err and "Fatal Python error" not in err
    session = _only_session(db_path)
    assert session["status"] == "interrupted"
    runs = _runs(db_path, session["uid"])
    assert 3 <= len(runs) < 32
    assert {r["status"] for r in runs} == {"ok"}, [r["status"] for r in runs]
    ps = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert ps.stdout.strip() == "", "a benchmarked program survived SIGTERM"
    assert not _scratch(proc.pid)

    code, _, err = _finish(_start("run", "--resume", session["uid"], "-q", db=db_path))
    assert code == 0, err
    runs = _runs(db_path, session["uid"])
    assert len([r for r in runs if not r["warmup"]]) == 2 * 16
    assert {r["status"] for r in runs} == {"ok"}
    assert _only_session(db_path)["status"] == "complete"


def test_kill_9_reads_as_crashed_and_resume_takes_over_and_cleans_up(db_path):
    proc = _start("run", "--runs", "20", "-q", "sleep 0.05", db=db_path)
    _wait_for_runs(db_path, 3)
    proc.kill()
    proc.wait()
    left = _scratch(proc.pid)
    assert left, "kill -9 cannot clean up: its scratch directory is still there"
    session = _only_session(db_path)
    assert session["status"] == "crashed"
    code, _, err = _finish(_start("run", "--resume", session["uid"], "-q", db=db_path))
    assert code == 0, err
    assert len(_runs(db_path, session["uid"])) == 20
    assert _only_session(db_path)["status"] == "complete"
    assert not any(os.path.exists(p) for p in left), "resume left the dead process's scratch"


def test_a_second_concurrent_resume_gets_one_line_and_writes_nothing(db_path):
    first = _start("run", "--runs", "40", "-q", "sleep 0.05", db=db_path)
    _wait_for_runs(db_path, 2)
    first.send_signal(signal.SIGTERM)
    assert _finish(first)[0] == 143
    uid = _only_session(db_path)["uid"]
    resuming = _start("run", "--resume", uid, "-q", db=db_path)
    deadline = time.monotonic() + 30
    while _only_session(db_path)["status"] != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    second = run_cli("run", "--resume", uid, db=db_path)
    assert_one_line_error(second, "being run by")
    code, _, err = _finish(resuming)
    assert code == 0, err
    runs = _runs(db_path, uid)
    assert len(runs) == 40 and [r["seq"] for r in runs] == list(range(40))


def test_a_failing_prepare_ends_the_session_failed_with_its_stderr(db_path):
    proc = _start("run", "--runs", "3", "--prepare", "echo disk-not-ready >&2; exit 3", "true",
                  db=db_path)
    code, out, err = _finish(proc)
    assert code == 1, err  # a failing hook exits 1, as hyperfine (bad input: 2)
    assert err.startswith("benchlab: error:") and "Traceback" not in err
    for needle in ("prepare", "disk-not-ready", "exit code 3"):
        assert needle in err
    assert _only_session(db_path)["status"] == "failed"
    assert not _scratch(proc.pid)


def test_a_metric_that_captures_no_number_fails_the_session_and_keeps_the_run(db_path):
    proc = _start("run", "--runs", "3", "--metric", r"word=(\w+)", "echo hello", db=db_path)
    code, out, err = _finish(proc)
    assert_one_line_error(subprocess.CompletedProcess(proc.args, code, out, err),
                          "not a finite number")
    session = _only_session(db_path)
    assert session["status"] == "failed"
    runs = _runs(db_path, session["uid"])
    assert len(runs) == 1 and "finite number" in runs[0]["extra"]["error"]
    assert not _scratch(proc.pid)


def test_samples_csv_naming_the_store_is_refused_and_the_store_is_intact(db_path):
    run_cli("run", "--runs", "2", "true", db=db_path, check=True)
    before = db_path.read_bytes()
    for target in (db_path, Path(str(db_path) + "-wal")):
        proc = run_cli("run", "--runs", "2", "--samples-csv", str(target), "true", db=db_path)
        assert_one_line_error(proc, "is the store")
    with Store.open(db_path) as store:
        assert store.integrity_ok()
        assert len(store.sessions()) == 1
        assert len(store.runs(session_id=store.sessions()[0]["id"])) == 2
    assert len(db_path.read_bytes()) >= len(before) > 0


@pytest.mark.parametrize("args,needle", [
    (["--timeout", "nan"], "--timeout"),
    (["--timeout", "inf"], "--timeout"),
    (["--timeout", "-1"], "timeout"),
    (["--runs", "1e23"], "runs"),
    (["--runs", "100000000000000000000000"], "runs"),
    (["--memory-limit", "1e26G"], "memory-limit"),
    (["--memory-limit", "nanM"], "memory-limit"),
    (["--min-time", "inf"], "min-time"),
    (["--max-time", "nan"], "max-time"),
    (["--prepare", "true", "--prepare", "true"], "--prepare"),
    (["--shell-path", "/bin/sh"], "--shell"),
    (["--metric", "x=[0-9"], "regular expression"),
])
def test_bad_options_create_no_session(db_path, args, needle):
    proc = run_cli("run", *args, "true", db=db_path)
    assert_one_line_error(proc, needle)
    if db_path.exists():
        with Store.open(db_path) as store:
            assert store.sessions() == []


@pytest.mark.parametrize("body,needle", [
    ('[study]\nruns = "many"\n[[workload]]\nname = "t"\ncommand = "true"\n', "runs"),
    ('[study]\nruns = 1.5\n[[workload]]\nname = "t"\ncommand = "true"\n', "runs"),
    ('[study]\nruns = true\n[[workload]]\nname = "t"\ncommand = "true"\n', "runs"),
    ('[study]\nwarmup = -1\n[[workload]]\nname = "t"\ncommand = "true"\n', "warmup"),
    ('[study]\nseed = "x"\n[[workload]]\nname = "t"\ncommand = "true"\n', "seed"),
    ('[[workload]]\nname = 5\ncommand = "true"\n', "name"),
    ('[[workload]]\nname = "t"\ncommand = 7\n', "command"),
    ('[[workload]]\nname = "t"\nbuiltin = "exp_float"\nargs = 3\n', "args"),
    ('[[workload]]\nname = "t"\ncommand = "true"\n[matrix]\nworkers = ["two"]\n', "workers"),
    ('[[workload]]\nname = "t"\ncommand = "true"\n[matrix]\nworkers = [0]\n', "--workers"),
    ('[[workload]]\nname = "t"\ncommand = "true"\n[matrix]\nisolation = [1]\n', "isolation"),
    ('[[workload]]\nname = "t"\ncommand = "no-such-cmd-xyz"\n', "not found"),
    ('[[workload]]\nname = "t"\ncommand = "true"\n[[workload]]\nname = "t"\ncommand = "true"\n',
     "repeat"),
    ("workload = 3\n", "workload"),
    ("[matrix]\n" + "x = [" * 2000 + "]" * 2000 + "\n", "TOML"),
])
def test_bad_study_suites_create_no_session_at_all(db_path, tmp_path, body, needle):
    suite = tmp_path / "suite.toml"
    suite.write_text(body)
    proc = run_cli("study", str(suite), db=db_path)
    assert_one_line_error(proc, needle)
    if db_path.exists():
        with Store.open(db_path) as store:
            assert store.sessions() == []


def test_a_suite_that_is_not_utf8_is_one_line(db_path, tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_bytes("[study]\nname = 'é'\n".encode("utf-16"))
    assert_one_line_error(run_cli("study", str(suite), db=db_path), "UTF-8")


def test_a_sigterm_between_nested_sessions_is_still_known_to_the_outer_one():
    """A study runs each cell's session inside its own ``interruptible``; a SIGTERM that arrives
    after a cell has ended (the inner handlers restored) must still read as SIGTERM outside,
    and one caught by the inner handler must not be forgotten when the next cell starts (CI
    once exited 130 instead of 143 from exactly that window)."""
    from benchlab.core.session import interruptible

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with interruptible() as outer:
            with interruptible():
                pass
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises here
    assert outer.signum == signal.SIGTERM

    with pytest.raises(KeyboardInterrupt):
        with interruptible() as outer:
            with pytest.raises(KeyboardInterrupt):
                with interruptible():
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)
            with interruptible():  # the next cell starting must not clear it
                pass
            raise KeyboardInterrupt
    assert outer.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before
