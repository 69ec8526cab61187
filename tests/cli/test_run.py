"""`benchlab run` end to end: real processes, a real SQLite file, the real console script."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from benchlab.store import Store
from tests.cli.forked import run_cli
from tests.conftest import BENCHLAB, assert_one_line_error, sigint_as_in_a_terminal


def _runs(db: Path) -> list[dict]:
    with Store.open(db) as store:
        return store.runs(session_id=store.sessions()[0]["id"])


def _names(db: Path) -> dict[int, str]:
    with Store.open(db) as store:
        return {b["id"]: b["name"] for b in store.benchmarks(store.sessions()[0]["id"])}


def test_two_commands_with_warmup_store_every_run_with_harness_fields(db_path):
    # 50 ms against `true`: a shell's start on a loaded machine can wait for a CPU for several
    # ms, so a 20 ms gap between the two left too little room for max(short) < min(long)
    proc = run_cli("run", "--runs", "6", "--warmup", "2", "-n", "short", "-n", "long",
                   "--seed", "7", "true", "sleep 0.05", db=db_path, check=True)
    assert "short" in proc.stdout and "long" in proc.stdout
    runs = _runs(db_path)
    assert len(runs) == 16
    assert sum(r["warmup"] for r in runs) == 4
    assert all(r["status"] == "ok" for r in runs)
    names = _names(db_path)
    measured = [r for r in runs if not r["warmup"]]
    long_walls = [r["wall_ns"] for r in measured if names[r["benchmark_id"]] == "long"]
    short_walls = [r["wall_ns"] for r in measured if names[r["benchmark_id"]] == "short"]
    assert min(long_walls) >= 50e6  # stored wall_ns is raw: sleep 0.05 cannot take less
    assert max(short_walls) < min(long_walls)
    for r in measured:
        assert r["user_ns"] is not None and r["sys_ns"] is not None
        assert r["max_rss_kib"] > 0 and r["minflt"] > 0
        assert r["nvcsw"] is not None and r["nivcsw"] is not None
        assert r["start_unix_ns"] > 1.6e18
    # warmups come first, then measured runs are interleaved, not all of one then the other
    assert all(r["warmup"] for r in runs[:4])
    order = [names[r["benchmark_id"]] for r in measured]
    assert order != sorted(order) and order != sorted(order, reverse=True)
    # each round contains each benchmark once
    for k in range(0, 12, 2):
        assert sorted(order[k:k + 2]) == ["long", "short"]


def test_sequential_order_and_peak_rss_of_true_is_the_programs_own(db_path):
    run_cli("run", "--runs", "3", "--order", "sequential", "/bin/true", "sleep 0.001",
            db=db_path, check=True)
    runs = _runs(db_path)
    ids = [r["benchmark_id"] for r in runs]
    assert ids == sorted(ids)
    true_rss = [r["max_rss_kib"] for r in runs if r["benchmark_id"] == ids[0]]
    assert max(true_rss) < 2048, true_rss  # as /usr/bin/time reports, not the harness's RSS


def test_min_time_and_max_runs_follow_hyperfine(db_path):
    # 1 s / ~1 ms would be ~1000 runs: capped (with 0.2 s, a first `true` that waited 18 ms
    # for a CPU on a loaded machine planned only 11)
    run_cli("run", "--min-time", "1", "--max-runs", "12", "true", db=db_path, check=True)
    assert len(_runs(db_path)) == 12
    db2 = db_path.with_name("b.db")
    run_cli("run", "--min-time", "0.15", "--min-runs", "2", "sleep 0.05", db=db2, check=True)
    n = len(_runs(db2))
    assert 2 <= n <= 4  # ceil(0.15 / ~0.05)


def test_prepare_setup_cleanup_run_when_promised(db_path, tmp_path):
    log = tmp_path / "log"
    run_cli("run", "--runs", "3", "--warmup", "1",
            "--prepare", f"echo prepare >> {log}", "--setup", f"echo setup >> {log}",
            "--cleanup", f"echo cleanup >> {log}", "true", "sleep 0.001", db=db_path, check=True)
    lines = log.read_text().split()
    # before every run, warmups included; with hooks the order is hyperfine's: each command's
    # setup, its warmup and runs, its cleanup (tests/core/test_hooks_order.py)
    assert lines == (["setup"] + ["prepare"] * 4 + ["cleanup"]) * 2


def test_timeout_and_ignore_failure_keep_measuring(db_path):
    proc = run_cli("run", "--runs", "2", "--timeout", "0.2", "-i", "sleep 5", "true",
                   db=db_path, check=True)
    runs = _runs(db_path)
    names = _names(db_path)
    slow = [r for r in runs if names[r["benchmark_id"]] == "sleep 5"]
    assert [r["status"] for r in slow] == ["timeout", "timeout"]
    assert all(0.15e9 < r["wall_ns"] < 2e9 for r in slow)
    assert "did not succeed" in proc.stdout


def test_failure_without_ignore_stops_keeps_the_run_and_says_how(db_path):
    proc = run_cli("run", "--runs", "5", "sh -c 'exit 3'", db=db_path)
    assert proc.returncode == 1, proc.stderr  # hyperfine's code for a failing command
    first = proc.stderr.splitlines()[0]
    assert first.startswith("benchlab: error:") and "code 3" in first
    assert "--ignore-failure" in first and "Traceback" not in proc.stderr
    runs = _runs(db_path)
    assert len(runs) == 1 and runs[0]["status"] == "failed" and runs[0]["exit_code"] == 3
    with Store.open(db_path) as store:
        assert store.sessions()[0]["status"] == "failed"


def test_failed_and_signaled_runs_have_their_status(db_path):
    run_cli("run", "-N", "--runs", "2", "-i", "sh -c 'kill -SEGV $$'", "sh -c 'exit 4'", db=db_path,
            check=True)
    statuses = {(r["status"], r["exit_code"], r["signal"]) for r in _runs(db_path)}
    assert statuses == {("signaled", None, 11), ("failed", 4, None)}


def test_parameter_scan_and_list_substitute_names_and_commands(db_path):
    run_cli("run", "--runs", "2", "-P", "n", "1", "3", "-n", "sleep-{n}", "sleep 0.00{n}",
            db=db_path, check=True)
    with Store.open(db_path) as store:
        benches = store.benchmarks(store.sessions()[0]["id"])
    assert [b["name"] for b in benches] == ["sleep-1", "sleep-2", "sleep-3"]
    assert [b["command"] for b in benches] == ["sleep 0.001", "sleep 0.002", "sleep 0.003"]
    assert benches[2]["parameters"] == {"n": "3"}
    db2 = db_path.with_name("b.db")
    run_cli("run", "--runs", "1", "-L", "what", "true,false", "-i", "{what}", db=db2, check=True)
    with Store.open(db2) as store:
        names = [b["name"] for b in store.benchmarks(store.sessions()[0]["id"])]
    assert names == ["true", "false"]


def test_metric_regex_gives_many_samples_per_run_linked_to_the_run(db_path):
    prog = "echo 'lat 10 ns'; echo 'lat 12 ns' >&2; echo 'lat 11 ns'"
    proc = run_cli("run", "--runs", "3", "--metric", r"latency:ns=lat (\d+) ns",
                   prog, db=db_path, check=True)
    assert "latency" in proc.stdout
    with Store.open(db_path) as store:
        runs = store.runs(session_id=store.sessions()[0]["id"])
        for r in runs:
            s = store.samples_of_run(r["id"])
            assert sorted(s["latency"].tolist()) == [10.0, 11.0, 12.0]
        bench = store.benchmarks(store.sessions()[0]["id"])[0]
        vals, run_ids = store.sample_values(bench["id"], "latency")
        assert len(vals) == 9 and len(set(run_ids.tolist())) == 3
        assert store.metric_unit(store.sessions()[0]["id"], "latency") == "ns"


def test_samples_csv_is_read_after_each_run(db_path, tmp_path):
    out = tmp_path / "samples.csv"
    script = tmp_path / "bm.sh"
    script.write_text(f"#!/bin/sh\nprintf '# machine: test\\nmap,5\\narray,3\\nmap,6\\n' > {out}\n")
    script.chmod(0o755)
    run_cli("run", "--runs", "2", "--samples-csv", str(out), str(script), db=db_path, check=True)
    with Store.open(db_path) as store:
        runs = store.runs(session_id=store.sessions()[0]["id"])
        assert len(runs) == 2
        for r in runs:
            s = store.samples_of_run(r["id"])
            assert s["map"].tolist() == [5.0, 6.0] and s["array"].tolist() == [3.0]
            assert r["extra"]["samples_csv_metadata"] == ["machine: test"]


def test_shell_cost_is_measured_and_subtracted(db_path):
    run_cli("run", "--runs", "5", "true", db=db_path, check=True)
    with Store.open(db_path) as store:
        sess = store.sessions()[0]
        cal = sess["metadata"]["shell_overhead"]
        assert cal["wall_ns"] > 0 and cal["runs"] > 0
        runs = store.runs(session_id=sess["id"])
        assert all(r["shell_overhead_ns"] == cal["wall_ns"] for r in runs)
        bench = store.benchmarks(sess["id"])[0]
        wall, _ = store.harness_values(bench["id"], "wall")
        raw, _ = store.harness_values(bench["id"], "wall_raw")
        # subtracted, and clamped at 0 as hyperfine does (`true` is often faster than the
        # median empty shell): the raw time stays stored
        assert (wall == np.maximum(raw - cal["wall_ns"], 0)).all()


def test_json_summary(db_path):
    # -N: the summary's wall has the shell's cost subtracted, and that cost measured on a
    # loaded machine can exceed the cost in the runs, timing a 10 ms sleep under 10 ms
    proc = run_cli("run", "-N", "--runs", "4", "--json", "sleep 0.01", db=db_path, check=True)
    data = json.loads(proc.stdout)
    (b,) = data["benchmarks"]
    assert b["name"] == "sleep 0.01" and b["wall"]["n"] == 4
    assert 10e6 <= b["wall"]["median"] < 1e9
    assert {"median", "mad", "mean", "sd", "min", "max", "p95", "p99"} <= b["wall"].keys()


def test_quiet_prints_nothing(db_path):
    proc = run_cli("run", "--runs", "2", "-q", "true", db=db_path, check=True)
    assert proc.stdout == "" and proc.stderr == ""


def _wait_for_runs(db: Path, n: int, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            try:
                conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
                count = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                conn.close()
                if count >= n:
                    return count
            except sqlite3.Error:
                pass
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} runs stored after {timeout} s")


def test_kill_9_loses_no_completed_run_and_resume_finishes(db_path):
    proc = subprocess.Popen([BENCHLAB, "run", "--runs", "30", "-q", "sleep 0.03", "--db",
                             str(db_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for_runs(db_path, 4)
    proc.kill()
    proc.wait()
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    uid, status = conn.execute("SELECT uid, status FROM sessions").fetchone()
    conn.close()
    assert 4 <= stored < 30 and status == "running"
    run_cli("run", "--resume", uid, "-q", db=db_path, check=True)
    runs = _runs(db_path)
    assert len(runs) == 30
    assert [r["seq"] for r in runs] == list(range(30))
    with Store.open(db_path) as store:
        assert store.sessions()[0]["status"] == "complete"
    again = run_cli("run", "--resume", uid, db=db_path)
    assert_one_line_error(again, "already complete")


def test_ctrl_c_stops_cleanly_keeps_runs_and_prints_resume(db_path):
    marker = f"benchlab-ctrlc-{os.getpid()}"
    proc = subprocess.Popen([BENCHLAB, "run", "--runs", "50", "-n", marker,
                             "sleep 0.2; : " + marker, "--db", str(db_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_as_in_a_terminal)
    _wait_for_runs(db_path, 2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "benchlab run --resume" in err and "Traceback" not in err
    with Store.open(db_path) as store:
        sess = store.sessions()[0]
        assert sess["status"] == "interrupted"
        assert len(store.runs(session_id=sess["id"])) >= 2
    ps = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert ps.stdout.strip() == "", "the benchmarked program survived Ctrl-C"


@pytest.mark.parametrize("args,needles", [
    (["run", "--no-such-flag", "true"], ["no such option"]),
    (["run", "no-such-command-xyz"], ["not found", "no-such-command-xyz"]),
    (["run", "--metric", "x=(a)(b)", "true"], ["2 groups", "exactly one"]),
    (["run", "--runs", "0", "true"], ["--runs"]),
    (["run", "-n", "a", "-n", "b", "true"], ["names"]),
    (["run"], ["no command"]),
    (["run", "--resume", "nosuchsession"], ["no session"]),
])
def test_bad_input_is_one_line_exit_2(db_path, args, needles):
    proc = run_cli(*args, db=db_path)
    assert_one_line_error(proc, *needles)


def test_locked_database_is_a_clear_error_and_loses_nothing(db_path):
    run_cli("run", "--runs", "2", "true", db=db_path, check=True)
    locker = sqlite3.connect(db_path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        proc = run_cli("run", "--runs", "2", "true", db=db_path, timeout=60)
        assert_one_line_error(proc, "locked")
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert len(_runs(db_path)) == 2


def test_read_only_database_and_unwritable_directory(db_path, tmp_path):
    run_cli("run", "--runs", "2", "true", db=db_path, check=True)
    os.chmod(db_path, 0o444)
    try:
        if os.geteuid() == 0:
            # root ignores file modes: make the file immutable instead when chattr works
            r = subprocess.run(["chattr", "+i", str(db_path)], capture_output=True)
            if r.returncode != 0:
                pytest.skip("running as root and chattr is unavailable: cannot make a file read-only")
        proc = run_cli("run", "--runs", "2", "true", db=db_path)
        assert_one_line_error(proc)
        assert "read-only" in proc.stderr or "not writable" in proc.stderr or "locked" in proc.stderr
    finally:
        subprocess.run(["chattr", "-i", str(db_path)], capture_output=True)
        os.chmod(db_path, 0o644)
    assert len(_runs(db_path)) == 2
    missing = tmp_path / "no" / "such" / "dir" / "x.db"
    proc = run_cli("run", "--runs", "1", "true", db=missing)
    assert_one_line_error(proc, "does not exist")
