"""System checks for benchmarking, and ``tune``/``restore`` of the settings that can be changed.

:func:`run_checks` inspects what makes timings noisy or unrepresentative: frequency governor,
boost, SMT, ASLR, swap, transparent huge pages, load, isolated CPUs, perf_event_paranoid,
virtualisation, the clocksource and, optionally, real CPU contention (two CPU-bound processes on
two CPUs: do both keep full speed?). Each :class:`Check` has a status ``ok``, ``warn`` or
``unknown``, the observed value and one line of advice. The cheap checks read /proc and /sys only
(a few ms), so the runner records them with every session; the contention probe takes ~1 s and is
optional.

:func:`tune` (root) changes, for benchmarking:

- ASLR -> 0 (off): a program gets the same stack, heap and mmap addresses on every run, so
  run-to-run variance from alignment and cache-set conflicts disappears. The price is that one
  fixed layout may be luckier or unluckier than average; compare with ASLR on when a difference is
  small.
- frequency governor -> ``performance`` (where cpufreq exists and offers it): no ramp-up from a
  low frequency at the start of short runs.
- boost/turbo -> off (``cpufreq/boost`` = 0 or ``intel_pstate/no_turbo`` = 1): turbo frequency
  depends on temperature and on how many cores are busy, so it drifts within and between runs.
- transparent huge pages -> ``never``: with THP, whether memory gets huge pages depends on
  fragmentation and khugepaged timing, which differ between runs; ``never`` makes the page size
  deterministic. Memory-heavy programs may get slower: results then describe 4 KiB pages.

Not changed: SMT (turning it off takes CPUs offline and changes the machine's capacity; pin to one
thread per core instead), CPU isolation (needs a reboot with isolcpus=/nohz_full=), swap.

The exact previous values are saved first to a state file (``$BENCHLAB_STATE_DIR/tune-state.json``,
default ``/var/lib/benchlab/tune-state.json``); :func:`restore` writes them back and removes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchlab.environment.cpu import CPUFREQ_ABSENT_REASON, SYS_CPU
from benchlab.errors import UserError
from benchlab.units import parse_cpu_list
from benchlab.environment import (
    aslr_setting,
    boost_state,
    frequency_state,
    is_unknown,
    kernel_cmdline_params,
    load_average,
    meminfo,
    online_cpus,
    read_text,
    smt_state,
    thp_setting,
    utc_now_iso,
    virtualization_state,
)

STATUSES = ("ok", "warn", "unknown")

# Two CPU-bound processes keeping at least this fraction of their solo speed count as independent.
CONTENTION_OK_RATIO = 0.85
LOAD_WARN_THRESHOLD = 0.5


@dataclass(frozen=True)
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


def _reason(value: Any) -> str:
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
    control_text = _reason(control) if not is_unknown(control) else "control not readable"
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
        reason = _reason(info) if is_unknown(info) else "/proc/meminfo has no SwapTotal/SwapFree"
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
        return Check("transparent_hugepages", "warn", f"always (defrag={_reason(thp['defrag'])})",
                     "huge-page backing depends on fragmentation and khugepaged timing; "
                     "`benchlab system tune` sets 'never'", {"thp": thp})
    if enabled == "madvise":
        return Check("transparent_hugepages", "ok", f"madvise (defrag={_reason(thp['defrag'])})",
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
        reason = _reason(vm) if is_unknown(vm) else _reason(container)
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


# --------------------------------------------------------------------------------------------
# CPU contention probe

_SPIN_CHILD = r"""
import os, sys, time
cpu, duration = int(sys.argv[1]), float(sys.argv[2])
os.sched_setaffinity(0, {cpu})
x = 1
for _ in range(20000):
    x = (x * 1103515245 + 12345) & 0xFFFFFFFF
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
cpu0 = time.process_time(); start = time.perf_counter(); end = start + duration
loops = 0
while True:
    for _ in range(2000):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    loops += 1
    now = time.perf_counter()
    if now >= end:
        break
print(loops * 2000 / (now - start), (time.process_time() - cpu0) / (now - start))
"""


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, steal) clock ticks summed over all CPUs since boot, from /proc/stat."""
    text = read_text("/proc/stat")
    if is_unknown(text):
        return None
    fields = [int(v) for v in text.splitlines()[0].split()[1:]]
    if len(fields) < 8:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return user + nice + system + irq + softirq, steal


