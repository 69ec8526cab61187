"""``gate``'s job, out of the command line: a fresh run (or a stored candidate) gated against a
stored baseline, recorded as a branch's baseline when asked, and the report every output
renders. The command line only parses options into :class:`GateJob` and the benchmarks, calls
:func:`run_gate`, and writes the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from benchlab.ci import baseline as bl
from benchlab.ci.exits import EXIT_FAILED
from benchlab.ci.gate import exit_status
from benchlab.ci.report_model import GateReport
from benchlab.core.plan import RunPlan
from benchlab.store.db import Store


@dataclass
class GateJob:
    """What a gate decides and keeps: the baseline selector (None: record only), the branch to
    record the candidate as the baseline of, the error level, whether another machine is
    accepted, whether undecided fails, and per benchmark its thresholds (fractions by metric),
    metrics and the metrics' directions."""

    baseline: str | None
    record_branch: str | None = None
    alpha: float = 0.01
    force: bool = False
    fail_undecided: bool = False
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    metrics: dict[str, list[str]] = field(default_factory=dict)
    directions: dict[str, str] = field(default_factory=dict)


def run_gate(store: Store, job: GateJob, *, candidate: str | None = None,
             plan: RunPlan | None = None, benches: Sequence[Any] = (),
             argv: Sequence[str] = (), name: str | None = None,
             on_start: Callable | None = None) -> GateReport:
    """Gate ``candidate`` (a stored session) or a fresh run of ``plan`` (its ``benches``, the
    ``AbBenchmark`` s it was made of) against ``job.baseline``.

    A failed run (or a reported metric that never appeared) is a report with exit status 3;
    bad input raises UserError before anything is stored; Ctrl-C or SIGTERM raise
    SessionInterrupted once the fresh session is marked interrupted.
    """
    from benchlab.ci.reported import missing_reported

    base = bl.find_baseline(store, job.baseline) if job.baseline else None
    if plan is None:
        cand = store.get_session(candidate)
    else:
        cand, failure = bl.run_fresh(store, plan, argv=argv, name=name, on_start=on_start)
        if failure is None:
            failure = missing_reported(benches, lambda bench, metric: bl.values_of(
                store, cand["id"], bench, metric).size)
        if failure is not None:
            return GateReport("gate", None, {}, [], EXIT_FAILED, failure=failure,
                              fail_undecided=job.fail_undecided)
    return judge(store, job, base, cand)


def judge(store: Store, job: GateJob, base: dict[str, Any] | None,
          cand: dict[str, Any]) -> GateReport:
    """The decisions on ``cand`` against ``base`` (None: nothing gated), the candidate recorded
    as the baseline of ``job.record_branch``, and the report."""
    from benchlab.store import session_metadata

    decisions, notes = [], []
    revisions = {"candidate": bl.session_revision(cand)}
    if base is not None:
        decisions, notes = bl.gate_against(store, base, cand, job.thresholds, job.metrics,
                                           job.alpha, job.force, job.directions)
        revisions = {"baseline": bl.session_revision(base), **revisions}
    else:
        notes.append("no --baseline: recorded only, nothing gated")
    if job.record_branch:
        session_metadata.merge_under(store, cand["id"], "gate", {"branch": job.record_branch})
        notes.append(f"session {cand['uid']} recorded as the baseline of {job.record_branch}")
    return GateReport("gate", cand["uid"], revisions, decisions,
                      exit_status(decisions, fail_undecided=job.fail_undecided),
                      seconds=bl.measuring_seconds(store, cand),
                      fail_undecided=job.fail_undecided, notes=notes)
