"""``ab --harness KIND``: gate every benchmark a harness reports, each on its own.

One harness run per side per pair: the harness's command (``{root}`` is the revision's tree) runs
for base and head in a random order, back to back, as ``ab`` pairs single programs; each run
reports all the harness's benchmarks (:func:`benchlab.measure.harnesses.runner.run_prepared`),
and each benchmark's metric enters the pair with the median of its values in that run (several
with ``-count``, repetitions or criterion's samples; the notes say so). The benchmarks are those
of the first pair; one that stops reporting a gated metric fails the job (exit 3, naming it).

The gated metric is the harness's own time per operation (``ns_per_op``, ``real_time``,
``time``) unless ``metrics`` names others it reports; the direction comes from the unit
(:func:`benchlab.units.higher_is_better`), ``better`` overrides it. Every benchmark is decided
with the gate's sequential rule at the same looks (one schedule for the job: the pairs are
shared), and a decided benchmark keeps its decision: it is not looked at again, so the error
per benchmark is the rule's (a false regression at most alpha/2 per benchmark and metric).
The job ends when every benchmark is decided or ``max_time_s`` (the whole job's budget: one
harness run measures them all) or ``max_pairs`` is spent.

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
                 threshold: float | None) -> None:
        self.requested = list(metrics)
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
            for metric in self.requested or [reported.primary]:
                if metric not in metrics:
                    have = ", ".join(sorted(metrics))
                    return (f"benchmark {bench}: the harness reports no metric {metric} "
                            f"(it reports: {have}); give --metric one of those")
                self.gated.append((bench, metric))
                self.values[(bench, metric)] = {side: [] for side in SIDES}
        self.units = dict(reported.units)
        return None

    def add(self, side: str, reported: Any, pair: int) -> str | None:
        """Add one side's run; a failure line when a gated value is missing from it."""
        for bench, metric in self.gated:
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
                               critical=critical, alpha=options.alpha, paired=True)

    def notes(self) -> list[str]:
        return [f"{bench} ({metric}): up to {n} values in one harness run; each run counts "
                f"with their median" for (bench, metric), n in self.most.items() if n > 1]


def _run_side(kind: str, prepared: dict, command: str, side: str, revision: Revision,
              options: AbOptions, label: str):
    from benchlab.measure.harnesses.runner import run_prepared

    work, prep = prepared[side]
    return run_prepared(kind, prep, command, work, cwd=revision.root,
                        timeout_s=options.timeout_s, label=label)


def run_ab_harness(store: Store, kind: str, command: str, base: Revision, head: Revision,
                   options: AbOptions, *, repo: str, metrics: Sequence[str] = (),
                   better: dict[str, str] | None = None,
                   threshold: float | None = None,
                   argv: Sequence[str] | None = None, name: str | None = None,
                   message: Callable[[str], None] = lambda text: None,
                   on_start: Callable[[Any], None] | None = None) -> AbResult:
    """Gate every benchmark of a ``kind`` harness's ``command`` on base and head (module
    docstring). Raises UserError (nothing created) for a command the harness cannot read,
    and SessionInterrupted on Ctrl-C or SIGTERM; a failed harness run ends the job with
    ``AbResult.failure`` set (exit 3)."""
    from benchlab.core.session import SessionInterrupted, interruptible
    from benchlab.environment import collect_environment, load_average
    from benchlab.measure.harnesses import HarnessFailed, get_harness
    from benchlab.store.writer import SessionWriter

    options.validate()
    harness = get_harness(kind)
    revisions = {"base": base, "head": head}
    prepared: dict[str, tuple[Path, Any]] = {}
    for side, rev in revisions.items():
        work = Path(tempfile.mkdtemp(prefix=f"benchlab-ab-{kind}-{side}-"))
        prepared[side] = (work, harness.prepare(command.replace("{root}", shlex.quote(rev.root)),
                                                work))
    pairs = _Pairs(metrics, better or {}, threshold)
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
            sink = HarnessRunWriter(writer, command)
            try:
                result = _measure(kind, prepared, command, revisions, options, pairs, sink,
                                  message)
            except HarnessFailed as exc:
                result = ([], 0, {}, str(exc), [])
            except KeyboardInterrupt as exc:
                writer.finish("interrupted", load_after=list(load_average()))
                raise SessionInterrupted(writer.ref, store.next_seq(writer.ref.id),
                                         getattr(exc, "signum", 2)) from None
            except BaseException:
                writer.finish("failed", load_after=list(load_average()))
                raise
            decisions, n, seconds, failure, looks = result
            session_metadata.merge_under(
                store, writer.ref.id, "ab",
                {"decisions": [d.to_dict() for d in decisions],
                 "pairs": {d.benchmark: n for d in decisions}, "seconds": seconds,
                 "looks": {"harness": looks}, "failure": failure, "notes": pairs.notes()})
            writer.finish("failed" if failure else "done", load_after=list(load_average()))
    finally:
        for work, _ in prepared.values():
            shutil.rmtree(work, ignore_errors=True)
    return AbResult(writer.ref, decisions, {d.benchmark: n for d in decisions}, seconds,
                    failure, {"harness": looks}, pairs.notes())


