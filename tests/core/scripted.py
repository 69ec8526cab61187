"""A scripted :class:`benchlab.core.executor.Runner` for tests of ordering, resuming, stopping
and storing, where a process is not the point (as hyperfine's mock executor): each run's wall
time comes from a function of (benchmark, iteration), no process is spawned, and every call is
logged in order. End-to-end tests keep real processes."""

from __future__ import annotations

from typing import Any, Callable

from benchlab.core.planner import PlannedRun
from benchlab.core.run_one import MeasuredRun
from benchlab.measure.spawn import RunMeasurement


def measurement(wall_ns: int, status: str = "ok", exit_code: int | None = 0) -> RunMeasurement:
    """A run's measurement as the spawner would return it (times in ns)."""
    return RunMeasurement(status=status, exit_code=exit_code, signal=None, wall_ns=wall_ns,
                          user_ns=wall_ns // 2, sys_ns=0, max_rss_kib=1000, minflt=0, majflt=0,
                          nvcsw=0, nivcsw=0, start_mono_ns=0, end_mono_ns=wall_ns,
                          start_unix_ns=0, error=None, method="scripted", cpus=None,
                          descendants_killed=None)


class ScriptedRunner:
    """Returns scripted measurements; ``log`` records ("run", bench, warmup, iteration),
    ("setup"|"cleanup", command) and ("count", bench) in call order."""

    def __init__(self, wall_ns: Callable[[int, int], int] = lambda b, i: 1_000_000,
                 fail: Callable[[int, int], int | None] = lambda b, i: None,
                 interrupt_after: int | None = None,
                 counts: Callable[[int], float] = lambda index: 1000.0 * (index + 1)):
        self.wall_ns = wall_ns
        self.counts = counts
        self.fail = fail
        self.interrupt_after = interrupt_after
        self.log: list[tuple[Any, ...]] = []
        self.runs = 0

    def __call__(self, plan, execution, scratch) -> "ScriptedRunner":
        """The factory :func:`benchlab.core.executor.run_session` calls."""
        return self

    def run(self, planned: PlannedRun, worker: int) -> MeasuredRun:
        if self.interrupt_after is not None and self.runs >= self.interrupt_after:
            raise KeyboardInterrupt
        self.runs += 1
        self.log.append(("run", planned.benchmark, planned.warmup, planned.iteration))
        code = self.fail(planned.benchmark, planned.iteration)
        m = measurement(self.wall_ns(planned.benchmark, planned.iteration),
                        "ok" if not code else "failed", code or 0)
        return MeasuredRun(planned, worker, m, [], {}, {})

    def hook(self, command, kind) -> None:
        if command:
            self.log.append((kind, command))

    def shell_cost(self) -> dict[str, int]:
        return {"wall_ns": 500_000, "user_ns": 0, "sys_ns": 0, "runs": 1}

    def count(self, index: int):
        self.log.append(("count", index))
        return ({"spawn_method": "cachegrind", "status": "ok", "exit_code": 0},
                {"instructions": [self.counts(index)]})
