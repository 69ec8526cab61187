"""The evidence of dependence holds its stated level, and a widened comparison whose series
overlap is Mann-Whitney's own test with its z divided by sqrt(inflation): scipy's p,
deflated (tests/vectors/make_vectors_widened.py), not a Wald test that lost a third of the
rank test's power on a clock grid."""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from benchlab.stats.rank import mann_whitney_u
from benchlab.stats.sequential import SequentialDesign
from benchlab.stats.verdict_model import verdict_model
from benchlab.stats.verdict_pair import (
    SHORT_SERIES,
    band_z,
    lag1_null_sd,
    lag1_z,
    pair_p_value,
    separated,
)

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "vectors" /
                      "widened_vectors.json").read_text())


@pytest.mark.parametrize("case", VECTORS["thresholds"], ids=lambda c: f"n{c['n']}-{c['level']}")
def test_lag1_threshold_is_scipys_normal_quantile_of_the_null_spread(case):
    n, level = case["n"], case["level"]
    assert lag1_z(case["r1"], n) == pytest.approx(NormalDist().inv_cdf(1 - level), abs=1e-12)
    lone = 0.05 if n >= SHORT_SERIES else 0.2  # a series alone: its own level
    if level == lone:
        assert band_z(n) / math.sqrt(n) == pytest.approx(case["r1"], abs=1e-12)


@pytest.mark.parametrize("case", VECTORS["widened"], ids=lambda c: f"n{len(c['a'])}")
def test_widened_p_of_overlapping_series_is_scipys_p_deflated(case):
    a, b = np.array(case["a"]), np.array(case["b"])
    assert not separated(a, b)
    assert pair_p_value(a, b)[0] == pytest.approx(case["p"], rel=1e-9)
    for inflation, p in case["widened"].items():
        if separated(a, b, float(inflation)):  # no outcome of the ranks could decide: Wald
            assert len(a) == 12 and float(inflation) == 7.2
            continue
        assert pair_p_value(a, b, float(inflation))[0] == pytest.approx(p, rel=1e-9)


def test_ranks_that_cannot_decide_hand_over_to_the_wald_test():
    """12 runs each: the rank test's largest z is sqrt(3 * 144 / 25) = 4.16, so above an
    inflation of (4.16 / 1.96)^2 = 4.5 no ordering of the runs could reject at 5 % and the
    magnitude decides (the Wald test), as it does for series that do not overlap."""
    a = np.linspace(1.0, 2.0, 12)
    b = a[::-1] * 1.0001
    assert not separated(a, b) and not separated(a, b, 4.4) and separated(a, b, 4.6)
    assert separated(a, a + 10.0) and separated(a + 10.0, a)


def test_lag1_null_spread_holds_on_independent_runs():
    """Mean -1/n and the spread lag1_null_sd of 4000 seeded normal series of 20 runs; one
    series alone is flagged near its 5 % (Ljung-Box adds about 1 %)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4000, 20))
    d = x - x.mean(axis=1, keepdims=True)
    r1 = (d[:, :-1] * d[:, 1:]).sum(axis=1) / (d * d).sum(axis=1)
    assert r1.mean() == pytest.approx(-1 / 20, abs=0.008)
    assert r1.std() == pytest.approx(lag1_null_sd(20), rel=0.04)
    z = np.array([lag1_z(r, 20) for r in r1])
    assert 0.04 < float(np.mean(z > NormalDist().inv_cdf(0.95))) < 0.065


def _grid(rng: np.random.Generator, n: int, scale: float = 1.0) -> np.ndarray:
    """50 µs runs with 5 % spread read off a 1 µs clock (ns values): ties everywhere."""
    return np.round(50_000 * rng.lognormal(0.0, 0.05, n) * scale, -3)


def test_widened_independent_grid_pairs_keep_the_rank_tests_power():
    """300 seeded pairs of independent runs on a 1 µs grid, 50 each, the candidate 3 % slower:
    Mann-Whitney says 'slower' in 246, the verdict in 243 (before: 239, its 17 widened pairs
    going to a Wald test whose grid-widened standard error seldom decided). Every widened pair
    that overlaps is the deflated rank test (no 'inflated' test), and says it widened."""
    rng = np.random.default_rng(31)
    said = mw = widened = 0
    for _ in range(300):
        base, cand = _grid(rng, 50), _grid(rng, 50, 1.03)
        c = verdict_model({"base": base, "cand": cand}, reference="base").candidates[0]
        said += c.outcome == "slower"
        mw += bool(mann_whitney_u(cand, base).p_value < 0.05 and np.median(cand) >= np.median(base))
        if c.has_note("widened"):
            widened += 1
            assert c.test != "inflated"  # the series overlap
    assert widened >= 10  # the case is exercised
    assert said >= mw - 5, (said, mw)


def test_a_widened_sequential_look_on_overlapping_runs_is_the_rank_z_deflated():
    rng = np.random.default_rng(3)
    phi = 0.7
    a, b = (np.empty(60), np.empty(60))
    for x in (a, b):
        x[0] = rng.normal()
        for t in range(1, 60):
            x[t] = phi * x[t - 1] + rng.normal(0.0, math.sqrt(1 - phi * phi))
    a, b = 5e6 * np.exp(0.3 * a), 5e6 * np.exp(0.3 * b)
    assert not separated(a, b)
    d = SequentialDesign(max_samples=60, alpha=0.05).look(a, b)
    z = mann_whitney_u(a, b, exact=False, correct=False).z
    assert d.inflation > 1 and d.z == pytest.approx(z / math.sqrt(d.inflation), rel=1e-12)
    assert d.rci_low < d.shift < d.rci_high


def test_the_runs_to_decide_are_where_the_observed_difference_would_just_decide():
    """The plan's power is 0.5: n (z_(1 - alpha/2) se / |d|)^2 runs, se from the shown
    interval (at 0.6 the plan came true in 86-93 % of re-draws, above the 50-90 % goal)."""
    rng = np.random.default_rng(8)
    base, cand = 1e6 * rng.lognormal(0, 0.05, 20), 1e6 * rng.lognormal(0, 0.05, 20) * 1.02
    v = verdict_model({"base": base, "cand": cand}, reference="base")
    c = v.candidates[0]
    assert c.outcome == "undecided" and c.plan == "difference" and v.power == 0.5
    d = math.log(c.ratio)
    se = (math.log(c.ratio_high) - math.log(c.ratio_low)) / (
        2 * NormalDist().inv_cdf(1 - (1 - c.interval_level) / 2))
    expected = math.ceil(20 * (NormalDist().inv_cdf(0.975) * se / d) ** 2)
    assert c.runs_to_decide == max(expected, 21)


def test_a_p_value_that_underflowed_still_deflates_from_its_z():
    """5,000 runs each that overlap by ten: the normal branch's z is about 86, its p-value
    underflows to 0, which has no normal quantile (``benchlab show`` of such a widened pair
    raised StatisticsError). Deflated by inflation 100 the z is 8.66, p = 2 sf(8.66) (scipy)."""
    from scipy.stats import norm

    a, b = np.arange(0.0, 5000.0) + 1.0, np.arange(4990.0, 9990.0) + 1.0
    mw = mann_whitney_u(a, b)
    assert mw.p_value == 0.0 and mw.z is not None
    assert not separated(a, b, 100.0)
    p = pair_p_value(a, b, 100.0)[0]
    assert p == pytest.approx(2 * norm.sf(abs(mw.z) / 10.0), rel=1e-9) and 0.0 < p < 1e-15
