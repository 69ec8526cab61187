"""Calibration of the structured verdict (benchlab.stats.verdict_model) by simulation.

For six families of run times (lognormal, bimodal, heavy-tailed, a 1 µs clock grid, AR(1)
with phi 0.5, and a clock grid with drift: 1 ms runs on a 1 µs grid drifting as AR(1) with phi
0.5 by a third of a tick, so most values tie and the grid hides most of the drift) it prints,
with Clopper-Pearson 95 % intervals:

1. A/A false claims: k = 2, 3, 5 identical commands (the fastest as baseline, the default
   rule), n = 20 runs each (and n = 12): how often any "faster"/"slower" is said. Goal <= alpha
   (5 %). Then three commands 2x-12x apart whose 12 runs drift: how often a pair is left
   undecided (goal 0).
2. Words against their own interval: a decided verdict whose shown interval holds 1 inside
   (goal 0) or whose word points the other way than its interval (goal 0), and wrong-direction
   words against the truth (a 3 % slower candidate called faster; goal 0, bounded by alpha/2).
3. Power at a 3 % shift, n = 20 / 50 / 200, two commands.
4. "About N more runs each would decide": for undecided verdicts at n = 20 with a 3 % shift
   whose plan is to decide a difference, redraw at the stated N, fresh and appended (the n
   runs kept, N - n added), and count how often it decides. Goal 50-90 %. On A/A, the share
   of undecided verdicts whose plan is equivalence ("would show equivalence within ±1%")
   rather than deciding a difference.
5. Clock grid with drift: how often a 2x / 1.1x / 1.03x difference is decided (n = 12, 20),
   with wrong directions and words against their own interval (goal 0).

Section ``dependence`` (the verdict under dependence, ties and repeated looks):

6. A/A on a 1 µs clock grid (50 µs runs, 3 % CV, the fastest as baseline), k = 3 / 5 at
   n = 30 / 50 / 100: false-claim rate (goal <= 5 %) and the share of sessions widened.
7. A/A with AR(1) runs (phi 0.3 / 0.5 / 0.8) at n = 12 / 20 / 50, k = 2 / 3 / 5: false-claim
   rate (goal <= 5 %) and the share of sets said "cannot tell yet" for unresolved dependence.
8. Independent runs, a true 3 % difference, two commands at n = 20 / 50: the verdict's power
   beside plain Mann-Whitney's on the same data (goal: within 3 points), the share widened,
   and the coverage of the true ratio by the verdict's 95 % interval (goal 94-96 %; n = 12
   too).
9. ``run --until-decided`` A/A: two commands whose own runs are AR(1) (phi 0 / 0.3 / 0.5, 30 %
   spread on a log scale, budget 200, looks every 5 rounds from 20, margin 1 %) at alpha 0.05
   and 0.01: sessions claiming a difference (goal <= alpha).

Usage::

    .venv/bin/python bench/verdict_calibration.py            # 1000 per cell, a few minutes
    .venv/bin/python bench/verdict_calibration.py --quick    # 60 per cell, for a test
    nice -n 15 .venv/bin/python bench/verdict_calibration.py --sections dependence --sims 1000 -j 2

Cells of sections 6-9 each draw from their own generator (the seed and the cell's label), so
one cell re-run alone, or in another process, gives the same figures.

Each verdict is the real ``verdict_model`` (no shortcut), so the figures are the shipped rules.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib

import numpy as np

from benchlab.stats.verdict_model import verdict_model

MEDIAN_NS = 1e6
SHIFT = 1.03
#: Stated N beyond which the re-draw check is skipped (it would take too long to simulate).
MAX_RECHECK_N = 3000


def _ar1(rng: np.random.Generator, n: int, phi: float = 0.5) -> np.ndarray:
    e = rng.normal(0.0, np.sqrt(1 - phi**2), n)
    x = np.empty(n)
    x[0] = rng.normal()
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    return x


def draw(family: str, rng: np.random.Generator, n: int, scale: float = 1.0) -> np.ndarray:
    """n run times (ns) of ``family``, multiplied by ``scale`` (1.03: 3 % slower)."""
    if family == "lognormal":
        x = MEDIAN_NS * rng.lognormal(0.0, 0.05, n)
    elif family == "bimodal":  # 30 % of runs 10 % slower (a second code path, a cache miss)
        x = MEDIAN_NS * rng.lognormal(0.0, 0.02, n) * np.where(rng.random(n) < 0.3, 1.1, 1.0)
    elif family == "heavy":
        x = MEDIAN_NS * np.exp(0.03 * rng.standard_t(2, n))
    elif family == "grid":  # 50 µs runs timed on a 1 µs grid: ties everywhere
        return np.round(50_000 * rng.lognormal(0.0, 0.05, n) * scale, -3)
    elif family == "ar1":
        x = MEDIAN_NS * np.exp(0.05 * _ar1(rng, n))
    elif family == "griddrift":  # 1 ms in ticks of 1 µs, drifting by a third of a tick
        return np.round((1000.4 + 0.3 * _ar1(rng, n)) * scale) * 1000.0
    else:
        raise ValueError(family)
    return x * scale


FAMILIES = ("lognormal", "bimodal", "heavy", "grid", "ar1", "griddrift")
#: Differences the clock-grid-with-drift family must decide (section 5).
GRID_DRIFT_RATIOS = (2.0, 1.1, 1.03)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of k successes in n trials."""
    from scipy.stats import beta

    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return low, high


