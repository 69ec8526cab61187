"""System checks for benchmarking: what makes timings noisy or unrepresentative.

Frequency governor, boost, SMT, ASLR, swap, transparent huge pages, load, isolated CPUs,
perf_event_paranoid, virtualisation and the clocksource. Each :class:`Check` has a status ``ok``,
``warn`` or ``unknown``, the observed value and one line of advice. These read /proc and /sys only
(a few ms), so the runner records them with every session; the CPU contention probe lives in
:mod:`.contention` because it takes ~1 s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, field
from typing import Any

from benchlab.environment import (
    aslr_setting,
    boost_state,
    frequency_state,
    is_unknown,
    kernel_cmdline_params,
    load_average,
    meminfo,
    read_text,
    smt_state,
    thp_setting,
    virtualization_state,
)
from benchlab.environment.cpu import SYS_CPU
from benchlab.records import record
from benchlab.units import parse_cpu_list

STATUSES = ("ok", "warn", "unknown")

# Two CPU-bound processes keeping at least this fraction of their solo speed count as independent.
CONTENTION_OK_RATIO = 0.85
LOAD_WARN_THRESHOLD = 0.5


@record(frozen=True)
class Check:
    """One system check.

    Attributes
    ----------
    name : str
        Stable identifier (``aslr``, ``governor``, ...).
    status : str
        ``ok``, ``warn`` or ``unknown``.
    observed : str
        What was found, for people.
    advice : str
        One line: what it means for measurements and what to do.
    details : dict
        The observed values for programs (JSON-serialisable; unknowns as ``{"unknown": reason}``).
    """

    name: str
    status: str
    observed: str
    advice: str
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form: name, status, observed, advice, details."""
        return asdict(self)


def reason_of(value: Any) -> str:
    """A probed value as text: the reason when it could not be read, else the value."""
    return value["unknown"] if is_unknown(value) else str(value)


# --------------------------------------------------------------------------------------------
# Cheap checks (/proc and /sys only)


def check_governor() -> Check:
    """Frequency governor of the online CPUs."""
    governor = frequency_state()["governor"]
    if is_unknown(governor):
        return Check("governor", "unknown", f"not readable: {governor['unknown']}",
                     "frequency scaling is not visible here (on a VM the host controls it); "
                     "compare only results from the same machine type", {"governor": governor})
    if governor == "performance":
        return Check("governor", "ok", "performance", "CPUs stay at their highest frequency",
                     {"governor": governor})
    return Check("governor", "warn", governor,
                 "the frequency ramps up during short runs; `benchlab system tune` sets "
                 "'performance'", {"governor": governor})


def check_boost() -> Check:
    """Turbo/boost state."""
    boost = boost_state()
    if is_unknown(boost):
        return Check("boost", "unknown", f"not readable: {boost['unknown']}",
                     "turbo cannot be checked or disabled from here; expect frequency to vary "
                     "with temperature and host load", {"boost": boost})
    if boost:
        return Check("boost", "warn", "enabled",
                     "turbo frequency depends on temperature and busy cores; "
                     "`benchlab system tune` turns it off", {"boost": boost})
    return Check("boost", "ok", "disabled", "CPUs run at a steady base frequency",
                 {"boost": boost})


def check_smt() -> Check:
    """Simultaneous multithreading (hyper-threading)."""
    smt = smt_state()
    enabled, control = smt["enabled"], smt["control"]
    details = {"smt": smt}
    control_text = reason_of(control) if not is_unknown(control) else "control not readable"
    if is_unknown(enabled):
        return Check("smt", "unknown", f"not readable: {enabled['unknown']}",
                     "cannot tell whether logical CPUs share cores; pin benchmarks and check "
                     "cpu_contention", details)
    if enabled:
        return Check("smt", "warn", f"on (control={control_text})",
                     "sibling threads share a core's execution units: pin to one thread per "
                     "core; disabling SMT (smt/control=off) is left to you", details)
    return Check("smt", "ok", f"off (control={control_text})",
                 "no sibling threads visible to this kernel (a hypervisor can still share "
                 "cores between vCPUs: see cpu_contention)", details)


