"""The gating jobs, out of the command line: building the revisions, a fresh run (or a stored
candidate) gated against a stored baseline (``gate`` and ``ab --baseline``, both through
:func:`run_gate`), recorded as a branch's baseline when asked, and the report every output
renders (:func:`ab_report` for a paired ``ab`` job, :func:`failure_report` for a job that
measured nothing to gate). The command line only parses options into :class:`GateJob` and the
benchmarks, calls these, and writes the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from benchlab.ci import baseline as bl
from benchlab.ci.exits import EXIT_FAILED
from benchlab.ci.gate import exit_status
from benchlab.ci.report_model import GateReport
from benchlab.ci.revisions import BuildFailed, Revision, Trees
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
    #: the command the report is of: ``gate``, or ``ab`` (``ab --baseline``)
    command: str = "gate"
    #: ``ab --baseline``: the built head revision the fresh run measured (kept in the session's
    #: ``ab`` metadata with the repository), None for ``gate``
    head: Revision | None = None
    repo: str | None = None


@dataclass
class HarnessRun:
    """A fresh run of a harness to gate (``gate --harness KIND``): its kind and command, the
    harness runs (each reports every benchmark), a timeout per run (s), the metrics gated (empty:
    the harness's own time per operation) and their threshold (a fraction; None: default)."""

    kind: str
    command: str
    runs: int = 5
    timeout_s: float | None = None
    metrics: list[str] = field(default_factory=list)
    threshold: float | None = None


def run_gate(store: Store, job: GateJob, *, candidate: str | None = None,
             plan: RunPlan | None = None, benches: Sequence[Any] = (),
             harness: HarnessRun | None = None, argv: Sequence[str] = (),
             name: str | None = None, on_start: Callable | None = None) -> GateReport:
    """Gate ``candidate`` (a stored session), a fresh run of ``plan`` (its ``benches``, the
    ``AbBenchmark`` s it was made of) or a fresh ``harness`` session (every benchmark it
    reports) against ``job.baseline``. ``gate``, ``gate --harness`` and ``ab --baseline``
    are this one entry.

    A failed run (or a reported metric that never appeared) is a report with exit status 3;
    bad input raises UserError before anything is stored; Ctrl-C or SIGTERM raise
    SessionInterrupted once the fresh session is marked interrupted.
    """
    from benchlab.ci.reported import missing_reported

    base = bl.find_baseline(store, job.baseline) if job.baseline else None
    if harness is not None:
        cand, failure = fresh_harness(store, harness, job, argv=argv, name=name,
                                      on_start=on_start)
        if failure is not None:
            return failure_report(job.command, failure, job.fail_undecided)
    elif plan is None:
        cand = store.get_session(candidate)
    else:
        cand, failure = bl.run_fresh(store, plan, argv=argv, name=name, on_start=on_start)
        if failure is None:
            failure = missing_reported(benches, lambda bench, metric: bl.values_of(
                store, cand["id"], bench, metric).size)
        if failure is not None:
            return failure_report(job.command, failure, job.fail_undecided)
    return judge(store, job, base, cand)


def fresh_harness(store: Store, harness: HarnessRun, job: GateJob, *, argv: Sequence[str],
                  name: str | None, on_start: Callable | None = None
                  ) -> tuple[dict[str, Any] | None, str | None]:
    """Run ``harness`` as a ``run --harness`` session and set ``job``'s metrics and thresholds
    to every benchmark it reported: (the session, None), or (None, the failure line) when a
    harness run failed (exit 3). The contention it ran under is kept, as for a fresh run."""
    from benchlab.ci.contention import sample, summarise
    from benchlab.ci.gate import default_threshold
    from benchlab.core.harness_session import run_harness_session
    from benchlab.measure.harnesses import HarnessFailed, get_harness
    from benchlab.store import session_metadata

    metrics = harness.metrics or [get_harness(harness.kind).primary]
    before = sample()
    try:
        # {root} is the current directory, as in gate's commands
        result = run_harness_session(store, harness.kind, harness.command.replace("{root}", "."),
                                     runs=harness.runs,
                                     name=name, timeout_s=harness.timeout_s, argv=argv,
                                     on_start=on_start)
    except HarnessFailed as exc:
        return None, str(exc)
    session_metadata.merge(store, result.session.uid, contention=summarise(before, sample()))
    for bench in result.benchmarks:
        job.metrics[bench] = list(metrics)
        job.thresholds[bench] = {m: harness.threshold if harness.threshold is not None
                                 else default_threshold(m) for m in metrics}
    return store.get_session(result.session.uid), None


def judge(store: Store, job: GateJob, base: dict[str, Any] | None,
          cand: dict[str, Any]) -> GateReport:
    """The decisions on ``cand`` against ``base`` (None: nothing gated), the candidate recorded
    as the baseline of ``job.record_branch`` (``ab --baseline``: its head revision kept in its
    metadata), and the report."""
    from benchlab.store import session_metadata

    decisions, notes = [], []
    revisions = {"candidate": bl.session_revision(cand)}
    if job.head is not None:
        head = {k: v for k, v in job.head.to_dict().items() if k != "build_log"}
        session_metadata.merge(store, cand["id"], ab={
            "repo": job.repo, "head": head, "baseline": base["uid"] if base else None})
        revisions = {"head": {**head, "session": cand["uid"]}}
    if base is not None:
        decisions, notes = bl.gate_against(store, base, cand, job.thresholds, job.metrics,
                                           job.alpha, job.force, job.directions)
        revisions = {"baseline": bl.session_revision(base), **revisions}
    else:
        notes.append("no --baseline: recorded only, nothing gated")
    if job.record_branch:
        session_metadata.merge_under(store, cand["id"], "gate", {"branch": job.record_branch})
        notes.append(f"session {cand['uid']} recorded as the baseline of {job.record_branch}")
    return GateReport(job.command, cand["uid"], revisions, decisions,
                      exit_status(decisions, fail_undecided=job.fail_undecided),
                      seconds=bl.measuring_seconds(store, cand),
                      fail_undecided=job.fail_undecided, notes=notes)


def built_job(root: Path, *, build: str | None, head: str | None, base: str | None,
              build_timeout_s: float | None, message: Callable[[str], None],
              measure: Callable[[dict[str, Revision]], GateReport],
              fail_undecided: bool = False) -> GateReport:
    """``ab``'s job around its measuring: ``base`` (when given) and ``head`` built in trees of
    their own (removed at the end, on Ctrl-C and on SIGTERM), then ``measure(built)`` makes the
    report; a build that fails is the report instead (exit 3). ``ab``, ``ab --harness`` and
    ``ab --baseline`` (no base) are this job with their own ``measure``."""
    from benchlab.core.session import interruptible

    with interruptible(), Trees(root, build_timeout_s=build_timeout_s) as trees:
        built, failure = build_revisions(trees, build, head, message, base=base)
        if failure is None:
            return measure(built)
    return failure_report("ab", failure, fail_undecided)


def build_revisions(trees: Trees, build: str | None, head: str | None,
                    message: Callable[[str], None], base: str | None = None
                    ) -> tuple[dict[str, Revision], str | None]:
    """Build ``base`` (when given) and ``head`` (the work tree when None) in their own trees of
    ``trees``: ``({"base": ..., "head": ...}, None)``, or ``({}, the failed build's one-line
    text)``. ``ab``, ``ab --harness`` and ``ab --baseline`` build here."""
    built = {}
    try:
        if base is not None:
            message(f"building base {base}")
            built["base"] = trees.commit_tree(base, build, "base")
        message(f"building head {head or '(work tree)'}")
        built["head"] = (trees.commit_tree(head, build, "head") if head
                         else trees.work_tree(build, "head"))
    except BuildFailed as exc:
        return {}, str(exc)
    return built, None


def tree_label(tree: Revision) -> str:
    """A built revision's short name in session names: its commit's first 8 hex digits, and
    ``+`` when the tree holds uncommitted changes."""
    return f"{tree.commit[:8]}{'+' if tree.dirty else ''}"


def failure_report(command: str, failure: str, fail_undecided: bool) -> GateReport:
    """The report of a ``command`` job that measured nothing to gate: exit 3 with
    ``failure``."""
    return GateReport(command, None, {}, [], EXIT_FAILED, failure=failure,
                      fail_undecided=fail_undecided)


def ab_report(result: Any, base_tree: Revision, head_tree: Revision,
              fail_undecided: bool) -> GateReport:
    """The report of an ``ab`` job that ran: ``result`` (an ``AbResult``) between the built
    ``base_tree`` and ``head_tree`` (their build logs left out)."""
    revisions = {"base": base_tree.to_dict(), "head": head_tree.to_dict()}
    for rev in revisions.values():
        rev.pop("build_log", None)
    return GateReport("ab", result.session.uid, revisions, result.decisions,
                      exit_status(result.decisions, failed=bool(result.failure),
                                  fail_undecided=fail_undecided),
                      pairs=result.pairs, seconds=result.seconds, failure=result.failure,
                      fail_undecided=fail_undecided, notes=result.notes)


def bisect_report(result: Any) -> GateReport:
    """The report of a ``bisect`` that ran (a ``BisectResult``): the answer in one line (the
    commit, its subject, the merge that brought it in), then every step."""
    revisions = {"good": result.good.to_dict()}
    notes = [f"{s.commit[:12]} {s.verdict}"
             + (f": head/good {s.decision.ratio:.4f} ({s.decision.outcome}"
                f"{', uncertain' if s.uncertain else ''}), session {s.session}"
                if s.decision else "") for s in result.steps]
    if result.message:
        notes.insert(0, result.message)
    if result.first_bad is not None:
        revisions["first_bad"] = {**result.first_bad.to_dict(), "merged_by": result.merged_by,
                                  "merged_by_subject": result.merged_by_subject or None}
        first = result.first_bad
        line = f"first bad commit {first.commit[:12]} ({first.subject})"
        if result.merged_by:
            line += (f", brought in by merge {result.merged_by[:12]} "
                     f"({result.merged_by_subject})")
        notes.insert(0, line)
    for rev in revisions.values():
        rev.pop("build_log", None)
    decisions = [result.decision] if result.decision else []
    return GateReport("bisect", None, revisions, decisions, exit_status([]), notes=notes)
