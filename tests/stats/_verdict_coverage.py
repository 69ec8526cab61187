"""Coverage of the verdict's 95 % interval on AR(1) runs (issue: a verdict that does not
contradict its own numbers at small n). Run as a script for the figures in docs/verdict.md::

    .venv/bin/python tests/stats/_verdict_coverage.py [simulations per cell] [--false-claims]

Two commands with the same distribution (an A/A pair, true ratio 1; the Hodges-Lehmann ratio
and its interval are equivariant under a scale change, so coverage at ratio 1 is coverage at
any ratio) each measure n runs of 1 ms times exp(0.05 x_t), x an AR(1) series with
coefficient phi started in its stationary distribution. Coverage is the share of intervals
that hold 1. With ``--false-claims``: the share of k = 2, 3, 5 such commands (phi 0.5, the
fastest as baseline, the default rule) with any "faster"/"slower" said, at n = 20 and 12.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from benchlab.stats.verdict_model import verdict_model

PHIS = (0.0, 0.3, 0.6)
SIZES = (10, 30)
SEED = 20261126


def ar1_runs(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """n wall times (ns) around 1 ms whose logs are AR(1) with coefficient ``phi``, marginal
    standard deviation 0.05."""
    e = rng.normal(0.0, np.sqrt(1 - phi * phi), n)
    x = np.empty(n)
    x[0] = rng.normal()
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    return 1e6 * np.exp(0.05 * x)


def covers(low: float, high: float, low_open: bool, high_open: bool) -> bool:
    """Whether the interval (with its open ends) holds ratio 1."""
    return (low < 1 or (low == 1 and not low_open)) and (high > 1 or (high == 1 and not high_open))


def coverage(phi: float, n: int, sims: int, seed: int = SEED) -> float:
    """Share of ``sims`` A/A pairs of ``n`` AR(1) runs whose 95 % interval holds 1."""
    rng = np.random.default_rng([seed, int(round(phi * 10)), n])
    held = 0
    for _ in range(sims):
        c = verdict_model({"old": ar1_runs(rng, n, phi), "new": ar1_runs(rng, n, phi)},
                          reference="old").candidates[0]
        held += covers(c.ratio_low, c.ratio_high, c.low_open, c.high_open)
    return held / sims


def false_claims(k: int, n: int, sims: int, seed: int = SEED) -> float:
    """Share of ``sims`` sets of k identical commands (n AR(1) runs each, phi 0.5) where the
    verdict (fastest as baseline) says any "faster" or "slower"."""
    rng = np.random.default_rng([seed, k, n])
    claims = 0
    for _ in range(sims):
        v = verdict_model({f"c{i}": ar1_runs(rng, n, 0.5) for i in range(k)})
        claims += any(c.decided for c in v.candidates)
    return claims / sims


def main(sims: int, claims: bool) -> None:
    start = time.process_time()
    for n in SIZES if not claims else (20, 12):
        cells = ([f"phi {phi}: {coverage(phi, n, sims):.3f}" for phi in PHIS] if not claims
                 else [f"k = {k}: {100 * false_claims(k, n, sims):.1f} %" for k in (2, 3, 5)])
        print(f"n = {n}: " + ", ".join(cells))
    print(f"{sims} simulations a cell, seed {SEED}, {time.process_time() - start:.1f} s CPU")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--false-claims"]
    main(int(args[0]) if args else 2000, "--false-claims" in sys.argv)
