"""The commits ``bisect`` searches, and how it halves them, as ``git bisect`` does.

Candidates are every commit reachable from the bad revision and not from the good one
(``git rev-list BAD --not GOOD``), merged branches included: a regression made on a development
branch and merged after a release tag on a release branch is among them. Each step tests the
candidate whose ancestors among the candidates come closest to half of them (git bisect's
choice); a bad commit keeps only its own ancestors, a good one removes itself and its
ancestors. When the good revision is not an ancestor of the bad one, git bisect first tests
their merge bases (:meth:`CommitGraph.merge_bases`): a bad merge base means the difference is
not in the bad revision's own commits.

With ``first_parent`` only the first-parent chain of the bad revision is searched (``git
bisect --first-parent``): a merge is one step, and the answer may be a merge commit.

Ancestor sets are bit masks (one bit per candidate, Python integers), so a step over thousands
of candidates costs milliseconds.
"""

from __future__ import annotations

from benchlab.ci.revisions import git, resolve
from benchlab.errors import UserError


class CommitGraph:
    """The candidates of one bisection and what is known about them.

    Parameters
    ----------
    repo : path-like
        The git repository.
    good, bad : str
        Revisions (any form git accepts).
    first_parent : bool
        Search only the bad revision's first-parent chain.
    """

    def __init__(self, repo, good: str, bad: str, *, first_parent: bool = False) -> None:
        self.repo = repo
        self.good = resolve(repo, good)
        self.bad = resolve(repo, bad)
        self.first_parent = first_parent
        if self.good == self.bad:
            raise UserError("--good and --bad are the same commit; give two different revisions")
        args = ["rev-list", "--topo-order", "--reverse", "--parents"]
        if first_parent:
            args.append("--first-parent")
        listed = git(repo, *args, self.bad, "--not", self.good).splitlines()
        if not listed:
            raise UserError(f"--bad {bad} is an ancestor of --good {good}: no commit is in "
                            f"--bad and not in --good; swap --good and --bad")
        self.commits: list[str] = []
        parents: dict[str, list[str]] = {}
        for line in listed:
            words = line.split()
            self.commits.append(words[0])
            parents[words[0]] = words[1:2] if first_parent else words[1:]
        self.index = {c: i for i, c in enumerate(self.commits)}
        # oldest first (topological): a commit's ancestors are known before it
        self.ancestors: list[int] = []
        for i, commit in enumerate(self.commits):
            mask = 1 << i
            for parent in parents[commit]:
                j = self.index.get(parent)
                if j is not None:
                    mask |= self.ancestors[j]
            self.ancestors.append(mask)
        self.alive = self.ancestors[self.index[self.bad]]
        self.current_bad = self.bad

    def merge_bases(self) -> list[str]:
        """The merge bases git bisect tests first: none when ``good`` is an ancestor of
        ``bad``; UserError when the two share no history."""
        bases = git(self.repo, "merge-base", "--all", self.good, self.bad, check=False).split()
        if not bases:
            raise UserError("--good and --bad share no history (no merge base); give revisions "
                            "of one project")
        return [b for b in bases if b != self.good]

    def remaining(self) -> list[str]:
        """The candidates still possible for the first bad commit, oldest first."""
        return [c for i, c in enumerate(self.commits) if self.alive >> i & 1]

    def choose(self, untestable: set[str]) -> str | None:
        """The next commit to test: the one whose ancestors among the candidates are closest
        to half of them (ties: the older); None when no candidate but the bad one is testable."""
        total = self.alive.bit_count()
        best, best_score = None, -1
        for i, commit in enumerate(self.commits):
            if not self.alive >> i & 1 or commit == self.current_bad or commit in untestable:
                continue
            below = (self.ancestors[i] & self.alive).bit_count()
            score = min(below, total - below)
            if score > best_score:
                best, best_score = commit, score
        return best

    def mark_bad(self, commit: str) -> None:
        """``commit`` is bad: the first bad commit is it or one of its ancestors."""
        self.alive &= self.ancestors[self.index[commit]]
        self.current_bad = commit

    def mark_good(self, commit: str) -> None:
        """``commit`` is good: neither it nor any of its ancestors is the first bad commit."""
        self.alive &= ~self.ancestors[self.index[commit]]

    def merged_by(self, commit: str) -> str | None:
        """The merge on the bad revision's first-parent chain that brought ``commit`` in, or
        None when ``commit`` is on that chain itself."""
        chain = git(self.repo, "rev-list", "--first-parent", "--reverse", self.bad,
                    "--not", self.good).split()
        if commit in chain:
            return None
        bit = 1 << self.index[commit]
        for link in chain:
            j = self.index.get(link)
            if j is not None and self.ancestors[j] & bit:
                return link
        return None
