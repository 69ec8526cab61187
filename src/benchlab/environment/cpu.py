"""Readers for the CPU: model and flags (/proc/cpuinfo), topology, SMT, caches, frequency, boost.

Topology (physical cores, packages, threads per core) comes from the one sysfs topology reader,
:func:`benchlab.environment.topology.read_topology`; CPU lists are parsed only by
:func:`benchlab.units.parse_cpu_list`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from benchlab.digests import sha256_hex
from benchlab.environment._read import is_unknown, once, read_int, read_text, unknown
from benchlab.environment.topology import read_topology
from benchlab.errors import UserError
from benchlab.units import parse_cpu_list

SYS_CPU = Path("/sys/devices/system/cpu")
CPUFREQ_ABSENT_REASON = (
    "no /sys/devices/system/cpu/cpu*/cpufreq (virtualised or driver absent)"
)

# CPU flags worth seeing by name (vector width, TSC reliability, virtualisation).
NOTABLE_CPU_FLAGS = (
    "avx", "avx2", "avx512f", "sse4_2", "fma", "aes", "sha_ni",
    "constant_tsc", "nonstop_tsc", "tsc_known_freq", "rdtscp", "hypervisor", "ht",
)


def cpuinfo_first_block() -> dict[str, str] | dict[str, dict[str, str]]:
    """The first processor block of /proc/cpuinfo as {field: text}; ``_error`` holds why not."""
    text = read_text("/proc/cpuinfo")
    if is_unknown(text):
        return {"_error": text}
    block: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if block:
                break
            continue
        if ":" in line:
            key, value = line.split(":", 1)
            block[key.strip()] = value.strip()
    return block


def online_cpus() -> list[int] | dict[str, str]:
    """Online logical CPU numbers from /sys/devices/system/cpu/online, or an unknown marker."""
    text = read_text(SYS_CPU / "online")
    if is_unknown(text):
        return text
    try:
        return list(parse_cpu_list(text, what=str(SYS_CPU / "online")))
    except UserError as exc:
        return unknown(str(exc))


def _topology(cpus: list[int]) -> dict[str, Any]:
    """Physical cores, packages and threads per core from the one sysfs topology reader.

    A topology the reader cannot make sense of becomes unknown markers: collecting the environment
    never fails a session.
    """
    try:
        topology = read_topology("/sys")
    except (UserError, OSError, ValueError) as exc:
        reason = f"CPU topology unreadable: {exc}"
        return {"physical_cores": unknown(reason), "packages": unknown(reason),
                "threads_per_core": unknown(reason)}
    wanted = set(cpus)
    cores = [core for core in topology.cores if wanted.intersection(core)]
    return {
        "physical_cores": len(cores),
        "packages": len({topology.cpus[c].package_id for c in wanted if c in topology.cpus}),
        "threads_per_core": max((len(core) for core in cores), default=0) or unknown(
            "no online CPU has topology information"),
    }


def smt_state(threads_per_core: Any = None) -> dict[str, Any]:
    """SMT (hyper-threading) as the kernel reports it.

    ``control`` is /sys/devices/system/cpu/smt/control (on, off, forceoff, notsupported,
    notimplemented); ``active`` is /sys/.../smt/active as a bool; ``enabled`` is the conclusion:
    from ``active`` when readable, otherwise derived from thread siblings (more than one thread per
    core means SMT is on).
    """
    control = read_text(SYS_CPU / "smt" / "control")
    active_raw = read_text(SYS_CPU / "smt" / "active")
    active: Any = active_raw if is_unknown(active_raw) else active_raw == "1"
    if threads_per_core is None:
        cpus = online_cpus()
        threads_per_core = (_topology(cpus)["threads_per_core"] if not is_unknown(cpus)
                            else unknown("online CPU list unreadable"))
    if not is_unknown(active):
        enabled: Any = active
    elif not is_unknown(threads_per_core):
        enabled = threads_per_core > 1
    else:
        enabled = unknown("neither smt/active nor thread siblings are readable")
    return {"control": control, "active": active, "enabled": enabled}


def _cache_name(level: int, kind: str) -> str:
    if kind == "Data":
        return f"L{level}d"
    if kind == "Instruction":
        return f"L{level}i"
    return f"L{level}"


def _size_kib(text: str) -> int | dict[str, str]:
    match = re.fullmatch(r"(\d+)\s*([KMG]?)", text.strip())
    if not match:
        return unknown(f"cache size {text!r} not understood")
    scale = {"": 1 / 1024, "K": 1, "M": 1024, "G": 1024 * 1024}[match.group(2)]
    return int(int(match.group(1)) * scale)


def _caches() -> dict[str, Any]:
    base = SYS_CPU / "cpu0" / "cache"
    if not base.is_dir():
        return unknown(f"{base} does not exist (kernel does not expose cache topology)")
    caches: dict[str, Any] = {}
    for index in sorted(base.glob("index*"), key=lambda p: int(p.name[5:]) if p.name[5:].isdigit() else 0):
        level = read_int(index / "level")
        kind = read_text(index / "type")
        if is_unknown(level) or is_unknown(kind):
            continue
        size = read_text(index / "size")
        ways = read_int(index / "ways_of_associativity")
        line = read_int(index / "coherency_line_size")
        shared = read_text(index / "shared_cpu_list")
        caches[_cache_name(level, kind)] = {
            "size_kib": size if is_unknown(size) else _size_kib(size),
            "ways": ways,
            "line_bytes": line,
            "shared_cpu_list": shared,
        }
    for name in ("L1d", "L1i", "L2", "L3"):
        caches.setdefault(name, unknown(f"no {name} entry under {base}"))
    return caches


def frequency_state(cpus: list[int] | None = None) -> dict[str, Any]:
    """Frequency scaling: driver, governor, min/max (kHz), boost, from cpufreq sysfs.

    Any field that cpufreq does not expose on this machine is an unknown marker with the reason;
    on virtual machines cpufreq is usually absent because the host controls frequency.
    """
    if cpus is None:
        online = online_cpus()
        cpus = [] if is_unknown(online) else online
    policies = [SYS_CPU / f"cpu{cpu}" / "cpufreq" for cpu in cpus]
    present = [p for p in policies if once(f"is_dir {p}", p.is_dir)]
    if not present:
        absent: dict[str, Any] = {key: unknown(CPUFREQ_ABSENT_REASON) for key in
                                  ("driver", "governor", "min_khz", "max_khz", "hardware_max_khz")}
    else:
        def common(name: str, as_int: bool = False) -> Any:
            values = {}
            for policy in present:
                value = read_int(policy / name) if as_int else read_text(policy / name)
                if is_unknown(value):
                    return value
                values[policy.parent.name] = value
            distinct = set(values.values())
            if len(distinct) == 1:
                return distinct.pop()
            return ",".join(f"{cpu}={value}" for cpu, value in values.items())

        absent = {
            "driver": common("scaling_driver"),
            "governor": common("scaling_governor"),
            "min_khz": common("scaling_min_freq", as_int=True),
            "max_khz": common("scaling_max_freq", as_int=True),
            "hardware_max_khz": common("cpuinfo_max_freq", as_int=True),
        }
    absent["boost"] = boost_state()
    return absent


def boost_state() -> Any:
    """Whether turbo/boost is enabled (bool), from cpufreq/boost or intel_pstate/no_turbo."""
    boost = read_text(SYS_CPU / "cpufreq" / "boost")
    if not is_unknown(boost):
        return boost == "1"
    no_turbo = read_text(SYS_CPU / "intel_pstate" / "no_turbo")
    if not is_unknown(no_turbo):
        return no_turbo == "0"
    per_policy = once("glob cpufreq/policy*/boost",  # the checks ask twice, the probe once
                      lambda: sorted(SYS_CPU.glob("cpufreq/policy*/boost")))
    if per_policy:
        values = {read_text(p) for p in per_policy}
        if len(values) == 1:
            value = values.pop()
            return value if is_unknown(value) else value == "1"
        return unknown("per-policy boost settings differ: " + ",".join(sorted(map(str, values))))
    return unknown("no /sys/devices/system/cpu/cpufreq/boost nor intel_pstate/no_turbo "
                   "(virtualised or driver absent)")


def cpu_section() -> dict[str, Any]:
    info = cpuinfo_first_block()
    cpuinfo_error = info.get("_error") if isinstance(info.get("_error"), dict) else None

    def from_cpuinfo(*keys: str) -> Any:
        if cpuinfo_error:
            return cpuinfo_error
        for key in keys:
            if key in info:
                return info[key]
        return unknown(f"/proc/cpuinfo has no {' or '.join(keys)} field on this architecture")

    flags_text = from_cpuinfo("flags", "Features")
    if is_unknown(flags_text):
        flags_digest: Any = flags_text
        flags_count: Any = flags_text
        notable: Any = flags_text
    else:
        flags = sorted(set(flags_text.split()))
        flags_digest = sha256_hex(" ".join(flags).encode())[:16]
        flags_count = len(flags)
        notable = {flag: flag in flags for flag in NOTABLE_CPU_FLAGS}

    mhz = from_cpuinfo("cpu MHz")
    if not is_unknown(mhz):
        mhz = float(mhz)

    cpus = online_cpus()
    if is_unknown(cpus):
        topology = {key: cpus for key in ("physical_cores", "packages", "threads_per_core")}
        cpu_list: list[int] = []
    else:
        topology = _topology(cpus)
        cpu_list = cpus
    try:
        affinity: Any = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError) as exc:
        affinity = unknown(f"sched_getaffinity unavailable: {exc}")

    frequency = frequency_state(cpu_list)
    frequency["cpuinfo_mhz"] = mhz
    return {
        "model": from_cpuinfo("model name", "Model", "cpu model"),
        "vendor": from_cpuinfo("vendor_id", "CPU implementer"),
        "family": from_cpuinfo("cpu family"),
        "model_number": from_cpuinfo("model"),
        "stepping": from_cpuinfo("stepping"),
        "microcode": from_cpuinfo("microcode"),
        "flags_digest": flags_digest,
        "flags_count": flags_count,
        "notable_flags": notable,
        "logical_cores": os.cpu_count() or unknown("os.cpu_count() returned None"),
        "online": ",".join(map(str, cpu_list)) if cpu_list else cpus,
        "physical_cores": topology["physical_cores"],
        "packages": topology["packages"],
        "threads_per_core": topology["threads_per_core"],
        "smt": smt_state(topology["threads_per_core"]),
        "affinity": affinity,
        "caches": _caches(),
        "frequency": frequency,
    }
