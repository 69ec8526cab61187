"""The order of runs: which benchmark runs next, given the plan and what is already stored.

Run counts follow hyperfine: ``runs`` fixes the count; otherwise each benchmark runs at least
``min_runs`` times and for at least ``min_time_s`` seconds (estimated from the first measured
run), at most ``max_runs`` times; ``max_time_s`` caps the wall time of the whole session.

Order: with several benchmarks, the default ``interleaved`` order runs them in rounds, each round
a fresh random permutation (seeded, stored), so slow drift in the machine (thermal, background
daemons, frequency) hits every benchmark alike instead of biasing the one measured last.
``sequential`` runs all of one benchmark (its warmups, then its runs), then the next, like
hyperfine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from benchlab.core.plan import RunPlan


@dataclass
class PlannedRun:
    """The next run to execute: benchmark index, warmup or measured, 0-based iteration."""

    benchmark: int
    warmup: bool
    iteration: int


class RunPlanner:
    """Decides the next run from the plan and the runs done so far (resumable).

    ``done_warmups[i]``/``done_runs[i]`` count what benchmark ``i`` already has in the store;
    ``planned_runs`` (by benchmark name) fixes the target once it is known.
    """

    def __init__(self, plan: RunPlan, done_warmups: list[int], done_runs: list[int],
                 elapsed_s: float = 0.0, worker: int = 0):
        self.p = plan
        self.done_warmups = list(done_warmups)
        self.done_runs = list(done_runs)
        self.elapsed_s = elapsed_s
        self.first_wall_s: list[float | None] = [None] * len(plan.benchmarks)
        # Seeded by what is done so far, so a resumed session continues with fresh rounds.
        self._rng = np.random.default_rng([plan.seed, worker,
                                           sum(done_runs) + sum(done_warmups)])
        self._queue: list[int] = []

    def target(self, i: int) -> int | None:
        """Number of measured runs benchmark ``i`` will get, or None until it can be estimated."""
        p = self.p
        if p.runs is not None:
            return p.runs
        name = p.benchmarks[i].name
        if name in p.planned_runs:
            return p.planned_runs[name]
        first = self.first_wall_s[i]
        if first is None:
            return None
        want = p.min_runs if first <= 0 else max(p.min_runs, math.ceil(p.min_time_s / first))
        if p.max_runs is not None:
            want = min(want, p.max_runs)
        p.planned_runs[name] = int(want)
        return int(want)

    def record(self, run: PlannedRun, wall_s: float | None, counted: bool = False) -> None:
        """Account for a finished run (``wall_s``, s, of an ok measured run seeds the estimate).

        ``counted``: the run was counted as done when it was sent (:meth:`reserve`).
        """
        if not counted:
            self.reserve(run)
        if not run.warmup:
            if self.first_wall_s[run.benchmark] is None and wall_s is not None:
                self.first_wall_s[run.benchmark] = wall_s
        self.elapsed_s += wall_s or 0.0

    def reserve(self, run: PlannedRun, sign: int = 1) -> None:
        """Count ``run`` as done for planning (a run sent to a cluster, before it returns;
        ``sign`` -1 takes it back)."""
        if run.warmup:
            self.done_warmups[run.benchmark] += sign
        else:
            self.done_runs[run.benchmark] += sign

    def has_work(self) -> bool:
        """Whether runs remain to be handed out (without drawing from the order)."""
        p = self.p
        for i in range(len(p.benchmarks)):
            if self.done_warmups[i] < p.warmup:
                return True
            target = self.target(i)
            if self.done_runs[i] < (target if target is not None else 1):
                return True
        return False

    def remaining(self) -> int | None:
        """Measured runs still to do, or None while a target is unknown."""
        total = 0
        for i in range(len(self.p.benchmarks)):
            t = self.target(i)
            if t is None:
                return None
            total += max(0, t - self.done_runs[i])
        return total

    def total(self) -> int | None:
        """All measured runs of the session, or None while unknown."""
        targets = [self.target(i) for i in range(len(self.p.benchmarks))]
        return None if any(t is None for t in targets) else sum(targets)  # type: ignore[arg-type]

    def next(self) -> PlannedRun | None:
        """The next run, or None when the session is complete (or ``max_time_s`` is spent)."""
        p = self.p
        n = len(p.benchmarks)
        if p.order == "sequential":
            # hyperfine's order: each benchmark's warmups right before its own runs (its setup
            # hook has just run, and its cleanup follows its last run)
            for i in range(n):
                if self._needs(i):
                    if self.done_warmups[i] < p.warmup:
                        return PlannedRun(i, True, self.done_warmups[i])
                    break
        else:
            for i in range(n):  # warmups first, in declared order: they only prime caches
                if self.done_warmups[i] < p.warmup:
                    return PlannedRun(i, True, self.done_warmups[i])
        if p.max_time_s is not None and self.elapsed_s >= p.max_time_s and \
                all(d >= min(p.min_runs, self.target(i) or p.min_runs)
                    for i, d in enumerate(self.done_runs)):
            return None
        needs = [i for i in range(n) if self._needs(i)]
        if not needs:
            return None
        if p.order == "sequential":
            i = needs[0]
            return PlannedRun(i, False, self.done_runs[i])
        self._queue = [i for i in self._queue if i in needs]
        if not self._queue:
            self._queue = list(self._rng.permutation(needs))
        i = int(self._queue.pop(0))
        return PlannedRun(i, False, self.done_runs[i])

    def _needs(self, i: int) -> bool:
        t = self.target(i)
        return self.done_runs[i] < (t if t is not None else 1)
