"""TOST (two one-sided Welch t-tests) against R's t.test."""

from __future__ import annotations

import numpy as np
import pytest
from _core_vectors import vectors  # noqa: F401  (fixture)

from benchlab.stats import InvalidSampleError, tost_welch


def test_matches_r_one_sided_welch_tests(vectors):
    x, y = vectors["tost"]["x"], vectors["tost"]["y"]
    for case in vectors["tost"]["cases"]:
        res = tost_welch(x, y, case["margin_percent"], alpha=case["alpha"])
        assert res.delta == pytest.approx(case["delta"], rel=1e-12)
        assert res.p_lower == pytest.approx(case["p_lower"], rel=1e-6)
        assert res.p_upper == pytest.approx(case["p_upper"], rel=1e-6)
        assert res.p_value == pytest.approx(case["p_value"], rel=1e-6)
        assert res.interval == pytest.approx(case["interval"], rel=1e-9)
        assert res.df == pytest.approx(case["df"], rel=1e-9)
        inside = -res.delta < res.interval[0] and res.interval[1] < res.delta
        assert res.equivalent == inside


def test_decisions_on_clear_cases():
    rng = np.random.default_rng(0)
    base = rng.normal(1000, 10, 500)
    assert tost_welch(base, rng.normal(1001, 10, 500), 2).equivalent
    assert not tost_welch(base, rng.normal(1050, 10, 500), 2).equivalent
    assert not tost_welch(base[:5], rng.normal(1000, 10, 5), 0.1).equivalent  # too little data


def test_bad_margin_is_rejected():
    with pytest.raises(InvalidSampleError, match="margin"):
        tost_welch([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 0)
