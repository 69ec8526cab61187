"""Git revisions as build trees: resolve a revision, check it out in its own worktree, build it.

``benchlab ab`` and ``benchlab bisect`` measure programs built from two (or more) commits of one
repository side by side. Each revision gets a tree of its own, never the user's work tree:

- a **commit** is checked out with ``git worktree add --detach`` into the user's cache
  (``builds/<repository key>/<commit>-<build key>`` in :func:`benchlab.paths.user_cache_dir`:
  ``$BENCHLAB_CACHE``, else ``$XDG_CACHE_HOME/benchlab``, else ``~/.cache/benchlab``), built
  there with the build command, and detached from git once built (its ``.git`` file removed,
  ``git worktree prune``), so the repository lists no worktree of ours and the built tree is
  reused by the next job that asks for the same commit and build command (the cache);
- the **work tree** (``--head`` left out: the commit checked out plus uncommitted changes and
  untracked files) is copied into a temporary worktree, built, and removed at exit: it has no
  commit to be cached by.

A build that is being made holds an exclusive ``flock`` on ``<tree>.lock``; a tree without the
``.benchlab-build.json`` marker whose lock is free is what a killed benchlab left, and
:func:`sweep_incomplete` removes it (the next start calls it). The build command runs in a
process group of its own, recorded while it runs in ``<tree>.build.json`` (its group id and
start time, and the benchlab that owns it): a benchlab killed with ``kill -9`` cannot kill its
build, so the next start's sweep kills the group of any record whose owner is gone, when the
group's leader is still that process (same start time) or, the leader gone, its members
started after it. :class:`Trees` removes its
temporary trees on every way out (return, exception, Ctrl-C, and SIGTERM, which the core's
``interruptible`` turns into Ctrl-C); after a ``kill -9`` its watchdog
(:mod:`benchlab.ci.watchdog`) kills the build and removes the trees at once.

Why ``subprocess`` here, in the core: git and the user's build command are programs the job
needs before anything is measured; they are not measured (the measured spawn path is
``benchlab.measure``), and their output goes to a log stored with the session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchlab.ci.exits import EXIT_FAILED
from benchlab.ci.worktrees import (  # noqa: F401 (git, cache_dir: this module's API too)
    MARKER,
    build_record,
    cache_dir,
    git,
    lock_file,
    remove_tree,
    sweep_incomplete,
)
from benchlab.errors import UserError
from benchlab.store.owner import process_start
from benchlab.units import format_duration

#: Characters of a build log kept in the session (the tail: where compilers print the error).
LOG_KEEP = 20_000


class BuildFailed(UserError):
    """A revision's build command failed (exit status 3, as a failing benchmark)."""

    exit_code = EXIT_FAILED


def repo_root(path: str | os.PathLike | None) -> Path:
    """The top directory of the git work tree holding ``path`` (default: cwd)."""
    where = Path(path or ".").resolve()
    if not where.is_dir():
        raise UserError(f"--repo {where} is not a directory; give a git repository")
    if shutil.which("git") is None:
        raise UserError("git is not installed; install git to measure revisions")
    proc = subprocess.run(["git", "-C", str(where), "rev-parse", "--show-toplevel"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"{where} is not in a git repository; give --repo PATH of one")
    return Path(proc.stdout.strip())


def resolve(repo: Path, rev: str) -> str:
    """The full commit id of ``rev`` (any git revision syntax); UserError when unknown."""
    if not rev or rev.startswith("-"):
        raise UserError(f"revision {rev!r} is not a revision; give a commit, branch or tag")
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet",
                           f"{rev}^{{commit}}"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"unknown revision {rev!r} in {repo}; give a commit, branch or tag "
                        f"(git log --oneline shows them)")
    return proc.stdout.strip()


def subject(repo: Path, commit: str) -> str:
    """The first line of ``commit``'s message."""
    return git(repo, "log", "-1", "--format=%s", commit)


def default_base(repo: Path) -> str:
    """The merge-base of HEAD with the default branch: origin/HEAD, else main, else master."""
    for branch in ("origin/HEAD", "main", "master"):
        if git(repo, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}", check=False):
            base = git(repo, "merge-base", "HEAD", branch, check=False)
            if base:
                return base
    raise UserError(f"no default branch (origin/HEAD, main or master) in {repo} to take the "
                    f"merge-base with; give --base REV")


def is_dirty(repo: Path) -> bool:
    """True when the work tree has uncommitted changes or untracked (not ignored) files."""
    return bool(git(repo, "status", "--porcelain", "--untracked-files=normal"))


@dataclass
class Revision:
    """One revision ready to measure: where its tree is and how it was built.

    ``commit`` is the full id (for the work tree: the commit checked out); ``dirty`` says the
    tree also holds uncommitted changes; ``build_seconds`` is the build's wall time in s (0 for
    a cached tree); ``build_log`` is the tail of the build's output.
    """

    label: str
    requested: str
    commit: str
    subject: str
    dirty: bool
    root: str
    build_command: str | None
    cached: bool = False
    build_seconds: float = 0.0
    build_log: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain data, stored in the session's metadata."""
        return asdict(self)


def _build_key(command: str | None) -> str:
    return hashlib.sha256((command or "").encode()).hexdigest()[:8]


