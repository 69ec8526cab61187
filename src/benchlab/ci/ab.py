"""``benchlab ab``: two revisions' benchmarks measured side by side in one session, gated.

Each benchmark exists twice in the session, ``NAME@base`` and ``NAME@head`` (commands with
``{root}`` replaced by each revision's tree). It is measured as interleaved pairs: warmups of
both, then rounds of one base run and one head run in a fresh random order (seeded, so the
order is reproducible), every run stored the moment it ends through the core's run path (the
plan is validated and the session created by :func:`benchlab.core.session.start_session`; each
run executes as ``benchlab run`` executes it, through the core's ``Runner``, and is stored and
counted by its :class:`~benchlab.core.recorder.RunRecorder`; the session ends through
:func:`benchlab.core.executor.ending_session`, as every session does). After every ``look_every`` pairs the gate
(:func:`benchlab.ci.gate.decide`) looks at the stored values with that look's sequential
critical value; measuring stops when it decides (slower, faster or equivalent beyond/within the
threshold) or when the benchmark's time budget (``max_time_s``) or pair budget is spent, whose
last look spends the error left. Looks come every ``look_every`` pairs, and once there are many
pairs, every :data:`LOOK_GROWTH` of them (a look at n pairs costs O(n log n); every 10 pairs
at 8,000 pairs spent a third of a 2-minute budget on looking). The gate reads the timed values
it kept as each run was stored (the same numbers the store returns; reading every stored run
back at every look grew quadratically).

With ``count="instructions"`` each revision of each benchmark is also counted under cachegrind
(``count_runs`` runs: the count of a deterministic program does not vary) and gated on its own
threshold. Every look (pairs, seconds, critical value, outcome by metric) is kept in the
session's metadata (``ab.looks``), so the time each metric took to decide can be read back.

The session is a normal ``run`` session (``show``, ``report``, ``bundle`` work on it); its
metadata key ``ab`` holds the repository, both revisions (commit, subject, build command, build
time and log tail), the options and each benchmark's decisions.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from benchlab.ci.ab_plan import AbBenchmark, AbOptions, build_plan, plan_metrics  # noqa: F401
from benchlab.ci.gate import GateDecision, Looks, decide_oriented
from benchlab.ci.revisions import Revision
from benchlab.core.executor import (
    ProcessRunner,
    RunnerFactory,
    Silent,
    ending_session,
    raise_if_terminated,
)
from benchlab.core.placement import prepare_execution
from benchlab.core.plan import RunPlan
from benchlab.core.planner import PlannedRun
from benchlab.core.recorder import RunRecorder
from benchlab.core.run_one import run_fields
from benchlab.core.scratch import make_scratch, remove_scratch
from benchlab.core.session import interruptible, start_session
from benchlab.core.session_types import RunFailed
from benchlab.errors import UserError
from benchlab.store import session_metadata
from benchlab.store.db import SessionRef, Store
from benchlab.store.rows import corrected_wall_ns

#: Once pairs are many, a look comes only when they have grown by this fraction since the last
#: look (at most ~2 % later than every ``look_every`` pairs; a few looks fewer barely change the
#: critical values).
LOOK_GROWTH = 0.02
#: Metrics of every timed run: wall time and CPU time (user + sys) of the process, in ns.
TIMED = ("wall", "cpu")


@dataclass
class LookClock:
    """When the sequential gate looks: every ``look_every`` pairs once :data:`LOOK_GROWTH` more
    than at the last look, and at the end (``max_pairs`` or ``max_time_s``). The error is spent
    on the clock: a look at time s of the budget left after the warmups has spent the fraction
    s / that budget (or pairs / max_pairs, when more), and the look at the end spends what is
    left (gate.Looks)."""

    options: AbOptions
    start: float  # time.monotonic() when the job began (s)
    measured_from: float  # time.monotonic() when its warmups ended (s)
    due: float = 0.0  # the pairs at which the next look is due

    def look(self, pairs: int, looks: Looks) -> tuple[float, bool, float, float] | None:
        """After ``pairs`` pairs: None when no look is due, else (now: time.monotonic() in s,
        final, the fraction of alpha spent, the look's critical value)."""
        o = self.options
        now = time.monotonic()
        final = pairs >= o.max_pairs or now - self.start >= o.max_time_s
        if (pairs % o.look_every or pairs < self.due) and not final:
            return None
        self.due = pairs * (1.0 + LOOK_GROWTH)
        budget_s = max(o.max_time_s - (self.measured_from - self.start), 1e-9)
        spent = 1.0 if final else min(max((now - self.measured_from) / budget_s,
                                          pairs / o.max_pairs), 1.0 - 1e-9)
        critical = looks.critical(pairs, spent)
        return now, final, spent, looks.last() if critical is None else critical


@dataclass
class AbResult:
    """What an A/B job produced: its session, the decisions (one per benchmark and metric),
    pairs and seconds spent per benchmark, and the failure that ended it (None: none)."""

    session: SessionRef
    decisions: list[GateDecision]
    pairs: dict[str, int]
    seconds: dict[str, float]
    failure: str | None = None
    looks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class _Job:
    """The measuring loop of one session (see the module docstring): which run comes next is
    the job's (pairs, looks); storing and counting each run is the core's one
    :class:`~benchlab.core.recorder.RunRecorder`, as for ``run``, ``study`` and clusters."""

    def __init__(self, store: Store, writer: Any, plan: RunPlan, options: AbOptions,
                 message: Callable[[str], None], runner: RunnerFactory | None = None,
                 benchmarks: Sequence[AbBenchmark] = ()):
        self.store, self.writer, self.plan, self.options = store, writer, plan, options
        self.benchmarks = list(benchmarks)
        #: most matches of a reported metric in one run, by (benchmark, metric)
        self.matches: dict[tuple[str, str], int] = {}
        self.message = message
        self.recorder = RunRecorder(writer, plan, Silent())
        self.recorder.total_of = lambda: None  # the gate decides when a benchmark ends
        self.planner = self.recorder.restore(1, lambda run: 0)[0]
        self.bench_ids = self.recorder.bench_ids
        self.rng = np.random.default_rng([options.seed, 18])
        self.execution = prepare_execution(plan.placement, session_label=writer.ref.uid)
        self.scratch = make_scratch(writer.ref.uid)
        #: what executes each run and each count (the core's seam: processes, or a script)
        self.runner = (runner or ProcessRunner)(plan, self.execution, self.scratch)
        #: the shell's start-up time (ns), subtracted from wall as run subtracts it
        self.shell_ns = self.runner.shell_cost()["wall_ns"] if plan.shell else None
        #: each benchmark's looks: pairs, seconds since its first run, z, outcome by metric
        self.looks: dict[str, list[dict[str, Any]]] = {}
        #: timed values of each benchmark index's measured ok runs, as the store holds them
        self.kept: dict[int, dict[str, list[float]]] = {}

    def run(self, index: int, warmup: bool, iteration: int) -> str | None:
        """Execute and store one run; the failure's one line, or None when it ran ok."""
        raise_if_terminated()
        planned = PlannedRun(index, warmup, iteration)
        run = self.runner.run(planned, 0)
        self.recorder.record(run, self.planner, shell_overhead_ns=self.shell_ns)
        m = run.measurement
        missing = self.keep(index, warmup, run, run_fields(m, run.extra, self.shell_ns))
        if missing and not run.failure and m.status == "ok":
            return missing
        if run.failure or m.status != "ok":
            why = run.failure or {"failed": f"exited with code {m.exit_code}",
                                  "signaled": f"was killed by signal {m.signal}",
                                  "timeout": f"timed out after {self.plan.timeout_s} s",
                                  "error": f"could not start ({m.error})"}.get(m.status, m.status)
            tail = (run.extra.get("stderr_tail") or "").strip().splitlines()[-1:]
            return (f"benchmark {self.plan.benchmarks[index].name} "
                    f"{why}{' (' + tail[0][:160] + ')' if tail else ''}")
        return None

    def keep(self, index: int, warmup: bool, run: Any, fields: dict[str, Any]) -> str | None:
        """Keep a measured ok run's values of the paired metrics (a reported metric: the
        median of its matches in the run); the failure line of a reported metric the run did
        not print (warmups are checked too), else None."""
        m = run.measurement
        if m.status != "ok" or m.wall_ns is None or run.failure:
            return None
        bench = self.benchmarks[index // 2] if self.benchmarks else None
        reported = bench.reported if bench is not None else []
        for metric in reported:
            found = run.samples.get(metric.name) or []
            if not found:
                return (f"benchmark {self.plan.benchmarks[index].name}: metric {metric.name} "
                        f"never appeared in its output (stdout or stderr); check the regex "
                        f"{metric.regex!r} against what the program prints")
            key = (bench.name, metric.name)
            self.matches[key] = max(self.matches.get(key, 0), len(found))
        if warmup:
            return None
        kept = self.kept.setdefault(index, {metric: [] for metric in (*TIMED, *(
            r.name for r in reported))})
        kept["wall"].append(float(corrected_wall_ns(fields)))  # harness_values' rows
        kept["cpu"].append(math.nan if m.user_ns is None or m.sys_ns is None
                           else float(m.user_ns + m.sys_ns))
        for metric in reported:
            kept[metric.name].append(float(np.median(run.samples[metric.name])))
        return None

    def notes(self) -> list[str]:
        """What the job's output states about reported metrics: several matches per run."""
        return [f"{bench} ({metric}): up to {n} matches in one run; each run counts with the "
                f"median of its matches" for (bench, metric), n in self.matches.items() if n > 1]

    def values(self, index: int, metric: str) -> np.ndarray:
        """Stored values of benchmark ``index`` (wall or CPU ns, a reported metric's value per
        run, or instruction counts)."""
        if metric != "instructions":
            return np.asarray(self.kept.get(index, {}).get(metric, []), dtype=np.float64)
        return self.store.sample_values(self.bench_ids[index], metric)[0]

    def measure(self, k: int, bench: AbBenchmark
                ) -> tuple[list[GateDecision], int, float, str | None]:
        """Pairs of benchmark ``k`` until every timed metric it is gated on is decided or the
        budget is spent: (decisions, pairs, seconds, failure line or None)."""
        o = self.options
        pair = (2 * k, 2 * k + 1)
        timed = bench.paired_metrics
        start = time.monotonic()

        def ending(failure: str | None, critical: float | None = None) -> tuple:
            decisions = [self.decide(k, bench, m, critical) for m in timed]
            return decisions, pairs, time.monotonic() - start, failure

        pairs = 0
        for w in range(o.warmup):
            for index in self.rng.permutation(pair):
                failure = self.run(int(index), True, w)
                if failure:
                    return ending(failure)
        clock = LookClock(o, start, time.monotonic())
        looks = Looks(alpha=o.alpha_each(len(timed)))
        while True:
            for index in self.rng.permutation(pair):
                failure = self.run(int(index), False, pairs)
                if failure:
                    return ending(failure)
            pairs += 1
            if pairs < o.min_pairs:
                continue
            if not timed:
                return ending(None)
            look = clock.look(pairs, looks)
            if look is None:
                continue
            _, final, spent, critical = look
            decisions = [self.decide(k, bench, m, critical) for m in timed]
            self.looks.setdefault(bench.name, []).append(
                {"pairs": pairs, "seconds": round(time.monotonic() - start, 3),
                 "spent": spent, "critical": critical, "final": final,
                 "outcomes": {d.metric: d.outcome for d in decisions}})
            if final or all(d.decided for d in decisions):
                return decisions, pairs, time.monotonic() - start, None

    def decide(self, k: int, bench: AbBenchmark, metric: str,
               critical: float | None = None) -> GateDecision:
        """The gate's decision on benchmark ``k``'s stored values of ``metric`` (pairs for
        all but instruction counts; ``critical`` of the look, None: a fixed-sample interval),
        in the metric's direction."""
        reported = bench.reported_metric(metric)
        return decide_oriented(
            self.values(2 * k, metric), self.values(2 * k + 1, metric),
            direction=reported.direction if reported else "lower",
            unit=reported.unit if reported else "", benchmark=bench.name, metric=metric,
            threshold=bench.threshold(metric), critical=critical,
            alpha=self.options.alpha_each(1 if metric == "instructions"
                                          else len(bench.paired_metrics)),
            paired=metric != "instructions")

    def count(self, k: int, bench: AbBenchmark) -> tuple[GateDecision, str | None]:
        """Instruction counts of both revisions of benchmark ``k``, then their decision."""
        for iteration in range(self.options.count_runs):
            for index in (2 * k, 2 * k + 1):
                raise_if_terminated()
                fields, samples = self.runner.count(index)
                try:
                    self.recorder.record_counted(index, iteration, fields, samples)
                except RunFailed:
                    return (self.decide(k, bench, "instructions"),
                            f"benchmark {self.plan.benchmarks[index].name} under valgrind: "
                            f"{fields.get('error') or 'exit code ' + str(fields.get('exit_code'))}")
        return self.decide(k, bench, "instructions"), None

    def close(self) -> None:
        """Remove the scratch directory."""
        remove_scratch(self.scratch)


def run_ab(store: Store, benchmarks: Sequence[AbBenchmark], base: Revision, head: Revision,
           options: AbOptions, *, repo: str, argv: Sequence[str] | None = None,
           name: str | None = None, message: Callable[[str], None] = lambda text: None,
           on_start: Callable[[SessionRef], None] | None = None,
           runner: RunnerFactory | None = None) -> AbResult:
    """Measure every benchmark on both revisions and decide each (see the module docstring).
    Commands reach it through the one job entry, :func:`benchlab.ci.gate_job.run_gate`
    (``ab`` and every ``bisect`` step), which builds the revisions and reports the result.

    ``runner`` makes what executes each run and count (:class:`benchlab.core.executor.Runner`,
    the core's one seam; default: placed, measured processes; tests script one).

    Raises UserError (nothing created) for a bad plan, and SessionInterrupted on Ctrl-C or
    SIGTERM once the session is marked interrupted. A failing run ends the job with
    ``AbResult.failure`` set and the session ``failed``.
    """
    from benchlab.environment import load_average

    options.validate()
    if not benchmarks:
        raise UserError("no benchmark to measure; give commands or --suite FILE")
    names = [b.name for b in benchmarks]
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise UserError(f"benchmark names repeat ({', '.join(repeated)}); give distinct names")
    plan = build_plan(benchmarks, base, head, options)
    metadata = {"ab": {"repo": repo, "base": base.to_dict(), "head": head.to_dict(),
                       "benchmarks": [asdict(b) for b in benchmarks],
                       "options": asdict(options)}}
    with interruptible():
        writer = start_session(store, plan, argv=argv, name=name, metadata=metadata)
        if on_start is not None:
            on_start(writer.ref)
        job = None
        try:
            with ending_session(writer):
                job = _Job(store, writer, plan, options, message, runner, benchmarks)
                decisions, pairs, seconds, failure = _measure_all(job, benchmarks, message)
                session_metadata.merge_under(store, writer.ref.id, "ab", {
                    "decisions": [d.to_dict() for d in decisions], "pairs": pairs,
                    "seconds": seconds, "looks": job.looks, "failure": failure,
                    "notes": job.notes()})
                writer.finish("failed" if failure else "done", load_after=list(load_average()))
        finally:
            if job is not None:
                job.close()
    return AbResult(writer.ref, decisions, pairs, seconds, failure, job.looks, job.notes())


def _measure_all(job: _Job, benchmarks: Sequence[AbBenchmark], message: Callable[[str], None]
                 ) -> tuple[list[GateDecision], dict[str, int], dict[str, float], str | None]:
    """Each benchmark in turn, its pairs then (when asked) its instruction counts, until one
    fails: (decisions, pairs and seconds by benchmark, the failure line or None)."""
    decisions: list[GateDecision] = []
    pairs: dict[str, int] = {}
    seconds: dict[str, float] = {}
    for k, bench in enumerate(benchmarks):
        timed, n, spent, failure = job.measure(k, bench)
        decisions += timed
        pairs[bench.name], seconds[bench.name] = n, round(spent, 3)
        outcomes = ", ".join(f"{d.metric} {d.outcome}" for d in timed) or "measured"
        message(f"{bench.name}: {outcomes} after {n} pairs in {spent:.1f} s")
        if failure:
            return decisions, pairs, seconds, failure
        if job.plan.count == "instructions" and (job.options.count
                                                 or "instructions" in bench.metrics):
            counted, failure = job.count(k, bench)
            decisions.append(counted)
            if failure:
                return decisions, pairs, seconds, failure
    return decisions, pairs, seconds, None
