"""The store queries the command line and reports print from (no SQL outside the
store), on a session the core stored with a scripted runner (no process is the point here)."""

from __future__ import annotations

import numpy as np

from benchlab.core.execute import Here, execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store
from tests.core.scripted import ScriptedRunner


def test_summaries_of_a_session_with_failures(db_path):
    plan = RunPlan(benchmarks=[BenchmarkSpec("a", "true"), BenchmarkSpec("b", "false")],
                   runs=3, warmup=1, min_runs=1, cwd="/tmp", seed=1, ignore_failure=True)
    runner = ScriptedRunner(wall_ns=lambda b, i: (b + 1) * 1_000_000 + i,
                            fail=lambda b, i: 1 if b == 1 else None)
    with Store.open(db_path) as store:
        sid = execute(plan, store, Here(runner)).session.id
        assert store.commands_of([sid]) == {sid: ["true", "false"]}
        assert store.commands_of([]) == {}
        ids = {b["name"]: b["id"] for b in store.benchmarks(sid)}
        assert sorted(store.run_status_counts(sid)) == sorted([
            (ids["a"], True, "ok", 1), (ids["a"], False, "ok", 3),
            (ids["b"], True, "failed", 1), (ids["b"], False, "failed", 3)])
        failed = store.failed_runs(sid, limit=2)
        assert [f["benchmark"] for f in failed] == ["b", "b"]
        assert failed[0]["seq"] < failed[1]["seq"] and failed[1]["exit_code"] == 1
        assert store.session_totals(sid)["runs"] == 8
        assert store.session_totals(sid)["benchmarks"] == 2
        ok = store.harness_series(ids["a"], "wall", ("ok",))
        assert np.array_equal(ok, [1_000_000, 1_000_001, 1_000_002])
        assert store.harness_series(ids["b"], "wall", ("ok",)).size == 0
        assert store.harness_series(ids["b"], "wall", ("ok", "failed")).size == 3
        assert store.newest_session_uid("run") == store.get_session(sid)["uid"]
        assert store.newest_session_uid("profile") is None
