"""Faults of a cluster session on real processes: a worker killed with SIGKILL mid-run, a
scheduler that goes away, and the resume of the interrupted session on a new scheduler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from benchlab.core.cluster.session import run_cluster_plan
from benchlab.store.db import Store
from tests.cluster.helpers import (
    Recorder,
    comm,
    descendants,
    free_port,
    plan_of,
    resume_to_completion,
    stop_group,
    stored_runs,
    team_cluster,
    team_machines,
    wait_for,
    worker_processes,
)

pytestmark = [pytest.mark.slow]


def _kill_a_worker_mid_run(recorder: Recorder, killed: list[int]) -> threading.Thread:
    """A started thread that SIGKILLs a worker process running a ``sleep`` once two runs are
    stored (so the kill is mid-session and mid-run); the pid goes into ``killed``."""
    def running_worker():
        for pid in worker_processes():
            if any(comm(d) == "sleep" for d in descendants(pid)):
                return pid
        return None

    def kill() -> None:
        wait_for(lambda: len(recorder.finished) >= 2, 60, "two stored runs")
        pid = wait_for(running_worker, 30, "a worker with a running sleep")
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_worker_killed_mid_run_is_recorded_requeued_and_never_duplicated(db_path):
    store = Store.open(db_path)
    recorder, killed = Recorder(), []
    killer = _kill_a_worker_mid_run(recorder, killed)
    result = run_cluster_plan(store, plan_of("sleep 0.3", runs=4), "local:2", observer=recorder)
    killer.join(5)
    assert killed, "the test did not kill a worker"
    assert result.status == "complete"
    session = store.get_session(result.session.uid)
    assert session["status"] == "complete"
    runs = store.runs(session_id=result.session.id)
    assert len(runs) == 8, [(r["worker"], r["iteration"]) for r in runs]
    assert Counter((r["worker"], r["iteration"]) for r in runs) == \
        {(w, i): 1 for w in (0, 1) for i in range(4)}
    lost = session["metadata"]["lost_runs"]
    assert len(lost) == 1, lost
    assert "died" in lost[0]["reason"] or "left" in lost[0]["reason"] \
        or "replaced" in lost[0]["reason"]
    assert [r["seq"] for r in runs].count(lost[0]["seq"]) == 1, "the lost run was not re-run once"
    assert killed[0] not in {r["extra"]["worker_pid"] for r in runs if r["seq"] == lost[0]["seq"]}
    store.close()


def test_spread_requeues_a_run_lost_with_its_worker_and_completes_exactly(db_path):
    """--spread over two local machines; one worker process is killed with SIGKILL while it
    runs a planned run: the run is recorded lost, re-run on a machine (either: they are
    declared identical), and the session ends complete with every planned iteration once."""
    store = Store.open(db_path)
    recorder, killed = Recorder(), []
    killer = _kill_a_worker_mid_run(recorder, killed)
    result = run_cluster_plan(store, plan_of("sleep 0.3", runs=10), "local:2", spread=True,
                              observer=recorder)
    killer.join(5)
    assert killed, "the test did not kill a worker"
    session = store.get_session(result.session.uid)
    assert result.status == "complete" and session["status"] == "complete"
    runs = store.runs(session_id=result.session.id)
    assert sorted(r["iteration"] for r in runs) == list(range(10)), \
        [(r["seq"], r["iteration"]) for r in runs]
    assert len({r["seq"] for r in runs}) == 10, "a sequence number was stored twice"
    lost = session["metadata"]["lost_runs"]
    assert len(lost) == 1, lost
    assert lost[0]["requeued"] and lost[0]["machine"] in ("127.0.0.1/0", "127.0.0.1/1")
    rerun = [r for r in runs if r["seq"] == lost[0]["seq"]]
    assert len(rerun) == 1, "the lost run was not re-run exactly once"
    assert rerun[0]["iteration"] == lost[0]["iteration"]
    assert rerun[0]["extra"]["worker_pid"] != killed[0]
    assert rerun[0]["extra"]["machine"] in ("127.0.0.1/0", "127.0.0.1/1")
    store.close()


def test_scheduler_gone_keeps_what_arrived_and_resume_completes(db_path):
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler, worker = team_cluster(port)
    try:
        env = dict(os.environ, COLUMNS="160")
        client = subprocess.Popen(
            [os.path.join(os.path.dirname(sys.executable), "benchlab"), "run", "--cluster",
             address, "-r", "12", "sleep 0.2", "--db", str(db_path), "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        wait_for(lambda: stored_runs(db_path) >= 3 or client.poll() is not None, 90,
                 "three runs stored")
        assert client.poll() is None, client.communicate()
        stop_group(scheduler)
        out, err = client.communicate(timeout=90)
        assert client.returncode == 2, (out, err)
        lines = [l for l in err.splitlines() if l.strip()]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "scheduler" in lines[0] and "went away" in lines[0] and "--resume" in lines[0]
        kept = stored_runs(db_path)
        assert kept >= 3
        with Store.open(db_path, readonly=True) as store:
            session = store.sessions()[0]
            assert session["status"] == "interrupted"
            uid = session["uid"]
        stop_group(worker)
        scheduler, worker = team_cluster(port)
        runs = resume_to_completion(db_path, uid)
        assert sorted(r["iteration"] for r in runs) == list(range(12))
        assert len({r["seq"] for r in runs}) == 12
    finally:
        stop_group(scheduler)
        stop_group(worker)


# serial: the machine is killed while it runs, within a session of a few seconds; beside other
# tests at load 15-20 it had finished its runs before the test found one to interrupt
@pytest.mark.serial
def test_machine_that_never_comes_back_is_named_and_the_others_finish(db_path):
    """Two `dask worker` processes (each with its own nanny) as two machines; one whole
    process group is killed mid-run, so nothing restarts it."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler, workers = team_machines(port, ("a", "b"))
    from distributed import Client

    with Client(address, timeout="30s", set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)  # both machines present before the session
    store = Store.open(db_path)
    recorder = Recorder()

    def kill_b_mid_run():
        # b itself must have stored a run (two stored runs could both be a's) and be running
        # another one: 0.5 s runs leave a window of seconds for a poller on a loaded machine
        wait_for(lambda: recorder.machines.get("127.0.0.1/b", 0) >= 1, 60,
                 "a stored run of machine b")
        wait_for(lambda: any(comm(d) == "sleep" for d in descendants(workers["b"].pid)), 30,
                 "a run on machine b")
        stop_group(workers["b"])

    try:
        killer = threading.Thread(target=kill_b_mid_run, daemon=True)
        killer.start()
        with pytest.raises(Exception) as info:
            run_cluster_plan(store, plan_of("sleep 0.5", runs=5), address, observer=recorder,
                             machine_grace_s=3)
        killer.join(5)
        message = str(info.value)
        assert "127.0.0.1/b" in message and "did not come back" in message
        assert "--resume" in message
        session = store.sessions()[0]
        assert session["status"] == "interrupted"
        runs = store.runs(session_id=session["id"])
        by_machine = Counter(r["extra"]["machine"] for r in runs)
        assert by_machine["127.0.0.1/a"] == 5, by_machine  # the other machine finished
        assert 1 <= by_machine["127.0.0.1/b"] < 5
        lost = session["metadata"]["lost_runs"]
        assert [entry["machine"] for entry in lost] == ["127.0.0.1/b"]
    finally:
        store.close()
        for proc in (scheduler, *workers.values()):
            stop_group(proc)


