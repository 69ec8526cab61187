"""``--count instructions``: counted runs, after the timed ones, under valgrind's cachegrind.

Each benchmark runs again, as many times as its timed runs (at most :data:`MAX_COUNTED_RUNS`:
the count of a deterministic program does not vary, and valgrind costs 20-50x the run), with
its ``prepare`` before and ``conclude`` after each run as for timed runs. Each counted run is a
run row of its own: ``spawn_method`` ``cachegrind``, no wall time (valgrind's time means nothing
for the program, so no timing series ever includes it), and one sample of the metric
``instructions`` (unit ``count``, origin ``cachegrind``): cachegrind's ``Ir``, summed over the
command and every process it exec'd (see :mod:`benchlab.measure.counts`).

A resumed session counts only what is still missing.
"""

from __future__ import annotations

from typing import Any, Callable

from benchlab.core.plan import RunPlan

MAX_COUNTED_RUNS = 10
COUNT_METHOD = "cachegrind"
#: valgrind slows a program 20-50x: a run's --timeout is stretched by this factor when counted
VALGRIND_SLOWDOWN = 50


def counted_runs_wanted(plan: RunPlan, name: str) -> int:
    """Counted runs for benchmark ``name``: its timed run count, capped at MAX_COUNTED_RUNS."""
    timed = plan.runs or plan.planned_runs.get(name) or plan.min_runs
    return max(1, min(int(timed), MAX_COUNTED_RUNS))


def count_one(plan: RunPlan, index: int,
              run_hook: Callable[[str | None, str], None]) -> tuple[dict[str, Any],
                                                                 dict[str, list[float]]]:
    """Count benchmark ``index``'s instructions once under cachegrind, its ``prepare`` hook
    before and ``conclude`` after; return the run's stored fields and its samples (one
    ``instructions`` count). A run valgrind could not start has status ``error``."""
    from benchlab.measure.counts import count_instructions

    bench = plan.benchmarks[index]
    timeout = plan.timeout_s * VALGRIND_SLOWDOWN if plan.timeout_s else None
    run_hook(bench.prepare, "prepare")
    fields: dict[str, Any] = {"spawn_method": COUNT_METHOD}
    samples: dict[str, list[float]] = {}
    try:
        counted = count_instructions(plan.argv_for(index), cwd=plan.cwd, timeout_s=timeout,
                                     stdin_path=plan.stdin_path)
    except RuntimeError as exc:
        fields.update(status="error", error=str(exc))
    else:
        fields.update(status="ok" if counted.exit_code == 0 else "failed",
                      exit_code=counted.exit_code,
                      extra={"counted_processes": counted.processes,
                             **({"stderr_tail": counted.stderr_tail}
                                if counted.exit_code else {})})
        samples["instructions"] = [float(counted.instructions)]
    run_hook(bench.conclude, "conclude")
    return fields, samples


def counts_missing(plan: RunPlan, done: dict[int, int]) -> list[tuple[int, int]]:
    """The counted runs still to do, as (benchmark index, iteration), given ``done`` (counted
    runs stored by benchmark index): a resumed session counts only what is missing."""
    return [(i, k) for i, bench in enumerate(plan.benchmarks)
            for k in range(done.get(i, 0), counted_runs_wanted(plan, bench.name))]


__all__ = ["count_one", "counts_missing", "counted_runs_wanted", "MAX_COUNTED_RUNS",
           "COUNT_METHOD"]
