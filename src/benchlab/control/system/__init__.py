"""System checks for benchmarking (:mod:`.checks`, :mod:`.contention`), and ``tune``/``restore`` of the settings that can be changed.

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
default ``/var/lib/benchlab/tune-state.json``, mode 600); :func:`restore` writes them back and
removes it, accepting only a state file benchlab wrote (owner root, mode 600, valid schema) that
names settings ``tune`` changes at their known paths (:mod:`.restore`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchlab.control.system.checks import (
    CONTENTION_OK_RATIO,
    LOAD_WARN_THRESHOLD,
    STATUSES,
    Check,
    check_aslr,
    check_boost,
    check_clocksource,
    check_governor,
    check_isolated_cpus,
    check_load,
    check_perf_event_paranoid,
    check_smt,
    check_swap,
    check_thp,
    check_virtualization,
)
from benchlab.lazy import lazy_names

# The contention probe, tune and restore load on first use (PEP 562 ``__getattr__`` below):
# every session runs the cheap checks, few ever tune (~1.5 ms of start-up for each session).
_LAZY = {
    "check_cpu_contention": "contention", "measure_cpu_contention": "contention",
    "restore": "restore",
    **dict.fromkeys(("DEFAULT_STATE_DIR", "STATE_DIR_ENV", "STATE_FILE_NAME", "STATE_FORMAT",
                     "TUNABLES", "TuneAction", "default_state_path", "plan_tune", "tune"),
                    "tuning"),
}


__getattr__ = lazy_names(__name__, _LAZY, globals())


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
        from benchlab.control.system.contention import check_cpu_contention

        checks.append(check_cpu_contention(contention_duration_s))
    return checks


__all__ = [
    "CHEAP_CHECKS", "CONTENTION_OK_RATIO", "DEFAULT_STATE_DIR", "LOAD_WARN_THRESHOLD",
    "STATE_DIR_ENV", "STATE_FILE_NAME", "STATE_FORMAT", "STATUSES", "TUNABLES", "Check",
    "TuneAction", "check_cpu_contention", "default_state_path", "measure_cpu_contention",
    "plan_tune", "restore", "run_checks", "tune",
]