# serial: a 3 s grace; beside other tests at load 15-20 a live machine's heartbeats came later
# than that, and the session gave it up before the test killed it
@pytest.mark.serial
def test_lost_after_gives_a_machine_up_quickly_from_the_command_line(db_path):
    """``run --lost-after 3s``: machine b's whole process group (its nanny and its worker) is
    killed mid-run, so it never returns; the session ends interrupted naming it, well before the
    60 s default would have."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler, workers = team_machines(port, ("a", "b"))
    from distributed import Client

    try:
        with Client(address, timeout="30s", set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
        client = subprocess.Popen(
            [os.path.join(os.path.dirname(sys.executable), "benchlab"), "run", "--cluster",
             address, "--lost-after", "3s", "-r", "6", "sleep 0.3", "--db", str(db_path), "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, COLUMNS="160"))
        wait_for(lambda: stored_runs(db_path) >= 2 or client.poll() is not None, 90,
                 "two stored runs")
        wait_for(lambda: any(comm(d) == "sleep" for d in descendants(workers["b"].pid))
                 or client.poll() is not None, 30, "a run on machine b")
        assert client.poll() is None, client.communicate()
        stop_group(workers["b"])
        killed_at = time.monotonic()
        out, err = client.communicate(timeout=120)
        waited = time.monotonic() - killed_at
        assert client.returncode == 2, (out, err)
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert "127.0.0.1/b" in lines[0] and "did not come back" in lines[0], lines[0]
        assert "--resume" in lines[0]
        # 3 s of grace plus the session's end; the default would have waited 60 s
        assert waited < 40, waited
        with Store.open(db_path, readonly=True) as store:
            session = store.sessions()[0]
            assert session["status"] == "interrupted"
            meta = store.get_session(session["uid"])["metadata"]
            assert meta["cluster"]["lost_after_s"] == 3
            assert [entry["machine"] for entry in meta["lost_runs"]] == ["127.0.0.1/b"]
            runs = store.runs(session_id=session["id"])
            assert Counter(r["extra"]["machine"] for r in runs)["127.0.0.1/a"] == 6
    finally:
        for proc in (scheduler, *workers.values()):
            stop_group(proc)