def _measure(kind: str, prepared: dict, command: str, revisions: dict[str, Revision],
             options: AbOptions, pairs: _Pairs, sink: HarnessRunWriter,
             message: Callable[[str], None]) -> tuple:
    """Warmups, then pairs until every benchmark is decided or the budget is spent:
    (decisions, pairs, seconds by benchmark, failure line or None, looks)."""
    rng = np.random.default_rng([options.seed, 18])
    start = time.monotonic()
    run_index = 0

    def pair(index: int, warmup: bool) -> dict[str, Any]:
        nonlocal run_index
        out = {}
        for s in rng.permutation(2):
            side = SIDES[int(s)]
            label = f"{side}, {'warmup' if warmup else 'pair'} {index + 1}"
            hr = _run_side(kind, prepared, command, side, revisions[side], options, label)
            sink.add(hr.imported, run_index, hr.wall_ns, suffix=f"@{side}", warmup=warmup)
            run_index += 1
            out[side] = hr.reported
        return out

    for w in range(options.warmup):
        pair(w, True)
    clock = LookClock(options, start, time.monotonic())
    looks_log: list[dict[str, Any]] = []
    decided: dict[tuple[str, str], GateDecision] = {}
    seconds: dict[str, float] = {}
    last: dict[tuple[str, str], GateDecision] = {}
    n, looks = 0, None
    while True:
        runs = pair(n, False)
        if n == 0:
            failure = pairs.fix(runs["base"])
            if failure:
                return [], 0, {}, failure, looks_log
            per_bench = max(1, len(pairs.gated) // max(1, len({b for b, _ in pairs.gated})))
            looks = Looks(alpha=options.alpha / per_bench)
            message(f"{kind}: {len({b for b, _ in pairs.gated})} benchmarks reported")
        for side in SIDES:
            failure = pairs.add(side, runs[side], n)
            if failure:
                return list({**last, **decided}.values()), n, seconds, failure, looks_log
        n += 1
        if n < options.min_pairs:  # as ab: never a look before --min-pairs, budget or not
            continue
        look = clock.look(n, looks)
        if look is None:
            continue
        now, final, spent, critical = look
        for key in pairs.gated:
            if key in decided:
                continue
            d = pairs.decide(*key, options, critical)
            last[key] = d
            if d.decided:
                decided[key] = d
                seconds[key[0]] = round(now - start, 3)
        looks_log.append({"pairs": n, "seconds": round(now - start, 3), "spent": spent,
                          "critical": critical, "final": final, "decided": len(decided),
                          "of": len(pairs.gated)})
        if final or len(decided) == len(pairs.gated):
            for key in pairs.gated:
                seconds.setdefault(key[0], round(now - start, 3))
            message(f"{kind}: {len(decided)} of {len(pairs.gated)} decided after {n} pairs "
                    f"in {now - start:.1f} s")
            return [decided.get(k) or last[k] for k in pairs.gated], n, seconds, None, \
                looks_log