def _run_build(tree: Path, command: str | None, label: str, commit: str,
               timeout_s: float | None = None) -> tuple[float, str]:
    """Run the build command in ``tree``; (seconds, log tail). BuildFailed with the log's tail,
    or when the build runs past ``timeout_s`` (s; None: no limit): its whole process group is
    killed then."""
    if not command:
        return 0.0, ""
    start = time.monotonic()
    # its own process group, so an interrupted job kills the whole build (make's compilers,
    # a script's children), not only the shell
    proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=tree, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    record = build_record(tree)
    try:
        # for the next start's sweep, should this benchlab be killed with -9
        record.write_text(json.dumps({"pgid": proc.pid, "start": process_start(proc.pid),
                                      "owner": os.getpid(),
                                      "owner_start": process_start(os.getpid())}))
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise BuildFailed(f"the build of {label} ({commit[:12]}) ran past --build-timeout "
                          f"{format_duration(timeout_s * 1e9)} and was killed with its process "
                          f"group; make the build faster or raise --build-timeout") from None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        record.unlink(missing_ok=True)
    seconds = time.monotonic() - start
    log = output.decode(errors="replace")[-LOG_KEEP:]
    if proc.returncode != 0:
        last = (log.strip().splitlines() or [""])[-1][:200]
        raise BuildFailed(f"the build of {label} ({commit[:12]}) failed with exit code "
                          f"{proc.returncode} ({last}); fix the build or the --build command")
    return seconds, log


@dataclass
class Trees:
    """The trees of one job; a context manager that removes its temporary trees on exit."""

    repo: Path
    temporary: list[Path] = field(default_factory=list)
    #: a build running longer than this (s) is killed and fails (None: no limit)
    build_timeout_s: float | None = None
    #: cleans up at once should this process be killed with -9 (:mod:`benchlab.ci.watchdog`)
    watchdog: Any = field(default=None, init=False, repr=False)

    def __enter__(self) -> "Trees":
        from benchlab.ci.watchdog import Watchdog

        sweep_incomplete(self.repo)
        self.watchdog = Watchdog(self.repo)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Remove every temporary tree (the cached builds stay), then stop the watchdog."""
        while self.temporary:
            remove_tree(self.repo, self.temporary.pop())
        if self.watchdog is not None:
            self.watchdog.stop()
            self.watchdog = None

    def commit_tree(self, rev: str, build: str | None, label: str) -> Revision:
        """The built tree of commit ``rev`` (from the cache, or checked out and built now).

        Raises UserError for an unknown revision and BuildFailed (exit 3) for a failing build;
        a failed build leaves no tree behind.
        """
        commit = resolve(self.repo, rev)
        tree = cache_dir(self.repo) / f"{commit[:16]}-{_build_key(build)}"
        info = dict(label=label, requested=rev, commit=commit,
                    subject=subject(self.repo, commit), dirty=False, root=str(tree),
                    build_command=build)
        lock = lock_file(tree.with_name(tree.name + ".lock"))
        try:
            marker = tree / MARKER
            if marker.exists():
                stored = json.loads(marker.read_text())
                return Revision(**info, cached=True, build_log=stored.get("build_log", ""))
            if tree.exists():
                remove_tree(self.repo, tree)  # an unfinished build of a killed benchlab
            try:
                git(self.repo, "worktree", "add", "--detach", "--force", str(tree), commit)
                seconds, log = _run_build(tree, build, label, commit, self.build_timeout_s)
                (tree / ".git").unlink(missing_ok=True)  # detach: the repo lists no worktree
                git(self.repo, "worktree", "prune", check=False)
                marker.write_text(json.dumps({"commit": commit, "build_command": build,
                                              "build_seconds": seconds, "build_log": log}))
            except BaseException:
                remove_tree(self.repo, tree)
                raise
            return Revision(**info, build_seconds=seconds, build_log=log)
        finally:
            lock.close()

    def work_tree(self, build: str | None, label: str) -> Revision:
        """A temporary copy of the work tree (HEAD + uncommitted changes + untracked files),
        built; removed when the job ends, never cached."""
        commit = resolve(self.repo, "HEAD")
        root = cache_dir(self.repo)
        root.mkdir(parents=True, exist_ok=True)
        tree = Path(tempfile.mkdtemp(prefix=f"worktree-p{os.getpid()}-", dir=root))
        self.temporary.append(tree)
        tree.rmdir()
        git(self.repo, "worktree", "add", "--detach", "--force", str(tree), commit)
        dirty = is_dirty(self.repo)
        if dirty:
            diff = subprocess.run(["git", "-C", str(self.repo), "diff", "--binary", "HEAD"],
                                  capture_output=True, stdin=subprocess.DEVNULL).stdout
            if diff:
                proc = subprocess.run(["git", "-C", str(tree), "apply", "--whitespace=nowarn"],
                                      input=diff, capture_output=True)
                if proc.returncode != 0:
                    raise UserError(f"cannot copy the uncommitted changes of {self.repo} "
                                    f"({proc.stderr.decode(errors='replace').strip()[:150]}); "
                                    f"commit them and give --head REV")
            untracked = git(self.repo, "ls-files", "--others", "--exclude-standard", "-z")
            for name in filter(None, untracked.split("\0")):
                src, dst = self.repo / name, tree / name
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.is_file():
                    shutil.copy2(src, dst)
        seconds, log = _run_build(tree, build, label, commit, self.build_timeout_s)
        return Revision(label=label, requested="(work tree)", commit=commit,
                        subject=subject(self.repo, commit), dirty=dirty, root=str(tree),
                        build_command=build, build_seconds=seconds, build_log=log)
