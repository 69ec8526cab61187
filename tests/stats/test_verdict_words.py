"""Sentences a user reads beside a verdict do not contradict it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from benchlab.report.verdict_text import check_lines, verdict_lines
from benchlab.stats.verdict import compare
from benchlab.stats.verdict_model import verdict_model


def test_too_few_runs_names_each_count():
    """B has 3 runs and A one: not "with 1 run each"."""
    v = verdict_model({"A": [1e6], "B": [1.1e6, 1.2e6, 1.3e6]})
    text = "\n".join(verdict_lines(v))
    assert "with 3 runs of B and 1 of A" in text and "run each" not in text


def test_a_decided_comparison_is_not_followed_by_not_enough_samples():
    rng = np.random.default_rng(1)
    c = compare(1e6 * rng.lognormal(0, 0.5, 20) * 9.96, 1e6 * rng.lognormal(0, 0.5, 20))
    assert c.outcome == "slower"
    lines = [line for _, line in check_lines(c)]
    assert not any("not enough samples" in line for line in lines)
    assert any("the decision does not need them" in line for line in lines)


def test_values_near_1e300_give_finite_numbers_and_no_warnings():
    """Before: 5-9 numpy RuntimeWarnings, "sd inf" and "max |ACF| nan" (squares overflowed)."""
    rng = np.random.default_rng(1)
    a, b = 1e300 * rng.uniform(1, 1.7, 20), 1e300 * rng.uniform(1, 1.7, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = verdict_model({"A": a, "B": b})
        c = compare(a, b)
        text = "\n".join(line for _, line in check_lines(c))
    assert np.isfinite(c.summary_a.sd) and c.summary_a.sd > 1e299
    assert np.isfinite(c.independence_a.max_abs_acf)
    assert "inf" not in text and "nan" not in text
    assert v.candidates[0].outcome == "undecided"
    scaled = compare(a / 1e300, b / 1e300)
    assert scaled.independence_a.max_abs_acf == pytest.approx(c.independence_a.max_abs_acf,
                                                              rel=1e-12)


def test_the_fastest_baseline_is_named_by_the_verdicts_own_estimate():
    """B's median is lower (101 against 131.5) but its Hodges-Lehmann ratio against A is above
    1: before, "baseline: B, the fastest" and then "A ran ... faster than B"-style lines."""
    a = 1e6 * np.array([100, 100, 100, 130, 131, 132, 133, 134, 135, 136.0])
    b = 1e6 * np.array([101, 101, 101, 101, 101, 101, 140, 141, 142, 143.0])
    v = verdict_model({"A": a, "B": b})
    assert v.baseline == "A" and v.baseline_rule == "fastest"
    assert v.candidate("B").ratio >= 1.0
