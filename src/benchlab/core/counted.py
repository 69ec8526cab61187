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
from benchlab.errors import UserError

MAX_COUNTED_RUNS = 10
COUNT_METHOD = "cachegrind"
#: valgrind slows a program 20-50x: a run's --timeout is stretched by this factor when counted
VALGRIND_SLOWDOWN = 50


def counted_runs_wanted(plan: RunPlan, name: str) -> int:
    """Counted runs for benchmark ``name``: its timed run count, capped at MAX_COUNTED_RUNS."""
    timed = plan.runs or plan.planned_runs.get(name) or plan.min_runs
    return max(1, min(int(timed), MAX_COUNTED_RUNS))


def run_counted(writer: Any, plan: RunPlan, bench_ids: list[int], setup_ids: list[Any],
                run_hook: Callable[[str | None, str, str | None], None],
                message: Callable[[str], None]) -> None:
    """Count every benchmark's instructions in runs of their own and store them (see module).

    Raises UserError when a counted run fails and the plan does not ignore failures (the run is
    stored first, as a timed run's would be).
    """
    from benchlab.measure.counts import count_instructions

    store = writer.store
    done: dict[int, int] = {}
    for row in store.runs(session_id=writer.ref.id):
        if row["spawn_method"] == COUNT_METHOD:
            done[row["benchmark_id"]] = done.get(row["benchmark_id"], 0) + 1
    if not done:
        writer.add_metric("instructions", unit="count", origin=COUNT_METHOD)
    timeout = plan.timeout_s * VALGRIND_SLOWDOWN if plan.timeout_s else None
    for i, bench in enumerate(plan.benchmarks):
        wanted = counted_runs_wanted(plan, bench.name)
        start = done.get(bench_ids[i], 0)
        if start < wanted:
            message(f"counting instructions of {bench.name} under cachegrind "
                    f"({wanted - start} runs)")
        for k in range(start, wanted):
            run_hook(bench.prepare, "prepare", plan.cwd)
            fields: dict[str, Any] = {"spawn_method": COUNT_METHOD}
            samples: dict[str, list[float]] = {}
            try:
                counted = count_instructions(plan.argv_for(i), cwd=plan.cwd, timeout_s=timeout,
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
            writer.add_run(bench_ids[i], iteration=k, warmup=False, setup_id=setup_ids[i],
                           fields=fields, samples=samples)
            run_hook(bench.conclude, "conclude", plan.cwd)
            if not plan.tolerates(fields["status"], fields.get("exit_code")):
                why = fields.get("error") or f"exited with code {fields.get('exit_code')}"
                raise UserError(f"command {bench.command!r} {why} when counted under valgrind; "
                                f"the run is stored in session {writer.ref.uid}; use "
                                f"--ignore-failure (-i) to keep going")


__all__ = ["run_counted", "counted_runs_wanted", "MAX_COUNTED_RUNS", "COUNT_METHOD"]