@dataclass
class _Phase:
    rates: list[float]           # loop iterations per wall second, per child
    cpu_shares: list[float]      # child CPU time / wall time
    other_cpus: float | None     # CPUs' worth of busy time not used by the children
    steal_fraction: float | None  # steal time / (CPUs * wall)


def _spin(cpus: Sequence[int], duration_s: float) -> _Phase:
    """Run one CPU-bound child per CPU, all released at once, and account the machine meanwhile."""
    children = [
        subprocess.Popen([sys.executable, "-I", "-c", _SPIN_CHILD, str(cpu), str(duration_s)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for cpu in cpus
    ]
    try:
        for child in children:
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError("contention probe child did not start")
        ticks_before, wall_before = _cpu_ticks(), time.perf_counter()
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = [child.communicate(timeout=duration_s + 30)[0] for child in children]
        ticks_after, wall = _cpu_ticks(), time.perf_counter() - wall_before
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    rates, shares = [], []
    for out in outputs:
        rate, share = out.split()
        rates.append(float(rate))
        shares.append(float(share))
    other = steal = None
    if ticks_before is not None and ticks_after is not None:
        per_s = os.sysconf("SC_CLK_TCK")
        busy_cpus = (ticks_after[0] - ticks_before[0]) / per_s / wall
        other = max(0.0, busy_cpus - sum(shares) * duration_s / wall)
        steal = (ticks_after[1] - ticks_before[1]) / per_s / wall / (os.cpu_count() or 1)
    return _Phase(rates, shares, other, steal)


def _two_cpus_on_different_cores(allowed: Sequence[int]) -> tuple[int, int] | None:
    first = allowed[0]
    siblings = read_text(SYS_CPU / f"cpu{first}" / "topology" / "thread_siblings_list")
    shared = set(parse_cpu_list(siblings)) if not is_unknown(siblings) else {first}
    for cpu in allowed[1:]:
        if cpu not in shared:
            return first, cpu
    return (first, allowed[1]) if len(allowed) > 1 else None


def measure_cpu_contention(duration_s: float = 0.3) -> dict[str, Any]:
    """Measure whether two CPU-bound processes on two CPUs each keep their solo speed.

    A fixed integer loop runs alone on CPU a, then as two copies on CPUs a and b at once, then alone
    on CPU b, ``duration_s`` seconds each. CPUs a and b are on different cores when the topology
    says so, so a slowdown is contention the kernel's topology does not show (vCPUs sharing host
    cores, shared power budget) or other work competing for the CPUs.

    Returns
    -------
    dict
        ``cpus`` (the pair); ``solo_rate`` (loop iterations per second, mean of the two solo runs);
        ``parallel_rates`` (iterations per second of each copy); ``ratio`` (mean parallel / solo
        throughput: 1.0 = no slowdown); ``ratio_per_cpu_second`` (the same per second of CPU time
        the copies actually got, which separates "ran slower" from "got less CPU");
        ``parallel_cpu_shares`` (CPU time / wall time of each copy); ``other_cpus_during_parallel``
        and ``other_cpus_during_solo`` (CPUs' worth of time other processes used meanwhile, from
        /proc/stat, the solo figure being the larger of the two solo runs; None if unreadable);
        ``steal_fraction`` (steal / available CPU time during the parallel run);
        ``duration_s``.
    """
    allowed = sorted(os.sched_getaffinity(0))
    pair = _two_cpus_on_different_cores(allowed)
    if pair is None:
        raise UserError(f"the CPU contention probe needs 2 CPUs but this process may use only "
                        f"{allowed}; run it without a restrictive CPU affinity")
    a, b = pair
    solo_a = _spin([a], duration_s)
    parallel = _spin([a, b], duration_s)
    solo_b = _spin([b], duration_s)
    solo_rate = (solo_a.rates[0] + solo_b.rates[0]) / 2

    def per_cpu_second(phase: _Phase) -> list[float]:
        return [rate / share for rate, share in zip(phase.rates, phase.cpu_shares) if share > 0]

    solo_per_cpu = per_cpu_second(solo_a) + per_cpu_second(solo_b)
    parallel_per_cpu = per_cpu_second(parallel)
    ratio_per_cpu = (sum(parallel_per_cpu) / len(parallel_per_cpu)
                     / (sum(solo_per_cpu) / len(solo_per_cpu))
                     if solo_per_cpu and parallel_per_cpu else None)
    return {
        "cpus": [a, b],
        "solo_rate": solo_rate,
        "parallel_rates": parallel.rates,
        "ratio": sum(parallel.rates) / len(parallel.rates) / solo_rate,
        "ratio_per_cpu_second": ratio_per_cpu,
        "parallel_cpu_shares": parallel.cpu_shares,
        "other_cpus_during_parallel": parallel.other_cpus,
        "other_cpus_during_solo": (None if solo_a.other_cpus is None or solo_b.other_cpus is None
                                   else max(solo_a.other_cpus, solo_b.other_cpus)),
        "steal_fraction": parallel.steal_fraction,
        "duration_s": duration_s,
    }


# Other processes using more than this many CPUs during the probe make its figure theirs as much
# as the machine's: a "solo" run is then not alone, and parallel copies compete with them too.
_PROBE_BUSY_CPUS = 0.3


def check_cpu_contention(duration_s: float = 0.3) -> Check:
    """Real CPU contention: do two CPU-bound processes on two CPUs keep full speed?

    ``unknown`` when other processes kept the CPUs busy during the probe: the slowdown then
    measures them, not the machine.
    """
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return Check("cpu_contention", "unknown",
                     f"only CPU {allowed[0]} is available to this process",
                     "nothing to compare; parallel runs are impossible here",
                     {"allowed_cpus": allowed})
    result = measure_cpu_contention(duration_s)
    ratio = result["ratio"]
    a, b = result["cpus"]
    slow = ratio < CONTENTION_OK_RATIO
    observed = (f"{len(allowed)} CPUs but 2 parallel CPU-bound processes (CPUs {a},{b}) run at "
                f"{ratio:.2f}x speed each" if slow else
                f"{len(allowed)} CPUs; 2 parallel CPU-bound processes (CPUs {a},{b}) keep "
                f"{ratio:.2f}x speed each")
    if result["steal_fraction"]:
        observed += f"; steal {100 * result['steal_fraction']:.0f}%"
    others = [v for v in (result["other_cpus_during_solo"], result["other_cpus_during_parallel"])
              if v is not None]
    busy = max(others) if others else 0.0
    if busy > _PROBE_BUSY_CPUS:
        observed += f" while other processes used up to {busy:.1f} CPUs"
        return Check("cpu_contention", "unknown", observed,
                     "inconclusive: other work competed with the probe; rerun `benchlab system` "
                     "on an idle machine", result)
    if not slow:
        return Check("cpu_contention", "ok", observed,
                     "parallel workers on different CPUs do not slow each other down", result)
    return Check("cpu_contention", "warn", observed,
                 "parallel workers will disturb each other: run one benchmark at a time "
                 "(workers=1) or compare only runs made with the same parallelism", result)


CHEAP_CHECKS = (
    check_governor, check_boost, check_smt, check_aslr, check_swap, check_thp, check_load,
    check_isolated_cpus, check_perf_event_paranoid, check_virtualization, check_clocksource,
)


def run_checks(include_contention: bool = True, contention_duration_s: float = 0.3,
               environment: Mapping[str, Any] | None = None) -> list[Check]:
    """Run the system checks; the CPU contention probe (~3 x ``contention_duration_s`` s) is optional.

    Without the probe this only reads /proc and /sys and runs ``systemd-detect-virt`` (~20 ms),
    cheap enough for the start of every session. Pass ``environment`` (from
    ``collect_environment``) to reuse its virtualisation findings instead of probing again.
    """
    checks = []
    for check in CHEAP_CHECKS:
        if check is check_virtualization and environment is not None:
            checks.append(check_virtualization(environment["virtualization"]))
        else:
            checks.append(check())
    if include_contention:
        checks.append(check_cpu_contention(contention_duration_s))
    return checks


# --------------------------------------------------------------------------------------------
# tune / restore

STATE_DIR_ENV = "BENCHLAB_STATE_DIR"
DEFAULT_STATE_DIR = Path("/var/lib/benchlab")
STATE_FILE_NAME = "tune-state.json"
STATE_FORMAT = 1
TUNABLES = ("aslr", "governor", "boost", "thp")

_THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")
_ASLR = Path("/proc/sys/kernel/randomize_va_space")


def default_state_path() -> Path:
    """``$BENCHLAB_STATE_DIR/tune-state.json``, default ``/var/lib/benchlab/tune-state.json``."""
    base = os.environ.get(STATE_DIR_ENV)
    return (Path(base) if base else DEFAULT_STATE_DIR) / STATE_FILE_NAME


@dataclass
class TuneAction:
    """One setting ``tune`` would change, or why it cannot.

    ``status`` is ``change`` (current differs from target), ``already`` (already at target) or
    ``unavailable`` (not available here; ``reason`` says why).
    """

    name: str
    path: str | None
    current: str | None
    target: str | None
    status: str
    reason: str = ""


def _current_value(path: Path) -> str | dict[str, str]:
    text = read_text(path)
    if is_unknown(text):
        return text
    # sysfs multiple-choice files mark the active value in brackets.
    return text[text.index("[") + 1:text.index("]")] if "[" in text else text


def plan_tune(only: Iterable[str] | None = None) -> list[TuneAction]:
    """What :func:`tune` would do for each tunable, without changing anything."""
    names = _validate_names(only)
    actions: list[TuneAction] = []

    def add(name: str, path: Path, target: str, allowed: Iterable[str] | None = None) -> None:
        current = _current_value(path)
        if is_unknown(current):
            actions.append(TuneAction(name, str(path), None, target, "unavailable",
                                      f"not available here: {current['unknown']}"))
        elif allowed is not None and target not in allowed:
            actions.append(TuneAction(name, str(path), current, target, "unavailable",
                                      f"not available here: {path} does not offer {target!r}"))
        else:
            status = "already" if current == target else "change"
            actions.append(TuneAction(name, str(path), current, target, status))

    if "aslr" in names:
        add("aslr", _ASLR, "0")
    if "governor" in names:
        cpus = online_cpus()
        policies = ([SYS_CPU / f"cpu{cpu}" / "cpufreq" for cpu in cpus]
                    if not is_unknown(cpus) else [])
        present = [p for p in policies if (p / "scaling_governor").exists()]
        if not present:
            actions.append(TuneAction("governor", None, None, "performance", "unavailable",
                                      f"not available here: {CPUFREQ_ABSENT_REASON}"))
        for policy in present:
            offered = read_text(policy / "scaling_available_governors")
            add(f"governor:{policy.parent.name}", policy / "scaling_governor", "performance",
                None if is_unknown(offered) else offered.split())
    if "boost" in names:
        boost = SYS_CPU / "cpufreq" / "boost"
        no_turbo = SYS_CPU / "intel_pstate" / "no_turbo"
        per_policy = sorted(SYS_CPU.glob("cpufreq/policy*/boost"))
        if boost.exists():
            add("boost", boost, "0")
        elif no_turbo.exists():
            add("boost", no_turbo, "1")
        elif per_policy:
            for path in per_policy:
                add(f"boost:{path.parent.name}", path, "0")
        else:
            actions.append(TuneAction("boost", None, None, "off", "unavailable",
                                      "not available here: no /sys/devices/system/cpu/cpufreq/"
                                      "boost nor intel_pstate/no_turbo (virtualised or driver "
                                      "absent)"))
    if "thp" in names:
        add("thp", _THP_ENABLED, "never")
    return actions


def _validate_names(only: Iterable[str] | None) -> set[str]:
    if only is None:
        return set(TUNABLES)
    names = set(only)
    bad = sorted(names - set(TUNABLES))
    if bad:
        raise UserError(f"unknown setting(s) {', '.join(bad)}; choose from {', '.join(TUNABLES)}")
    return names


def _require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise UserError(f"benchlab system {what} writes to /proc and /sys and needs root; "
                        f"run it as root (e.g. sudo benchlab system {what})")


def _write_state(path: Path, state: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise UserError(f"cannot write the tune state file {path}: {exc.strerror or exc}; "
                        f"set {STATE_DIR_ENV} to a writable directory") from exc


def _write_setting(path: str, value: str) -> str | None:
    """Write ``value`` and read it back; an error message, or None on success."""
    try:
        with open(path, "w") as handle:
            handle.write(value + "\n")
    except OSError as exc:
        return f"writing {value!r} to {path} failed: {exc.strerror or exc}"
    now = _current_value(Path(path))
    if now != value:
        return f"{path} reads {now!r} after writing {value!r}"
    return None


def tune(state_path: str | os.PathLike | None = None,
         only: Iterable[str] | None = None) -> dict[str, Any]:
    """Apply benchmarking settings (root), saving the exact previous values first.

    Parameters
    ----------
    state_path : path, optional
        Where to save the previous values (default :func:`default_state_path`).
    only : iterable of str, optional
        Subset of ``TUNABLES`` (aslr, governor, boost, thp); default all.

    Returns
    -------
    dict
        ``state_path`` (str or None when nothing was changed), ``actions`` (one dict per setting:
        name, path, current, target, status, reason; status ``changed``, ``already``,
        ``unavailable`` or ``failed``).

    Raises
    ------
    UserError
        Not root; a state file already exists (restore first); the state file cannot be written.
    """
    _require_root("tune")
    path = Path(state_path) if state_path is not None else default_state_path()
    if path.exists():
        raise UserError(f"a tune state already exists at {path}; run `benchlab system restore` "
                        "first so the original settings are not lost")
    actions = plan_tune(only)
    to_change = [a for a in actions if a.status == "change"]
    if to_change:
        # Save before touching anything, so a crash midway can still be restored.
        _write_state(path, {
            "format": STATE_FORMAT,
            "tuned_at": utc_now_iso(),
            "boot_id": _reason(read_text("/proc/sys/kernel/random/boot_id")),
            "settings": [{"name": a.name, "path": a.path, "previous": a.current,
                          "applied": a.target} for a in to_change],
        })
    for action in to_change:
        error = _write_setting(action.path, action.target)
        if error:
            action.status, action.reason = "failed", error
        else:
            action.status = "changed"
    return {"state_path": str(path) if to_change else None,
            "actions": [asdict(a) for a in actions]}


def restore(state_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Write back every value saved by :func:`tune` and remove the state file (root).

    Returns
    -------
    dict
        ``state_path`` and ``restored``: per setting name, path, value now (the previous one),
        value before restoring.

    Raises
    ------
    UserError
        Not root; no or unreadable state file; a value could not be written back (the state file
        is then kept with only the settings still to restore).
    """
    _require_root("restore")
    path = Path(state_path) if state_path is not None else default_state_path()
    if not path.exists():
        raise UserError(f"no tune state at {path}: nothing to restore (set {STATE_DIR_ENV} to the "
                        "directory used by `benchlab system tune`)")
    try:
        state = json.loads(path.read_text())
        settings = state["settings"]
        assert state.get("format") == STATE_FORMAT
        assert all({"name", "path", "previous"} <= set(s) for s in settings)
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
        raise UserError(f"the tune state file {path} is unreadable or not benchlab's "
                        f"(format {STATE_FORMAT}); inspect it and restore the settings by "
                        "hand") from exc
    restored, failed = [], []
    # Reverse order undoes the changes in the opposite order they were made.
    for setting in reversed(settings):
        before = _current_value(Path(setting["path"]))
        error = _write_setting(setting["path"], setting["previous"])
        if error:
            failed.append({**setting, "error": error})
        else:
            restored.append({"name": setting["name"], "path": setting["path"],
                             "value": setting["previous"],
                             "was": _reason(before) if is_unknown(before) else before})
    if failed:
        _write_state(path, {**state, "settings": [
            {k: v for k, v in s.items() if k != "error"} for s in failed]})
        raise UserError("could not restore: " + "; ".join(s["error"] for s in failed)
                        + f"; state kept in {path}")
    path.unlink()
    return {"state_path": str(path), "restored": restored}
