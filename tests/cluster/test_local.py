"""Cluster sessions on a real LocalCluster of worker processes, into a real SQLite store.

Two worker processes on this machine stand for two machines (labels ``127.0.0.1/0`` and
``127.0.0.1/1``): a second physical machine is what this test machine cannot have.
"""

from __future__ import annotations

import json
import os
import socket
from collections import Counter

import pytest

from benchlab.core.cluster.session import run_cluster_plan
from benchlab.store.db import Store
from tests.cli.forked import run_cli
from tests.cluster.helpers import Recorder, plan_of
from tests.conftest import assert_one_line_error

pytestmark = pytest.mark.slow


def _setup(store: Store, setup_id: int) -> dict:
    row = store.conn.execute("SELECT data FROM setups WHERE id = ?", (setup_id,)).fetchone()
    return json.loads(row[0])


def test_protocol_runs_on_each_worker_with_its_environment(db_path, two_workers):
    store = Store.open(db_path)
    cpus = sorted(os.sched_getaffinity(0))
    recorder = Recorder()
    plan = plan_of("true", "sleep 0.01", runs=3, warmup=1, affinity=f"core:{cpus[0]}")
    result = run_cluster_plan(store, plan, two_workers, observer=recorder)
    assert result.status == "complete"
    session = store.get_session(result.session.uid)
    assert session["status"] == "complete"
    assert session["metadata"]["cluster"]["machines"] == ["127.0.0.1/0", "127.0.0.1/1"]
    runs = store.runs(session_id=result.session.id)
    # each machine: 2 benchmarks x (1 warmup + 3 runs)
    assert len(runs) == 16
    assert Counter(r["worker"] for r in runs) == {0: 8, 1: 8}
    assert len({r["seq"] for r in runs}) == 16
    per_machine = Counter((r["worker"], r["benchmark_id"], r["warmup"], r["iteration"])
                          for r in runs)
    assert set(per_machine.values()) == {1}, "a planned run was stored twice"
    assert all(r["status"] == "ok" for r in runs)
    # every run carries its machine, host and worker process; each machine its environment
    pids = {}
    for r in runs:
        setup = _setup(store, r["setup_id"])
        assert setup["machine"] == r["extra"]["machine"]
        assert setup["host"] == r["extra"]["host"] == socket.gethostname()
        env = store.conn.execute("SELECT hostname FROM environments WHERE id = ?",
                                 (setup["environment_id"],)).fetchone()
        assert env[0] == socket.gethostname()
        pids.setdefault(setup["machine"], set()).add(r["extra"]["worker_pid"])
    assert set(pids) == {"127.0.0.1/0", "127.0.0.1/1"}
    assert all(len(p) == 1 and os.getpid() not in p for p in pids.values())
    assert pids["127.0.0.1/0"] != pids["127.0.0.1/1"], "the two machines were one process"
    # the worker kept quiet: monitors paused, heartbeat slowed, threads off the run's CPU
    quiet = runs[-1]["extra"]["quiet"]
    assert quiet["heartbeat_ms"] == 60_000
    if len(cpus) > 1:
        assert quiet["pinned"]["cpus"] == cpus[1:]
        assert runs[-1]["cpus"] == str(cpus[0])
    else:
        assert quiet["pinned"]["cpus"] is None and quiet["pinned"]["reason"]
    assert recorder.machines == {"127.0.0.1/0": 8, "127.0.0.1/1": 8}
    # run's per-machine table (the summary pools the machines)
    from io import StringIO

    from rich.console import Console

    from benchlab.cli.execute_options import print_machine_table

    out = StringIO()
    print_machine_table(store, result.session.id, Console(file=out, width=200))
    lines = out.getvalue().splitlines()
    assert len(lines) == 5 and "2 machines" in lines[0]
    assert all(line.endswith(", 3 ok runs") for line in lines[1:]), lines
    assert {line.split()[0] for line in lines[1:]} == {"127.0.0.1/0", "127.0.0.1/1"}
    store.close()


def test_spread_runs_the_protocol_once_over_both_machines(db_path, two_workers):
    store = Store.open(db_path)
    result = run_cluster_plan(store, plan_of("sleep 0.05", runs=6), two_workers, spread=True)
    runs = store.runs(session_id=result.session.id)
    assert sorted(r["iteration"] for r in runs) == [0, 1, 2, 3, 4, 5]
    machines = Counter(r["extra"]["machine"] for r in runs)
    assert set(machines) == {"127.0.0.1/0", "127.0.0.1/1"}, machines
    store.close()


def test_cli_on_one_machine_and_bad_choices(db_path, two_workers):
    proc = run_cli("run", "--cluster", two_workers, "--on", "1", "-r", "2", "true", "--json",
                   db=db_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    store = Store.open(db_path, readonly=True)
    runs = store.runs(session_id=store.get_session(out["session"])["id"])
    assert [r["extra"]["machine"] for r in runs] == ["127.0.0.1/0"] * 2
    sessions = len(store.sessions())
    store.close()
    bad = run_cli("run", "--cluster", two_workers, "--on", "nohost", "true", db=db_path)
    assert_one_line_error(bad, "--on", "nohost", "127.0.0.1")
    for text in ("local:0", "tcp://nohost", "udp://x:1", "ssh:"):
        assert_one_line_error(run_cli("run", "--cluster", text, "true", db=db_path), "--cluster")
    assert_one_line_error(run_cli("run", "--spread", "true", db=db_path), "--cluster")
    with Store.open(db_path, readonly=True) as after:
        assert len(after.sessions()) == sessions, "bad input stored a session"


def test_study_cells_run_on_the_cluster(db_path, tmp_path, two_workers):
    from benchlab.core.study import run_study
    from benchlab.core.suite import load_suite

    suite_file = tmp_path / "suite.toml"
    suite_file.write_text('[study]\nname = "tiny"\nruns = 2\nwarmup = 0\nseed = 3\n\n'
                          '[[workload]]\nname = "true"\ncommand = "true"\n\n'
                          '[matrix]\nisolation = ["bare"]\nworkers = [1]\n')
    store = Store.open(db_path)
    study = run_study(store, load_suite(str(suite_file)), cluster=two_workers)
    session = store.get_session(study.uid)
    assert session["status"] == "complete"
    assert session["metadata"]["cluster"] == two_workers
    cells = [s for s in store.sessions() if s.get("parent_id") == study.id]
    assert len(cells) == 1 and cells[0]["status"] == "complete"
    runs = store.runs(session_id=cells[0]["id"])
    assert Counter(r["extra"]["machine"] for r in runs) == {"127.0.0.1/0": 2, "127.0.0.1/1": 2}
    store.close()
