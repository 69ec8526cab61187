"""The environment a benchmark session is measured in: machine, kernel settings, software, session.

:func:`collect_environment` returns a JSON-serialisable dict with stable nested keys. Every leaf is
either a plain value or ``{"unknown": "<reason>"}``: a field this machine does not expose is never
guessed. ``null`` is a *known* value meaning "not set" (e.g. no ``isolcpus=`` on the kernel command
line), never "could not tell".

Units are in the key names: ``_kib`` (KiB), ``_s`` (seconds). Timestamps are UTC ISO 8601 with a
trailing ``Z``.

Collection is meant to run at the start of every session, so it only reads ``/proc`` and ``/sys``
and runs a handful of short subprocesses (``git``, ``systemd-detect-virt``) concurrently, each with
a timeout; it takes well under 0.3 s.

:func:`environment_digest` hashes only the fields that describe the machine and its software
(not timestamps, load, argv, git, environment variables or free memory), so sessions taken on the
same, identically configured machine share a digest. :func:`diff_environments` lists the fields
that differ between two stored environments, for ``benchlab compare``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import benchlab

SCHEMA_VERSION = 1

SYS_CPU = Path("/sys/devices/system/cpu")
CPUFREQ_ABSENT_REASON = (
    "no /sys/devices/system/cpu/cpu*/cpufreq (virtualised or driver absent)"
)

# Key paths (dotted) left out of the digest: they change between sessions on the same machine.
# A path excludes everything beneath it.
DIGEST_EXCLUDED: tuple[str, ...] = (
    "schema_version",
    "digest",
    "collected_at",
    "host.booted_at",
    "host.uptime_s",
    "load",
    "process",
    "git",
    "env_vars",
    "memory.available_kib",
    "memory.free_kib",
    "memory.swap_free_kib",
    "cpu.affinity",
    "cpu.frequency.cpuinfo_mhz",
)

# Key paths that diff_environments ignores: timestamps, load and values that drift by the second.
# Environment variables stay in the diff: a changed PATH or LD_* explains a changed result.
DIFF_IGNORED: tuple[str, ...] = (
    "digest",
    "process.pid",
    "collected_at",
    "host.booted_at",
    "host.uptime_s",
    "load",
    "memory.available_kib",
    "memory.free_kib",
    "memory.swap_free_kib",
    "cpu.frequency.cpuinfo_mhz",
)

# CPU flags worth seeing by name (vector width, TSC reliability, virtualisation).
NOTABLE_CPU_FLAGS = (
    "avx", "avx2", "avx512f", "sse4_2", "fma", "aes", "sha_ni",
    "constant_tsc", "nonstop_tsc", "tsc_known_freq", "rdtscp", "hypervisor", "ht",
)

_SUBPROCESS_TIMEOUT_S = 1.0


# --------------------------------------------------------------------------------------------
# Unknown values


def unknown(reason: str) -> dict[str, str]:
    """Return the marker for a field that could not be determined, with the reason."""
    return {"unknown": reason}


def is_unknown(value: Any) -> bool:
    """Tell whether ``value`` is an unknown marker produced by :func:`unknown`."""
    return isinstance(value, dict) and len(value) == 1 and "unknown" in value


def utc_now_iso() -> str:
    """Current UTC time as ISO 8601 with microseconds and a trailing ``Z``."""
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _iso_from_epoch(epoch_s: float) -> str:
    moment = _dt.datetime.fromtimestamp(epoch_s, _dt.timezone.utc)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def read_text(path: str | Path) -> str | dict[str, str]:
    """Read a small /proc or /sys file, stripped; an unknown marker naming why it failed."""
    try:
        return Path(path).read_text(errors="replace").strip()
    except FileNotFoundError:
        return unknown(f"{path} does not exist")
    except PermissionError:
        return unknown(f"{path} is not readable (permission denied)")
    except OSError as exc:
        return unknown(f"{path} could not be read: {exc.strerror or exc}")


def _read_int(path: str | Path) -> int | dict[str, str]:
    text = read_text(path)
    if is_unknown(text):
        return text
    try:
        return int(text)
    except ValueError:
        return unknown(f"{path} holds {text!r}, not an integer")


def parse_cpu_list(text: str) -> list[int]:
    """Parse a kernel CPU list such as ``"0-3,8,10-11"`` into sorted CPU numbers."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.update(range(int(low), int(high) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def _bracketed_choice(text: str) -> str:
    """``"always [madvise] never"`` -> ``"madvise"`` (the sysfs way of showing the active one)."""
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip()


