"""The core's ordering, resuming, stopping and storing, through :func:`execute` with a scripted
runner (no process: tests/core/scripted.py says why) into a real SQLite store. The same paths
with real processes are covered end to end by tests/core/test_session.py and tests/cli."""

from __future__ import annotations

from collections import Counter

import pytest

from benchlab.core.execute import Here, execute, resume
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.core.session_types import SessionInterrupted
from benchlab.errors import UserError
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner


def _plan(*names: str, runs: int | None = 4, warmup: int = 0, **kw) -> RunPlan:
    plan = RunPlan(benchmarks=[BenchmarkSpec(n, "true", **kw.pop(n, {})) for n in names],
                   runs=runs, warmup=warmup, min_runs=1, cwd="/tmp", seed=7, **kw)
    return plan


def _stored(store: Store, uid: str) -> list[tuple[int, bool, int]]:
    session = store.get_session(uid)
    index = {b["id"]: b["position"] for b in store.benchmarks(session["id"])}
    return [(index[r["benchmark_id"]], bool(r["warmup"]), r["iteration"])
            for r in store.runs(session_id=session["id"])]


def test_interleaved_rounds_after_warmups_every_run_stored_in_order(db_path):
    runner = ScriptedRunner()
    with Store.open(db_path) as store:
        result = execute(_plan("a", "b", runs=4, warmup=1), store, Here(runner))
        assert result.status == "complete" and result.counts == {"a": {"ok": 5}, "b": {"ok": 5}}
        stored = _stored(store, result.session.uid)
    assert [("run", *s) for s in stored] == runner.log, "stored order is not executed order"
    assert stored[:2] == [(0, True, 0), (1, True, 0)]  # warmups first, in declared order
    measured = [b for b, warm, _ in stored if not warm]
    rounds = [sorted(measured[k:k + 2]) for k in range(0, 8, 2)]
    assert rounds == [[0, 1]] * 4, "each round runs every benchmark once"


def test_an_interrupted_session_resumes_to_the_exact_count_without_repeats(db_path):
    with Store.open(db_path) as store:
        with pytest.raises(SessionInterrupted) as info:
            execute(_plan("a", "b", runs=5), store, Here(ScriptedRunner(interrupt_after=3)))
        uid = info.value.session.uid
        assert store.get_session(uid)["status"] == "interrupted"
        assert len(_stored(store, uid)) == 3
        result = resume(store, uid, Here(ScriptedRunner()))
        stored = _stored(store, uid)
        assert result.status == "complete"
        assert Counter(stored) == {(b, False, i): 1 for b in (0, 1) for i in range(5)}


def test_a_failing_run_stops_the_session_failed_with_the_option_to_add(db_path):
    runner = ScriptedRunner(fail=lambda b, i: 3 if (b, i) == (0, 1) else None)
    with Store.open(db_path) as store:
        with pytest.raises(UserError, match=r"exited with code 3.*-i=3"):
            execute(_plan("a", runs=4), store, Here(runner))
        session = store.sessions()[0]
        assert session["status"] == "failed"
        assert _stored(store, session["uid"]) == [(0, False, 0), (0, False, 1)]
    assert len(runner.log) == 2, "runs went on after the failure"


def test_sequential_order_wraps_each_command_in_its_setup_and_cleanup(db_path):
    runner = ScriptedRunner()
    plan = _plan("a", "b", runs=2, order="sequential",
                 a={"setup": "s-a", "cleanup": "c-a"}, b={"setup": "s-b", "cleanup": "c-b"})
    with Store.open(db_path) as store:
        execute(plan, store, Here(runner))
    assert runner.log == [("setup", "s-a"), ("run", 0, False, 0), ("run", 0, False, 1),
                          ("cleanup", "c-a"), ("setup", "s-b"), ("run", 1, False, 0),
                          ("run", 1, False, 1), ("cleanup", "c-b")]


def test_until_decided_stops_on_recorded_data_and_a_resume_replays_the_looks(db_path):
    """A is 1.0 ms, B 1.5 ms (+-1 %, deterministic): decided long before the budget."""
    def wall(b, i):
        return int((1.0 + 0.5 * b) * 1e6 * (1 + 0.01 * ((i * 7919) % 11 - 5) / 5))

    plan = _plan("a", "b", runs=200, until_decided={"alpha": 0.01, "margin": None,
                                                     "look_every": 5, "metric": "wall",
                                                     "min_samples": 5, "looks": []})
    runner = ScriptedRunner(wall_ns=wall)
    with Store.open(db_path) as store:
        result = execute(plan, store, Here(runner))
        session = store.get_session(result.session.uid)
        looks = session["protocol"]["until_decided"]["looks"]
        assert result.decision["decision"]["action"] != "continue"
        assert len(runner.log) == 2 * looks[-1] < 400
        assert looks == list(range(5, looks[-1] + 1, 5))
        assert session["metadata"]["until_decided"]["decision"] == result.decision["decision"]
