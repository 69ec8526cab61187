"""The gate's false-regression rate at exactly 1 + threshold, by simulation through decide().

``ab`` decides each benchmark on the head/base ratio of interleaved pairs with a repeated
interval (O'Brien-Fleming spending of alpha over the looks) and calls a regression only when the
interval's lower end exceeds 1 + threshold; with the true ratio at exactly 1 + threshold that may
happen with probability at most alpha / 2. This script runs ``ab``'s own look schedule
(:class:`benchlab.ci.ab.LookClock`: no look before ``--min-pairs``, then every 10 pairs and at
least 2 % more than the last look; a budget of ``--budget`` pairs at a steady pace, so each look
has spent pairs / budget of it, and the last look spends what is left) through
:func:`benchlab.ci.gate.decide` on paired noise of three kinds, with the true ratio 1.02 and
threshold 2 %, and prints the share of benchmarks called "slower" with its Clopper-Pearson 95 %
interval against alpha / 2:

* ``iid``: within-pair log ratios normal, SD 2 %;
* ``heavy``: Student t with 2 degrees of freedom, scale 1 % (quartiles about +-0.8 %, 1 %/99 %
  about +-7 %), as pairs of a ms-scale program on a loaded machine;
* ``two-speed``: each run independently 10 % slower with probability 0.3 (a second frequency or
  a cache-cold path), 0.5 % normal noise on top: within-pair ratios lumped at 1, 1.1 and 1/1.1.

Why one bound serves every noise: a regression call at a look is the exact signed-rank test of
the boundary (the lower end of the Hodges-Lehmann interval exceeds log(1 + threshold) exactly when
the count of Walsh averages at or below it is at most the excluded count), and under any
continuous within-pair noise symmetric about the boundary (the random order within a pair makes
it symmetric) the signs and the ranks of the pairs' distances from it are independent fair coins
and a uniform permutation at every look: the statistic's whole path has one distribution for
every such noise. ``--process-sims N`` simulates that path directly (ranks of normal draws, the
same critical values and exact excluded counts; ~100x faster than decide()), giving the schedule's
rate without early stops on "equivalent" or "faster", which can only lower it; the decide() runs
per noise then show those stops and the noise change nothing beyond Monte-Carlo error.

Usage::

    nice -n 15 .venv/bin/python bench/gate_boundary.py --sims 4000 --process-sims 300000
    .venv/bin/python bench/gate_boundary.py --sims 500 --noise iid   # a smoke test
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchlab.ci.ab import LookClock
from benchlab.ci.ab_plan import AbOptions
from benchlab.ci.gate import DEFAULT_ALPHA, Looks, decide

THRESHOLD = 0.02
NOISES = ("iid", "heavy", "two-speed")


def draw(noise: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n pairs (base, head) of run times whose true typical ratio head/base is 1 + THRESHOLD."""
    base = np.full(n, 1e6)
    if noise == "iid":
        d = rng.normal(0.0, 0.02, n)
    elif noise == "heavy":
        d = 0.01 * rng.standard_t(2, n)
    elif noise == "two-speed":
        slow = np.log(1.1) * (rng.random((2, n)) < 0.3) + rng.normal(0.0, 0.005, (2, n))
        d = slow[1] - slow[0]
    else:
        raise ValueError(noise)
    return base, base * (1 + THRESHOLD) * np.exp(d)


def look_schedule(min_pairs: int, budget: int,
                  alpha: float = DEFAULT_ALPHA) -> list[tuple[int, float]]:
    """(pairs, critical value) of every look ``ab``'s clock takes on a budget of ``budget``
    pairs at a steady pace (its time budget never the binding one), none before ``min_pairs``."""
    options = AbOptions(min_pairs=min_pairs, max_pairs=budget, max_time_s=366 * 86400,
                        alpha=alpha)
    now = time.monotonic()
    clock, looks = LookClock(options, start=now, measured_from=now), Looks(alpha=alpha)
    schedule = []
    for pairs in range(min_pairs, budget + 1):
        look = clock.look(pairs, looks)
        if look is not None:
            schedule.append((pairs, look[3]))
            if look[1]:
                break
    return schedule


