"""Accounting: what a run cgroup used (CPU time, throttling, memory peak), read after the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from benchlab.control.cgroups.fs import read_int, read_keyed

# ---------------------------------------------------------------------------------------------
# Accounting


@dataclass(frozen=True)
class CgroupUsage:
    """Resource use of a run cgroup, read after the run.

    Attributes:
        cpu_time_ns: total CPU time of every process that was in the cgroup, ns
            (v1 ``cpuacct.usage``; v2 ``cpu.stat`` usage_usec * 1000).
        cpu_user_ns, cpu_system_ns: the user/kernel split, ns. The kernel derives it from
            tick sampling, so their sum only roughly (within ~10-20 %) equals cpu_time_ns.
        nr_periods: CFS periods with runnable tasks (only counted while a quota is set).
        nr_throttled: periods in which the cgroup hit its quota and was stopped.
        throttled_time_ns: total time the cgroup was stopped by its quota, ns.
        memory_peak_bytes: peak memory charged to the cgroup (RSS and page cache), bytes
            (v1 ``memory.max_usage_in_bytes``; v2 ``memory.peak``).
        oom_kills: processes killed by the OOM killer for this cgroup's limit.
        unknown: field name -> why it is None (controller missing, file absent on this kernel).
    """

    cpu_time_ns: int | None = None
    cpu_user_ns: int | None = None
    cpu_system_ns: int | None = None
    nr_periods: int | None = None
    nr_throttled: int | None = None
    throttled_time_ns: int | None = None
    memory_peak_bytes: int | None = None
    oom_kills: int | None = None
    unknown: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain data for storing with results."""
        data = asdict(self)
        data["unknown"] = dict(self.unknown)
        return data


_CPU_FIELDS = ("cpu_time_ns", "cpu_user_ns", "cpu_system_ns")
_THROTTLE_FIELDS = ("nr_periods", "nr_throttled", "throttled_time_ns")


def _read_cpu_time(acct: Any, values: dict, unknown: dict) -> None:
    """CPU time (ns) in all, in user and in system mode, from the cpuacct (v1) or cgroup2 leaf."""
    if acct is None:
        for name in _CPU_FIELDS:
            unknown[name] = "no cpuacct controller (v1) or cgroup2 hierarchy"
    elif acct.mount.version == "v1":
        values["cpu_time_ns"] = read_int(acct.path / "cpuacct.usage")
        user = read_int(acct.path / "cpuacct.usage_user")
        system = read_int(acct.path / "cpuacct.usage_sys")
        if user is None or system is None:
            # Kernels before 4.7 only have cpuacct.stat, in USER_HZ ticks.
            stat = read_keyed(acct.path / "cpuacct.stat") or {}
            tick_ns = 1_000_000_000 // os.sysconf("SC_CLK_TCK")
            user = stat["user"] * tick_ns if "user" in stat else None
            system = stat["system"] * tick_ns if "system" in stat else None
        values["cpu_user_ns"], values["cpu_system_ns"] = user, system
    else:
        stat = read_keyed(acct.path / "cpu.stat") or {}
        for name, key in zip(_CPU_FIELDS, ("usage_usec", "user_usec", "system_usec")):
            values[name] = stat[key] * 1000 if key in stat else None


def _read_throttling(cpu: Any, values: dict, unknown: dict) -> None:
    """CFS periods, throttled periods and throttled time (ns) from the cpu controller's leaf."""
    if cpu is None:
        for name in _THROTTLE_FIELDS:
            unknown[name] = "no cpu controller"
        return
    stat = read_keyed(cpu.path / "cpu.stat") or {}
    values["nr_periods"] = stat.get("nr_periods")
    values["nr_throttled"] = stat.get("nr_throttled")
    if "throttled_time" in stat:
        values["throttled_time_ns"] = stat["throttled_time"]
    elif "throttled_usec" in stat:
        values["throttled_time_ns"] = stat["throttled_usec"] * 1000


def _read_memory(memory: Any, values: dict, unknown: dict) -> None:
    """Peak memory (bytes) and OOM kills from the memory controller's leaf (v1 or cgroup2)."""
    if memory is None:
        unknown["memory_peak_bytes"] = "no memory controller"
        unknown["oom_kills"] = "no memory controller"
    elif memory.mount.version == "v1":
        values["memory_peak_bytes"] = read_int(memory.path / "memory.max_usage_in_bytes")
        values["oom_kills"] = (read_keyed(memory.path / "memory.oom_control") or {}).get("oom_kill")
        if values["oom_kills"] is None:
            unknown["oom_kills"] = "memory.oom_control has no oom_kill count (kernel < 4.13)"
    else:
        values["memory_peak_bytes"] = read_int(memory.path / "memory.peak")
        if values["memory_peak_bytes"] is None:
            unknown["memory_peak_bytes"] = "memory.peak not present (kernel < 5.19)"
        values["oom_kills"] = (read_keyed(memory.path / "memory.events") or {}).get("oom_kill")


def read_usage(leaves: Sequence) -> CgroupUsage:
    """CPU time, throttling and memory peak of a run cgroup's leaves (one per hierarchy).

    ``leaves`` have ``mount`` (a :class:`CgroupMount`), ``controllers`` and ``path``. Call
    after the run's processes exited. Fields the kernel does not report are ``unknown``
    with the reason.
    """
    values: dict[str, int | None] = {}
    unknown: dict[str, str] = {}

    def leaf_with(controller: str) -> Any:
        for leaf in leaves:
            if controller in leaf.controllers:
                return leaf
        return None

    _read_cpu_time(leaf_with("cpuacct"), values, unknown)
    _read_throttling(leaf_with("cpu"), values, unknown)
    _read_memory(leaf_with("memory"), values, unknown)
    for name in _CPU_FIELDS + _THROTTLE_FIELDS + ("memory_peak_bytes", "oom_kills"):
        if values.get(name) is None and name not in unknown:
            unknown[name] = "not reported by this kernel"
    return CgroupUsage(**{k: v for k, v in values.items() if v is not None}, unknown=unknown)
