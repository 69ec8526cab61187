"""The stale-cgroup sweep: leaves of dead benchlab processes (killed with SIGKILL) are emptied
(SIGKILL until no task is left) and removed at the next start.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

from benchlab.control.cgroups import fs
from benchlab.control.cgroups.fs import DEFAULT_PARENT, LEAF_NAME, os_reason, procs
from benchlab.control.cgroups.layout import CgroupLayout, detect_layout
from benchlab.processes import pid_alive


def _debug(message: str) -> None:
    import logging  # here only: logging costs every run ~3 ms to import

    logging.getLogger(__name__).debug("%s", message)


def list_benchlab_cgroups(layout: CgroupLayout | None = None, parent_name: str = DEFAULT_PARENT) -> list[str]:
    """Every benchlab leaf cgroup directory in every hierarchy (live or stale), sorted."""
    layout = layout if layout is not None else detect_layout()
    found: list[str] = []
    for mount in layout.mounts():
        # scandir, not Path.iterdir + is_dir: a hierarchy's benchlab directory also holds its
        # control files, and every session start lists all of them (~1 stat per entry saved)
        try:
            with os.scandir(os.path.join(mount.path, parent_name)) as entries:
                found.extend(entry.path for entry in entries
                             if LEAF_NAME.match(entry.name) and entry.is_dir())
        except OSError:
            continue
    return sorted(found)


def sweep_stale(layout: CgroupLayout | None = None, parent_name: str = DEFAULT_PARENT, *,
                observer: Callable[[str], None] | None = None,
                kill_timeout_s: float = 5.0) -> list[str]:
    """Kill what is left in leaf cgroups of dead benchlab processes, and remove the leaves.

    A leaf is stale when the pid in its name is not a running process (its benchlab was killed
    with SIGKILL). Tasks still inside -- benchmark descendants that outlived their run -- are
    SIGKILLed until the leaf is empty (at most ``kill_timeout_s`` s per leaf), then it is
    removed. A reused pid makes a stale leaf survive until that process exits: harmless. Run
    at start-up, before creating new run cgroups.

    Args:
        observer: called with one line per stale leaf handled (processes killed, leaf removed
            or why not); nothing is printed here, so the caller decides (``-q`` passes None).
        kill_timeout_s: longest wait for one leaf to empty, s.

    Returns the removed paths.
    """
    layout = layout if layout is not None else detect_layout()
    tell = observer if observer is not None else _debug
    removed: list[str] = []
    for path_text in list_benchlab_cgroups(layout, parent_name):
        path = Path(path_text)
        owner = int(LEAF_NAME.match(path.name).group("pid"))
        if pid_alive(owner):
            continue
        killed = fs.kill_members(path, kill_timeout_s, poll_s=0.01)
        if killed:
            tell(f"killed {len(killed)} process(es) left in stale cgroup {path} by dead "
                 f"benchlab pid {owner}: {' '.join(map(str, sorted(killed)))}")
        if procs(path):
            tell(f"stale cgroup {path} still holds processes {procs(path)} after SIGKILL; "
                 "not removed")
            continue
        for attempt in range(50):
            try:
                fs.remove_dir(path)
                removed.append(str(path))
                tell(f"removed stale cgroup {path}")
                break
            except OSError as err:
                # Killed tasks leave the cgroup a moment after they die (EBUSY meanwhile).
                if err.errno != errno.EBUSY or attempt == 49:
                    tell(f"could not remove stale cgroup {path}: {os_reason(err)}")
                    break
                time.sleep(0.02)
    for mount in layout.mounts():
        if (mount.path / parent_name).is_dir():
            fs.remove_empty_parent(mount.path / parent_name)
    return removed
