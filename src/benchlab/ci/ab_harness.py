"""``ab --harness KIND``: gate every benchmark a harness reports, each on its own.

One harness run per side per pair: the harness's command (``{root}`` is the revision's tree) runs
for base and head in a random order, back to back, as ``ab`` pairs single programs; each run
reports all the harness's benchmarks (:func:`benchlab.measure.harnesses.runner.run_prepared`),
and each benchmark's metric enters the pair with the median of its values in that run (several
with ``-count``, repetitions or criterion's samples; the notes say so). The benchmarks are those
of the first pair; one that stops reporting a gated metric fails the job (exit 3, naming it).

The gated metric is the harness's own time per operation (``ns_per_op``, ``real_time``,
``time``; JMH's: its mode's, ``thrpt`` or else ``avgt``, ``sample``, ``ss``, per benchmark as
the first run reports it: :meth:`benchlab.measure.harnesses.Harness.default_metric`) unless
``metrics`` names others it reports; the direction comes from the unit
(:func:`benchlab.units.higher_is_better`), ``better`` overrides it. Every benchmark is decided
with the gate's sequential rule at the same looks (one schedule for the job: the pairs are
shared), and a decided benchmark keeps its decision: it is not looked at again, so the error
per benchmark is the rule's (a false regression at most alpha/2 per benchmark and metric).
The job ends when every benchmark is decided or ``max_time_s`` (the whole job's budget: one
harness run measures them all) or ``max_pairs`` is spent. The budget is shared: once some are
decided, both sides run only the undecided ones where the harness can choose
(:meth:`benchlab.measure.harnesses.Harness.narrow`: go's ``-bench``, gbench's
``--benchmark_filter``, criterion's filter, pytest's ``-k``), so they get the time. Where it
cannot (a script that runs the harness, a build tool's task), every benchmark keeps running, and
one progress line says so with the harness's ``narrow_hint``.

Runs are stored through the one session writer: ``NAME@base`` and ``NAME@head`` benchmarks, one
run per benchmark and harness run holding the values it reported, so ``show`` and ``compare``
read the session as any other.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from benchlab.ci.ab import AbOptions, AbResult, LookClock
from benchlab.ci.ab_plan import ALPHA_PER_SUITE
from benchlab.ci.gate import HIGHER, LOWER, GateDecision, Looks, decide_oriented, default_threshold
from benchlab.ci.revisions import Revision
from benchlab.core.harness_session import HarnessRunWriter
from benchlab.store import session_metadata
from benchlab.store.db import Store
from benchlab.units import higher_is_better

SIDES = ("base", "head")


class _Pairs:
    """The values of each (benchmark, metric) per side, one per pair, and what gates them."""

    def __init__(self, metrics: Sequence[str], better: dict[str, str],
                 threshold: float | None, default: Callable[[Any], str]) -> None:
        self.requested = list(metrics)
        self.default = default  # a benchmark's reported metrics -> the one gated when none named
        self.better = better
        self.threshold = threshold
        self.gated: list[tuple[str, str]] = []
        self.units: dict[str, str] = {}
        self.values: dict[tuple[str, str], dict[str, list[float]]] = {}
        self.most: dict[tuple[str, str], int] = {}

    def fix(self, reported: Any) -> str | None:
        """Take the benchmarks and metrics of the first pair's base run; a failure line when a
        requested metric is not among what the harness reports."""
        for bench, metrics in reported.benchmarks.items():
            for metric in self.requested or [self.default(metrics)]:
                if metric not in metrics:
                    have = ", ".join(sorted(metrics))
                    return (f"benchmark {bench}: the harness reports no metric {metric} "
                            f"(it reports: {have}); give --metric one of those")
                self.gated.append((bench, metric))
                self.values[(bench, metric)] = {side: [] for side in SIDES}
        self.units = dict(reported.units)
        return None

    def add(self, side: str, reported: Any, pair: int,
            keys: Sequence[tuple[str, str]]) -> str | None:
        """Add one side's run's values of ``keys`` (the undecided benchmarks and metrics); a
        failure line when one is missing from it."""
        for bench, metric in keys:
            found = reported.benchmarks.get(bench, {}).get(metric)
            if not found:
                return (f"benchmark {bench}: metric {metric} did not appear in the {side} "
                        f"run of pair {pair + 1}; the harness stopped reporting it")
            self.most[(bench, metric)] = max(self.most.get((bench, metric), 0), len(found))
            self.values[(bench, metric)][side].append(float(np.median(found)))
        return None

    def decide(self, bench: str, metric: str, options: AbOptions,
               critical: float | None) -> GateDecision:
        unit = self.units.get(metric, "")
        way = self.better.get(metric) or (HIGHER if higher_is_better(unit) else LOWER)
        v = self.values[(bench, metric)]
        return decide_oriented(np.asarray(v["base"]), np.asarray(v["head"]), direction=way,
                               unit=unit, benchmark=bench, metric=metric,
                               threshold=self.threshold if self.threshold is not None
                               else default_threshold(metric),
                               critical=critical,
                               alpha=options.alpha_each(self.metrics_per_benchmark),
                               paired=True)

    @property
    def metrics_per_benchmark(self) -> int:
        """The metrics each benchmark is gated on (each is, on every one requested)."""
        return len(self.requested) or 1

    def notes(self) -> list[str]:
        return [f"{bench} ({metric}): up to {n} values in one harness run; each run counts "
                f"with their median" for (bench, metric), n in self.most.items() if n > 1]


class _Sides:
    """Each side's prepared harness command and work directory. Once some benchmarks are
    decided, :meth:`narrow` makes both sides run only the undecided ones when the harness can
    choose (:meth:`benchlab.measure.harnesses.Harness.narrow`), so they get the time."""

    def __init__(self, kind: str, command: str, revisions: dict[str, Revision]) -> None:
        from benchlab.measure.harnesses import get_harness

        self.kind, self.command, self.revisions = kind, command, revisions
        self.harness = get_harness(kind)
        self.work: dict[str, Path] = {}
        for side in SIDES:
            self.work[side] = Path(tempfile.mkdtemp(prefix=f"benchlab-ab-{kind}-{side}-"))
        self.prepare(command)

    def prepare(self, command: str) -> None:
        """Make ``command`` (``{root}``: each side's tree) the one both sides run."""
        self.running = command
        self.prepared = {side: self.harness.prepare(
            command.replace("{root}", shlex.quote(rev.root)), self.work[side])
            for side, rev in self.revisions.items()}

    def narrow(self, names: list[str]) -> bool:
        """Run only ``names`` from now on; False when the harness cannot choose."""
        narrowed = self.harness.narrow(self.command, names)
        if narrowed is None:
            return False
        self.prepare(narrowed)
        return True

    def run(self, side: str, options: AbOptions, label: str):
        """One harness run of ``side`` (a ``HarnessRun``; HarnessFailed when it fails)."""
        from benchlab.measure.harnesses.runner import run_prepared

        return run_prepared(self.kind, self.prepared[side], self.running, self.work[side],
                            cwd=self.revisions[side].root, timeout_s=options.timeout_s,
                            label=label)

    def close(self) -> None:
        for work in self.work.values():
            shutil.rmtree(work, ignore_errors=True)


def run_ab_harness(store: Store, kind: str, command: str, base: Revision, head: Revision,
                   options: AbOptions, *, repo: str, metrics: Sequence[str] = (),
                   better: dict[str, str] | None = None,
                   threshold: float | None = None,
                   argv: Sequence[str] | None = None, name: str | None = None,
                   message: Callable[[str], None] = lambda text: None,
                   on_start: Callable[[Any], None] | None = None) -> AbResult:
    """Gate every benchmark of a ``kind`` harness's ``command`` on base and head (module
    docstring), for :func:`benchlab.ci.gate_job.run_gate` (``ab --harness``, ``bisect
    --harness`` steps). Raises UserError (nothing created) for a command the harness cannot read,
    and SessionInterrupted on Ctrl-C or SIGTERM; a failed harness run ends the job with
    ``AbResult.failure`` set (exit 3)."""
    from benchlab.core.executor import ending_session
    from benchlab.core.session import interruptible
    from benchlab.environment import collect_environment, load_average
    from benchlab.measure.harnesses import HarnessFailed
    from benchlab.store.writer import SessionWriter

    options.validate()
    sides = _Sides(kind, command, {"base": base, "head": head})
    pairs = _Pairs(metrics, better or {}, threshold, sides.harness.default_metric)
    try:
        with interruptible():
            metadata = {"ab": {"repo": repo, "base": base.to_dict(), "head": head.to_dict(),
                               "harness": kind, "command": command,
                               "options": asdict(options)}}
            with store.transaction():
                writer = SessionWriter.create(
                    store, "run", name=name, command_line=list(argv) if argv else None,
                    protocol={"harness": kind, "command": command, "ab": True},
                    environment=collect_environment(argv=list(argv) if argv else None,
                                                    env_key=store.env_key()),
                    load_before=list(load_average()), metadata=metadata)
            if on_start is not None:
                on_start(writer.ref)
            with ending_session(writer):
                job = _Job(sides, options, pairs, HarnessRunWriter(writer, command), message)
                try:
                    job.measure()
                except HarnessFailed as exc:
                    job.failure = str(exc)
                session_metadata.merge_under(store, writer.ref.id, "ab", job.summary())
                writer.finish("failed" if job.failure else "done",
                              load_after=list(load_average()))
    finally:
        sides.close()
    decisions = job.decisions()
    return AbResult(writer.ref, decisions, job.pairs_of(), job.seconds, job.failure,
                    {"harness": job.looks_log}, pairs.notes())


class _Job:
    """Warmups, then pairs until every benchmark is decided or the budget is spent; a decided
    benchmark keeps its decision and, where the harness can choose, is not run again."""

    def __init__(self, sides: _Sides, options: AbOptions, pairs: _Pairs,
                 sink: HarnessRunWriter, message: Callable[[str], None]) -> None:
        self.sides, self.options, self.values, self.sink = sides, options, pairs, sink
        self.message = message
        self.rng = np.random.default_rng([options.seed, 18])
        self.start = time.monotonic()
        self.run_index = 0
        self.pairs = 0
        self.failure: str | None = None
        self.looks_log: list[dict[str, Any]] = []
        self.decided: dict[tuple[str, str], GateDecision] = {}
        self.last: dict[tuple[str, str], GateDecision] = {}
        self.seconds: dict[str, float] = {}
        #: pairs each decided benchmark had when it was decided
        self.decided_after: dict[str, int] = {}
        self.narrowed = False
        #: the line saying the command cannot be narrowed was printed (once per job)
        self.said_unnarrowed = False

    def pair(self, index: int, warmup: bool) -> dict[str, Any]:
        """Both sides' runs in a random order, each stored as it ends: side -> reported."""
        out = {}
        for s in self.rng.permutation(2):
            side = SIDES[int(s)]
            label = f"{side}, {'warmup' if warmup else 'pair'} {index + 1}"
            hr = self.sides.run(side, self.options, label)
            self.sink.add(hr.imported, self.run_index, hr.wall_ns, suffix=f"@{side}",
                          warmup=warmup)
            self.run_index += 1
            out[side] = hr.reported
        return out

    def measure(self) -> None:
        """The job's pairs and looks (HarnessFailed when a harness run fails)."""
        o = self.options
        for w in range(o.warmup):
            self.pair(w, True)
        clock = LookClock(o, self.start, time.monotonic())
        looks = None
        while True:
            runs = self.pair(self.pairs, False)
            if self.pairs == 0:
                self.failure = self.values.fix(runs["base"])
                if self.failure:
                    return
                looks = self.first_looks()
            for side in SIDES:
                self.failure = self.values.add(side, runs[side], self.pairs,
                                               [k for k in self.values.gated
                                                if k not in self.decided])
                if self.failure:
                    return
            self.pairs += 1
            if self.pairs < o.min_pairs:  # as ab: never a look before --min-pairs
                continue
            look = clock.look(self.pairs, looks)
            if look is not None and self.look(*look):
                return

    def first_looks(self) -> Looks:
        """The looks' error of each decision, now that the first run told the benchmarks (k:
        one decision per benchmark and metric): alpha split over one benchmark's metrics, or
        at ``--alpha-scope suite`` over all k."""
        gated = self.values.gated
        benches = {b for b, _ in gated}
        self.options.spend_over(len(gated))
        o = self.options
        spent = f"; {o.alpha_statement()}" if o.alpha_scope == ALPHA_PER_SUITE else ""
        self.message(f"{self.sides.kind}: {len(benches)} benchmarks reported{spent}")
        return Looks(alpha=self.options.alpha_each(self.values.metrics_per_benchmark))

    def look(self, now: float, final: bool, spent: float, critical: float) -> bool:
        """Decide every undecided benchmark at this look; True when the job ends."""
        for key in self.values.gated:
            if key in self.decided:
                continue
            d = self.values.decide(*key, self.options, critical)
            self.last[key] = d
            if d.decided:
                self.decided[key] = d
                self.seconds[key[0]] = round(now - self.start, 3)
                self.decided_after[key[0]] = self.pairs
        total = len(self.values.gated)
        self.looks_log.append({"pairs": self.pairs, "seconds": round(now - self.start, 3),
                               "spent": spent, "critical": critical, "final": final,
                               "decided": len(self.decided), "of": total,
                               "narrowed": self.narrowed})
        if final or len(self.decided) == total:
            for key in self.values.gated:
                self.seconds.setdefault(key[0], round(now - self.start, 3))
            self.message(f"{self.sides.kind}: {len(self.decided)} of {total} decided after "
                         f"{self.pairs} pairs in {now - self.start:.1f} s")
            return True
        if self.decided:
            self.narrow()
        return False

    def narrow(self) -> None:
        """Run only the benchmarks still undecided, when the harness can choose them; when it
        cannot from the start, say so once (how to write the command so it can)."""
        undecided = sorted({b for b, m in self.values.gated if (b, m) not in self.decided})
        if self.sides.narrow(undecided):
            if not self.narrowed:
                self.message(f"{self.sides.kind}: {len(undecided)} undecided; the harness "
                             f"runs only those from now on")
            self.narrowed = True
        elif not self.narrowed and not self.said_unnarrowed:
            self.said_unnarrowed = True
            hint = self.sides.harness.narrow_hint
            self.message(f"{self.sides.kind}: {len(undecided)} undecided, but the command "
                         f"cannot be narrowed to them, so every benchmark still runs and the "
                         f"undecided ones get no more time" + (f"; to narrow, {hint}" if hint
                                                               else ""))

    def decisions(self) -> list[GateDecision]:
        """Each gated benchmark's decision (its last look's when still undecided)."""
        return [self.decided.get(k) or self.last[k] for k in self.values.gated
                if k in self.decided or k in self.last]

    def pairs_of(self) -> dict[str, int]:
        """Pairs each benchmark was measured: until its decision, or all of the job's."""
        return {d.benchmark: self.decided_after.get(d.benchmark, self.pairs)
                for d in self.decisions()}

    def summary(self) -> dict[str, Any]:
        """What the session's ``ab`` metadata keeps of the job."""
        decisions = self.decisions()
        return {"decisions": [d.to_dict() for d in decisions],
                "pairs": self.pairs_of(),
                "seconds": self.seconds, "looks": {"harness": self.looks_log},
                "failure": self.failure, "notes": self.values.notes()}
