"""The OS-features report's Test 3 (scheduler control groups) through ``benchlab run``.

A fixed CPU-bound task is timed among 100 CPU-wasting processes (``--load cpu:100``): as the
baseline (in the root cgroup, one process among the 101 of benchlab's session), then in a cgroup
of its own with CPU weight 10 and with weight 1000 (``--cpu-weight``); and alone, without the
load, as the floor every trial is measured against. The four trials are **interleaved**: each
round runs every trial once (a short ``benchlab run`` of ``--per-round`` runs, its own load
started and stopped) in a new random order, so the machine's other work falls on all of them
alike. Printed: each trial's median wall time with its 95% interval beside the report's mean,
and each of the report's orderings with the interval of its ratio of medians: holds, reversed,
or undecided (the interval contains 1; see bench/seed002_common.py). Seconds and ratio sizes
do not carry over (the report's machine had more CPUs and a longer task); orderings might.

The report's orderings: the baseline far slower than either cgroup (the load's workers share
CPU with the task one process each, while a cgroup competes as one entity whatever it holds);
weight 1000 faster than weight 10 (by 1.13x there). And on an idle machine a task under load
is not faster than alone, so "weight 1000 faster than alone" must not hold there. On a shared
machine it can (measured 2026-12-07, load average 11 before the script: weight 1000 / alone
0.30 [0.23, 0.41]): "alone" means without stress-ng, still in the root cgroup where each of
the machine's other processes competes with the task one by one, while a cgroup of weight
1000 competes as one entity with ten times the root tasks' default share. Read "reversed"
there as a busy machine, not as a cgroup making a task faster than the CPU allows.

Needs root (cgroups) and stress-ng. About three minutes with the defaults; run it with nice.

Usage: nice .venv/bin/python bench/seed002_test3.py [--rounds 5] [--per-round 2] [--work 10]
       [--load cpu:100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from benchlab.measure import build  # noqa: E402
from benchlab.store import Store  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from seed002_common import interleaved, median_interval, ratio_line  # noqa: E402

# The fixed amount of work: ``argv[1]`` million LCG steps, nothing else (no I/O, no memory).
FIXED_TASK = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]) * 1000000L;
    volatile unsigned long x = 1;
    for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1;
    return 0;
}
"""

SEED_MEANS_S = {"baseline": 17.7, "weight 10": 2.47, "weight 1000": 2.19}
TRIALS = ("alone", "baseline", "weight 10", "weight 1000")


def trial_walls_s(task: list[str], runs: int, load: str | None, weight: int | None,
                  db: Path) -> list[float]:
    """One ``benchlab run`` of the task: its runs' wall times (s)."""
    argv = [str(ROOT / ".venv" / "bin" / "benchlab"), "run", "--db", str(db), "-r", str(runs),
            "--json"]
    if load:
        argv += ["--load", load]
    if weight is not None:
        argv += ["--cpu-weight", str(weight)]
    done = subprocess.run([*argv, "--", " ".join(task)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchlab run failed ({done.returncode}): {done.stderr.strip()}")
    uid = json.loads(done.stdout)["session"]
    with Store.open(str(db)) as store:
        sess = store.get_session(uid)
        return [r["wall_ns"] / 1e9 for r in store.runs(session_id=sess["id"],
                                                        include_warmup=False)
                if r["status"] == "ok"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the four trials")
    parser.add_argument("--per-round", type=int, default=2, help="runs per trial and round "
                        "(report: 10 runs per trial; here rounds x per-round)")
    parser.add_argument("--work", type=int, default=10,
                        help="million loop steps of the fixed task (default 10: ~0.05 s alone)")
    parser.add_argument("--load", default="cpu:100", help="background load (report: 100 processes)")
    args = parser.parse_args()

    task = [str(build.build_source_text("seed002_test3_task", FIXED_TASK)), str(args.work)]
    setups = {"alone": (None, None), "baseline": (args.load, None),
              "weight 10": (args.load, 10), "weight 1000": (args.load, 1000)}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="benchlab-test3-") as tmp:
        db = Path(tmp) / "test3.db"
        walls = interleaved(list(TRIALS), args.rounds, lambda trial: trial_walls_s(
            task, args.per_round, *setups[trial], db))
    load_after = os.getloadavg()
    print(f"Test 3 with --load {args.load}: {args.rounds} interleaved rounds of "
          f"{args.per_round} runs per trial; load average before {load_before[0]:.2f}, after "
          f"{load_after[0]:.2f} (2 vCPUs, shared)")
    print(f"{'trial':<12} {'here: median [95% interval] (s)':>34} {'report mean (s)':>16}")
    for trial in TRIALS:
        med, lo, hi = median_interval(walls[trial])
        seed = f"{SEED_MEANS_S[trial]:16.2f}" if trial in SEED_MEANS_S else f"{'-':>16}"
        print(f"{trial:<12} {med:>12.3f} [{lo:.3f}, {hi:.3f}]{'':4} {seed}")
    base, slow, fast = SEED_MEANS_S["baseline"], SEED_MEANS_S["weight 10"], \
        SEED_MEANS_S["weight 1000"]
    print("orderings (ratio of medians, 95% interval):")
    print(ratio_line("weight 10 / baseline", walls["baseline"], walls["weight 10"], slow / base))
    print(ratio_line("weight 1000 / baseline", walls["baseline"], walls["weight 1000"],
                     fast / base))
    print(ratio_line("weight 1000 / weight 10", walls["weight 10"], walls["weight 1000"],
                     fast / slow))
    print(ratio_line("weight 1000 / alone", walls["alone"], walls["weight 1000"], 1.5,
                     claim="expected > 1"))


if __name__ == "__main__":
    main()
