"""Seed 002's fourth experiment, transparent huge pages, beside its three others.

The OS-features report announces four experiments but publishes results for three: Tests 1 and 2
(IPC: a blocking named pipe as baseline, zero-copy shared memory, non-blocking "async" pipe;
Table 1) and Test 3 (scheduler cgroups under 100 CPU wasters; Table 2). This script prints those
published means, the same IPC comparison measured here with the bundled workloads (fewer
messages: the ratios carry over, not the seconds), Test 3 as bench/seed002_test3.py measured it
(run that script for the figures: it takes a minute and needs stress-ng), and Test 4 measured
here: the bundled ``thp_walk`` workload walks the same buffer after ``madvise(MADV_HUGEPAGE)``
and after ``madvise(MADV_NOHUGEPAGE)`` (no system setting changed), alternating the two modes,
reporting the program's own walk time (median), its page faults and the huge pages it got.
dTLB misses need hardware perf counters, which this VM does not expose; where ``perf stat -e
dTLB-load-misses`` works, add ``--perf`` to count them too.

Usage: .venv/bin/python bench/seed002_thp.py [--runs 7] [--size-mib 256] [--steps 1000000]
       [--messages 20000] [--perf]
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


def ipc_here(messages: int, runs: int) -> dict[str, float]:
    """Median self-reported wall time (s) of each IPC workload."""
    out = {}
    for label, (name, extra) in IPC.items():
        walls = [run_workload(name, [str(messages), "64", *extra])[0]["wall_ns"] / 1e9
                 for _ in range(runs)]
        out[label] = statistics.median(walls)
    return out


def thp_here(runs: int, size_mib: int, steps: int, perf: bool) -> dict[str, dict]:
    """Per mode: median walk wall and CPU (s), setup faults, AnonHugePages (KiB), dTLB misses."""
    samples: dict[str, list] = {"huge": [], "nohuge": []}
    for _ in range(runs):
        for mode in ("huge", "nohuge"):  # alternating: a burst of load hits both
            samples[mode].append(run_workload("thp_walk", [mode, str(size_mib), str(steps)], perf))
    out = {}
    for mode, rows in samples.items():
        misses = [m for _, _, m in rows if m is not None]
        out[mode] = {
            "wall_s": statistics.median(s["wall_ns"] for s, _, _ in rows) / 1e9,
            "cpu_s": statistics.median(s["cpu_ns"] for s, _, _ in rows) / 1e9,
            "setup_faults": statistics.median(m["setup_faults"] for _, m, _ in rows),
            "anon_huge_kib": statistics.median(m["anon_huge_kib"] for _, m, _ in rows),
            "dtlb_misses": statistics.median(misses) if misses else None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
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

    print("Seed 002 (OS features), its four experiments: the published means and this machine\n")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (2 vCPUs)\n")
    print("Tests 1-2, IPC (seed: 10,000,000 integers, mean of 10; here: "
          f"{args.messages} messages of 64 B, median of {args.runs}, program's own wall time)")
    base_seed, base_here = SEED_TABLE1_S["baseline (blocking pipe)"], ipc["baseline (blocking pipe)"]
    print(f"  {'':28s} {'seed (s)':>9s} {'vs base':>8s} {'here (s)':>9s} {'vs base':>8s}")
    for label, seed_s in SEED_TABLE1_S.items():
        print(f"  {label:28s} {seed_s:9.2f} {seed_s / base_seed:8.2f} {ipc[label]:9.4f} "
              f"{ipc[label] / base_here:8.2f}")
    print("\nTest 3, scheduler cgroups under 100 CPU wasters (seed: mean of 10; here: run "
          "bench/seed002_test3.py)")
    for label, seed_s in SEED_TABLE2_S.items():
        print(f"  {label:28s} {seed_s:9.2f} {seed_s / SEED_TABLE2_S['baseline (root cgroup)']:8.2f}")
    settings = thp_setting()
    details = thp_details()
    print(f"\nTest 4, transparent huge pages (seed: announced, no result published). Here: "
          f"thp_walk, {args.size_mib} MiB buffer, {args.steps} dependent loads, median of "
          f"{args.runs} per mode, modes alternating")
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
    ratio = thp["huge"]["cpu_s"] / thp["nohuge"]["cpu_s"]
    print(f"  huge / 4 KiB pages, walk CPU time: {ratio:.3f} "
          f"({(1 - ratio) * 100:+.1f}% faster with huge pages); page faults "
          f"{thp['nohuge']['setup_faults'] / max(thp['huge']['setup_faults'], 1):.0f}x fewer")


if __name__ == "__main__":
    main()
