"""The gating jobs, out of the command line: one entry, :func:`run_gate`, for ``ab``,
``ab --harness``, ``ab --baseline``, ``gate``, ``gate --harness`` and every step of ``bisect``.

A :class:`GateJob` says what is measured (commands: ``benches``; one harness command:
``harness``; a stored session: ``candidate``), what it is judged against (:class:`Paired`: a
base revision measured beside head as interleaved pairs with the sequential rule;
:class:`Stored`: a stored baseline, with the between-session variance rule) and what is built
first (:class:`Build`; None: nothing, the trees are given or the commands run where benchlab
runs). :func:`run_gate` builds the revisions in trees of their own, runs the job, makes a failed
build, a failed run or a reported metric that never appeared the report (exit 3), records a
branch's baseline when asked, and returns the :class:`GateReport` every output renders
(exit status included). The command line only parses options into the job and writes the
report; ``bisect`` makes one job per step and reads the step's decision from its report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from benchlab.ci import baseline as bl
from benchlab.ci.ab_plan import AbBenchmark, AbOptions
from benchlab.ci.exits import EXIT_FAILED
from benchlab.ci.gate import exit_status
from benchlab.ci.report_model import GateReport
from benchlab.ci.revisions import BuildFailed, Revision, Trees
from benchlab.core.executor import RunnerFactory
from benchlab.store.db import Store


@dataclass
class Paired:
    """Against a base revision measured beside head as interleaved pairs (``ab``,
    ``ab --harness``, a ``bisect`` step): the base, a built tree or a revision to build
    (the job's :class:`Build`)."""

    base: Revision | str


@dataclass
class Stored:
    """Against a stored baseline (``gate``, ``gate --harness``, ``ab --baseline``): its
    selector (a session uid, id or name, or ``branch:NAME``; None: record only), the fresh
    run's runs of each benchmark (or harness runs), whether a baseline of another machine is
    accepted, and the branch the candidate is then recorded as the baseline of (None: none)."""

    selector: str | None
    runs: int = 30
    force: bool = False
    record_branch: str | None = None


@dataclass
class Build:
    """What a job builds before it measures: the repository's top directory, the build
    command (None: none) and its timeout (s; None: none). The job's revisions given as text
    (head None: the work tree) are built in trees of their own, removed at the end, on Ctrl-C
    and on SIGTERM."""

    root: Path
    command: str | None = None
    timeout_s: float | None = None


@dataclass
class HarnessCommand:
    """A harness's command to gate (``--harness KIND``; ``{root}``: the revision's tree, or the
    current directory): its kind, the metrics gated (empty: per benchmark the harness's
    ``default_metric``, its own time per operation or JMH's mode) and their threshold (a
    fraction; None: default)."""

    kind: str
    command: str
    metrics: list[str] = field(default_factory=list)
    threshold: float | None = None


@dataclass
class GateJob:
    """One gating job: what it is judged ``against``, the command it reports as (``gate``,
    ``ab`` or ``bisect``), what is measured (``benches``, a ``harness`` command, or a stored
    ``candidate`` session), the head revision (a built tree, a revision to build, or None: the
    work tree when building, else the current directory), what is built first, how runs are
    measured (``options``: warmups, timeout, shell, counting, alpha and what it bounds, and for
    pairs the budget
    and looks), whether undecided fails, the repository kept in the session's metadata, and
    for a stored baseline per benchmark its thresholds (fractions by metric), metrics and the
    metrics' directions (those of ``benches`` when they are given)."""

    against: Paired | Stored
    command: str = "gate"
    benches: list[AbBenchmark] = field(default_factory=list)
    harness: HarnessCommand | None = None
    candidate: str | None = None
    head: Revision | str | None = None
    build: Build | None = None
    options: AbOptions = field(default_factory=AbOptions)
    fail_undecided: bool = False
    repo: str | None = None
    thresholds: dict[str, dict[str, float]] = field(default_factory=dict)
    metrics: dict[str, list[str]] = field(default_factory=dict)
    directions: dict[str, str] = field(default_factory=dict)


def run_gate(store: Store, job: GateJob, *, argv: Sequence[str] = (), name: str | None = None,
             message: Callable[[str], None] = lambda text: None,
             on_start: Callable | None = None, runner: RunnerFactory | None = None
             ) -> GateReport:
    """Build what ``job`` builds, measure it and judge it (module docstring): the report.

    ``name``: the session's (None: ``ab BASE..HEAD`` for a built head, else none);
    ``message``: progress lines; ``on_start``: called with the session's ref once it exists;
    ``runner``: what executes a paired job's runs (the core's Runner seam; default processes).

    A failed build or run (or a reported metric that never appeared) is a report with exit
    status 3; bad input raises UserError before anything is built or stored; Ctrl-C or SIGTERM
    raise SessionInterrupted once the session is marked interrupted (its trees removed).
    """
    from benchlab.core.session import interruptible

    paired = isinstance(job.against, Paired)
    base = job.against.base if paired else None
    # the stored baseline, found before anything is built or run (one that names nothing is
    # bad input; the fresh session is never its own baseline)
    baseline = (bl.find_baseline(store, job.against.selector)
                if not paired and job.against.selector else None)

    def measure(built: dict[str, Revision | None]) -> GateReport:
        session = name or default_name(job, built.get("base"), built.get("head"))
        kw = dict(argv=argv, name=session, message=message, on_start=on_start)
        if paired:
            return measure_paired(store, job, built["base"], built["head"], runner=runner, **kw)
        return measure_stored(store, job, baseline, built.get("head"), **kw)

    if job.benches:  # known before anything runs (a harness's: after its first run)
        job.options.spend_over(decisions_of(job.benches, job.options))
    if job.build is None:
        return alpha_stated(measure({"base": base, "head": job.head}), job.options)
    with interruptible(), Trees(job.build.root, build_timeout_s=job.build.timeout_s) as trees:
        built, failure = build_revisions(trees, job.build.command, job.head, message, base=base)
        if failure is None:
            return alpha_stated(measure(built), job.options)
    return alpha_stated(failure_report(job.command, failure, job.fail_undecided), job.options)


def decisions_of(benches: Sequence[AbBenchmark], options: AbOptions) -> int:
    """The benchmark x metric decisions of a job of commands: each benchmark's metrics decided
    on pairs (or runs), and its instruction counts when counted."""
    return sum(len(b.paired_metrics)
               + int(bool(options.count) or "instructions" in b.metrics) for b in benches)


def alpha_stated(report: GateReport, options: AbOptions) -> GateReport:
    """``report`` saying how ``--alpha`` was spent (``options``, its decisions counted)."""
    report.alpha = options.alpha_spending()
    return report


def default_name(job: GateJob, base: Revision | None, head: Revision | None) -> str | None:
    """A built head's session name: ``ab BASE..HEAD`` (a stored baseline: its selector as
    BASE); None without a built head."""
    if job.build is None or head is None:
        return None
    against = base.commit[:8] if base is not None else job.against.selector
    return f"{job.command} {against}..{tree_label(head)}"


def measure_paired(store: Store, job: GateJob, base: Revision, head: Revision, *,
                   argv: Sequence[str], name: str | None, message: Callable[[str], None],
                   on_start: Callable | None, runner: RunnerFactory | None) -> GateReport:
    """``base`` and ``head`` measured as interleaved pairs, each benchmark decided by the
    sequential rule (:func:`benchlab.ci.ab.run_ab`, or :func:`benchlab.ci.ab_harness.
    run_ab_harness` for a harness): the report."""
    repo = job.repo or (str(job.build.root) if job.build else None)
    if job.harness is not None:
        from benchlab.ci.ab_harness import run_ab_harness

        h = job.harness
        result = run_ab_harness(store, h.kind, h.command, base, head, job.options, repo=repo,
                                metrics=h.metrics, better=job.directions,
                                threshold=h.threshold, argv=argv, name=name, message=message,
                                on_start=on_start)
    else:
        from benchlab.ci.ab import run_ab

        result = run_ab(store, job.benches, base, head, job.options, repo=repo, argv=argv,
                        name=name, message=message, on_start=on_start, runner=runner)
    return ab_report(result, base, head, job.fail_undecided, command=job.command)


def measure_stored(store: Store, job: GateJob, baseline: dict[str, Any] | None,
                   head: Revision | None, *, argv: Sequence[str], name: str | None,
                   message: Callable[[str], None], on_start: Callable | None) -> GateReport:
    """A fresh run of ``job.benches`` (``{root}``: ``head``'s tree, else the current
    directory), a fresh harness session, or the stored ``job.candidate``, judged against the
    stored ``baseline`` session (None: recorded only): the report."""
    from benchlab.ci.reported import missing_reported

    stored, o = job.against, job.options
    if job.harness is not None:
        cand, failure = fresh_harness(store, job, argv=argv, name=name, on_start=on_start)
    elif job.candidate is not None:
        cand, failure = store.get_session(job.candidate), None
    else:
        plan = bl.fresh_plan(job.benches, stored.runs, o.warmup, o.count, o.timeout_s,
                             root=head.root if head is not None else ".", shell=o.shell)
        cand, failure = bl.run_fresh(store, plan, argv=argv, name=name, on_start=on_start)
        if failure is None:
            failure = missing_reported(job.benches, lambda bench, metric: bl.values_of(
                store, cand["id"], bench, metric).size)
    if failure is not None:
        return failure_report(job.command, failure, job.fail_undecided)
    return judge(store, job, baseline, cand, head)


def fresh_harness(store: Store, job: GateJob, *, argv: Sequence[str], name: str | None,
                  on_start: Callable | None = None
                  ) -> tuple[dict[str, Any] | None, str | None]:
    """Run ``job.harness`` as a ``run --harness`` session (``job.against.runs`` harness runs)
    and set ``job``'s metrics and thresholds to every benchmark it reported (none named: each
    benchmark's :meth:`~benchlab.measure.harnesses.Harness.default_metric` of what the first
    run reporting it gave): (the session, None), or (None, the failure line) when a harness run
    failed (exit 3). The contention it ran under is kept, as for a fresh run."""
    from benchlab.ci.contention import sample, summarise
    from benchlab.ci.gate import default_threshold
    from benchlab.core.harness_session import run_harness_session
    from benchlab.measure.harnesses import HarnessFailed, get_harness

    harness, adapter = job.harness, get_harness(job.harness.kind)
    chosen: dict[str, str] = {}  # benchmark -> the metric gated when none is named

    def choose(index: int, run: Any) -> None:
        for bench, reported in run.reported.benchmarks.items():
            chosen.setdefault(bench, adapter.default_metric(reported))

    before = sample()
    try:
        # {root} is the current directory, as in gate's commands
        result = run_harness_session(store, harness.kind, harness.command.replace("{root}", "."),
                                     runs=job.against.runs, name=name,
                                     timeout_s=job.options.timeout_s, argv=argv,
                                     on_run=choose, on_start=on_start)
    except HarnessFailed as exc:
        return None, str(exc)
    from benchlab.store import session_metadata

    session_metadata.merge(store, result.session.uid, contention=summarise(before, sample()))
    for bench in result.benchmarks:
        metrics = harness.metrics or [chosen.get(bench, adapter.primary)]
        job.metrics[bench] = list(metrics)
        job.thresholds[bench] = {m: harness.threshold if harness.threshold is not None
                                 else default_threshold(m) for m in metrics}
    return store.get_session(result.session.uid), None


def gated_by_benchmark(job: GateJob) -> tuple[dict, dict, dict]:
    """(thresholds, metrics, directions) a stored-baseline gate judges by: those of the job's
    benchmarks when it has them, else the job's own."""
    if not job.benches:
        return job.thresholds, job.metrics, job.directions
    return ({b.name: b.thresholds for b in job.benches},
            {b.name: b.metrics for b in job.benches},
            {m.name: m.direction for b in job.benches for m in b.reported})


def judge(store: Store, job: GateJob, base: dict[str, Any] | None,
          cand: dict[str, Any], head: Revision | None = None) -> GateReport:
    """The decisions on ``cand`` against ``base`` (None: nothing gated), the candidate recorded
    as the baseline of the job's record branch (a built ``head``: its revision kept in the
    session's ``ab`` metadata), and the report."""
    from benchlab.store import session_metadata

    stored = job.against
    decisions, notes = [], []
    revisions = {"candidate": bl.session_revision(cand)}
    if head is not None:
        kept = {k: v for k, v in head.to_dict().items() if k != "build_log"}
        session_metadata.merge(store, cand["id"], ab={
            "repo": job.repo or str(job.build.root), "head": kept,
            "baseline": base["uid"] if base else None})
        revisions = {"head": {**kept, "session": cand["uid"]}}
    if base is not None:
        thresholds, metrics, directions = gated_by_benchmark(job)
        job.options.spend_over(stored_decisions(store, base, cand, metrics))
        decisions, notes = bl.gate_against(store, base, cand, thresholds, metrics,
                                           job.options.alpha_each(), stored.force, directions)
        revisions = {"baseline": bl.session_revision(base), **revisions}
    else:
        notes.append("no --baseline: recorded only, nothing gated")
    if stored.record_branch:
        session_metadata.merge_under(store, cand["id"], "gate", {"branch": stored.record_branch})
        notes.append(f"session {cand['uid']} recorded as the baseline of {stored.record_branch}")
    return GateReport(job.command, cand["uid"], revisions, decisions,
                      exit_status(decisions, fail_undecided=job.fail_undecided),
                      seconds=bl.measuring_seconds(store, cand),
                      fail_undecided=job.fail_undecided, notes=notes)


def stored_decisions(store: Store, base: dict[str, Any], cand: dict[str, Any],
                     metrics: dict[str, list[str]]) -> int:
    """The decisions of gating ``cand`` against ``base``: each benchmark both sessions hold,
    once per metric it is gated on (``metrics``; missing: wall)."""
    in_base = {b["name"] for b in store.benchmarks(base["id"])}
    return sum(len(metrics.get(b["name"], ["wall"])) for b in store.benchmarks(cand["id"])
               if b["name"] in in_base)


def build_revisions(trees: Trees, build: str | None, head: Revision | str | None,
                    message: Callable[[str], None], base: Revision | str | None = None
                    ) -> tuple[dict[str, Revision], str | None]:
    """Build ``base`` (when given) and ``head`` (the work tree when None) in their own trees of
    ``trees``, a revision already built kept as it is: ``({"base": ..., "head": ...}, None)``,
    or ``({}, the failed build's one-line text)``."""
    built = {}
    try:
        if isinstance(base, str):
            message(f"building base {base}")
            built["base"] = trees.commit_tree(base, build, "base")
        elif base is not None:
            built["base"] = base
        if isinstance(head, Revision):
            built["head"] = head
        else:
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
              fail_undecided: bool, command: str = "ab") -> GateReport:
    """The report of a paired job that ran (``ab``, or a ``bisect`` step): ``result`` (an
    ``AbResult``) between the built ``base_tree`` and ``head_tree`` (their build logs left
    out)."""
    revisions = {"base": base_tree.to_dict(), "head": head_tree.to_dict()}
    for rev in revisions.values():
        rev.pop("build_log", None)
    return GateReport(command, result.session.uid, revisions, result.decisions,
                      exit_status(result.decisions, failed=bool(result.failure),
                                  fail_undecided=fail_undecided),
                      pairs=result.pairs, seconds=result.seconds, failure=result.failure,
                      fail_undecided=fail_undecided, notes=result.notes)


def bisect_report(result: Any) -> GateReport:
    """The report of a ``bisect`` that ran (a ``BisectResult``): the answer in one line (the
    commit, its subject, the merge that brought it in), then every step."""
    revisions = {"good": result.good.to_dict()}
    notes = step_notes(result.steps)
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


def step_notes(steps: Sequence[Any]) -> list[str]:
    """One line per ``bisect`` step (a ``Step``): the commit, its verdict and, when measured,
    the ratio head/good, the outcome and the session."""
    return [f"{s.commit[:12]} {s.verdict}"
            + (f": head/good {s.decision.ratio:.4f} ({s.decision.outcome}"
               f"{', uncertain' if s.uncertain else ''}), session {s.session}"
               if s.decision else "") for s in steps]