def check_aslr() -> Check:
    """Address-space layout randomisation."""
    value = aslr_setting()
    meanings = {0: "off", 1: "partial (stack, mmap)", 2: "full (stack, mmap, heap)"}
    if is_unknown(value):
        return Check("aslr", "unknown", f"not readable: {value['unknown']}",
                     "memory layout may change between runs", {"randomize_va_space": value})
    if value == 0:
        return Check("aslr", "ok", "0 (off)",
                     "same memory layout on every run; one layout can be lucky or unlucky, so "
                     "confirm small differences with ASLR on", {"randomize_va_space": value})
    return Check("aslr", "warn", f"{value} ({meanings.get(value, 'unknown mode')})",
                 "the memory layout changes every run, adding variance from alignment; "
                 "`benchlab system tune` sets 0, or keep it and take more runs",
                 {"randomize_va_space": value})


def check_swap() -> Check:
    """Swap configured and in use."""
    info = meminfo()
    if is_unknown(info) or "SwapTotal" not in info or "SwapFree" not in info:
        reason = reason_of(info) if is_unknown(info) else "/proc/meminfo has no SwapTotal/SwapFree"
        return Check("swap", "unknown", f"not readable: {reason}",
                     "a benchmark that pages to swap measures the disk", {})
    total, free = info["SwapTotal"], info["SwapFree"]
    details = {"swap_total_kib": total, "swap_used_kib": total - free}
    if total == 0:
        return Check("swap", "ok", "no swap", "memory is never paged out to disk", details)
    used = total - free
    if used > 0:
        return Check("swap", "warn", f"{used} KiB of {total} KiB swap in use",
                     "pages are on disk: free memory or `swapoff -a` before measuring", details)
    return Check("swap", "ok", f"{total} KiB swap, none in use",
                 "fine while benchmarks fit in RAM; `swapoff -a` makes overflow fail loudly",
                 details)


def check_thp() -> Check:
    """Transparent huge pages."""
    thp = thp_setting()
    enabled = thp["enabled"]
    if is_unknown(enabled):
        return Check("transparent_hugepages", "unknown", f"not readable: {enabled['unknown']}",
                     "page size may vary between runs", {"thp": thp})
    if enabled == "always":
        return Check("transparent_hugepages", "warn", f"always (defrag={reason_of(thp['defrag'])})",
                     "huge-page backing depends on fragmentation and khugepaged timing; "
                     "`benchlab system tune` sets 'never'", {"thp": thp})
    if enabled == "madvise":
        return Check("transparent_hugepages", "ok", f"madvise (defrag={reason_of(thp['defrag'])})",
                     "only programs that ask get huge pages; 'never' (benchlab system tune) "
                     "makes those deterministic too", {"thp": thp})
    return Check("transparent_hugepages", "ok", enabled, "page size is deterministic (4 KiB)",
                 {"thp": thp})


def check_load() -> Check:
    """System load average."""
    try:
        one, five, fifteen = load_average()
    except OSError as exc:
        return Check("load", "unknown", f"not readable: {exc}",
                     "other work may be running", {})
    cpus = os.cpu_count() or 1
    details = {"load_1min": one, "load_5min": five, "load_15min": fifteen, "cpus": cpus}
    observed = f"{one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min) on {cpus} CPUs"
    if one > LOAD_WARN_THRESHOLD:
        return Check("load", "warn", observed,
                     "other work is running and will interfere: stop it or wait, and "
                     "compare load before/after in the results", details)
    return Check("load", "ok", observed, "the machine is idle", details)


