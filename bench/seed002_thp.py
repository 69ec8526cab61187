"""The OS-features report's fourth experiment, transparent huge pages, beside its three others.

The OS-features report announces four experiments but publishes results for three: Tests 1 and 2
(IPC: a blocking named pipe as baseline, zero-copy shared memory, non-blocking "async" pipe;
Table 1) and Test 3 (scheduler cgroups under 100 CPU wasters; Table 2). This script prints those
published means and the same IPC comparison measured here with the bundled workloads (fewer
messages), the three modes **interleaved** (every mode once per round, in a new random order
each round), each mode's median with its 95% interval, and each ratio to the pipe with its
interval. Seconds and ratio sizes do not carry over from the report's machine; its
**orderings** might, and each is printed as holding, reversed or undecided (its interval
contains 1; see bench/seed002_common.py). Test 3 is bench/seed002_test3.py (it takes a few
minutes and needs stress-ng). Test 4 is measured here: the bundled ``thp_walk`` workload
walks the same buffer after ``madvise(MADV_HUGEPAGE)`` and after ``madvise(MADV_NOHUGEPAGE)``
(no system setting changed), the two modes interleaved, reporting the program's own walk time
(median, with intervals), its page faults and the huge pages it got.
dTLB misses need hardware perf counters, which this VM does not expose; where ``perf stat -e
dTLB-load-misses`` works, add ``--perf`` to count them too.

Usage: nice .venv/bin/python bench/seed002_thp.py [--runs 10] [--size-mib 256]
       [--steps 1000000] [--messages 20000] [--perf]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from benchlab.environment.kernel import thp_setting  # noqa: E402
from benchlab.environment.memory import thp_details  # noqa: E402
from benchlab.workloads import build_workload, parse_workload_output  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from seed002_common import interleaved, median_interval, ratio_line  # noqa: E402

SEED_TABLE1_S = {"baseline (blocking pipe)": 11.4, "zero-copy (shared memory)": 2.91,
                 "async (non-blocking pipe)": 25.4}
SEED_TABLE2_S = {"baseline (root cgroup)": 17.7, "slow cgroup (weight 10)": 2.47,
                 "fast cgroup (weight 1000)": 2.19}
IPC = {"baseline (blocking pipe)": ("ipc_pipe", []),
       "zero-copy (shared memory)": ("ipc_shm_ring", ["futex"]),
       "async (non-blocking pipe)": ("ipc_fifo_nonblock", ["busy"])}


def run_workload(name: str, args: list[str], perf: bool = False) -> tuple[dict, dict, int | None]:
    """One run: (self times ns, metrics, dTLB load misses or None)."""
    argv = [str(build_workload(name)), *args]
    misses = None
    if perf:
        argv = ["perf", "stat", "-x,", "-e", "dTLB-load-misses", "--", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    if perf:
        for line in done.stderr.splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2].startswith("dTLB") and fields[0].isdigit():
                misses = int(fields[0])
    parsed = parse_workload_output(done.stdout)
    return parsed.self_times, {k: v for k, (v, _) in parsed.metrics.items()}, misses


def ipc_here(messages: int, runs: int) -> dict[str, list[float]]:
    """Each IPC workload's self-reported wall times (s), the modes interleaved in ``runs``
    rounds."""
    def one(label: str) -> list[float]:
        name, extra = IPC[label]
        return [run_workload(name, [str(messages), "64", *extra])[0]["wall_ns"] / 1e9]

    return interleaved(list(IPC), runs, one)


def thp_here(runs: int, size_mib: int, steps: int, perf: bool) -> dict[str, dict]:
    """Per mode: median walk wall and CPU (s), setup faults, AnonHugePages (KiB), dTLB misses."""
    samples = interleaved(["huge", "nohuge"], runs, lambda mode: [
        run_workload("thp_walk", [mode, str(size_mib), str(steps)], perf)])
    out = {}
    for mode, rows in samples.items():
        misses = [m for _, _, m in rows if m is not None]
        out[mode] = {
            "wall_s": statistics.median(s["wall_ns"] for s, _, _ in rows) / 1e9,
            "cpu_s": statistics.median(s["cpu_ns"] for s, _, _ in rows) / 1e9,
            "cpu_values": [s["cpu_ns"] / 1e9 for s, _, _ in rows],
            "setup_faults": statistics.median(m["setup_faults"] for _, m, _ in rows),
            "anon_huge_kib": statistics.median(m["anon_huge_kib"] for _, m, _ in rows),
            "dtlb_misses": statistics.median(misses) if misses else None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds (every mode once each)")
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--perf", action="store_true", help="count dTLB-load-misses with perf")
    args = parser.parse_args()
    if args.perf and shutil.which("perf") is None:
        raise SystemExit("--perf needs perf (apt-get install linux-perf)")
    load_before = os.getloadavg()
    ipc = ipc_here(args.messages, args.runs)
    thp = thp_here(args.runs, args.size_mib, args.steps, args.perf)
    load_after = os.getloadavg()

    print("The OS-features report's four experiments: the published means and this machine\n")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 vCPUs)\n")
    print("Tests 1-2, IPC (report: 10,000,000 integers, mean of 10; here: "
          f"{args.messages} messages of 64 B, {args.runs} interleaved rounds, program's own "
          "wall time; 95% intervals)")
    print(f"  {'':28s} {'report (s)':>10s}   {'here: median [interval] (s)':>30s}")
    for label, seed_s in SEED_TABLE1_S.items():
        med, lo, hi = median_interval(ipc[label])
        print(f"  {label:28s} {seed_s:10.2f}   {med:9.4f} [{lo:.4f}, {hi:.4f}]")
    print("  orderings (ratio of medians, 95% interval):")
    base = "baseline (blocking pipe)"
    zero, sync = "zero-copy (shared memory)", "async (non-blocking pipe)"
    print(ratio_line("zero-copy / pipe", ipc[base], ipc[zero],
                     SEED_TABLE1_S[zero] / SEED_TABLE1_S[base]))
    print(ratio_line("async / pipe", ipc[base], ipc[sync],
                     SEED_TABLE1_S[sync] / SEED_TABLE1_S[base]))
    print(ratio_line("zero-copy / async", ipc[sync], ipc[zero],
                     SEED_TABLE1_S[zero] / SEED_TABLE1_S[sync]))
    print("\nTest 3, scheduler cgroups under 100 CPU wasters (report: mean of 10; here: run "
          "bench/seed002_test3.py)")
    for label, seed_s in SEED_TABLE2_S.items():
        print(f"  {label:28s} {seed_s:9.2f} {seed_s / SEED_TABLE2_S['baseline (root cgroup)']:8.2f}")
    settings = thp_setting()
    details = thp_details()
    print(f"\nTest 4, transparent huge pages (report: announced, no result published). Here: "
          f"thp_walk, {args.size_mib} MiB buffer, {args.steps} dependent loads, median of "
          f"{args.runs} per mode, modes interleaved")
    print(f"  THP setting: enabled={settings.get('enabled')} defrag={settings.get('defrag')} "
          f"huge page={details.get('pmd_size_kib')} KiB "
          f"khugepaged/defrag={details.get('khugepaged_defrag')} (unchanged by benchlab)")
    print(f"  {'mode':28s} {'walk wall s':>11s} {'walk CPU s':>10s} {'setup faults':>12s} "
          f"{'AnonHuge KiB':>12s} {'dTLB misses':>12s}")
    for mode, label in (("nohuge", "madvise(MADV_NOHUGEPAGE)"), ("huge", "madvise(MADV_HUGEPAGE)")):
        r = thp[mode]
        misses = f"{r['dtlb_misses']:.0f}" if r["dtlb_misses"] is not None else "n/a (no PMU)"
        print(f"  {label:28s} {r['wall_s']:11.4f} {r['cpu_s']:10.4f} {r['setup_faults']:12.0f} "
              f"{r['anon_huge_kib']:12.0f} {misses:>12s}")
    print(ratio_line("huge / 4 KiB pages, walk CPU", thp["nohuge"]["cpu_values"],
                     thp["huge"]["cpu_values"], 0.9, claim="expected < 1"))
    print(f"  page faults {thp['nohuge']['setup_faults'] / max(thp['huge']['setup_faults'], 1):.0f}x "
          f"fewer with huge pages")


if __name__ == "__main__":
    main()
