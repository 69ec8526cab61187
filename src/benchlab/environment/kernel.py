"""Readers for kernel settings that move timings: command line isolation, ASLR, THP, clocksource,
perf_event_paranoid, NUMA nodes and the cgroup layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchlab.environment._read import bracketed_choice, is_unknown, read_int, read_text, unknown

SYS_CPU = Path("/sys/devices/system/cpu")


def kernel_cmdline_params() -> dict[str, str | None] | dict[str, str]:
    """isolcpus, nohz_full, rcu_nocbs from /proc/cmdline (``None`` = not set), or unknown.

    Only the kernel's own arguments count: whatever follows ``--`` is passed to init.
    """
    text = read_text("/proc/cmdline")
    if is_unknown(text):
        return text
    kernel_part = text.split(" -- ", 1)[0]
    found: dict[str, str | None] = {"isolcpus": None, "nohz_full": None, "rcu_nocbs": None}
    for token in kernel_part.split():
        key, _, value = token.partition("=")
        if key in found:
            found[key] = value
    return found


def aslr_setting() -> int | dict[str, str]:
    """/proc/sys/kernel/randomize_va_space: 0 off, 1 partial (stack, mmap), 2 full (also brk)."""
    return read_int("/proc/sys/kernel/randomize_va_space")


def thp_setting() -> dict[str, Any]:
    """Transparent huge pages: the active choice of ``enabled`` and ``defrag``."""
    base = Path("/sys/kernel/mm/transparent_hugepage")
    result = {}
    for name in ("enabled", "defrag"):
        text = read_text(base / name)
        result[name] = text if is_unknown(text) else bracketed_choice(text)
    return result


def kernel_settings_section() -> dict[str, Any]:
    params = kernel_cmdline_params()
    if is_unknown(params):
        cmdline: Any = {key: params for key in ("isolcpus", "nohz_full", "rcu_nocbs")}
    else:
        cmdline = params
    isolated = read_text(SYS_CPU / "isolated")
    nohz = read_text(SYS_CPU / "nohz_full")
    clocksource_dir = Path("/sys/devices/system/clocksource/clocksource0")
    available = read_text(clocksource_dir / "available_clocksource")
    return {
        "aslr": aslr_setting(),
        "transparent_hugepages": thp_setting(),
        "perf_event_paranoid": read_int("/proc/sys/kernel/perf_event_paranoid"),
        "cmdline": cmdline,
        # sysfs views of the same: what the kernel actually applied ("" = none).
        "isolated_cpus": isolated,
        "nohz_full_cpus": nohz if not is_unknown(nohz) else unknown(
            f"{SYS_CPU / 'nohz_full'} absent (kernel built without CONFIG_NO_HZ_FULL)"),
        "clocksource": read_text(clocksource_dir / "current_clocksource"),
        "available_clocksources": available if is_unknown(available) else available.split(),
    }


def numa_section() -> dict[str, Any]:
    base = Path("/sys/devices/system/node")
    if not base.is_dir():
        reason = f"{base} does not exist (kernel built without NUMA)"
        return {"nodes": unknown(reason), "node_cpus": unknown(reason)}
    nodes = sorted((p for p in base.glob("node[0-9]*")), key=lambda p: int(p.name[4:]))
    return {"nodes": len(nodes),
            "node_cpus": {p.name: read_text(p / "cpulist") for p in nodes}}


def cgroup_state() -> dict[str, Any]:
    """cgroup layout from /proc/mounts: version v1, v2 or hybrid, and where each is mounted.

    hybrid = v1 controller hierarchies plus a cgroup2 mount (usually /sys/fs/cgroup/unified);
    ``v2_controllers`` lists what the cgroup2 root offers (empty in hybrid setups where all
    controllers are bound to v1).
    """
    mounts = read_text("/proc/mounts")
    if is_unknown(mounts):
        return {"version": mounts, "v1_controllers": mounts, "v2_mount": mounts,
                "v2_controllers": mounts}
    v1: list[str] = []
    v2_mounts: list[str] = []
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        mountpoint, fstype, options = parts[1], parts[2], parts[3]
        if fstype == "cgroup":
            known = {"rw", "ro", "relatime", "noatime", "nosuid", "nodev", "noexec", "clone_children"}
            for option in options.split(","):
                if option not in known and not option.startswith("release_agent"):
                    v1.append(option)
        elif fstype == "cgroup2":
            v2_mounts.append(mountpoint)
    if v1 and v2_mounts:
        version = "hybrid"
    elif v1:
        version = "v1"
    elif v2_mounts:
        version = "v2"
    else:
        version = unknown("no cgroup or cgroup2 filesystem in /proc/mounts")
    v2_controllers: Any
    if v2_mounts:
        text = read_text(Path(v2_mounts[0]) / "cgroup.controllers")
        v2_controllers = text if is_unknown(text) else text.split()
        v2_mount: Any = v2_mounts[0]
    else:
        v2_mount = None
        v2_controllers = None
    return {"version": version, "v1_controllers": sorted(set(v1)), "v2_mount": v2_mount,
            "v2_controllers": v2_controllers}
