"""Bisect's search through the core's Runner seam: real commits built in real worktrees (make
is fast), each step's runs scripted (tests/core/scripted.py: no process) with a wall time set
by the ``extra`` file of the tree being measured, so the search, the skipping and the retries
are tested without measuring. The CLI end to end is test_bisect.py."""

from __future__ import annotations

import re
import shlex
import zlib
from pathlib import Path

import numpy as np

from benchlab.ci.ab import AbBenchmark, AbOptions
from benchlab.ci.bisect import bisect, run_bisect
from benchlab.ci.revisions import Trees
from benchlab.store.db import Store
from tests.ci.conftest import git, make_repo
from tests.core.scripted import ScriptedRunner

OPTIONS = AbOptions(warmup=0, min_pairs=10, look_every=5, max_time_s=30.0, max_pairs=60)


class TreeRunner(ScriptedRunner):
    """Wall time 10 ms times (1 + extra/1000) of the tree in the run's command, with 0.5 %
    noise of its own per run; ``noisy`` commits get a log-scale noise SD of 3 (they stay undecided)."""

    def __init__(self, noisy: tuple[str, ...] = ()):
        super().__init__()
        self.noisy = noisy
        self.trees: list[str] = []

    def __call__(self, plan, execution, scratch):
        self.plan = plan
        return self

    def run(self, planned, worker):
        root = Path(shlex.split(self.plan.benchmarks[planned.benchmark].command)[0]).parent
        self.trees.append(str(root))
        extra = int((root / "extra").read_text())
        noisy = any(c in root.name for c in self.noisy)
        noise = 3.0 if noisy else 0.005
        # seeded by what repeats from run to run (not the temporary path): reproducible
        own = np.random.default_rng(zlib.crc32(f"{extra}/{noisy}/{planned.benchmark}/"
                                               f"{planned.iteration}/{len(self.trees)}".encode()))
        self.wall_ns = lambda b, i, f=1 + extra / 1000: int(1e7 * f * np.exp(
            noise * own.normal()))
        return super().run(planned, worker)


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", [0, 0])
    good_work = (repo / "work.c").read_text()
    (repo / "work.c").write_text("not C at all\n")
    git(repo, "commit", "-qam", "broken build")
    (repo / "work.c").write_text(good_work)
    git(repo, "commit", "-qam", "fixed build")
    for extra, subject in ((300, "the regression"), (300, "after it"), (300, "later")):
        (repo / "extra").write_text(f"{extra}\n")
        (repo / "touched").write_text(subject)
        git(repo, "add", "extra", "touched")
        git(repo, "commit", "-qm", subject)
    return repo


def _bisect(repo: Path, db: Path, runner, good: str = "HEAD~6", retries: int = 1):
    with Store.open(db) as store, Trees(repo) as trees:
        return bisect(store, trees, good=good, bad="HEAD", build="make",
                      benchmark=AbBenchmark("work", "{root}/work 1"), options=OPTIONS,
                      retries=retries, runner=runner)


def test_bisect_finds_the_first_bad_commit_and_skips_what_does_not_build(tmp_path, cache_env):
    repo = _repo(tmp_path)
    result = _bisect(repo, tmp_path / "b.db", TreeRunner())
    assert result.first_bad.commit == git(repo, "rev-parse", "HEAD~2")
    assert result.first_bad.subject == "the regression"
    assert result.decision.outcome == "slower" and 1.25 < result.decision.ratio < 1.35
    verdicts = {s.commit: s.verdict for s in result.steps}
    assert verdicts[git(repo, "rev-parse", "HEAD")] == "bad"
    assert "skipped" in verdicts.values() or git(repo, "rev-parse", "HEAD~4") not in verdicts
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_undecided_steps_are_measured_again_then_called_uncertain(tmp_path, cache_env):
    repo = _repo(tmp_path)
    first_bad = git(repo, "rev-parse", "HEAD~2")
    runner = TreeRunner(noisy=(first_bad[:16],))
    result = _bisect(repo, tmp_path / "b.db", runner, retries=1)
    step = next(s for s in result.steps if s.commit == first_bad)
    assert step.uncertain and step.decision.outcome == "undecided"
    assert result.first_bad is not None


def test_nothing_to_bisect_when_bad_is_not_slower(tmp_path, cache_env):
    repo = make_repo(tmp_path / "repo", [0, 0])
    result = _bisect(repo, tmp_path / "b.db", TreeRunner(), good="HEAD~1")
    assert result.first_bad is None and "nothing to bisect" in result.message
    assert re.search(r"\(equivalent\)", result.message)