def one_benchmark(noise: str, rng: np.random.Generator, schedule: list[tuple[int, float]],
                  alpha: float) -> str:
    """The gate's last outcome for one simulated benchmark under ab's look schedule."""
    budget = schedule[-1][0]
    base, head = draw(noise, rng, budget)
    outcome = "undecided"
    for pairs, critical in schedule:
        d = decide(base[:pairs], head[:pairs], benchmark="b", metric="wall",
                   threshold=THRESHOLD, critical=critical, alpha=alpha, paired=True)
        outcome = d.outcome
        if d.decided:
            return outcome
    return outcome


def process_crossings(schedule: list[tuple[int, float]], sims: int, seed: int,
                      chunk: int = 20_000) -> int:
    """How many of ``sims`` signed-rank paths cross the regression boundary at some look of
    ``schedule`` (see the module docstring): the looks' exact excluded counts (their normal
    approximation above 200 pairs, as ``paired_shift``), no early stop."""
    from benchlab.stats import distributions as special
    from benchlab.stats.paired import excluded_averages

    budget = schedule[-1][0]
    rng = np.random.default_rng(seed)
    excluded = [excluded_averages(n, float(special.ndtr(-c))) for n, c in schedule]
    hits = 0
    for start in range(0, sims, chunk):
        x = rng.standard_normal((min(chunk, sims - start), budget))
        crossed = np.zeros(x.shape[0], dtype=bool)
        for (n, _), e in zip(schedule, excluded):
            ranks = np.abs(x[:, :n]).argsort(axis=1).argsort(axis=1) + 1
            below = np.where(x[:, :n] < 0, ranks, 0).sum(axis=1)  # Walsh averages below
            crossed |= below <= e
        hits += int(crossed.sum())
    return hits


def false_regressions(noise: str, sims: int, seed: int = 1, *, min_pairs: int = 10,
                      budget: int = 200, alpha: float = DEFAULT_ALPHA) -> int:
    """How many of ``sims`` benchmarks at exactly 1 + threshold were called "slower"."""
    rng = np.random.default_rng(seed)
    schedule = look_schedule(min_pairs, budget, alpha)
    return sum(one_benchmark(noise, rng, schedule, alpha) == "slower" for _ in range(sims))


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of k successes in n trials."""
    from scipy.stats import beta

    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return low, high


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4_000, help="decide() runs per noise")
    parser.add_argument("--noise", default=",".join(NOISES))
    parser.add_argument("--process-sims", type=int, default=0,
                        help="signed-rank paths (the rate for every symmetric noise)")
    parser.add_argument("--min-pairs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    schedule = look_schedule(args.min_pairs, args.budget)
    print(f"gate at exactly 1 + {THRESHOLD:g}: alpha {DEFAULT_ALPHA:g} (goal <= alpha/2 = "
          f"{DEFAULT_ALPHA / 2:.2%}), ab's looks from {args.min_pairs} up to {args.budget} "
          f"pairs ({len(schedule)} looks: {', '.join(str(n) for n, _ in schedule[:4])}, ...), "
          f"load {os.getloadavg()[0]:.1f}")
    if args.process_sims:
        k = process_crossings(schedule, args.process_sims, args.seed - 1)
        print(f"  {'process':9s} boundary crossed {_rate(k, args.process_sims)} (the "
              f"signed-rank path, no early stop)", flush=True)
    for i, noise in enumerate(n for n in args.noise.split(",") if args.sims):
        k = false_regressions(noise, args.sims, args.seed + i, min_pairs=args.min_pairs,
                              budget=args.budget)
        print(f"  {noise:9s} false regressions {_rate(k, args.sims)} through decide()",
              flush=True)
    print(f"{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
    return 0


def _rate(k: int, n: int) -> str:
    """``0.480 % [0.451, 0.514] (966/200000)`` with its Clopper-Pearson 95 % interval."""
    low, high = clopper_pearson(k, n)
    return f"{k / n:.3%} [{low:.3%}, {high:.3%}] ({k}/{n})"


if __name__ == "__main__":
    raise SystemExit(main())
