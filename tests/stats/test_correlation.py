"""Pearson and Spearman against R's cor.test."""

from __future__ import annotations

import pytest
from _core_vectors import vectors  # noqa: F401  (fixture)

from benchlab.stats import InvalidSampleError, pearson, spearman


def test_pearson_matches_r(vectors):
    for case in vectors["correlation"]:
        res = pearson(case["x"], case["y"])
        ref = case["pearson"]
        assert res.estimate == pytest.approx(ref["r"], rel=1e-9)
        assert res.statistic == pytest.approx(ref["statistic"], rel=1e-9)
        assert res.p_value == pytest.approx(ref["p_value"], rel=1e-6)
        assert res.conf_int == pytest.approx(ref["conf_int"], rel=1e-9)


def test_spearman_matches_r_asymptotic(vectors):
    """cor.test(method = "spearman", exact = FALSE); the tied case is R's default too."""
    for case in vectors["correlation"]:
        res = spearman(case["x"], case["y"])
        ref = case["spearman"]
        assert res.estimate == pytest.approx(ref["rho"], rel=1e-9)
        assert res.statistic == pytest.approx(ref["statistic"], rel=1e-9)
        assert res.p_value == pytest.approx(ref["p_value"], rel=1e-6)


def test_unpaired_or_constant_input_is_rejected():
    with pytest.raises(InvalidSampleError, match="paired"):
        pearson([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(InvalidSampleError, match="constant"):
        spearman([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])
