"""Every option of a session on this machine works on a cluster: ``--load``, ``--until-decided``
and ``--count instructions``, through the one :func:`benchlab.core.execute.execute`, on a real
LocalCluster of worker processes (two processes stand for two machines: a second physical
machine is what this test machine cannot have)."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from benchlab.core.execute import Cluster, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store
from tests.cluster.helpers import Recorder, descendants, plan_of, worker_processes
from tests.conftest import require_tool

pytestmark = pytest.mark.slow


def test_load_runs_beside_the_runs_on_each_machine_and_stops_with_the_session(db_path,
                                                                                two_workers):
    store = Store.open(db_path)
    plan = plan_of("true", runs=2)
    plan.placement.load = "spin:1"
    result = execute(plan, store, Cluster(two_workers))
    session = store.get_session(result.session.uid)
    assert session["status"] == "complete"
    loads = session["metadata"]["load"]
    assert set(loads) == {"127.0.0.1/0", "127.0.0.1/1"}
    for load in loads.values():
        assert load["kind"] == "spin" and load["workers"] == 1
        assert load["backend"] == "builtin-spinner"
    assert Counter(r["extra"]["machine"] for r in store.runs(session_id=result.session.id)) \
        == {"127.0.0.1/0": 2, "127.0.0.1/1": 2}
    # the load ended with the session: no spinner is left under the worker processes
    spinners = [p for w in worker_processes() for p in descendants(w) if _is_spinner(p)]
    assert not spinners, f"load processes left running: {spinners}"
    store.close()


def _is_spinner(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"x * 1103515245" in fh.read()
    except OSError:
        return False


def test_until_decided_decides_on_the_client_as_runs_stream_in(db_path, two_workers):
    store = Store.open(db_path)
    plan = RunPlan(benchmarks=[BenchmarkSpec("fast", "true"),
                               BenchmarkSpec("slow", "sleep 0.05")],
                   runs=60, min_runs=1, cwd="/tmp",
                   until_decided={"alpha": 0.01, "margin": None, "look_every": 5,
                                  "metric": "wall", "min_samples": 5, "looks": []})
    recorder = Recorder()
    result = execute(plan, store, Cluster(two_workers, spread=True), observer=recorder)
    session = store.get_session(result.session.uid)
    assert session["status"] == "complete"
    assert "until_decided" in session["metadata"], (session, recorder.messages)
    decision = session["metadata"]["until_decided"]["decision"]
    # a 50 ms difference in a 1 ms command is decided long before the budget of 60 runs each
    assert decision is not None and decision["action"] != "continue", decision
    runs = [r for r in store.runs(session_id=result.session.id) if not r["warmup"]]
    assert len(runs) < 2 * 60
    assert set(r["extra"]["machine"] for r in runs) == {"127.0.0.1/0", "127.0.0.1/1"}
    looks = session["protocol"]["until_decided"]["looks"]
    assert looks and all(n % 5 == 0 for n in looks), looks
    assert result.decision["decision"] == decision
    store.close()


def test_count_instructions_counts_each_benchmark_on_each_machine(db_path, two_workers):
    require_tool("valgrind")
    store = Store.open(db_path)
    plan = plan_of("true", runs=2)
    plan.count = "instructions"
    result = execute(plan, store, Cluster(two_workers))
    assert store.get_session(result.session.uid)["status"] == "complete"
    runs = store.runs(session_id=result.session.id)
    counted = [r for r in runs if r["spawn_method"] == "cachegrind"]
    assert Counter(r["extra"]["machine"] for r in counted) == {"127.0.0.1/0": 2,
                                                               "127.0.0.1/1": 2}
    assert all(r["status"] == "ok" and r["wall_ns"] is None for r in counted)
    values, _ = store.sample_values(counted[0]["benchmark_id"], "instructions")
    assert values.size == 4 and (values > 1000).all()
    timed = [r for r in runs if r["spawn_method"] != "cachegrind"]
    assert len(timed) == 4
    store.close()


@pytest.mark.timeout(120)
def test_a_load_whose_client_is_gone_ends_once_no_run_comes(monkeypatch):
    """A killed client (SIGKILL) cannot stop its load on a team's worker: the worker ends it
    after IDLE_S without a run. Called here as the worker calls it (a worker process of
    this machine: what runs it is not the point)."""
    import time

    from benchlab.core.cluster import worker_side

    monkeypatch.setattr(worker_side, "IDLE_S", 1.0)
    plan = plan_of("true", runs=1)
    plan.placement.load = "spin:1"
    begun = worker_side.begin_machine(plan.to_dict(), "idle-load-test")
    assert begun["load"]["kind"] == "spin"
    spinners = worker_side._states["idle-load-test"].load.pids()
    assert spinners and all(_alive(p) for p in spinners)
    deadline = time.monotonic() + 60
    while "idle-load-test" in worker_side._states and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "idle-load-test" not in worker_side._states, "the idle load was not ended"
    while any(_alive(p) for p in spinners) and time.monotonic() < deadline:
        time.sleep(0.1)  # released: its processes are being killed and reaped
    assert not any(_alive(p) for p in spinners), "load processes outlived their session"


@pytest.mark.timeout(120)
def test_a_session_whose_client_is_gone_leaves_no_scratch_on_the_worker(monkeypatch):
    """Without --load too: a killed client's session state on a team's worker (which lives on)
    is released after IDLE_S without a run, and its scratch directory removed."""
    import time

    from benchlab.core.cluster import worker_side

    monkeypatch.setattr(worker_side, "IDLE_S", 1.0)
    plan = plan_of("true", runs=1)
    worker_side.begin_machine(plan.to_dict(), "idle-scratch-test")
    scratch = worker_side._states["idle-scratch-test"].scratch
    assert os.path.isdir(scratch)
    deadline = time.monotonic() + 60
    while "idle-scratch-test" in worker_side._states and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "idle-scratch-test" not in worker_side._states, "the idle session was kept"
    assert not os.path.exists(scratch)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