def rate(k: int, n: int) -> str:
    if n == 0:
        return "   -   (0 cases)"
    low, high = clopper_pearson(k, n)
    return f"{100 * k / n:5.1f}% [{100 * low:4.1f}, {100 * high:4.1f}] ({k}/{n})"


def aa_false_claims(family: str, rng: np.random.Generator, sims: int, k: int, n: int):
    claims = equivalence_plans = undecided = 0
    for _ in range(sims):
        v = verdict_model({f"c{i}": draw(family, rng, n) for i in range(k)})
        claims += any(c.decided for c in v.candidates)
        for c in v.candidates:
            if c.outcome == "undecided" and c.plan:
                undecided += 1
                equivalence_plans += c.runs_to_equivalence is not None
    return claims, equivalence_plans, undecided


def drift_undecided(rng: np.random.Generator, sims: int, n: int = 12) -> int:
    """Three commands 2x to 12x apart whose runs drift linearly by 0-40 % (a machine warming
    up), 5 % noise: how often any pair stays undecided (12 drifting runs read as about 1
    independent run left a 9x difference "cannot tell" before the inflated Wald test)."""
    undecided = 0
    for _ in range(sims):
        def series(median_ms: float) -> np.ndarray:
            drift = np.linspace(0.0, rng.uniform(0.0, 0.4), n)
            return median_ms * 1e6 * (1 + drift + rng.normal(0.0, 0.05, n))
        v = verdict_model({"sleep 0.06": series(63.0), "sleep 0.005": series(6.5),
                           "sleep 0.03": series(33.0)})
        undecided += any(c.outcome == "undecided" for c in v.candidates)
    return undecided


def contradicts(c) -> tuple[bool, bool]:
    """(interval holds 1 inside, word against its own interval) of a decided candidate."""
    lo, hi = c.ratio_low, c.ratio_high
    if lo is None:
        return False, False
    inside = (lo < 1 < hi) or (lo == 1 and not c.low_open) or (hi == 1 and not c.high_open)
    against = (c.outcome == "faster" and lo > 1) or (c.outcome == "slower" and hi < 1)
    return inside, against


