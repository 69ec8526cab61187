"""``benchlab bisect``: the first commit between a good and a bad revision that regressed.

The commits of ``good..bad`` (``git rev-list --ancestry-path``, oldest first) are searched by
halving, as ``git bisect`` does, but each step is a measurement: the candidate commit's build
is measured beside the known-good build as interleaved pairs with the gate's sequential rule
(:func:`benchlab.ci.ab.run_ab`, one stored session per step), and

- **slower** (a regression beyond the threshold) makes it the new bad end;
- **equivalent** or **faster** makes it the new good end;
- **undecided** measures it again with twice the budget (at most ``retries`` times); still
  undecided, the candidate goes to the side its ratio is closer to (the bad end's ratio or 1),
  and the result says the step was uncertain;
- a commit that does not **build** is skipped (``git bisect skip``): the next untried commit
  nearest the middle is measured instead. If only skipped commits separate the ends, the
  answer is the range.

The bad end is measured first: if it is not slower than the good end beyond the threshold,
there is nothing to look for and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from benchlab.ci.ab import AbBenchmark, AbOptions, run_ab
from benchlab.ci.gate import FASTER, SLOWER, UNDECIDED, GateDecision
from benchlab.ci.revisions import BuildFailed, Revision, Trees, git, resolve
from benchlab.core.executor import RunnerFactory
from benchlab.errors import UserError
from benchlab.store.db import Store


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


def commits_between(trees: Trees, good: str, bad: str) -> list[str]:
    """Commits after ``good`` up to ``bad`` on the ancestry path, oldest first."""
    good_c, bad_c = resolve(trees.repo, good), resolve(trees.repo, bad)
    if good_c == bad_c:
        raise UserError("--good and --bad are the same commit; give two different revisions")
    listed = git(trees.repo, "rev-list", "--reverse", "--ancestry-path", f"{good_c}..{bad_c}")
    commits = listed.split()
    if not commits or commits[-1] != bad_c:
        raise UserError(f"--good {good} is not an ancestor of --bad {bad}; give an older good")
    return commits


def _middle_order(lo: int, hi: int, tried: set[int]) -> list[int]:
    """Untried indices strictly between lo and hi, nearest the middle first."""
    mid = (lo + hi) // 2
    return sorted((i for i in range(lo + 1, hi) if i not in tried),
                  key=lambda i: (abs(i - mid), i))



def _is_bad(decision, bad_ratio: float) -> bool:
    """A step is bad when its head is decided slower than the good end, good when faster or
    equivalent; undecided after the retries, the nearer side (the step says it is uncertain)."""
    if decision.outcome == SLOWER:
        return True
    if decision.outcome in (FASTER, "equivalent"):
        return False
    return abs(decision.ratio - bad_ratio) < abs(decision.ratio - 1.0)


def bisect(store: Store, trees: Trees, *, good: str, bad: str, build: str | None,
           benchmark: AbBenchmark, options: AbOptions, retries: int = 2,
           message: Callable[[str], None] = lambda text: None,
           argv: Sequence[str] | None = None,
           runner: RunnerFactory | None = None) -> BisectResult:
    """Find the first commit of ``good..bad`` whose benchmark regressed (module docstring).

    ``runner``: what executes each step's runs (the core's Runner seam; default processes).

    Raises UserError for bad revisions and BuildFailed (exit 3) when the good or the bad end
    does not build.
    """
    commits = commits_between(trees, good, bad)
    good_tree = trees.commit_tree(good, build, "good")
    metric = benchmark.metrics[0]
    steps: list[Step] = []

    def measure(commit: str, label: str) -> Step:
        try:
            tree = trees.commit_tree(commit, build, label)
        except BuildFailed as exc:
            message(f"{commit[:12]}: does not build, skipped")
            return Step(commit, "", "skipped", note=str(exc))
        opts, uncertain = options, False
        for attempt in range(retries + 1):
            result = run_ab(store, [benchmark], good_tree, tree, opts, repo=str(trees.repo),
                            argv=argv, name=f"bisect {commit[:12]}", message=message,
                            runner=runner)
            if result.failure:
                raise UserError(f"the benchmark failed on {commit[:12]}: {result.failure}")
            decision = next(d for d in result.decisions if d.metric == metric)
            if decision.outcome != UNDECIDED:
                break
            opts = replace(opts, max_time_s=opts.max_time_s * 2, seed=opts.seed + attempt + 1)
            message(f"{commit[:12]}: undecided, measuring again for {opts.max_time_s:g} s")
        else:
            uncertain = True
        return Step(commit, tree.subject, "", decision, result.session.uid, uncertain)

    bad_step = measure(commits[-1], "bad")
    if bad_step.verdict == "skipped":
        raise BuildFailed(f"--bad {bad} does not build: {bad_step.note}")
    bad_step.verdict = "bad" if bad_step.decision.outcome == SLOWER else "good"
    steps.append(bad_step)
    if bad_step.verdict != "bad":
        return BisectResult(None, bad_step.decision, good_tree, steps,
                            message=f"--bad {bad} is not slower than --good {good} beyond "
                                    f"{100 * bad_step.decision.threshold:g} % "
                                    f"({bad_step.decision.outcome}): nothing to bisect")
    bad_ratio = bad_step.decision.ratio
    lo, hi = -1, len(commits) - 1  # indices: lo good (-1: the good end), hi bad
    tried = {hi}
    while True:
        order = _middle_order(lo, hi, tried)
        if not order:
            break
        index = order[0]
        tried.add(index)
        step = measure(commits[index], f"step {len(steps)}")
        if step.verdict == "skipped":
            steps.append(step)
            continue
        d = step.decision
        is_bad = _is_bad(d, bad_ratio)
        step.verdict = "bad" if is_bad else "good"
        steps.append(step)
        message(f"{commits[index][:12]}: {step.verdict} (head/good {d.ratio:.4f}, "
                f"{d.outcome}{', uncertain' if step.uncertain else ''})")
        if is_bad:
            hi = index
        else:
            lo = index
    first = next(s for s in steps if s.commit == commits[hi])
    skipped_between = [commits[i] for i in range(lo + 1, hi)]
    tree = trees.commit_tree(commits[hi], build, "first bad")
    text = ""
    if skipped_between:
        text = (f"the first bad commit is one of {len(skipped_between) + 1} (the others do "
                f"not build): {', '.join(c[:12] for c in skipped_between + [commits[hi]])}")
    return BisectResult(tree, first.decision, good_tree, steps,
                        candidates=skipped_between + [commits[hi]] if skipped_between else [],
                        message=text)
