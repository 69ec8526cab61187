"""Validity of benchlab's comparison statistics by simulation (prints figures).

1. A/A: the false-positive rate of the compare verdict ("faster"/"slower" when A and B come
   from the same distribution) must be <= alpha.
2. Power: plan the sample size from a pilot run (the JayBeams rule, minimum effect 3 % of the
   baseline median), then check that at that n a true 3 % shift on lognormal data is detected
   in >= 95 % of the experiments.
3. Sequential vs fixed: the group-sequential design (10 looks, O'Brien-Fleming spending,
   equivalence margin 3 %) keeps the error rates of the fixed design and uses fewer samples on
   average, under the alternative (3 % shift) and under the null.

Usage:  .venv/bin/python bench/stats_validity.py [--sims N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchlab.stats.power import required_sample_size
from benchlab.stats.rank import mann_whitney_u
from benchlab.stats.sequential import SequentialDesign, max_sample_inflation
from benchlab.stats.verdict import CompareOptions, compare


def lognormal(rng: np.random.Generator, median_ns: float, sigma: float, n: int) -> np.ndarray:
    """Integer ns timings, lognormal around ``median_ns``."""
    return np.round(rng.lognormal(math.log(median_ns), sigma, n))


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson interval of a proportion."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def aa_false_positives(rng: np.random.Generator, sims: int) -> None:
    print("1. A/A false-positive rate of compare() (lognormal sigma 0.3, n = 500 per group)")
    for alpha in (0.05, 0.01):
        options = CompareOptions(alpha=alpha, bootstrap_resamples=100, min_effect_relative=0.03)
        t0 = time.perf_counter()
        hits = sum(
            compare(lognormal(rng, 1e6, 0.3, 500), lognormal(rng, 1e6, 0.3, 500),
                    options=options).outcome in ("faster", "slower")
            for _ in range(sims)
        )
        lo, hi = wilson(hits, sims)
        verdict = "OK" if lo <= alpha else "TOO HIGH"
        print(f"   alpha={alpha:<5g} false positives {hits}/{sims} = {hits / sims:.4f} "
              f"(95% CI [{lo:.4f}, {hi:.4f}])  {verdict}  [{time.perf_counter() - t0:.1f} s]")


def power_at_plan(rng: np.random.Generator, sims: int) -> None:
    print("2. Power at the recommended n for a 3 % shift (alpha 0.01, target power 0.95)")
    for sigma in (0.1, 0.3):
        plan_options = CompareOptions(alpha=0.01, power=0.95, min_effect_relative=0.03,
                                      min_samples=0, round_to=1, bootstrap_resamples=500)
        pilot = compare(lognormal(rng, 0.97e6, sigma, 2000), lognormal(rng, 1e6, sigma, 2000),
                        options=plan_options)
        n = pilot.plan_1x.n_required
        t0 = time.perf_counter()
        detected = 0
        for _ in range(sims):
            a, b = lognormal(rng, 0.97e6, sigma, n), lognormal(rng, 1e6, sigma, n)
            # Same decision as compare(): Mann-Whitney at alpha, HL interval excluding 0.
            detected += mann_whitney_u(a, b).p_value < 0.01 and np.median(a) < np.median(b)
        lo, hi = wilson(detected, sims)
        verdict = "OK" if hi >= 0.95 else "TOO LOW"
        print(f"   sigma={sigma}: pilot robust spread {pilot.spread / 1e3:.1f} us -> "
              f"n = {n} per group; detected {detected}/{sims} = {detected / sims:.4f} "
              f"(95% CI [{lo:.4f}, {hi:.4f}])  {verdict}  [{time.perf_counter() - t0:.1f} s]")


def sequential_vs_fixed(rng: np.random.Generator, sims: int) -> None:
    alpha, power, sigma, looks = 0.01, 0.95, 0.3, 10
    median, shift = 1e6, 0.03
    sd = median * math.sqrt((math.exp(sigma**2) - 1) * math.exp(sigma**2))
    fixed = required_sample_size(shift * median, sd, alpha=alpha, power=power,
                                 round_to=1, minimum=0).n_required
    inflation = max_sample_inflation(alpha=alpha, power=power, looks=looks)
    n_max = math.ceil(fixed * inflation)
    step = math.ceil(n_max / looks)
    print(f"3. Sequential (Lan-DeMets O'Brien-Fleming, {looks} looks, margin ±3 %) vs fixed n")
    print(f"   lognormal sigma {sigma}, alpha {alpha}, power {power}: fixed n = {fixed}, "
          f"sequential n_max = {n_max} (inflation {inflation:.4f})")
    for label, factor in (("H1: A 3 % faster", 1 - shift), ("H0: A = B", 1.0)):
        t0 = time.perf_counter()
        seq_n, seq_diff, seq_eq, fixed_diff = [], 0, 0, 0
        for _ in range(sims):
            a = lognormal(rng, median * factor, sigma, n_max)
            b = lognormal(rng, median, sigma, n_max)
            fixed_diff += mann_whitney_u(a[:fixed], b[:fixed]).p_value < alpha
            design = SequentialDesign(max_samples=n_max, alpha=alpha, equivalence_margin=shift)
            for k in range(1, looks + 1):
                n = min(k * step, n_max)
                decision = design.look(a[:n], b[:n])
                if decision.stop:
                    break
            seq_n.append(decision.n_a)
            seq_diff += decision.action == "different"
            seq_eq += decision.action == "equivalent"
        rate = "power" if factor != 1.0 else "false-positive rate"
        print(f"   {label}: fixed {rate} {fixed_diff / sims:.3f} at n = {fixed}; sequential "
              f"{rate} {seq_diff / sims:.3f}, equivalent {seq_eq / sims:.3f}, mean n "
              f"{np.mean(seq_n):.0f} ({np.mean(seq_n) / fixed:.2f} x fixed)  "
              f"[{time.perf_counter() - t0:.1f} s]")


def clock_grid_and_runs_needed(rng: np.random.Generator, sims: int) -> None:
    print("4. compare() on ms-scale data: A/A pairs on a 1 us clock grid; 'not yet' run estimates")
    outcomes: dict[str, int] = {}
    fallbacks = 0
    for _ in range(sims):
        a, b = (np.round(lognormal(rng, 1.05e6, 0.004, 30), -3) for _ in range(2))
        c = compare(a, b, options=CompareOptions(bootstrap_resamples=200))
        outcomes[c.outcome] = outcomes.get(c.outcome, 0) + 1
        fallbacks += "ratio_fallback" in c.notes
    print(f"   {sims} A/A pairs (n = 30, 1 us grid): outcomes {outcomes}; BCa fell back to the "
          f"percentile interval in {fallbacks}; aborted 0")
    undecided = decided_later = 0
    for _ in range(max(20, sims // 10)):
        a, b = lognormal(rng, 1e6, 0.05, 20), lognormal(rng, 1.02e6, 0.05, 20)
        c = compare(a, b, options=CompareOptions(bootstrap_resamples=200))
        if c.outcome != "undecided" or c.samples_needed is None:
            continue
        undecided += 1
        n = c.samples_needed
        later = compare(lognormal(rng, 1e6, 0.05, n), lognormal(rng, 1.02e6, 0.05, n),
                        options=CompareOptions(bootstrap_resamples=200))
        decided_later += later.outcome != "undecided"
    if undecided:
        print(f"   20 vs 20 runs, 2 % apart, sigma 5 %: {undecided} undecided; with the stated "
              f"runs per command, {decided_later}/{undecided} = {decided_later / undecided:.2f} "
              "decided (a point estimate from the observed spread, not a power guarantee)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="simulations per figure")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    aa_false_positives(rng, args.sims)
    power_at_plan(rng, args.sims)
    sequential_vs_fixed(rng, max(100, args.sims // 4))  # each simulation is ~10 looks
    clock_grid_and_runs_needed(rng, max(50, args.sims // 10))


if __name__ == "__main__":
    main()
