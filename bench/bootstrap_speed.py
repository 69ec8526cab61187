"""Time and peak memory of BCa bootstrap intervals at large n.

Usage: .venv/bin/python bench/bootstrap_speed.py [--sizes 100000 1000000] [--resamples 10000]
       [--resample-median]

Each case (statistic x n) runs in a fresh child process so that its peak resident set size
(ru_maxrss, KiB -> MiB) is its own; the child also reports tracemalloc's peak of traced
(numpy + Python) allocations. Data: lognormal, seeded. One run per case: figures on a shared
2-vCPU machine vary by tens of percent between runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc

CHILD = "--child"


def run_case(statistic: str, n: int, resamples: int, median_sampler: str) -> dict:
    import numpy as np

    from benchlab.stats import bootstrap_ci

    x = np.random.default_rng(12345).lognormal(mean=13.0, sigma=0.3, size=n)  # ~ 0.5 ms in ns
    tracemalloc.start()
    t0 = time.perf_counter()
    ci = bootstrap_ci(x, statistic, kind="bca", n_resamples=resamples, seed=1,
                      median_sampler=median_sampler)
    wall = time.perf_counter() - t0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "statistic": statistic, "n": n, "resamples": resamples, "sampler": ci.sampler,
        "jackknife": ci.jackknife_method, "wall_s": wall,
        "traced_peak_mib": traced_peak / 2**20,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "low": ci.low, "estimate": ci.estimate, "high": ci.high,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == CHILD:
        statistic, n, resamples, sampler = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        print(json.dumps(run_case(statistic, n, resamples, sampler)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--resample-median", action="store_true",
                        help="also time the median by plain resampling (slow: O(n) per resample)")
    args = parser.parse_args()
    cases = [("median", "order"), ("sd", "order")]
    if args.resample_median:
        cases.append(("median", "resample"))
    print(f"{'statistic':<9} {'sampler':<8} {'n':>9} {'B':>6} {'time_s':>8} {'traced_MiB':>10}"
          f" {'maxrss_MiB':>10}  interval (BCa 95%)")
    for n in args.sizes:
        for statistic, sampler in cases:
            out = subprocess.run(
                [sys.executable, __file__, CHILD, statistic, str(n), str(args.resamples), sampler],
                check=True, capture_output=True, text=True,
            )
            r = json.loads(out.stdout)
            print(f"{r['statistic']:<9} {r['sampler']:<8} {r['n']:>9} {r['resamples']:>6}"
                  f" {r['wall_s']:>8.2f} {r['traced_peak_mib']:>10.1f} {r['maxrss_mib']:>10.1f}"
                  f"  [{r['low']:.1f}, {r['high']:.1f}] around {r['estimate']:.1f}", flush=True)


if __name__ == "__main__":
    main()
