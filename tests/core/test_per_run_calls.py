"""What a session's loop does in Python for each run, counted: from one run's
``execute_planned_run`` to the next -- the spawn through the real exec helper, the row's commit,
the recorder and the planner -- every run after the first calls the same Python functions, and
no more than a budget. Counted with the interpreter's profiling hook in a real session of real
processes writing a real SQLite store: a count, no timing, so a busy machine cannot fail it."""

from __future__ import annotations

import sys
from collections import Counter

from benchlab.core import executor
from benchlab.core.execute import execute
from benchlab.core.plan import BenchmarkSpec, RunPlan
from benchlab.store.db import Store

#: Python functions a plain run of ``/bin/true`` calls (60 when this was written; 71 before
#: the per-run work measured by bench/startup.py). A new call on this path must earn its place.
CALL_BUDGET = 60
RUNS = 12


def _calls_per_run(monkeypatch, tmp_path) -> list[Counter]:
    """The Python functions each run of a real session called, by name, one Counter a run."""
    runs: list[Counter] = []
    real_loop = executor.LocalLanes.worker_loop

    def profile(frame, event, arg):
        if event != "call":
            return
        name = frame.f_code.co_name
        if name == "execute_planned_run":
            runs.append(Counter())
        if runs:
            runs[-1][f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{name}"] += 1

    def counted_loop(self, worker):
        sys.setprofile(profile)
        try:
            real_loop(self, worker)
        finally:
            sys.setprofile(None)

    monkeypatch.setattr(executor.LocalLanes, "worker_loop", counted_loop)
    plan = RunPlan(benchmarks=[BenchmarkSpec("t", "/bin/true")], runs=RUNS, min_runs=1,
                   cwd=str(tmp_path), seed=7, shell=None)
    with Store.open(str(tmp_path / "calls.db")) as store:
        result = execute(plan, store)
        assert result.counts == {"t": {"ok": RUNS}}
    return runs


def test_every_run_after_the_first_calls_the_same_functions_within_a_budget(monkeypatch,
                                                                            tmp_path):
    runs = _calls_per_run(monkeypatch, tmp_path)
    assert len(runs) == RUNS
    later = runs[1:-1]  # the last one's count runs on into the loop's end
    assert all(run == later[0] for run in later), [sorted((run - later[0]).items())
                                                   for run in later]
    total = sum(later[0].values())
    assert total <= CALL_BUDGET, sorted(later[0].items())
