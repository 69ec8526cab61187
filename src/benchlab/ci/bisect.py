"""``benchlab bisect``: the first commit between a good and a bad revision that regressed.

The candidates are the commits of ``git rev-list BAD --not GOOD`` (merged branches included,
or only the first-parent chain with ``first_parent``), searched by halving as ``git bisect``
does (:mod:`benchlab.ci.bisect_graph`: merge bases first when GOOD is not an ancestor of BAD),
but each step is a measurement: the candidate commit's build is measured beside the known-good
build as interleaved pairs with the gate's sequential rule, by the one entry of every gate
(:func:`benchlab.ci.gate_job.run_gate`, a job paired against the good build: one stored
session per step, the step's decision read from its report), and

- **slower** (a regression beyond the threshold) makes it the new bad end;
- **equivalent** or **faster** makes it the new good end;
- **undecided** measures it again with twice the budget (at most ``retries`` times); still
  undecided, the candidate goes to the side its ratio is closer to (the bad end's ratio or 1),
  and the result says the step was uncertain;
- a commit that does not **build** is skipped (``git bisect skip``): the next untried commit
  nearest the middle is measured instead. If only skipped commits separate the ends, the
  answer is the range.

The answer names the first bad commit, its subject and the merge that brought it into BAD's
first-parent history. A step whose benchmark fails ends the search as a build of an end that
fails does: the job's report says so, exit status 3 (:func:`run_bisect`).

The bad end is measured first: if it is not slower than the good end beyond the threshold,
there is nothing to look for and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from benchlab.ci.ab_plan import AbBenchmark, AbOptions
from benchlab.ci.bisect_graph import CommitGraph
from benchlab.ci.exits import EXIT_FAILED
from benchlab.ci.gate import FASTER, SLOWER, UNDECIDED, GateDecision
from benchlab.ci.gate_job import (
    GateJob,
    HarnessCommand,
    Paired,
    bisect_report,
    failure_report,
    run_gate,
    step_notes,
)
from benchlab.ci.report_model import GateReport
from benchlab.ci.revisions import BuildFailed, Revision, Trees, subject
from benchlab.core.executor import RunnerFactory
from benchlab.errors import UserError
from benchlab.store.db import Store


class StepFailed(UserError):
    """A step's benchmark (or harness) failed on a commit: the search ends, exit status 3, as
    when an end does not build; ``steps`` are those measured before it."""

    exit_code = EXIT_FAILED
    steps: list = []


@dataclass
class Step:
    """One measured (or skipped) commit: its decision against the good build and session."""

    commit: str
    subject: str
    verdict: str  # "bad", "good", "skipped"
    decision: GateDecision | None = None
    session: str | None = None
    uncertain: bool = False
    note: str = ""


@dataclass
class BisectResult:
    """The first bad commit (None when the bad end is not a regression), its decision against
    the good end, the candidates when skipped commits hide it, and every step."""

    first_bad: Revision | None
    decision: GateDecision | None
    good: Revision
    steps: list[Step] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    message: str = ""
    merged_by: str | None = None
    """The merge on --bad's first-parent chain that brought the first bad commit in (None when
    the commit is on that chain)."""
    merged_by_subject: str = ""


def _is_bad(decision, bad_ratio: float) -> bool:
    """A step is bad when its head is decided slower than the good end, good when faster or
    equivalent; undecided after the retries, the nearer side (the step says it is uncertain)."""
    if decision.outcome == SLOWER:
        return True
    if decision.outcome in (FASTER, "equivalent"):
        return False
    return abs(decision.ratio - bad_ratio) < abs(decision.ratio - 1.0)


@dataclass
class HarnessFollow:
    """``bisect --harness KIND``: the harness's command (``{root}``: the commit's tree), the
    benchmark followed (None: the first the bad end finds slower; the result names it), the
    metric (None: the harness's time per operation) and its threshold (None: default)."""

    kind: str
    command: str
    benchmark: str | None = None
    metric: str | None = None
    threshold: float | None = None


#: One measured step: (good tree, candidate tree, options, session name) -> (the followed
#: benchmark's decision, its session uid); UserError when the benchmark fails.
PairStep = Callable[[Revision, Revision, AbOptions, str], tuple[GateDecision, str]]


def step_report(store: Store, job: GateJob, what: str, *, argv: Sequence[str] | None,
                name: str, message: Callable[[str], None],
                runner: RunnerFactory | None = None) -> GateReport:
    """One step's paired ``job`` through :func:`benchlab.ci.gate_job.run_gate`: its report;
    StepFailed (exit 3) naming the commit when ``what`` (the benchmark, the harness) failed."""
    report = run_gate(store, job, argv=argv or (), name=name, message=message, runner=runner)
    if report.failure is not None:
        raise StepFailed(f"the {what} failed on {job.head.commit[:12]}: {report.failure}")
    return report


def ab_step(store: Store, benchmark: AbBenchmark, *, repo: str, argv: Sequence[str] | None,
            message: Callable[[str], None], runner: RunnerFactory | None = None) -> PairStep:
    """A step that measures ``benchmark`` on both trees as ``ab`` does (its first metric)."""
    metric = benchmark.metrics[0]

    def step(good: Revision, tree: Revision, opts: AbOptions, name: str
             ) -> tuple[GateDecision, str]:
        job = GateJob(Paired(good), command="bisect", benches=[benchmark], head=tree,
                      options=opts, repo=repo)
        report = step_report(store, job, "benchmark", argv=argv, name=name, message=message,
                             runner=runner)
        return next(d for d in report.decisions if d.metric == metric), report.session

    return step


def harness_step(store: Store, follow: HarnessFollow, *, repo: str,
                 argv: Sequence[str] | None, message: Callable[[str], None]) -> PairStep:
    """A step that runs the harness on both trees as ``ab --harness`` does and takes the
    followed benchmark's decision; the first step (the bad end) picks the benchmark when none
    is named: the first decided slower, else the first reported."""
    from benchlab.measure.harnesses import get_harness

    def step(good: Revision, tree: Revision, opts: AbOptions, name: str
             ) -> tuple[GateDecision, str]:
        # once the benchmark is known, the harness runs it alone where it can choose
        command = follow.command if follow.benchmark is None else (
            get_harness(follow.kind).narrow(follow.command, [follow.benchmark])
            or follow.command)
        harness = HarnessCommand(follow.kind, command,
                                 [follow.metric] if follow.metric else [], follow.threshold)
        job = GateJob(Paired(good), command="bisect", harness=harness, head=tree,
                      options=opts, repo=repo)
        report = step_report(store, job, "harness", argv=argv, name=name, message=message)
        if follow.benchmark is None and report.decisions:
            slower = [d for d in report.decisions if d.outcome == SLOWER]
            follow.benchmark = (slower or report.decisions)[0].benchmark
            message(f"following benchmark {follow.benchmark}")
        found = [d for d in report.decisions if d.benchmark == follow.benchmark]
        if not found:
            have = ", ".join(sorted({d.benchmark for d in report.decisions})) or "none"
            raise UserError(f"the harness reports no benchmark {follow.benchmark} on "
                            f"{tree.commit[:12]} (it reports: {have}); give --benchmark NAME "
                            f"of one it reports")
        return found[0], report.session

    return step


def run_bisect(store: Store, root: str, *, build_timeout_s: float | None = None,
               **search) -> GateReport:
    """``bisect`` as a job: :func:`bisect` with ``search``'s arguments in trees of ``root``
    (removed at the end, on Ctrl-C and on SIGTERM, a build killed after ``build_timeout_s``
    s), and the report of its answer, or of what ended it (an end that does not build, a
    step whose benchmark failed: exit status 3, with the steps measured before it)."""
    from benchlab.core.session import interruptible

    with interruptible(), Trees(root, build_timeout_s=build_timeout_s) as trees:
        try:
            result = bisect(store, trees, **search)
        except (BuildFailed, StepFailed) as exc:
            report = failure_report("bisect", str(exc), False)
            report.notes = step_notes(getattr(exc, "steps", []))
            return report
    return bisect_report(result)


def bisect(store: Store, trees: Trees, *, good: str, bad: str, build: str | None,
           benchmark: AbBenchmark | None, options: AbOptions, retries: int = 2,
           message: Callable[[str], None] = lambda text: None,
           argv: Sequence[str] | None = None, first_parent: bool = False,
           runner: RunnerFactory | None = None,
           harness: HarnessFollow | None = None) -> BisectResult:
    """Find the first commit of ``good..bad`` whose benchmark regressed (module docstring).

    ``first_parent``: search only the bad revision's first-parent chain. ``runner``: what
    executes each step's runs (the core's Runner seam; default processes). ``harness``: follow
    one benchmark of a harness instead of ``benchmark``'s command.

    Raises UserError for bad revisions, BuildFailed (exit 3) when the good or the bad end
    does not build, and StepFailed (exit 3) when a step's benchmark fails.
    """
    graph = CommitGraph(trees.repo, good, bad, first_parent=first_parent)
    good_tree = trees.commit_tree(good, build, "good")
    pair = (harness_step(store, harness, repo=str(trees.repo), argv=argv, message=message)
            if harness is not None else
            ab_step(store, benchmark, repo=str(trees.repo), argv=argv, message=message,
                    runner=runner))
    steps: list[Step] = []

    def measure(commit: str, label: str) -> Step:
        try:
            tree = trees.commit_tree(commit, build, label)
        except BuildFailed as exc:
            message(f"{commit[:12]}: does not build, skipped")
            return Step(commit, "", "skipped", note=str(exc))
        opts, uncertain = options, False
        for attempt in range(retries + 1):
            try:
                decision, session = pair(good_tree, tree, opts, f"bisect {commit[:12]}")
            except StepFailed as exc:
                exc.steps = list(steps)  # what was measured before it, for the report
                raise
            if decision.outcome != UNDECIDED:
                break
            opts = replace(opts, max_time_s=opts.max_time_s * 2, seed=opts.seed + attempt + 1)
            message(f"{commit[:12]}: undecided, measuring again for {opts.max_time_s:g} s")
        else:
            uncertain = True
        return Step(commit, tree.subject, "", decision, session, uncertain)

    bad_step = measure(graph.bad, "bad")
    if bad_step.verdict == "skipped":
        raise BuildFailed(f"--bad {bad} does not build: {bad_step.note}")
    bad_step.verdict = "bad" if bad_step.decision.outcome == SLOWER else "good"
    steps.append(bad_step)
    if bad_step.verdict != "bad":
        return BisectResult(None, bad_step.decision, good_tree, steps,
                            message=f"--bad {bad} is not slower than --good {good} beyond "
                                    f"{100 * bad_step.decision.threshold:g} % "
                                    f"({bad_step.decision.outcome}): nothing to bisect")
    early = _merge_bases(graph, steps, measure, bad_step.decision.ratio, message, good)
    if early is not None:
        return BisectResult(None, early.decision, good_tree, steps, message=early.note)
    _search(graph, steps, measure, bad_step.decision.ratio, message)
    return _result(graph, steps, trees, build, good_tree)


def _merge_bases(graph: CommitGraph, steps: list[Step], measure, bad_ratio: float, message,
                 good: str) -> Step | None:
    """Test the merge bases of good and bad first, as git bisect does when good is not an
    ancestor of bad; the step of a bad one (the search ends there), else None."""
    for base in graph.merge_bases():
        step = measure(base, "merge base")
        if step.verdict == "skipped":
            steps.append(step)
            continue
        step.verdict = "bad" if _is_bad(step.decision, bad_ratio) else "good"
        steps.append(step)
        message(f"{base[:12]}: merge base of --good and --bad, {step.verdict} "
                f"(head/good {step.decision.ratio:.4f}, {step.decision.outcome})")
        if step.verdict == "bad":
            step.note = (f"the merge base {base[:12]} ({step.subject}) of --good and --bad is "
                         f"already slower than --good {good}: the difference is not in --bad's "
                         f"own commits but in those only --good has; bisect from {base[:12]} "
                         f"to --good to find what made --good faster")
            return step
    return None


def _search(graph: CommitGraph, steps: list[Step], measure, bad_ratio: float, message) -> None:
    """Halve the candidates until one is left (or only untestable ones separate the ends)."""
    untestable: set[str] = set()
    while True:
        commit = graph.choose(untestable)
        if commit is None:
            return
        step = measure(commit, f"step {len(steps)}")
        if step.verdict == "skipped":
            untestable.add(commit)
            steps.append(step)
            continue
        d = step.decision
        is_bad = _is_bad(d, bad_ratio)
        step.verdict = "bad" if is_bad else "good"
        steps.append(step)
        left = len(graph.remaining())
        message(f"{commit[:12]}: {step.verdict} (head/good {d.ratio:.4f}, "
                f"{d.outcome}{', uncertain' if step.uncertain else ''}); {left} candidates")
        if is_bad:
            graph.mark_bad(commit)
        else:
            graph.mark_good(commit)


def _result(graph: CommitGraph, steps: list[Step], trees: Trees, build: str | None,
            good_tree: Revision) -> BisectResult:
    """The first bad commit, the merge that brought it in, and the range when commits that do
    not build hide it."""
    first_commit = graph.current_bad
    first = next(s for s in steps if s.commit == first_commit)
    hidden = [c for c in graph.remaining() if c != first_commit]
    tree = trees.commit_tree(first_commit, build, "first bad")
    merge = graph.merged_by(first_commit)
    text = ""
    if hidden:
        text = (f"the first bad commit is one of {len(hidden) + 1} (the others do "
                f"not build): {', '.join(c[:12] for c in hidden + [first_commit])}")
    return BisectResult(tree, first.decision, good_tree, steps,
                        candidates=hidden + [first_commit] if hidden else [], message=text,
                        merged_by=merge, merged_by_subject=subject(trees.repo, merge)
                        if merge else "")