def power_and_recheck(family: str, rng: np.random.Generator, sims: int, n: int,
                      recheck: bool):
    """Two commands, the candidate 3 % slower, reference fixed: decided counts and the
    re-draw check of the "N more runs" plan."""
    out = dict(slower=0, wrong=0, inside=0, against=0, decided=0, fresh=0, appended=0,
               checked=0, skipped=0)
    for _ in range(sims):
        base, cand = draw(family, rng, n), draw(family, rng, n, SHIFT)
        c = verdict_model({"base": base, "cand": cand}, reference="base").candidates[0]
        if c.decided:
            out["decided"] += 1
            out["slower"] += c.outcome == "slower"
            out["wrong"] += c.outcome == "faster"
            inside, against = contradicts(c)
            out["inside"] += inside
            out["against"] += against
        elif recheck and c.plan == "difference" and c.runs_to_decide is not None:
            big_n = c.runs_to_decide
            if big_n > MAX_RECHECK_N:
                out["skipped"] += 1
                continue
            out["checked"] += 1
            fresh = verdict_model({"base": draw(family, rng, big_n),
                                   "cand": draw(family, rng, big_n, SHIFT)},
                                  reference="base").candidates[0]
            out["fresh"] += fresh.decided
            more = big_n - n
            appended = verdict_model(
                {"base": np.r_[base, draw(family, rng, more)],
                 "cand": np.r_[cand, draw(family, rng, more, SHIFT)]},
                reference="base").candidates[0]
            out["appended"] += appended.decided
    return out


def grid_drift_decided(rng: np.random.Generator, sims: int, ratio: float, n: int):
    """Two commands on the drifting clock grid, the candidate ``ratio`` times slower, reference
    fixed: (said "slower", said "faster", decided with 1 inside or against its interval)."""
    slower = faster = contradictions = 0
    for _ in range(sims):
        c = verdict_model({"base": draw("griddrift", rng, n),
                           "cand": draw("griddrift", rng, n, ratio)},
                          reference="base").candidates[0]
        slower += c.outcome == "slower"
        faster += c.outcome == "faster"
        contradictions += c.decided and any(contradicts(c))
    return slower, faster, contradictions


def ar1_runs(rng: np.random.Generator, n: int, phi: float, scale: float = 1.0) -> np.ndarray:
    """n run times (ns) whose log follows AR(1) with coefficient ``phi``, 5 % spread."""
    return MEDIAN_NS * np.exp(0.05 * _ar1(rng, n, phi)) * scale


def _widened(v) -> bool:
    """Any comparison widened for dependence (the note says so whichever test was widened)."""
    return any(c.has_note("widened") for c in v.candidates)


def dependence_aa(make, rng: np.random.Generator, sims: int, k: int, n: int):
    """(claims, widened, 'cannot tell yet' for dependence) over ``sims`` A/A sets."""
    claims = widened = unresolved = 0
    for _ in range(sims):
        v = verdict_model({f"c{i}": make(rng, n) for i in range(k)})
        claims += any(c.decided for c in v.candidates)
        widened += _widened(v)
        unresolved += any(c.reason == "dependence_unresolved" for c in v.candidates)
    return claims, widened, unresolved


def iid_power(family: str, rng: np.random.Generator, sims: int, n: int):
    """(verdict says slower, plain Mann-Whitney rejects towards slower, widened, interval
    covers the true 1.03) for two commands, the candidate 3 % slower."""
    from benchlab.stats.rank import mann_whitney_u

    out = [0, 0, 0, 0]
    for _ in range(sims):
        base, cand = draw(family, rng, n), draw(family, rng, n, SHIFT)
        c = verdict_model({"base": base, "cand": cand}, reference="base").candidates[0]
        out[0] += c.outcome == "slower"
        out[1] += bool(mann_whitney_u(cand, base).p_value < 0.05
                       and np.median(cand) >= np.median(base))
        out[2] += c.has_note("widened")
        out[3] += bool(c.ratio_low is not None and c.ratio_low <= SHIFT <= c.ratio_high)
    return out


