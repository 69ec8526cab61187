"""The CPU contention probe: two CPU-bound processes on two CPUs of different cores, do both
keep full speed? On an oversubscribed VM they do not, and parallel workers disturb each other.
Takes ~3 x the probe duration, so it is optional in :func:`benchlab.control.system.run_checks`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchlab.control.system.checks import CONTENTION_OK_RATIO, Check
from benchlab.environment import is_unknown, read_text
from benchlab.environment.topology import read_topology
from benchlab.errors import UserError

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
    import subprocess  # here: the checks a session runs (no contention test) need none

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
    try:
        info = read_topology().cpus.get(first)
    except (UserError, OSError):
        info = None
    # Without topology, any other CPU will do: the probe then says less, but still measures.
    shared = set(info.siblings) if info is not None else {first}
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
