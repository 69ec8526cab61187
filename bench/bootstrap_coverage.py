"""Coverage of benchlab's 95% bootstrap intervals on skewed data (prints figures).

For lognormal samples (the shape of many latency distributions) of size n, draw many data sets
from a distribution whose true mean and median are known, compute the four interval kinds
(percentile, basic, normal, BCa) from one set of resamples each, and count how often each
interval contains the truth. A correct 95% interval covers about 95% of the time; with heavy
skew and small n every bootstrap interval under-covers, BCa least.

Usage:  .venv/bin/python bench/bootstrap_coverage.py [--sims N] [--resamples B] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchlab.stats.bootstrap import bootstrap_cis

KINDS = ("percentile", "basic", "normal", "bca")


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson interval of a proportion."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def coverage(stat: str, n: int, sigma: float, sims: int, resamples: int, seed: int) -> None:
    mu = math.log(1e6)  # median 1 ms in ns
    truth = math.exp(mu + sigma ** 2 / 2) if stat == "mean" else math.exp(mu)
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(KINDS, 0)
    t0 = time.perf_counter()
    for k in range(sims):
        x = rng.lognormal(mu, sigma, n)
        cis = bootstrap_cis(x, stat, kinds=KINDS, n_resamples=resamples, seed=seed * 100003 + k)
        for kind, ci in cis.items():
            hits[kind] += ci.low <= truth <= ci.high
    dt = time.perf_counter() - t0
    parts = []
    for kind in KINDS:
        lo, hi = wilson(hits[kind], sims)
        parts.append(f"{kind} {hits[kind] / sims:.3f} [{lo:.3f}, {hi:.3f}]")
    print(f"{stat:6s} n={n:5d} sigma={sigma:.2f}: " + "; ".join(parts) + f"  ({dt:.0f} s)",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"95% intervals, {args.sims} data sets each, {args.resamples} resamples; coverage "
          f"with its 95% Wilson interval")
    for stat in ("mean", "median"):
        for n, sigma in ((100, 0.5), (1000, 0.5), (1000, 1.0)):
            coverage(stat, n, sigma, args.sims, args.resamples, args.seed)


if __name__ == "__main__":
    main()