# --------------------------------------------------------------------------------------------
# Concurrent short subprocesses


class _Probe:
    """A short external command started now and read later, so several run concurrently."""

    def __init__(self, argv: Sequence[str], cwd: str | None = None, env: Mapping[str, str] | None = None):
        self.argv = list(argv)
        self.proc: subprocess.Popen[str] | None = None
        self.error: str | None = None
        exe = shutil.which(self.argv[0])
        if exe is None:
            self.error = f"{self.argv[0]} is not installed"
            return
        try:
            self.proc = subprocess.Popen(
                [exe, *self.argv[1:]], cwd=cwd, env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
        except OSError as exc:
            self.error = f"could not run {self.argv[0]}: {exc.strerror or exc}"

    def result(self, deadline: float) -> tuple[int, str, str] | str:
        """(returncode, stdout, stderr), or a reason string when it could not run in time."""
        if self.proc is None:
            return self.error or "not started"
        try:
            out, err = self.proc.communicate(timeout=max(0.01, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return f"{' '.join(self.argv)} did not finish within {_SUBPROCESS_TIMEOUT_S:g} s"
        return self.proc.returncode, out, err


# --------------------------------------------------------------------------------------------
# Sections


def _os_release() -> dict[str, Any]:
    for candidate in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_text(candidate)
        if not is_unknown(text):
            break
    else:
        reason = "neither /etc/os-release nor /usr/lib/os-release exists"
        return {key: unknown(reason) for key in ("id", "version_id", "pretty_name", "codename")}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if "=" not in line or line.lstrip().startswith("#"):
            continue
        key, value = line.split("=", 1)
        fields[key.strip()] = value.strip().strip("\"'")

    def pick(key: str) -> Any:
        return fields[key] if key in fields else unknown(f"{key} not set in {candidate}")

    return {
        "id": pick("ID"), "version_id": pick("VERSION_ID"),
        "pretty_name": pick("PRETTY_NAME"), "codename": pick("VERSION_CODENAME"),
    }


def _os_section() -> dict[str, Any]:
    uname = platform.uname()
    return {
        "system": uname.system,
        "distribution": _os_release() if uname.system == "Linux" else unknown(
            f"/etc/os-release is Linux-specific; this is {uname.system}"),
        "kernel": {"release": uname.release, "version": uname.version, "machine": uname.machine},
    }


def _host_section() -> dict[str, Any]:
    booted_at: Any = unknown("no btime line in /proc/stat")
    uptime: Any = unknown("/proc/uptime not readable")
    stat = read_text("/proc/stat")
    if is_unknown(stat):
        booted_at = stat
    else:
        for line in stat.splitlines():
            if line.startswith("btime "):
                booted_at = _iso_from_epoch(int(line.split()[1]))
                break
    up = read_text("/proc/uptime")
    if not is_unknown(up):
        uptime = float(up.split()[0])
    return {"hostname": socket.gethostname(), "booted_at": booted_at, "uptime_s": uptime}


def _cpuinfo_first_block() -> dict[str, str] | dict[str, dict[str, str]]:
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
    return parse_cpu_list(text)


def _topology(cpus: list[int]) -> dict[str, Any]:
    """Physical cores = distinct (package, core_id) pairs; threads per core from siblings."""
    cores: set[tuple[int, int]] = set()
    packages: set[int] = set()
    max_siblings = 0
    for cpu in cpus:
        topo = SYS_CPU / f"cpu{cpu}" / "topology"
        package = _read_int(topo / "physical_package_id")
        core = _read_int(topo / "core_id")
        if is_unknown(package) or is_unknown(core):
            reason = f"topology of cpu{cpu} unreadable: {(package if is_unknown(package) else core)['unknown']}"
            return {"physical_cores": unknown(reason), "packages": unknown(reason),
                    "threads_per_core": unknown(reason)}
        cores.add((package, core))
        packages.add(package)
        siblings = read_text(topo / "thread_siblings_list")
        if not is_unknown(siblings):
            max_siblings = max(max_siblings, len(parse_cpu_list(siblings)))
    return {
        "physical_cores": len(cores),
        "packages": len(packages),
        "threads_per_core": max_siblings if max_siblings else unknown(
            "thread_siblings_list unreadable for every CPU"),
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
        level = _read_int(index / "level")
        kind = read_text(index / "type")
        if is_unknown(level) or is_unknown(kind):
            continue
        size = read_text(index / "size")
        ways = _read_int(index / "ways_of_associativity")
        line = _read_int(index / "coherency_line_size")
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
    present = [p for p in policies if p.is_dir()]
    if not present:
        absent: dict[str, Any] = {key: unknown(CPUFREQ_ABSENT_REASON) for key in
                                  ("driver", "governor", "min_khz", "max_khz", "hardware_max_khz")}
    else:
        def common(name: str, as_int: bool = False) -> Any:
            values = {}
            for policy in present:
                value = _read_int(policy / name) if as_int else read_text(policy / name)
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
    per_policy = sorted(SYS_CPU.glob("cpufreq/policy*/boost"))
    if per_policy:
        values = {read_text(p) for p in per_policy}
        if len(values) == 1:
            value = values.pop()
            return value if is_unknown(value) else value == "1"
        return unknown("per-policy boost settings differ: " + ",".join(sorted(map(str, values))))
    return unknown("no /sys/devices/system/cpu/cpufreq/boost nor intel_pstate/no_turbo "
                   "(virtualised or driver absent)")


def _cpu_section() -> dict[str, Any]:
    info = _cpuinfo_first_block()
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
        flags_digest = hashlib.sha256(" ".join(flags).encode()).hexdigest()[:16]
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


def meminfo() -> dict[str, int] | dict[str, str]:
    """/proc/meminfo as {field: KiB}, or an unknown marker."""
    text = read_text("/proc/meminfo")
    if is_unknown(text):
        return text
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values


def _memory_section() -> dict[str, Any]:
    info = meminfo()

    def field(name: str) -> Any:
        if is_unknown(info):
            return info
        return info[name] if name in info else unknown(f"/proc/meminfo has no {name}")

    return {
        "total_kib": field("MemTotal"),
        "available_kib": field("MemAvailable"),
        "free_kib": field("MemFree"),
        "swap_total_kib": field("SwapTotal"),
        "swap_free_kib": field("SwapFree"),
        "hugepage_size_kib": field("Hugepagesize"),
    }


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
    return _read_int("/proc/sys/kernel/randomize_va_space")


def thp_setting() -> dict[str, Any]:
    """Transparent huge pages: the active choice of ``enabled`` and ``defrag``."""
    base = Path("/sys/kernel/mm/transparent_hugepage")
    result = {}
    for name in ("enabled", "defrag"):
        text = read_text(base / name)
        result[name] = text if is_unknown(text) else _bracketed_choice(text)
    return result


def _kernel_settings_section() -> dict[str, Any]:
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
        "perf_event_paranoid": _read_int("/proc/sys/kernel/perf_event_paranoid"),
        "cmdline": cmdline,
        # sysfs views of the same: what the kernel actually applied ("" = none).
        "isolated_cpus": isolated,
        "nohz_full_cpus": nohz if not is_unknown(nohz) else unknown(
            f"{SYS_CPU / 'nohz_full'} absent (kernel built without CONFIG_NO_HZ_FULL)"),
        "clocksource": read_text(clocksource_dir / "current_clocksource"),
        "available_clocksources": available if is_unknown(available) else available.split(),
    }


def _numa_section() -> dict[str, Any]:
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


_CONTAINER_CGROUP_PATTERNS = ("docker", "kubepods", "containerd", "lxc", "libpod", "podman")


def _virtualization_section(detect_vm: _Probe | None, detect_container: _Probe | None,
                            deadline: float, hypervisor_flag: Any) -> dict[str, Any]:
    evidence: list[str] = []

    def detect(probe: _Probe | None) -> Any:
        if probe is None:
            return unknown("systemd-detect-virt is not installed")
        result = probe.result(deadline)
        if isinstance(result, str):
            return unknown(result)
        code, out, err = result
        value = out.strip()
        # Exit status 1 with "none" means: checked, nothing found.
        if value:
            evidence.append(f"systemd-detect-virt {probe.argv[1]}: {value}")
            return value
        return unknown(f"systemd-detect-virt {probe.argv[1]} failed: {err.strip() or code}")

    vm = detect(detect_vm)
    container = detect(detect_container)

    dmi = {}
    for name in ("sys_vendor", "product_name"):
        dmi[name] = read_text(Path("/sys/class/dmi/id") / name)
        if not is_unknown(dmi[name]):
            evidence.append(f"dmi {name}: {dmi[name]}")
    if hypervisor_flag is True:
        evidence.append("cpuinfo flag: hypervisor")
    markers = [m for m in ("/.dockerenv", "/run/.containerenv") if os.path.exists(m)]
    evidence.extend(f"file: {m}" for m in markers)
    pid1_cgroup = read_text("/proc/1/cgroup")
    if not is_unknown(pid1_cgroup):
        hits = sorted({p for p in _CONTAINER_CGROUP_PATTERNS if p in pid1_cgroup})
        evidence.extend(f"/proc/1/cgroup mentions {p}" for p in hits)
    else:
        hits = []

    # Without systemd-detect-virt, fall back to what the evidence shows, saying what it is.
    if is_unknown(vm):
        if hypervisor_flag is True:
            vm = unknown("systemd-detect-virt unavailable; cpuinfo 'hypervisor' flag says this is "
                         "a virtual machine of unknown type")
        elif hypervisor_flag is False and is_unknown(dmi["sys_vendor"]):
            vm = unknown("systemd-detect-virt unavailable; no hypervisor flag and no DMI data")
        elif hypervisor_flag is False:
            vm = "none"
    if is_unknown(container):
        if markers or hits:
            container = unknown("systemd-detect-virt unavailable; container markers found: "
                                + ", ".join(markers + hits))
    return {
        "vm": vm,
        "container": container,
        "hypervisor_flag": hypervisor_flag,
        "dmi": dmi,
        "evidence": evidence,
    }


def virtualization_state() -> dict[str, Any]:
    """Virtual machine and container detection alone (the ``virtualization`` section).

    ``vm`` and ``container`` are systemd-detect-virt's answers (``none`` when it found nothing);
    ``evidence`` lists every clue seen (DMI, cpuinfo hypervisor flag, /.dockerenv, /proc/1/cgroup).
    """
    have_detect = shutil.which("systemd-detect-virt") is not None
    detect_vm = _Probe(["systemd-detect-virt", "--vm"]) if have_detect else None
    detect_container = _Probe(["systemd-detect-virt", "--container"]) if have_detect else None
    deadline = time.monotonic() + _SUBPROCESS_TIMEOUT_S
    info = _cpuinfo_first_block()
    if "_error" in info:
        hypervisor_flag: Any = info["_error"]
    elif "flags" in info:
        hypervisor_flag = "hypervisor" in info["flags"].split()
    else:
        hypervisor_flag = unknown("/proc/cpuinfo has no flags field on this architecture")
    return _virtualization_section(detect_vm, detect_container, deadline, hypervisor_flag)


def _python_section() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "compiler": platform.python_compiler(),
        "build": list(platform.python_build()),
    }


def _git_section(head: _Probe | None, status: _Probe | None, deadline: float,
                 cwd: str) -> dict[str, Any]:
    if head is None or status is None:
        reason = ("git is not installed" if shutil.which("git") is None
                  else f"{cwd} does not exist")
        return {"commit": unknown(reason), "dirty": unknown(reason), "changed_paths": unknown(reason)}
    head_result = head.result(deadline)
    status_result = status.result(deadline)
    if isinstance(head_result, str):
        reason = head_result
        return {"commit": unknown(reason), "dirty": unknown(reason), "changed_paths": unknown(reason)}
    code, out, err = head_result
    if code != 0:
        message = err.strip().splitlines()[-1] if err.strip() else f"exit status {code}"
        reason = f"{cwd} is not in a usable git work tree: {message}"
        return {"commit": unknown(reason), "dirty": unknown(reason), "changed_paths": unknown(reason)}
    commit = out.strip()
    if isinstance(status_result, str):
        dirty: Any = unknown(status_result)
        changed: Any = dirty
    else:
        scode, sout, serr = status_result
        if scode != 0:
            dirty = unknown(f"git status failed: {serr.strip() or scode}")
            changed = dirty
        else:
            lines = [line for line in sout.splitlines() if line.strip()]
            dirty = bool(lines)
            changed = len(lines)
    return {"commit": commit, "dirty": dirty, "changed_paths": changed}


def env_var_digests(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment variable NAMES mapped to sha256(value)[:16]; values are never stored.

    The digest shows *whether* a variable changed between sessions without revealing secrets.
    """
    environ = os.environ if environ is None else environ
    return {name: hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:16]
            for name, value in sorted(environ.items())}


def load_average() -> tuple[float, float, float]:
    """System load average over 1, 5 and 15 minutes (runnable + uninterruptible tasks)."""
    return os.getloadavg()


def _load_section() -> dict[str, Any]:
    try:
        one, five, fifteen = load_average()
    except OSError as exc:
        reason = f"load average unavailable: {exc}"
        return {"1min": unknown(reason), "5min": unknown(reason), "15min": unknown(reason),
                "runnable": unknown(reason), "tasks": unknown(reason)}
    text = read_text("/proc/loadavg")
    runnable: Any
    tasks: Any
    if is_unknown(text):
        runnable = tasks = text
    else:
        running, _, total = text.split()[3].partition("/")
        # The count includes this collecting process itself.
        runnable, tasks = int(running), int(total)
    return {"1min": one, "5min": five, "15min": fifteen, "runnable": runnable, "tasks": tasks}


# --------------------------------------------------------------------------------------------
# Public API


def collect_environment(argv: Sequence[str] | None = None, cwd: str | None = None) -> dict[str, Any]:
    """Describe the machine, its settings and this session; every leaf known or unknown-with-reason.

    Parameters
    ----------
    argv : sequence of str, optional
        The full command line to record (default: ``sys.argv``).
    cwd : str, optional
        Working directory whose git commit and dirty state are recorded (default: the current
        directory).

    Returns
    -------
    dict
        JSON-serialisable, with stable nested keys; see the module docstring. ``digest`` holds
        :func:`environment_digest` of the result.
    """
    started = time.monotonic()
    cwd = os.path.abspath(cwd if cwd is not None else os.getcwd())
    argv = list(sys.argv if argv is None else argv)

    # Start the slow-ish external probes first so they overlap with the /proc and /sys reads.
    git_env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    # A missing directory is reported as such rather than as a failure to run git.
    have_git = shutil.which("git") is not None and os.path.isdir(cwd)
    git_head = _Probe(["git", "rev-parse", "HEAD"], cwd=cwd, env=git_env) if have_git else None
    git_status = (_Probe(["git", "status", "--porcelain"], cwd=cwd, env=git_env)
                  if have_git else None)
    have_detect = shutil.which("systemd-detect-virt") is not None
    detect_vm = _Probe(["systemd-detect-virt", "--vm"]) if have_detect else None
    detect_container = _Probe(["systemd-detect-virt", "--container"]) if have_detect else None
    deadline = started + _SUBPROCESS_TIMEOUT_S

    collected_at = utc_now_iso()
    cpu = _cpu_section()
    notable = cpu["notable_flags"]
    hypervisor_flag = notable if is_unknown(notable) else notable["hypervisor"]

    env: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "collected_at": collected_at,
        "host": _host_section(),
        "os": _os_section(),
        "cpu": cpu,
        "memory": _memory_section(),
        "kernel_settings": _kernel_settings_section(),
        "numa": _numa_section(),
        "cgroup": cgroup_state(),
        "virtualization": _virtualization_section(detect_vm, detect_container, deadline,
                                                  hypervisor_flag),
        "python": _python_section(),
        "benchlab": {"version": benchlab.__version__},
        "git": {"cwd": cwd, **_git_section(git_head, git_status, deadline, cwd)},
        "process": {"argv": argv, "cwd": cwd, "pid": os.getpid()},
        "env_vars": env_var_digests(),
        "load": _load_section(),
    }
    env["digest"] = environment_digest(env)
    return env


def flatten(env: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield (dotted key path, leaf) pairs; unknown markers and lists are leaves."""
    for key, value in env.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value and not is_unknown(value):
            yield from flatten(value, path)
        else:
            yield path, value


def _excluded(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in prefixes)


def environment_digest(env: Mapping[str, Any]) -> str:
    """sha256 (first 16 hex digits) of the canonical JSON of the machine and software fields.

    Timestamps, uptime, load, argv, process, git, environment variables and free memory are left
    out (see ``DIGEST_EXCLUDED``), so two sessions on the same, identically configured machine
    share the digest, while a changed kernel, setting, CPU or Python version changes it.
    """
    kept = {path: value for path, value in flatten(env) if not _excluded(path, DIGEST_EXCLUDED)}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def diff_environments(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """Fields that differ between two environments, as (dotted key path, value in a, value in b).

    Timestamps, load, uptime, free memory and the instantaneous MHz are ignored (see
    ``DIFF_IGNORED``). A field present on only one side has ``None`` on the other. Sorted by key
    path.
    """
    flat_a = {p: v for p, v in flatten(a) if not _excluded(p, DIFF_IGNORED)}
    flat_b = {p: v for p, v in flatten(b) if not _excluded(p, DIFF_IGNORED)}
    differences = []
    for path in sorted(set(flat_a) | set(flat_b)):
        value_a, value_b = flat_a.get(path), flat_b.get(path)
        if value_a != value_b:
            differences.append((path, value_a, value_b))
    return differences
