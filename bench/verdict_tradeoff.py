"""What the verdict's evidence of dependence costs independent runs, and what it buys AR(1) ones.

The verdict widens its test when the runs show evidence of dependence (docs/verdict.md, rule
7). On independent runs every widened comparison loses power and over-covers; on AR(1) runs
every comparison left unwidened errs more often. This script measures that trade-off with the
real ``verdict_model`` (bench/verdict_calibration.py's families and cells, 95 %
Clopper-Pearson intervals):

``knobs``: the levels of the evidence set to other values for one run (a what-if: the shipped
values are the module's): the session's pooled lag-1 level from 20 runs on
(``SESSION_EVIDENCE_LEVEL``, cells at n = 20), the levels below 20 runs
(``SHORT_EVIDENCE_LEVEL``, cells at n = 12) and the band a widened decision of fewer than 30
runs must survive (``SESSION_BAND_Z``, n = 20). Per value: the power gap against plain
Mann-Whitney at a true 3 % (two commands, four i.i.d. families), the share widened, the
coverage of the true ratio, and A/A false claims of two commands whose runs are AR(1) with
phi 0.3 (the cell that binds).

``triggers``: on independent runs (two commands, a true 3 %), which evidence widens a
comparison and how often (the pooled lag-1, a series' own lag-1, Ljung-Box), the power lost
against plain Mann-Whitney, and the coverage of widened and unwidened intervals apart.

``bound``: the best any inflation chosen from the session's pooled lag-1 evidence alone could
do, however shaped. Sessions are binned by that evidence (the standardised pooled lag-1 the
verdict tests, :func:`pooled_lag1_z`); for each bin the inflation of the verdict's widened test
(:func:`benchlab.stats.verdict_pair.pair_p_value`) is chosen on half of the draws to minimise
(power lost on i.i.d. runs) + lambda (false claims on AR(1) runs), and the choice is scored
on the other half. Each lambda gives one point of the frontier.

Usage::

    nice -n 15 .venv/bin/python bench/verdict_tradeoff.py --sections knobs --sims 2000
    nice -n 15 .venv/bin/python bench/verdict_tradeoff.py --sections bound --sims 4000
    nice -n 15 .venv/bin/python bench/verdict_tradeoff.py --sections triggers --sims 2000
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verdict_calibration import (  # noqa: E402
    SHIFT,
    ar1_runs,
    cell_rng,
    dependence_aa,
    draw,
    iid_power,
    rate,
)

from benchlab.stats import verdict_pair  # noqa: E402

IID_FAMILIES = ("lognormal", "bimodal", "heavy", "grid")
#: (module constant, values tried, runs per command of the cells it acts on).
KNOBS = {
    "pooled level": ("SESSION_EVIDENCE_LEVEL", (0.05, 0.075, 0.10, 0.15, 0.20), 20),
    "short level": ("SHORT_EVIDENCE_LEVEL", (0.05, 0.10, 0.20, 0.30), 12),
    "band z": ("SESSION_BAND_Z", (0.0, 0.84, 1.645), 20),
}
#: The inflations the bound may choose from, per bin of the pooled evidence.
INFLATIONS = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.3, 2.6, 3.0, 4.0, 6.0, 10.0)
#: Edges of the bins of the standardised pooled lag-1 (its null is about N(0, 1)).
EDGES = (-math.inf, 0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, math.inf)


def knob_line(seed: int, sims: int, constant: str, value: float, n: int) -> str:
    """One value of one knob: power gaps, widened share and coverage of the four i.i.d.
    families and the AR(1) phi 0.3 A/A false claims of two commands, at ``n`` runs each."""
    shipped = getattr(verdict_pair, constant)
    setattr(verdict_pair, constant, value)
    try:
        gaps, widened, cover = [], [], []
        for family in IID_FAMILIES:
            said, mw, w, c = iid_power(family, cell_rng(seed, f"{family} n={n:2d}"), sims, n)
            gaps.append(f"{family} {100 * (mw - said) / sims:.1f}")
            widened.append(100 * w / sims)
            cover.append(100 * c / sims)
        label = f"phi=0.3 n={n:2d} k=2"
        claims, _, unresolved = dependence_aa(lambda r, m: ar1_runs(r, m, 0.3),
                                              cell_rng(seed, label), sims, 2, n)
    finally:
        setattr(verdict_pair, constant, shipped)
    return (f"   {constant} = {value:g} (n = {n}): power gap {', '.join(gaps)}; widened "
            f"{min(widened):.0f}-{max(widened):.0f} %; coverage {min(cover):.1f}-"
            f"{max(cover):.1f} %; AR(1) phi 0.3 A/A {rate(claims, sims)}, cannot tell yet "
            f"{100 * unresolved / sims:.1f} %")


def own_evidence(x: np.ndarray, family: int) -> tuple[bool, bool]:
    """(own lag-1 test, Ljung-Box test) of one series as
    :func:`benchlab.stats.verdict_pair.series_dependence` runs them in a session of
    ``family`` series."""
    from benchlab.stats.independence import acf, ljung_box

    n = x.size
    r1 = float(acf(x, 1)[1])
    if r1 <= 0:
        return False, False
    z = verdict_pair.lag1_z(verdict_pair.latent_lag1(x, r1), n)
    level = verdict_pair.evidence_level(n, family)
    lb = ljung_box(x, lag=max(1, min(10, n // 5))).p_value
    return (z > NormalDist().inv_cdf(1 - level),
            lb < verdict_pair.LJUNG_BOX_LEVEL / family)


def trigger_line(seed: int, sims: int, family: str, n: int) -> str:
    """Which evidence widened independent pairs of ``family`` at ``n`` runs, and its cost."""
    from benchlab.stats.rank import mann_whitney_u
    from benchlab.stats.verdict_model import verdict_model

    rng = cell_rng(seed, f"triggers {family} n={n}")
    count = dict.fromkeys(("pooled", "own", "ljung_box", "widened", "mw", "said",
                           "lost_widened", "cover_widened", "cover_plain"), 0)
    for _ in range(sims):
        base, cand = draw(family, rng, n), draw(family, rng, n, SHIFT)
        c = verdict_model({"base": base, "cand": cand}, reference="base").candidates[0]
        own = [own_evidence(x, 2) for x in (base, cand)]
        widened = c.has_note("widened")
        mw = bool(mann_whitney_u(cand, base).p_value < 0.05
                  and np.median(cand) >= np.median(base))
        covers = bool(c.ratio_low is not None and c.ratio_low <= SHIFT <= c.ratio_high)
        count["pooled"] += verdict_pair.session_dependence([base, cand]).flagged
        count["own"] += any(o[0] for o in own)
        count["ljung_box"] += any(o[1] for o in own)
        count["widened"] += widened
        count["mw"] += mw
        count["said"] += c.outcome == "slower"
        count["lost_widened"] += widened and mw and c.outcome != "slower"
        count["cover_" + ("widened" if widened else "plain")] += covers
    w = count["widened"]
    share = {k: f"{100 * v / sims:.1f}" for k, v in count.items()}
    return (f"   {family:9s} n={n}: evidence pooled {share['pooled']} %, own lag-1 "
            f"{share['own']} %, Ljung-Box {share['ljung_box']} %; widened {share['widened']} %; "
            f"power {share['said']} % against Mann-Whitney {share['mw']} % (lost where widened "
            f"{share['lost_widened']}); coverage widened {rate(count['cover_widened'], w)}, "
            f"unwidened {rate(count['cover_plain'], sims - w)}")


def pooled_lag1_z(series: list[np.ndarray]) -> float:
    """The session's pooled lag-1 autocorrelation standardised under independence, as
    :func:`benchlab.stats.verdict_pair.session_dependence` tests it (each series' lag-1
    corrected for a clock grid's rounding, weighted by its runs)."""
    from benchlab.stats.independence import acf

    total = sum(x.size for x in series)
    latent = sum(verdict_pair.latent_lag1(x, float(acf(x, 1)[1])) * x.size
                 for x in series) / total
    sd0 = math.sqrt(sum((x.size * verdict_pair.lag1_null_sd(x.size)) ** 2
                        for x in series)) / total
    return (latent + len(series) / total) / sd0


def decided_table(pairs, slower_only: bool) -> tuple[np.ndarray, np.ndarray]:
    """(bin, inflation) -> share of the draws in that bin whose widened test rejects at 5 %
    (towards slower when ``slower_only``), over all draws; and each draw's pooled evidence."""
    table = np.zeros((len(EDGES) - 1, len(INFLATIONS)))
    evidence = np.array([pooled_lag1_z([base, cand]) for base, cand in pairs])
    for (base, cand), z in zip(pairs, evidence):
        b = int(np.searchsorted(EDGES, z, side="right")) - 1
        if slower_only and not np.median(cand) >= np.median(base):
            continue
        for i, inflation in enumerate(INFLATIONS):
            table[b, i] += verdict_pair.pair_p_value(cand, base, inflation)[0] < 0.05
    return table / len(pairs), evidence


def bound_lines(seed: int, sims: int, n: int, phi: float = 0.3) -> list[str]:
    """The frontier of :func:`decided_table`'s choices at ``n`` runs (see the docstring)."""
    def halves(make):
        draws = [make(i) for i in range(sims)]
        return draws[0::2], draws[1::2]

    rng = cell_rng(seed, f"bound ar1 n={n}")
    ar_runs = [decided_table(h, False) for h in halves(lambda _: (ar1_runs(rng, n, phi),
                                                                   ar1_runs(rng, n, phi)))]
    ar = [t for t, _ in ar_runs]
    iid, null = {}, []
    for family in IID_FAMILIES:
        r = cell_rng(seed, f"bound {family} n={n}")
        tables = [decided_table(h, True) for h in
                  halves(lambda _: (draw(family, r, n), draw(family, r, n, SHIFT)))]
        iid[family] = [t for t, _ in tables]
        null.extend(z for _, z in tables)
    evidence = np.concatenate([z for _, z in ar_runs])
    in_bin = np.histogram(evidence, bins=np.array(EDGES))[0] / evidence.size * 2
    erring = np.round(100 * (ar[0][:, 0] + ar[1][:, 0]) / np.maximum(in_bin, 1e-12), 1)
    lines = [f"   pooled evidence: mean {np.mean(np.concatenate(null)):.2f} on independent "
             f"runs, {evidence.mean():.2f} on AR(1) phi {phi} runs; AR(1) pairs erring at "
             f"inflation 1 by bin (%) {erring.tolist()}"]
    for lam in (0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0):
        loss = np.mean([t[0][:, :1] - t[0] for t in iid.values()], axis=0)
        choice = np.argmin(loss + lam * ar[0], axis=1)
        rows = np.arange(choice.size)
        claims = float(ar[1][rows, choice].sum())
        gaps = ", ".join(f"{f} {100 * float((t[1][:, 0] - t[1][rows, choice]).sum()):.1f}"
                         for f, t in iid.items())
        lines.append(f"   lambda {lam:4.2f}: AR(1) phi {phi} A/A {100 * claims:.1f} %; power gap "
                     f"{gaps}; inflation by bin {[INFLATIONS[c] for c in choice]}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="simulations per cell")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--sections", default="triggers,knobs,bound",
                        help="any of triggers, knobs, bound; comma-separated")
    parser.add_argument("--knobs", default=",".join(KNOBS),
                        help=f"the knobs of the knobs section ({', '.join(KNOBS)})")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"verdict trade-off: {args.sims} simulations per cell, alpha 0.05, seed {args.seed}, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    if "triggers" in args.sections:
        print("\ntriggers: independent runs, two commands, a true 3 %", flush=True)
        for n in (12, 20):
            for family in IID_FAMILIES:
                print(trigger_line(args.seed, args.sims, family, n), flush=True)
    if "knobs" in args.sections:
        for name in args.knobs.split(","):
            constant, values, n = KNOBS[name]
            print(f"\n{name} (shipped {getattr(verdict_pair, constant):g})", flush=True)
            for value in values:
                print(knob_line(args.seed, args.sims, constant, value, n), flush=True)
    if "bound" in args.sections:
        print(f"\nbound: edges of the bins of the pooled lag-1 evidence {EDGES[1:-1]}")
        for n in (20, 12):
            print(f" n = {n}, two commands", flush=True)
            for line in bound_lines(args.seed, args.sims, n):
                print(line, flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
