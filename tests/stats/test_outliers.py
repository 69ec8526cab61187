"""Outlier flags (MAD rule, Tukey fences) and the reproduction of the TCP-latency report's summary."""

from __future__ import annotations

import numpy as np
import pytest
from _core_vectors import shared_path

from benchlab.stats import mad_filtered_summary, mad_outliers, tukey_outliers


def _seed003_latencies() -> np.ndarray:
    path = shared_path("data", "anp-tcp", "latency_ns.csv")
    return np.loadtxt(path, delimiter=",")[:, 1]


def test_seed003_numbers_are_reproduced():
    """The TCP-latency report prints: 74 kept of 100, median 52665, uncertainty 461, p95 55601, p99 61627,
    min 43060, max 62051, average 51136. These come out of: median and RAW MAD of all values,
    keep |x - median| <= 3 MAD, then mean/min/max/p95/p99 (type 7) of the kept values and
    uncertainty = MAD(all)/sqrt(74) = 461.50 (the seed truncates it to 461)."""
    s = mad_filtered_summary(_seed003_latencies())
    assert (s.n_total, s.n_kept) == (100, 74)
    assert s.median_all == 52665.0
    assert round(s.p95_kept) == 55601
    assert round(s.p99_kept) == 61627
    assert (s.min_kept, s.max_kept) == (43060.0, 62051.0)
    assert round(s.mean_kept) == 51136
    assert s.uncertainty == pytest.approx(461.503, abs=1e-3)
    assert int(s.uncertainty) == 461


def test_seed003_rejected_alternatives_do_not_reproduce():
    """The definitions are pinned down: the kept-set median, the scaled MAD, the kept-set MAD
    and other percentile rules all give numbers the TCP-latency report does not print."""
    x = _seed003_latencies()
    s = mad_filtered_summary(x)
    assert s.median_kept != 52665.0
    assert round(1.4826 * s.mad_raw_all / np.sqrt(74)) != 461
    kept = x[~s.flags.is_outlier]
    assert int(np.median(np.abs(kept - np.median(kept))) / np.sqrt(74)) != 461
    for method in ("lower", "higher", "nearest", "midpoint", "median_unbiased", "weibull"):
        assert round(float(np.percentile(kept, 95, method=method))) != 55601, method
    assert round(float(np.percentile(x, 95))) != 55601  # percentiles of all values differ too


def test_mad_rule_flags_without_dropping():
    x = np.array([10.0, 11, 12, 11, 10, 12, 11, 50, -30])
    f = mad_outliers(x)
    assert f.rule == "mad" and f.mad_kind == "raw" and f.k == 3.0
    assert f.is_outlier.shape == x.shape
    assert np.flatnonzero(f.is_outlier).tolist() == [7, 8]
    assert (f.lower, f.upper) == (8.0, 14.0)  # median 11, raw MAD 1
    assert f.to_dict()["outlier_indices"] == [7, 8]
    scaled = mad_outliers(x, mad_kind="scaled")
    assert scaled.upper == pytest.approx(11 + 3 * 1.4826)


def test_tukey_fences_inner_and_outer():
    x = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40])
    q1, q3 = np.percentile(x, [25, 75])
    inner = tukey_outliers(x, 1.5)
    outer = tukey_outliers(x, 3.0)
    assert inner.upper == pytest.approx(q3 + 1.5 * (q3 - q1))
    assert np.flatnonzero(inner.is_outlier).tolist() == [10, 11]
    assert np.flatnonzero(outer.is_outlier).tolist() == [11]
    assert inner.rule == "tukey" and inner.mad_kind is None
