"""The gate's false-regression rate at exactly 1 + threshold, by simulation through decide().

``ab`` decides each benchmark on the head/base ratio of interleaved pairs with a repeated
interval (O'Brien-Fleming spending of alpha over the looks) and calls a regression only when the
interval's lower end exceeds 1 + threshold; with the true ratio at exactly 1 + threshold that may
happen with probability at most alpha / 2. This script runs ``ab``'s look schedule (a look at
``min_pairs``, then every ``look_every`` pairs, at least 2 % more pairs than the last; the budget
spent in proportion to the pairs; the last look at ``budget`` pairs spends what is left) through
:func:`benchlab.ci.gate.decide` on paired noise of three kinds, with the true ratio 1.02 and
threshold 2 %, and prints the share of benchmarks called "slower" with its Clopper-Pearson 95 %
interval against alpha / 2:

* ``iid``: within-pair log ratios normal, SD 2 %;
* ``heavy``: Student t with 2 degrees of freedom, scale 1 % (quartiles about +-0.8 %, 1 %/99 %
  about +-7 %), as pairs of a ms-scale program on a loaded machine;
* ``two-speed``: each run independently 10 % slower with probability 0.3 (a second frequency or
  a cache-cold path), 0.5 % normal noise on top: within-pair ratios lumped at 1, 1.1 and 1/1.1.

Usage::

    nice -n 10 .venv/bin/python bench/gate_boundary.py               # 20,000 per noise
    .venv/bin/python bench/gate_boundary.py --sims 500 --noise iid   # a smoke test
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

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


def one_benchmark(noise: str, rng: np.random.Generator, *, min_pairs: int, look_every: int,
                  budget: int, alpha: float) -> str:
    """The gate's last outcome for one simulated benchmark under ab's look schedule."""
    base, head = draw(noise, rng, budget)
    looks = Looks(alpha=alpha)
    due = 0.0
    outcome = "undecided"
    for pairs in range(min_pairs, budget + 1):
        final = pairs >= budget
        if (pairs % look_every or pairs < due) and not final:
            continue
        due = pairs * 1.02
        critical = looks.critical(pairs, 1.0 if final else min(pairs / budget, 1 - 1e-9))
        if critical is None:
            critical = looks.last()
        d = decide(base[:pairs], head[:pairs], benchmark="b", metric="wall",
                   threshold=THRESHOLD, critical=critical, alpha=alpha, paired=True)
        outcome = d.outcome
        if d.decided or final:
            return outcome
    return outcome


def false_regressions(noise: str, sims: int, seed: int = 1, *, min_pairs: int = 10,
                      look_every: int = 10, budget: int = 200,
                      alpha: float = DEFAULT_ALPHA) -> int:
    """How many of ``sims`` benchmarks at exactly 1 + threshold were called "slower"."""
    rng = np.random.default_rng(seed)
    return sum(one_benchmark(noise, rng, min_pairs=min_pairs, look_every=look_every,
                             budget=budget, alpha=alpha) == "slower" for _ in range(sims))


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of k successes in n trials."""
    from scipy.stats import beta

    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return low, high


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=20_000)
    parser.add_argument("--noise", default=",".join(NOISES))
    parser.add_argument("--min-pairs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261207)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"gate at exactly 1 + {THRESHOLD:g}: alpha {DEFAULT_ALPHA:g} (goal <= alpha/2 = "
          f"{DEFAULT_ALPHA / 2:.2%}), looks at {args.min_pairs} pairs then every 10 up to "
          f"{args.budget}, {args.sims} benchmarks per noise, load {os.getloadavg()[0]:.1f}")
    for i, noise in enumerate(args.noise.split(",")):
        k = false_regressions(noise, args.sims, args.seed + i, min_pairs=args.min_pairs,
                              budget=args.budget)
        low, high = clopper_pearson(k, args.sims)
        print(f"  {noise:9s} false regressions {k / args.sims:.3%} [{low:.3%}, {high:.3%}] "
              f"({k}/{args.sims})", flush=True)
    print(f"{time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
