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

How the helper gets there: :func:`tracked_spawns` puts the spawning thread itself in the leaf
while it starts the helper, which is then born inside. Moving a process in afterwards
(:func:`track_process`, the fallback) writes its pid to ``cgroup.procs``, and the kernel then
waits for an RCU grace period (7-15 ms, so it took a thread of its own and could hold up the
first run); a thread moving only itself (``0`` into ``tasks``) skips that lock: ~0.02-0.1 ms,
and as much to go back.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from benchlab.control.cgroups import fs
from benchlab.control.cgroups.fs import DEFAULT_PARENT, procs, write
from benchlab.control.cgroups.layout import CgroupLayout, detect_layout
from benchlab.control.cgroups.registry import leaf_counter, live_cgroups, registry_lock
from benchlab.environment import is_unknown, read_text

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


def _tracking_mount(layout: CgroupLayout | None):
    """(the v1 hierarchy tracking leaves go in, its controller), or None when there is none
    this process may write."""
    try:
        layout = layout if layout is not None else detect_layout()
    except OSError:
        return None
    for controller in TRACKING_CONTROLLERS:
        mount = layout.v1.get(controller)
        if mount is not None:
            if mount.read_only or not os.access(mount.path, os.W_OK):
                return None
            return mount, controller
    return None


def _new_leaf(mount_path: Path, parent_name: str) -> TrackingCgroup | None:
    """Make a tracking leaf under ``mount_path`` and register it for removal at exit."""
    parent = mount_path / parent_name
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
    return group


def own_cgroup(mount_path: Path, controller: str, cgroup_text: str,
               mountinfo_text: str) -> Path | None:
    """The calling thread's cgroup directory in the v1 hierarchy mounted at ``mount_path``
    that holds ``controller``, from the texts of ``/proc/thread-self/cgroup`` and
    ``/proc/self/mountinfo`` (a mount of a sub-tree, as a container's, is allowed for); None
    when they do not say or the directory does not exist."""
    rel = None
    for line in cgroup_text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and controller in parts[1].split(","):
            rel = parts[2]
            break
    root = None
    for line in mountinfo_text.splitlines():
        fields = line.split(" - ", 1)[0].split()
        if len(fields) > 4 and fields[4] == str(mount_path):
            root = fields[3]
    if rel is None or root is None:
        return None
    if root != "/":
        if rel != root and not rel.startswith(root.rstrip("/") + "/"):
            return None
        rel = rel[len(root):]
    home = mount_path / rel.lstrip("/")
    return home if os.path.exists(home / "tasks") else None


@contextlib.contextmanager
def tracked_spawns(layout: CgroupLayout | None = None,
                   parent_name: str = DEFAULT_PARENT) -> Iterator[TrackingCgroup | None]:
    """While inside, the calling thread sits in a new tracking leaf: a process it starts is
    born there, and so is everything that process starts. Yields the leaf (registered for
    removal at exit, as :func:`track_process`'s); None when that is not possible (no freezer
    or pids v1 hierarchy, no permission, the thread's own cgroup unknown): the caller then
    moves the process afterwards with :func:`track_process`. The thread goes back to its own
    cgroup on the way out. See the module docstring for why."""
    found = _tracking_mount(layout)
    home = None
    if found is not None:
        try:  # this thread's own, read afresh: it moves
            with open("/proc/thread-self/cgroup") as fh:
                cgroup_text = fh.read()
        except OSError:
            cgroup_text = ""
        mountinfo_text = read_text("/proc/self/mountinfo")  # the layout's reading, at a start
        if not is_unknown(mountinfo_text):
            home = own_cgroup(found[0].path, found[1], cgroup_text, mountinfo_text)
    group = _new_leaf(found[0].path, parent_name) if home is not None else None
    if group is not None:
        try:
            write(group.path / "tasks", "0")
        except OSError:
            group.remove()
            group = None
    try:
        yield group
    finally:
        if group is not None:
            with contextlib.suppress(OSError):
                write(home / "tasks", "0")


def track_process(pid: int, layout: CgroupLayout | None = None,
                  parent_name: str = DEFAULT_PARENT) -> TrackingCgroup | None:
    """Create a tracking leaf and move process ``pid`` into it; None when that is not possible.

    Not possible: no freezer or pids v1 hierarchy, a read-only cgroupfs, no permission (not
    root). The leaf is registered so that it is removed at exit like a run cgroup.
    """
    found = _tracking_mount(layout)
    group = _new_leaf(found[0].path, parent_name) if found is not None else None
    if group is None:
        return None
    try:
        write(group.path / "cgroup.procs", str(pid))
    except OSError:
        group.remove()
        return None
    return group
