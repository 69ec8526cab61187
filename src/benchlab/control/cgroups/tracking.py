"""Tracking cgroups: a leaf a spawner lives in, so everything it starts can be found later.

The exec helper kills every orphaned descendant of a run as their subreaper, and a run in a
run cgroup is emptied when the cgroup is removed. One case escapes both: the harness *and* the
helper killed with SIGKILL at once (an OOM kill, ``kill -9`` of the process group) while a run
left a ``setsid`` descendant behind. It is then re-parented to init, and only its cgroup
membership still says where it came from. So the helper lives, for its whole life, in a leaf
``<hierarchy>/benchlab/track-<pid>-<n>`` of a v1 hierarchy that runs never join (freezer, else
pids): every target and every descendant is born inside. The leaf is named like a run cgroup, so
:func:`~benchlab.control.cgroups.sweep.sweep_stale` at the next start kills what is left in the
leaf of a dead benchlab and removes it. Without such a hierarchy, or without permission, there is
no tracking leaf and nothing changes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from benchlab.control.cgroups import fs
from benchlab.control.cgroups.fs import DEFAULT_PARENT, procs, write
from benchlab.control.cgroups.layout import CgroupLayout, detect_layout
from benchlab.control.cgroups.registry import leaf_counter, live_cgroups, registry_lock

# v1 hierarchies a run cgroup never joins (runs use cpu, cpuacct, cpuset, memory): a process
# can sit in a tracking leaf there and in a run's leaves in the others at the same time.
TRACKING_CONTROLLERS = ("freezer", "pids")
TRACKING_SESSION = "track"


class TrackingCgroup:
    """One tracking leaf; see the module docstring. Created by :func:`track_process`."""

    def __init__(self, path: Path):
        self.path = path
        self.creator_pid = os.getpid()

    @property
    def procs_path(self) -> str:
        """The leaf's ``cgroup.procs`` file."""
        return str(self.path / "cgroup.procs")

    def pids(self) -> list[int]:
        """Processes in the leaf now."""
        return procs(self.path)

    def kill_all(self, timeout_s: float = 2.0) -> int:
        """SIGKILL every process in the leaf (never this one) until it is empty; how many."""
        return len(fs.kill_members(self.path, timeout_s))

    def remove(self) -> list[str]:
        """Kill what is still inside and remove the leaf; the paths that could not be removed."""
        if os.getpid() != self.creator_pid:
            return []  # a forked copy must not remove its parent's leaf
        with registry_lock:
            live_cgroups.pop(id(self), None)
        self.kill_all()
        for _ in range(100):
            try:
                fs.remove_dir(self.path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)  # EBUSY while the killed tasks leave
        else:
            return [str(self.path)]
        fs.remove_empty_parent(self.path.parent)
        return []


def track_process(pid: int, layout: CgroupLayout | None = None,
                  parent_name: str = DEFAULT_PARENT) -> TrackingCgroup | None:
    """Create a tracking leaf and move process ``pid`` into it; None when that is not possible.

    Not possible: no freezer or pids v1 hierarchy, a read-only cgroupfs, no permission (not
    root). The leaf is registered so that it is removed at exit like a run cgroup.
    """
    try:
        layout = layout if layout is not None else detect_layout()
    except OSError:
        return None
    mount = next((layout.v1[c] for c in TRACKING_CONTROLLERS if c in layout.v1), None)
    if mount is None or mount.read_only or not os.access(mount.path, os.W_OK):
        return None
    parent = mount.path / parent_name
    leaf = parent / f"{TRACKING_SESSION}-{os.getpid()}-{next(leaf_counter)}"
    try:
        try:
            fs.make_dir(parent)
        except FileExistsError:
            pass
        fs.make_dir(leaf)
    except OSError:
        return None
    group = TrackingCgroup(leaf)
    with registry_lock:
        live_cgroups[id(group)] = group
    try:
        write(leaf / "cgroup.procs", str(pid))
    except OSError:
        group.remove()
        return None
    return group
