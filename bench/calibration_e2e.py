"""End-to-end calibration on one machine: recover a known CPU quota.

1. Profile this machine under a known quota (the "slow base machine"), full size: a dozen CPU
   methods, R rounds.
2. Calibrate the unthrottled machine against that profile with ``calibrate`` (bracket +
   safeguarded secant, noise-aware, <= 15 trials).
3. Print the recovered quota and its error, the residual ratio with its interval, the trial
   log, and the variability range before and after.

The known quota defaults to 20% of one CPU: on this shared 2-vCPU machine other processes
often leave a single stress-ng worker only 35-50% of a CPU, and a quota above that would not
make the base any slower. ``--known`` changes it (e.g. 40000 for 40% on a quiet machine).

Usage: .venv/bin/python bench/calibration_e2e.py [--known 20000] [--period 100000]
       [--repeat 3] [--duration 1] [--methods LIST] [-o calibration.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

from benchlab.control.cgroups import CgroupLimits  # noqa: E402
from benchlab.machines.calibrate import calibrate  # noqa: E402
from benchlab.machines.profile import run_profile  # noqa: E402

METHODS = "int64,int32,double,float,matrixprod,trig,fft,queens,hanoi,sieve,crc16,euler"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--known", type=int, default=20_000, help="known quota of the base, us")
    ap.add_argument("--period", type=int, default=100_000, help="CFS period, us")
    ap.add_argument("--methods", default=METHODS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration", type=int, default=1)
    ap.add_argument("--max-trials", type=int, default=15)
    ap.add_argument("-o", "--output", default=None)
    args = ap.parse_args()
    methods = args.methods.split(",")
    with open("/proc/loadavg") as f:
        print("load:", f.read().split()[:3])
    t0 = time.monotonic()
    base = run_profile(methods, name="slow-base", duration_s=args.duration, repeat=args.repeat,
                       environment={}, limits=CgroupLimits(cpu_quota_us=args.known, cpu_period_us=args.period))
    shares = [v / c for m in base.methods.values() for v, c in zip(m.values, m.cpu_values)]
    print(f"base profile under quota {args.known}/{args.period} us: {len(methods)} methods x {args.repeat} "
          f"in {time.monotonic() - t0:.0f} s; CPU share obtained median {np.median(shares):.3f} "
          f"(quota {args.known / args.period:.3f}); CV median "
          f"{100 * np.median([m.cv for m in base.methods.values()]):.1f}%")

    def observer(t, bracket):
        share = f"{t.cpu_share:.3f}" if t.cpu_share is not None else "?"
        print(f"  {t.purpose:<11} quota {t.quota_us:>7}  ratio {t.ratio:.3f} [{t.ci[0]:.3f}, {t.ci[1]:.3f}]"
              f"  share {share}  {t.elapsed_s:.0f} s", flush=True)

    t1 = time.monotonic()
    result = calibrate(base, methods, period_us=args.period, duration_s=args.duration, repeat=args.repeat,
                       max_trials=args.max_trials, observer=observer)
    err = (result.cpu_quota_us - args.known) / args.known
    rb, ra = result.range_before, result.range_after
    print(f"recovered quota {result.cpu_quota_us} us (known {args.known}): error {100 * err:+.1f}% "
          f"after {len(result.trials) - 1} trials ({result.converged}), calibration {time.monotonic() - t1:.0f} s")
    print(f"residual ratio {result.residual_ratio:.3f} [{result.residual_ci[0]:.3f}, {result.residual_ci[1]:.3f}]")
    print(f"variability range before [{rb['min']:.3f}, {rb['max']:.3f}] length {rb['length']:.3f}; "
          f"after [{ra['min']:.3f}, {ra['max']:.3f}] length {ra['length']:.3f} "
          f"({rb['length'] / ra['length']:.2f}x narrower)")
    print(f"total {time.monotonic() - t0:.0f} s")
    if args.output:
        result.save(args.output)
        print("written to", args.output)


if __name__ == "__main__":
    main()