def check_isolated_cpus() -> Check:
    """CPUs isolated from the scheduler (isolcpus=, nohz_full=)."""
    params = kernel_cmdline_params()
    isolated = read_text(SYS_CPU / "isolated")
    nohz = read_text(SYS_CPU / "nohz_full")
    details = {"cmdline": params, "isolated": isolated, "nohz_full": nohz}
    if is_unknown(isolated) and is_unknown(params):
        return Check("isolated_cpus", "unknown", f"not readable: {isolated['unknown']}",
                     "cannot tell whether benchmark CPUs are shielded from other tasks", details)
    isolated_cpus = [] if is_unknown(isolated) else parse_cpu_list(isolated)
    nohz_cpus = [] if is_unknown(nohz) or nohz.strip() in ("", "(null)") else parse_cpu_list(nohz)
    if isolated_cpus:
        listing = ",".join(map(str, isolated_cpus))
        extra = f"; nohz_full={nohz.strip()}" if nohz_cpus else ""
        return Check("isolated_cpus", "ok", f"isolated {listing}{extra}",
                     f"pin benchmarks to the isolated CPUs ({listing}) to keep other tasks off "
                     "them", details)
    return Check("isolated_cpus", "warn", "none (no isolcpus=/nohz_full= on the kernel command line)",
                 "the scheduler may run other tasks on benchmark CPUs; for least noise boot with "
                 "isolcpus=<cpus> nohz_full=<cpus> and pin to them", details)


def check_perf_event_paranoid() -> Check:
    """Who may use perf events (hardware counters, perf stat)."""
    text = read_text("/proc/sys/kernel/perf_event_paranoid")
    if is_unknown(text):
        return Check("perf_event_paranoid", "unknown", f"not readable: {text['unknown']}",
                     "perf counters may or may not be usable", {})
    value = int(text)
    details = {"perf_event_paranoid": value, "euid": os.geteuid()}
    if os.geteuid() == 0:
        return Check("perf_event_paranoid", "ok", f"{value} (running as root: not restricted)",
                     "perf events are allowed for root (hardware counters may still be absent "
                     "in a VM)", details)
    if value >= 3:
        return Check("perf_event_paranoid", "warn", str(value),
                     "unprivileged perf is disabled: run as root or "
                     "`sysctl kernel.perf_event_paranoid=2`", details)
    if value == 2:
        return Check("perf_event_paranoid", "ok", "2 (user-space events only)",
                     "perf can count a benchmark's user-space events; kernel events need <= 1",
                     details)
    return Check("perf_event_paranoid", "ok", str(value), "perf events are available", details)


def check_virtualization(virtualization: Mapping[str, Any] | None = None) -> Check:
    """Virtual machine or container (from the environment collector's evidence)."""
    if virtualization is None:
        virtualization = virtualization_state()
    vm, container = virtualization["vm"], virtualization["container"]
    details = {"vm": vm, "container": container, "evidence": virtualization["evidence"]}
    parts = []
    if not is_unknown(vm) and vm != "none":
        parts.append(f"VM ({vm})")
    if not is_unknown(container) and container != "none":
        parts.append(f"container ({container})")
    if parts:
        return Check("virtualization", "warn", " in ".join(reversed(parts)) if len(parts) > 1
                     else parts[0],
                     "the host's other guests, steal time and hidden frequency scaling add noise: "
                     "take more runs and compare only on the same machine type", details)
    if is_unknown(vm) or is_unknown(container):
        reason = reason_of(vm) if is_unknown(vm) else reason_of(container)
        return Check("virtualization", "unknown", reason,
                     "if this is a VM, expect host noise and compare only on the same machine type",
                     details)
    return Check("virtualization", "ok", "bare metal, no container",
                 "no hypervisor between the benchmark and the hardware", details)


_GOOD_CLOCKSOURCES = {"tsc", "arch_sys_counter", "kvm-clock", "hyperv_clocksource_tsc_page",
                      "xen", "timebase"}


def check_clocksource() -> Check:
    """The kernel clocksource behind clock_gettime."""
    current = read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    if is_unknown(current):
        return Check("clocksource", "unknown", f"not readable: {current['unknown']}",
                     "timer resolution and overhead unknown", {})
    details = {"clocksource": current}
    if current in _GOOD_CLOCKSOURCES:
        return Check("clocksource", "ok", current, "clock reads are cheap and fine-grained",
                     details)
    return Check("clocksource", "warn", current,
                 "clock reads are slow or coarse (hpet/acpi_pm/jiffies): short runs lose "
                 "precision; prefer tsc if the kernel offers it", details)
