"""Seed 002's Test 3 (scheduler control groups) through ``benchlab run``.

A fixed CPU-bound task is timed among 100 CPU-wasting processes (``--load cpu:100``): as the
baseline (in the root cgroup, one process among the 101 of benchlab's session), then in a cgroup
of its own with CPU weight 10 and with weight 1000 (``--cpu-weight``). Prints the median wall
time of each beside the seed's means (17.7 s, 2.47 s, 2.19 s) and the ratios, which are what
carries over between machines: the seed's machine had more CPUs and a longer task.

What to expect: baseline far slower than either cgroup (the load's workers share CPU with the
task one process each, while a cgroup competes as one entity whatever it holds), weight 1000
faster than weight 10. Before ``--load`` kept its workers in benchlab's session, they formed one
autogroup and the baseline was barely slower than the task alone.

Needs root (cgroups) and stress-ng. Takes about a minute with the defaults.

Usage: .venv/bin/python bench/seed002_test3.py [--runs 10] [--work 10] [--load cpu:100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from benchlab.measure import build  # noqa: E402

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


def median_wall_s(task: list[str], runs: int, load: str, weight: int | None, db: Path) -> dict:
    """One ``benchlab run`` of the task; its median wall time (s) and what the load recorded."""
    argv = [str(ROOT / ".venv" / "bin" / "benchlab"), "run", "--db", str(db), "-r", str(runs),
            "--load", load, "--json"]
    if weight is not None:
        argv += ["--cpu-weight", str(weight)]
    done = subprocess.run([*argv, "--", " ".join(task)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchlab run failed ({done.returncode}): {done.stderr.strip()}")
    summary = json.loads(done.stdout)
    wall = summary["benchmarks"][0]["wall"]
    return {"median_s": wall["median"] / 1e9, "n": wall["n"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per trial (seed: 10)")
    parser.add_argument("--work", type=int, default=10,
                        help="million loop steps of the fixed task (default 10: ~0.05 s alone)")
    parser.add_argument("--load", default="cpu:100", help="background load (seed: 100 processes)")
    args = parser.parse_args()

    task = [str(build.build_source_text("seed002_test3_task", FIXED_TASK)), str(args.work)]
    with tempfile.TemporaryDirectory(prefix="benchlab-seed002-") as tmp:
        db = Path(tmp) / "test3.db"
        alone = subprocess.run([str(ROOT / ".venv" / "bin" / "benchlab"), "run", "--db", str(db),
                                "-r", "3", "--json", "--", " ".join(task)],
                               capture_output=True, text=True)
        if alone.returncode == 0:
            alone_s = json.loads(alone.stdout)["benchmarks"][0]["wall"]["median"] / 1e9
            print(f"fixed task alone: {alone_s:.3f} s (median of 3)")
        results = {
            "baseline": median_wall_s(task, args.runs, args.load, None, db),
            "weight 10": median_wall_s(task, args.runs, args.load, 10, db),
            "weight 1000": median_wall_s(task, args.runs, args.load, 1000, db),
        }
    print(f"seed 002 Test 3 with --load {args.load}, {args.runs} runs each")
    print(f"{'trial':<12} {'benchlab median (s)':>20} {'seed 002 mean (s)':>18}")
    for trial, result in results.items():
        print(f"{trial:<12} {result['median_s']:>20.3f} {SEED_MEANS_S[trial]:>18.2f}")
    base, slow, fast = (results[k]["median_s"] for k in ("baseline", "weight 10", "weight 1000"))
    seed_base, seed_slow, seed_fast = SEED_MEANS_S.values()
    print(f"{'ratio':<24} {'benchlab':>9} {'seed 002':>9}")
    print(f"{'baseline / weight 10':<24} {base / slow:>9.2f} {seed_base / seed_slow:>9.2f}")
    print(f"{'baseline / weight 1000':<24} {base / fast:>9.2f} {seed_base / seed_fast:>9.2f}")
    print(f"{'weight 10 / weight 1000':<24} {slow / fast:>9.2f} {seed_slow / seed_fast:>9.2f}")


if __name__ == "__main__":
    main()
