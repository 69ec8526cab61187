"""The git worktrees of ``ab`` and ``bisect`` in the user's build cache, and the sweep of what
a killed job left there (its build still running, unbuilt or temporary trees, their
registration in the repository); see :mod:`benchlab.ci.revisions` for how trees are made and
:mod:`benchlab.ci.watchdog` for the sweep run the moment a job is killed.

Why ``subprocess`` here: git is a program the job needs before anything is measured.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

from benchlab.errors import UserError
from benchlab.paths import user_cache_dir
from benchlab.processes import pid_alive, process_stats
from benchlab.store.owner import process_start

#: The file a finished build leaves in its tree (a tree without it is unfinished).
MARKER = ".benchlab-build.json"


def git(repo: Path | str, *args: str, check: bool = True) -> str:
    """Run git in ``repo``; stdout stripped. UserError (one line) when it fails and ``check``."""
    proc = subprocess.run(["git", "-C", str(repo), *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    if check and proc.returncode != 0:
        err = (proc.stderr.strip().splitlines() or [""])[-1]
        raise UserError(f"git {' '.join(args[:3])} failed in {repo}: {err[:200]}")
    return proc.stdout.strip() if proc.returncode == 0 else ""


def cache_dir(repo: Path) -> Path:
    """This repository's build cache under the user's cache directory."""
    base = user_cache_dir()
    common = Path(git(repo, "rev-parse", "--git-common-dir"))
    common = common if common.is_absolute() else (repo / common)
    key = hashlib.sha256(str(common.resolve()).encode()).hexdigest()[:12]
    return base / "builds" / f"{repo.name}-{key}"


def build_record(tree: Path) -> Path:
    """Where a running build of ``tree`` records its process group (beside the tree)."""
    return tree.with_name(tree.name + ".build.json")


def _ticks(start: str | None) -> int | None:
    """The clock ticks of a :func:`process_start` value (None when absent)."""
    tail = (start or "").rpartition(":")[2]
    return int(tail) if tail.isdigit() else None


def _group_members(pgid: int) -> list[int]:
    """The start times in clock ticks of the processes whose process group is ``pgid``."""
    return [int(fields[19]) for _, fields in process_stats()
            if len(fields) > 19 and fields[2] == str(pgid)]


def kill_orphan_build(record: Path, dead_owner: int | None = None) -> bool:
    """Kill the build process group of ``record`` (a ``<tree>.build.json``) when the benchlab
    that ran it is gone, and remove the record; True when a group was killed. The group is
    ours when its leader is the recorded process (same start time), or, the leader gone, when
    its members started after the leader (Linux does not reuse a pid still naming a group).
    ``dead_owner``: a benchlab known to be gone (the watchdog saw it end; it may still be a
    zombie its parent has not reaped)."""
    try:
        data = json.loads(record.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        record.unlink(missing_ok=True)
        return False
    owner = data.get("owner")
    if isinstance(owner, int) and owner != dead_owner \
            and process_start(owner) == data.get("owner_start"):
        return False  # the benchlab running it is alive
    pgid, start = data.get("pgid"), data.get("start")
    killed = False
    if isinstance(pgid, int) and pgid > 1 and start:
        leader = process_start(pgid)
        born = _ticks(start)
        ours = leader == start if leader is not None else (
            born is not None and any(t >= born for t in _group_members(pgid)))
        if ours:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
                killed = True
    record.unlink(missing_ok=True)
    return killed


def remove_tree(repo: Path, tree: Path) -> None:
    """Remove a tree and its registration (also one left locked by an interrupted add)."""
    shutil.rmtree(tree, ignore_errors=True)
    git(repo, "worktree", "unlock", str(tree), check=False)
    git(repo, "worktree", "prune", check=False)


def lock_file(path: Path, blocking: bool = True):
    """An open file holding an exclusive flock on ``path`` (None when not blocking and taken)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        fh.close()
        return None
    return fh


def sweep_incomplete(repo: Path, dead_owner: int | None = None) -> list[str]:
    """Remove what a killed benchlab left: its builds still running (:func:`kill_orphan_build`),
    unbuilt cache trees whose lock is free, and temporary work-tree copies whose process is
    gone (or is ``dead_owner``, a benchlab known to be gone). Returns the removed paths."""
    removed: list[str] = []
    root = cache_dir(repo)
    if not root.is_dir():
        return removed
    for record in root.glob("*.build.json"):  # builds a benchlab killed with -9 left running
        kill_orphan_build(record, dead_owner)
    for entry in root.iterdir():
        if not entry.is_dir():
            continue
        if entry.name.startswith("worktree-p"):
            pid = entry.name.removeprefix("worktree-p").split("-")[0]
            if pid.isdigit() and (int(pid) == dead_owner or not pid_alive(int(pid))):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(str(entry))
            continue
        if (entry / MARKER).exists():
            continue
        fh = lock_file(entry.with_name(entry.name + ".lock"), blocking=False)
        if fh is None:
            continue  # being built by a live benchlab
        try:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(str(entry))
        finally:
            fh.close()
    # a benchlab killed inside 'git worktree add' leaves the worktree locked ("initializing"),
    # which prune skips: unlock ours whose directory is gone
    for line in git(repo, "worktree", "list", "--porcelain", check=False).splitlines():
        path = Path(line.removeprefix("worktree ")) if line.startswith("worktree ") else None
        if path is not None and root in path.parents and not path.exists():
            git(repo, "worktree", "unlock", str(path), check=False)
    git(repo, "worktree", "prune", check=False)
    return removed