def _merged_repo(tmp_path: Path) -> Path:
    """A release tagged on a release branch (v1), a development branch whose second commit is
    the regression, merged into the release branch afterwards (v2): git rev-list
    --ancestry-path v1..v2 holds only the release branch's commits."""
    repo = make_repo(tmp_path / "repo", [0, 0])
    git(repo, "checkout", "-q", "-b", "release")
    for name in ("v1 notes", "v1.1 notes"):
        (repo / "notes").write_text(name)
        git(repo, "add", "notes")
        git(repo, "commit", "-qm", name)
        if name == "v1 notes":
            git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "main")
    for extra, subject in ((0, "dev one"), (300, "the regression"), (300, "dev three"),
                           (300, "dev four"), (300, "dev five")):
        (repo / "extra").write_text(f"{extra}\n")
        (repo / "touched").write_text(subject)
        git(repo, "add", "extra", "touched")
        git(repo, "commit", "-qm", subject)
    git(repo, "checkout", "-q", "release")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge development into release", "main")
    git(repo, "tag", "v2")
    return repo


def test_bisect_enters_a_branch_merged_after_the_good_tag(tmp_path, cache_env):
    repo = _merged_repo(tmp_path)
    result = _bisect_revs(repo, tmp_path / "b.db", "v1", "v2")
    assert result.first_bad.subject == "the regression"
    assert result.first_bad.commit == git(repo, "rev-parse", "main~3")
    assert result.merged_by == git(repo, "rev-parse", "v2")
    assert result.merged_by_subject == "Merge development into release"
    # the old search (ancestry path) had only the release branch's two commits to offer
    assert git(repo, "rev-list", "--ancestry-path", "v1..v2").split() == \
        [git(repo, "rev-parse", "v2"), git(repo, "rev-parse", "v2^1")]
    # first parent: the merge is one step, and it is the answer
    result = _bisect_revs(repo, tmp_path / "c.db", "v1", "v2", first_parent=True)
    assert result.first_bad.commit == git(repo, "rev-parse", "v2")
    assert result.merged_by is None


def test_bisect_tests_the_merge_base_first_when_good_is_not_an_ancestor(tmp_path, cache_env):
    repo = _merged_repo(tmp_path)
    # good on the release branch, bad on the development branch: their merge base is main's
    # second commit, measured before the search
    result = _bisect_revs(repo, tmp_path / "b.db", "v1", "main")
    base = git(repo, "merge-base", "v1", "main")
    assert result.steps[1].commit == base and result.steps[1].verdict == "good"
    assert result.first_bad.subject == "the regression" and result.merged_by is None
    # a slow merge base: the difference is not in bad's own commits
    repo = make_repo(tmp_path / "slow", [300, 300])
    git(repo, "checkout", "-q", "-b", "release")
    (repo / "extra").write_text("0\n")
    git(repo, "commit", "-qam", "faster release")
    git(repo, "checkout", "-q", "main")
    (repo / "touched").write_text("dev")
    git(repo, "add", "touched")
    git(repo, "commit", "-qm", "dev")
    slow = _bisect_revs(repo, tmp_path / "c.db", "release", "main")
    assert slow.first_bad is None and "merge base" in slow.message
    assert "already slower than --good" in slow.message

def _bisect_revs(repo: Path, db: Path, good: str, bad: str, first_parent: bool = False):
    with Store.open(db) as store, Trees(repo) as trees:
        return bisect(store, trees, good=good, bad=bad, build="make",
                      benchmark=AbBenchmark("work", "{root}/work 1"), options=OPTIONS,
                      retries=0, runner=TreeRunner(), first_parent=first_parent)


class FailingTreeRunner(TreeRunner):
    """TreeRunner whose runs fail (exit status 3) in a tree holding the file ``fails``."""

    def run(self, planned, worker):
        root = Path(shlex.split(self.plan.benchmarks[planned.benchmark].command)[0]).parent
        self.fail = lambda b, i: 3 if (root / "fails").exists() else None
        return super().run(planned, worker)


def test_a_step_whose_benchmark_fails_ends_the_search_with_its_report(tmp_path, cache_env):
    """The step's failure is its paired job's failure report (exit 3, naming the commit), with
    the steps measured before it; no worktree is left."""
    repo = make_repo(tmp_path / "repo", [0, 0])
    (repo / "fails").write_text("")
    git(repo, "add", "fails")
    git(repo, "commit", "-qm", "the benchmark fails here")
    failing = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "fails")
    (repo / "extra").write_text("300\n")
    git(repo, "commit", "-qam", "fixed, and slower")
    with Store.open(tmp_path / "b.db") as store:
        report = run_bisect(store, repo, good="HEAD~2", bad="HEAD", build="make",
                            benchmark=AbBenchmark("work", "{root}/work 1"), options=OPTIONS,
                            retries=0, runner=FailingTreeRunner())
        failed = {s["name"]: s["status"] for s in store.sessions()}
    assert report.kind == "bisect" and report.exit_status == 3 and report.verdict == "failed"
    assert report.failure.startswith(f"the benchmark failed on {failing[:12]}: benchmark "
                                     f"work@head exited with code 3")
    assert failed[f"bisect {failing[:12]}"] == "failed"
    assert report.notes[0].startswith(f"{git(repo, 'rev-parse', 'HEAD')[:12]} bad: head/good")
    assert len(git(repo, "worktree", "list").splitlines()) == 1
