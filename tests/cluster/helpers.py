"""Helpers of the cluster tests: plans, the worker processes of a LocalCluster, free ports."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.processes import process_stats


class Recorder:
    """An observer that keeps what the cluster session reported (events in order)."""

    def __init__(self):
        self.finished: list[tuple[str, int]] = []
        self.messages: list[str] = []
        self.machines: dict[str, int] = {}

    def started(self, session, plan, total):
        pass

    def run_finished(self, name, run, m, total, done):
        self.finished.append((name, done))

    def message(self, text):
        self.messages.append(text)

    def machine_progress(self, label, done, total):
        self.machines[label] = done


def plan_of(*commands: str, runs: int = 3, warmup: int = 0, **placement) -> RunPlan:
    """A plan of argv commands with a fixed run count (cwd: /tmp)."""
    plan = RunPlan(benchmarks=[BenchmarkSpec(c, c) for c in commands], runs=runs, warmup=warmup,
                   min_runs=1, cwd="/tmp")
    for key, value in placement.items():
        setattr(plan.placement, key, value)
    return plan


def _children(pid: int) -> list[int]:
    return [child for child, fields in process_stats() if len(fields) > 1
            and fields[1] == str(pid)]


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    out, todo = [], [pid]
    while todo:
        for kid in _children(todo.pop()):
            out.append(kid)
            todo.append(kid)
    return out


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def worker_processes() -> list[int]:
    """This process's LocalCluster worker processes (multiprocessing children running Python)."""
    found = []
    for kid in _children(os.getpid()):
        try:
            cmdline = Path(f"/proc/{kid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
            found.append(kid)
    return found


def wait_for(predicate, timeout_s: float, what: str):
    """Poll ``predicate`` every 20 ms until it returns a true value; fail naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_module(*argv: str):
    """``python -m ARGV...`` in a new session (its own process group), output discarded: a
    Dask scheduler or worker CLI standing for a team's, not started by benchlab."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop_group(proc) -> None:
    """SIGKILL ``proc``'s whole process group (a worker CLI: its nanny and worker) and reap it."""
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def team_machines(port: int, names=("w",)):
    """(scheduler, {name: worker}): a Dask scheduler on 127.0.0.1:``port`` and one worker per
    name, each with one benchlab slot and its own process group (nanny and worker), started
    with the dask CLIs as a team would (not by benchlab)."""
    scheduler = start_module("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                             str(port), "--no-dashboard")
    workers = {name: start_module("distributed.cli.dask_worker", f"tcp://127.0.0.1:{port}",
                                  "--nthreads", "1", "--resources", "benchlab-slot=1",
                                  "--no-dashboard", "--name", name)
               for name in names}
    return scheduler, workers


def team_cluster(port: int, name: str = "w"):
    """(scheduler, worker): :func:`team_machines` with one machine."""
    scheduler, workers = team_machines(port, (name,))
    return scheduler, workers[name]


def stop_all(client, *groups) -> None:
    """Kill ``client`` (a benchlab process, if still running) and each process group."""
    if client is not None and client.poll() is None:
        client.kill()
        client.wait(10)
    for proc in groups:
        stop_group(proc)


def stored_runs(db_path) -> int:
    """Runs in the store at ``db_path`` so far (0 while the client is still creating it)."""
    from benchlab.store.db import Store

    try:
        with Store.open(db_path, readonly=True) as store:
            return store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except Exception:
        return 0


def resume_to_completion(db_path, uid: str) -> list[dict]:
    """``benchlab run --resume UID`` through the console script (forked from the server of
    tests/cli/forked.py); asserts it succeeds and the session ends complete; returns the
    session's runs."""
    from benchlab.store.db import Store
    from tests.cli.forked import run_cli

    resumed = run_cli("run", "--resume", uid, db=db_path, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    with Store.open(db_path, readonly=True) as store:
        session = store.get_session(uid)
        assert session["status"] == "complete"
        return store.runs(session_id=session["id"])
