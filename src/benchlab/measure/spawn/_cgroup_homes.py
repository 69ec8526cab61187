"""Where the exec helper goes back to after a run that joined cgroups: this process's own
cgroups (``/proc/self/cgroup``) in the hierarchies (``/proc/self/mountinfo``) of the run's."""

from __future__ import annotations

import os
from collections.abc import Sequence


def home_cgroups(procs_paths: Sequence[str]) -> list[str] | None:
    """cgroup.procs files of this process's own cgroups in the hierarchies of ``procs_paths``.

    The exec helper (a child of this process, in the same cgroups) joins a run's cgroups before
    its clock starts and returns to these after it stops. None when they cannot be worked out;
    the target then joins by itself, inside the measured time, as before.
    """
    try:
        with open("/proc/self/mountinfo") as fh:
            mounts = _cgroup_mounts(fh)
        with open("/proc/self/cgroup") as fh:
            own = [line.rstrip("\n").split(":", 2) for line in fh if line.strip()]
    except OSError:
        return None
    homes = []
    for procs in procs_paths:
        home = _home_of(procs, mounts, own)
        if home is None:
            return None
        homes.append(home)
    return homes


def _cgroup_mounts(mountinfo) -> list[tuple[str, str, set[str], str]]:
    """(mount point, cgroup or cgroup2, mount options, root) of each cgroup file system in the
    lines of ``/proc/self/mountinfo``."""
    mounts = []
    for line in mountinfo:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if rfields and rfields[0] in ("cgroup", "cgroup2"):
            options = set(rfields[2].split(",")) if len(rfields) > 2 else set()
            mounts.append((fields[4], rfields[0], options, fields[3]))
    return mounts


def _home_of(procs: str, mounts: list, own: list[list[str]]) -> str | None:
    """This process's own cgroup.procs file in the hierarchy that holds ``procs``; None when
    it cannot be worked out or does not exist."""
    best = None
    for mount in mounts:
        if procs.startswith(mount[0].rstrip("/") + "/") and (best is None
                                                              or len(mount[0]) > len(best[0])):
            best = mount
    if best is None:
        return None
    mount_point, fstype, options, root = best
    rel = None
    for _hid, controllers, path in own:
        names = set(controllers.split(",")) if controllers else set()
        if (fstype == "cgroup2" and controllers == "") or (
                fstype == "cgroup" and names and names <= options):
            rel = path
            break
    if rel is None:
        return None
    if root != "/" and rel.startswith(root):
        rel = rel[len(root):] or "/"
    home = os.path.join(mount_point, rel.lstrip("/"), "cgroup.procs")
    return home if os.path.exists(home) else None