def sequential_aa(rng: np.random.Generator, sims: int, phi: float, alpha: float,
                  budget: int = 200) -> int:
    """Sessions of ``run --until-decided`` (its SequentialDesign, looks every 5 rounds) on
    two identical commands with AR(1) runs that claim a difference."""
    from benchlab.stats.sequential import SequentialDesign

    claims = 0
    for _ in range(sims):
        a, b = (5e6 * np.exp(0.3 * _ar1(rng, budget, phi)) for _ in range(2))
        design = SequentialDesign(max_samples=budget, alpha=alpha, equivalence_margin=0.01)
        for n in range(20, budget + 1, 5):
            d = design.look(a[:n], b[:n])
            if d.stop:
                claims += d.action == "different"
                break
    return claims


def cell_rng(seed: int, label: str) -> np.random.Generator:
    """A cell's own generator, from the seed and the cell's label: a cell's figures do not
    depend on which cells ran before it or in which process."""
    return np.random.default_rng([seed, zlib.crc32(label.encode())])


def _grid_cell(seed: int, sims: int, k: int, n: int) -> str:
    label = f"grid k={k} n={n:3d}"
    c, w, _ = dependence_aa(lambda r, m: draw("grid", r, m), cell_rng(seed, label), sims, k, n)
    return f"   {label}: false-claim rate {rate(c, sims)}; widened {rate(w, sims)}"


def _ar1_cell(seed: int, sims: int, phi: float, n: int, k: int) -> str:
    label = f"phi={phi} n={n:2d} k={k}"
    c, w, u = dependence_aa(lambda r, m: ar1_runs(r, m, phi), cell_rng(seed, label), sims, k, n)
    return (f"   {label}: false-claim rate {rate(c, sims)}; cannot tell yet {rate(u, sims)}; "
            f"widened {rate(w, sims)}")


def _power_cell(seed: int, sims: int, family: str, n: int) -> str:
    label = f"{family:9s} n={n:2d}"
    said, mw, w, cover = iid_power(family, cell_rng(seed, label), sims, n)
    return (f"   {label}: verdict {rate(said, sims)}; Mann-Whitney {rate(mw, sims)}; "
            f"widened {rate(w, sims)}; coverage {rate(cover, sims)}")


def _sequential_cell(seed: int, sims: int, alpha: float, phi: float) -> str:
    label = f"alpha={alpha:g} phi={phi}"
    return f"   {label}: {rate(sequential_aa(cell_rng(seed, label), sims, phi, alpha), sims)}"


SECTIONS = {
    "grid": ("\n6. A/A on a 1 us clock grid (50 us runs, the fastest as baseline): false-claim "
             "rate (goal <= 5%), widened",
             _grid_cell, [(k, n) for k in (3, 5) for n in (30, 50, 100)]),
    "ar1": ("\n7. A/A with AR(1) runs: false-claim rate (goal <= 5%), 'cannot tell yet' for "
            "unresolved dependence",
            _ar1_cell, [(phi, n, k) for phi in (0.3, 0.5, 0.8) for n in (12, 20, 50)
                        for k in (2, 3, 5)]),
    "power": ("\n8. independent runs, 3% slower candidate, two commands: verdict against plain "
              "Mann-Whitney on the same data (goal within 3 points); coverage of 1.03 (goal "
              "94-96%)",
              _power_cell, [(f, n) for f in ("lognormal", "bimodal", "heavy", "grid")
                            for n in (12, 20, 50)]),
    "sequential": ("\n9. run --until-decided A/A, commands with their own AR(1) runs (budget "
                   "200): sessions claiming a difference (goal <= alpha)",
                   _sequential_cell, [(a, phi) for a in (0.05, 0.01) for phi in (0.0, 0.3, 0.5)]),
}


