"""The run summary's numbers without numpy equal numpy's, bit for bit, on every kind of series
a run stores (integer ns, continuous, few distinct values, tiny n, NaN for a missing value)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchlab.report.run_summary import summarize_series
from benchlab.report.summary_numbers import linear_percentile, pairwise_sum, summary_numbers

FIELDS = ("n", "median", "mad", "mean", "sd", "min", "max", "p95", "p99")


def _series(rng: np.random.Generator, kind: int, n: int) -> np.ndarray:
    if kind == 0:
        return np.round(rng.lognormal(13, 0.3, n))
    if kind == 1:
        return rng.lognormal(0, 1, n) * 1e-3
    if kind == 2:
        return rng.integers(0, 3, n).astype(float)
    return rng.normal(0, 1e9, n)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 16, 127, 128, 129, 257, 1000, 4099, 20_000])
def test_the_same_numbers_as_numpy_bit_for_bit(n):
    rng = np.random.default_rng(n)
    for kind in range(4):
        x = _series(rng, kind, n)
        if n > 3 and kind == 1:
            x[n // 2] = np.nan  # a run without the value
        by_numpy = summarize_series(x, "wall", "ns")
        plain = summarize_series(x.tolist(), "wall", "ns")
        for name in FIELDS:
            a, b = getattr(by_numpy, name), getattr(plain, name)
            assert a == b or (a is None and b is None), (name, n, kind, a, b)
        finite = x[np.isfinite(x)]
        assert pairwise_sum(finite.tolist()) == np.add.reduce(finite)


def test_percentiles_follow_numpys_linear_method():
    rng = np.random.default_rng(5)
    for n in (3, 4, 10, 101, 1000):
        ordered = sorted(rng.lognormal(5, 1, n).tolist())
        for q in (0.0, 1.0, 25.0, 50.0, 95.0, 99.0, 99.9, 100.0):
            assert linear_percentile(ordered, q) == np.percentile(ordered, q)


def test_empty_and_missing_values():
    assert summary_numbers([]) == {"n": 0}
    assert summary_numbers([math.nan]) == {"n": 0}
    one = summary_numbers([5.0])
    assert one["median"] == one["mean"] == 5.0 and one["sd"] is None and one["p95"] is None
