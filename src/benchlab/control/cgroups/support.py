"""What cgroup control this machine offers to this process, as plain data.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from benchlab.control.cgroups.fs import DEFAULT_PARENT, LEAF_NAME
from benchlab.control.cgroups.layout import CgroupLayout, CgroupMount, detect_layout
from benchlab.control.cgroups.sweep import list_benchlab_cgroups
from benchlab.processes import pid_alive


def _writable(mount: CgroupMount) -> bool:
    return not mount.read_only and os.access(mount.path, os.W_OK)


def cgroup_support(layout: CgroupLayout | None = None, parent_name: str = DEFAULT_PARENT) -> dict:
    """What cgroup control this machine offers to this process, as plain data.

    Keys: ``version`` (v1/v2/hybrid/none); ``is_root``; ``controllers`` (controller ->
    {version, path, writable}); ``unified`` (cgroup2 path and its controllers, or None);
    ``limits`` (which of cpu_quota, cpu_weight, cpuset, memory_limit can be applied);
    ``accounting`` (cpu_time, throttling, memory_peak availability); ``writable`` (a run
    cgroup can be created); ``reason`` (why not, or None); ``stale_cgroups`` (leaves left by
    dead processes, removed by :func:`sweep_stale`).
    """
    layout = layout if layout is not None else detect_layout()
    controllers: dict[str, dict] = {}
    for controller in ("cpu", "cpuacct", "cpuset", "memory"):
        mount = layout.mount_for(controller)
        if mount is not None:
            controllers[controller] = {"version": mount.version, "path": str(mount.path), "writable": _writable(mount)}
    usable = {name for name, info in controllers.items() if info["writable"]}
    reason = None
    if layout.version == "none":
        reason = "no cgroup filesystem is mounted"
    elif not controllers:
        reason = "no cpu, cpuacct, cpuset or memory controller is available"
    elif not usable:
        first = next(iter(controllers.values()))
        mount_path = first["path"]
        ro = any(m.read_only for m in layout.mounts() if str(m.path) == mount_path)
        reason = f"cannot create cgroup under {mount_path}: {'read-only file system' if ro else 'permission denied'}"
    memory = layout.mount_for("memory")
    kernel = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    memory_peak = memory is not None and (memory.version == "v1" or kernel >= (5, 19))
    stale = [
        path for path in list_benchlab_cgroups(layout, parent_name)
        if not pid_alive(int(LEAF_NAME.match(Path(path).name).group("pid")))
    ]
    return {
        "version": layout.version,
        "is_root": os.geteuid() == 0,
        "controllers": controllers,
        "unified": (
            {"path": str(layout.unified.path), "controllers": sorted(layout.unified.controllers)}
            if layout.unified is not None else None
        ),
        "limits": {
            "cpu_quota": "cpu" in usable,
            "cpu_weight": "cpu" in usable,
            "cpuset": "cpuset" in usable,
            "memory_limit": "memory" in usable,
        },
        "accounting": {
            "cpu_time": "cpuacct" in usable,
            "throttling": "cpu" in usable,
            "memory_peak": memory_peak and "memory" in usable,
        },
        "writable": bool(usable),
        "reason": reason,
        "stale_cgroups": stale,
    }