def dependence_sections(names: list[str], seed: int, sims: int, jobs: int) -> None:
    """Sections 6-9 (see the module docstring), each cell seeded by its label, ``jobs``
    processes at a time (in order of the table)."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(jobs) if jobs > 1 else None
    try:
        for name in names:
            title, cell, params = SECTIONS[name]
            print(title, flush=True)
            if pool is None:
                lines = (cell(seed, sims, *p) for p in params)
            else:
                lines = pool.map(cell, *zip(*[(seed, sims, *p) for p in params]))
            for line in lines:
                print(line, flush=True)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="simulations per cell")
    parser.add_argument("--quick", action="store_true", help="60 per cell (a smoke test)")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("-j", "--jobs", type=int, default=1, choices=(1, 2),
                        help="processes for the dependence sections' cells (a shared machine: "
                             "1 or 2)")
    parser.add_argument("--sections", default="verdict,dependence",
                        help="verdict (1-5), dependence (6-9) or any of grid (6), ar1 (7), "
                             "power (8), sequential (9); comma-separated")
    args = parser.parse_args(argv)
    sims = 60 if args.quick else args.sims
    families = args.families.split(",")
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"verdict calibration: {sims} simulations per cell, alpha 0.05, seed {args.seed}, "
          f"load average {os.getloadavg()[0]:.1f}")
    sections = args.sections.split(",")
    if "verdict" in sections:
        verdict_sections(rng, sims, families)
    dependence_sections([name for name in SECTIONS
                         if "dependence" in sections or name in sections],
                        args.seed, sims, args.jobs)
    print(f"\n{time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f}")
    return 0


def verdict_sections(rng: np.random.Generator, sims: int, families: list[str]) -> None:
    """Sections 1-5 (see the module docstring)."""
    print("\n1. A/A false claims (any 'faster'/'slower' among k identical commands, n = 20; "
          "goal <= 5%), and the plan of undecided pairs (goal: equivalence)")
    for family in families:
        for k in (2, 3, 5):
            claims, eq, und = aa_false_claims(family, rng, sims, k, 20)
            print(f"   {family:9s} k={k}: false claims {rate(claims, sims)}; "
                  f"'would show equivalence' said {rate(eq, und)}")
    print("\n1b. the same at n = 12 (-r 12; the autocorrelation estimate is noisiest here)")
    for family in families:
        cells = [aa_false_claims(family, rng, sims, k, 12)[0] for k in (2, 3, 5)]
        print(f"   {family:9s} k=2/3/5: false claims " + "; ".join(rate(c, sims) for c in cells))
    print("\n1c. 'sleep 0.06' 'sleep 0.005' 'sleep 0.03' at n = 12 whose runs drift by up to "
          "40 %: any pair left undecided (goal 0)")
    print(f"   {rate(drift_undecided(rng, sims), sims)}")
    print("\n2-4. a 3% slower candidate against a fixed reference, two commands")
    for family in families:
        for n in (20, 50, 200):
            r = power_and_recheck(family, rng, sims, n, recheck=(n == 20))
            d = r["decided"]
            print(f"   {family:9s} n={n:3d}: power {rate(r['slower'], sims)}; wrong direction "
                  f"{rate(r['wrong'], sims)}; decided with 1 inside {rate(r['inside'], d)}; "
                  f"word against its interval {rate(r['against'], d)}")
            if n == 20:
                print(f"   {'':9s}        'N more runs' decides when redrawn at N: fresh "
                      f"{rate(r['fresh'], r['checked'])}, appended "
                      f"{rate(r['appended'], r['checked'])} (goal 50-90%; "
                      f"{r['skipped']} plans over {MAX_RECHECK_N} runs not redrawn)")
        sys.stdout.flush()
    if "griddrift" in families:
        print("\n5. clock grid with drift (most values tie): a slower candidate against a fixed "
              "reference, decided 'slower' (goal: all), 'faster', against its interval (goal 0)")
        for ratio in GRID_DRIFT_RATIOS:
            for n in (12, 20):
                slower, faster, bad = grid_drift_decided(rng, sims, ratio, n)
                print(f"   {ratio:4g}x n={n}: decided {rate(slower, sims)}; wrong direction "
                      f"{rate(faster, sims)}; against its interval {rate(bad, sims)}")


if __name__ == "__main__":
    raise SystemExit(main())
