"""Full machine profile: how long it takes and how stable each method is on this machine.

Runs ``run_profile`` over every stress-ng CPU method plus the memory/cache stressors (86 on
Debian's stress-ng 0.15) with 1 s runs, R interleaved rounds, then optional extra rounds for
methods above the 2% CV target within the 5-minute budget, and prints:

* the wall time of the whole profile;
* the per-method CV of the real-time rate (the profile's value): median, 90th percentile,
  max, and how many methods are at or below 2%;
* the same for the rate per CPU second (user+sys), which other processes' time slicing does not
  touch: the difference between the two is what the machine's load adds;
* the noisiest methods.

Usage: .venv/bin/python bench/profile_cv.py [--repeat 3] [--duration 1] [--cpus 1]
       [--methods all] [--budget 300] [--nice -20] [-o profile.json]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

from benchlab.machines import stressng  # noqa: E402
from benchlab.machines.profile import run_profile  # noqa: E402
from benchlab.units import parse_cpu_list  # noqa: E402


def cv(values) -> float:
    a = np.asarray(values, dtype=float)
    return float(a.std(ddof=1) / a.mean()) if a.size >= 2 and a.mean() else math.nan


def describe(label: str, cvs: list[float]) -> None:
    a = np.asarray([c for c in cvs if not math.isnan(c)])
    print(f"{label}: median {100 * np.median(a):.2f}%  p90 {100 * np.percentile(a, 90):.2f}%  "
          f"max {100 * a.max():.2f}%  <=2%: {int((a <= 0.02).sum())}/{a.size}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="all")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration", type=int, default=1)
    ap.add_argument("--cpus", default=None)
    ap.add_argument("--nice", type=int, default=None, help="run stress-ng under nice -n N (root for < 0)")
    ap.add_argument("--budget", type=float, default=300.0, help="total time budget, s")
    ap.add_argument("--target-cv", type=float, default=0.02)
    ap.add_argument("-o", "--output", default=None)
    args = ap.parse_args()
    methods = stressng.resolve_methods(args.methods)
    cpus = list(parse_cpu_list(args.cpus)) if args.cpus else None
    print(f"stress-ng {stressng.stress_ng_version()}: {len(methods)} methods, {args.duration} s runs, "
          f"{args.repeat} rounds, cpus {cpus or 'any'}, nice {args.nice}, extra rounds to CV <= {args.target_cv:.0%} "
          f"within {args.budget:.0f} s", flush=True)
    with open("/proc/loadavg") as f:
        print("load before:", f.read().split()[:3])
    started = time.monotonic()
    prof = run_profile(methods, name="bench-profile", duration_s=args.duration, repeat=args.repeat,
                       cpus=cpus, target_cv=args.target_cv, time_budget_s=args.budget, environment={},
                       nice=args.nice)
    elapsed = time.monotonic() - started
    with open("/proc/loadavg") as f:
        print("load after:", f.read().split()[:3])
    print(f"profile time: {elapsed:.1f} s for {prof.metadata['runs']} runs "
          f"({elapsed / max(prof.metadata['runs'], 1):.2f} s per run)")
    real = {m: r.cv for m, r in prof.methods.items()}
    cpu = {m: cv(r.cpu_values) for m, r in prof.methods.items()}
    describe("CV of bogo-ops/s (real time)", list(real.values()))
    describe("CV of bogo-ops per CPU second", list(cpu.values()))
    shares = [v / c for r in prof.methods.values() for v, c in zip(r.values, r.cpu_values) if c > 0]
    print(f"CPU share obtained by stress-ng (CPU time / wall): median {np.median(shares):.2f}, "
          f"min {min(shares):.2f}, max {max(shares):.2f}")
    worst = sorted(real, key=lambda m: -real[m] if not math.isnan(real[m]) else 0)[:8]
    print("noisiest:", ", ".join(f"{m} {100 * real[m]:.1f}% (cpu {100 * cpu[m]:.1f}%, n={len(prof.methods[m].values)})"
                                 for m in worst))
    if prof.metadata.get("failed_methods"):
        print("failed:", prof.metadata["failed_methods"])
    if args.output:
        prof.save(args.output)
        print("written to", args.output)


if __name__ == "__main__":
    main()
