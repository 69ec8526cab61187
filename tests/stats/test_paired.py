"""The paired Hodges-Lehmann interval: its Walsh-average order statistics are selected exactly
without forming the n(n+1)/2 averages, so the answer is the one sorting them all gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.stats.paired import paired_shift, walsh_order_statistic


def _all_walsh(x: np.ndarray) -> np.ndarray:
    return np.sort(np.concatenate([(x[i] + x[i:]) * 0.5 for i in range(x.size)]))


def _samples(rng: np.random.Generator, n: int):
    """Shapes that break a careless count: heavy tails, ties, a few distinct values, tiny and
    huge magnitudes, all equal."""
    yield rng.standard_t(3, n)
    yield np.round(rng.normal(0, 1, n), 1)
    yield rng.integers(0, 3, n) * 0.1
    yield rng.normal(0, 1, n) * 1e-9
    yield rng.normal(1e6, 1, n)
    yield np.full(n, 0.1)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 95, 400])
def test_walsh_order_statistics_are_those_of_sorting_every_average(n):
    rng = np.random.default_rng(n)
    for x in _samples(rng, n):
        x = np.sort(x)
        walsh = _all_walsh(x)
        for k in {0, 1 % walsh.size, walsh.size // 2, walsh.size - 1,
                  int(rng.integers(0, walsh.size))}:
            assert walsh_order_statistic(x, k) == walsh[k], (x[:5], k)


def test_a_k_outside_the_averages_is_refused():
    with pytest.raises(UserError, match="order statistic"):
        walsh_order_statistic(np.arange(3.0), 6)


def _brute_force_interval(d: np.ndarray, z: float) -> tuple[float, float, float]:
    """The interval as paired_shift computed it before the selection (every average sorted)."""
    walsh = _all_walsh(np.sort(d))
    total, n = walsh.size, d.size
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    lo = int(min(max(math.floor(total / 2.0 - z * sigma), 0), total - 1))
    hi = int(min(max(math.ceil(total / 2.0 + z * sigma) - 1, 0), total - 1))
    mids = sorted({(total - 1) // 2, total // 2})
    return float(np.mean(walsh[mids])), float(walsh[lo]), float(walsh[hi])


@pytest.mark.parametrize("z", [1.0, 2.8, 12.5])
def test_paired_shift_is_unchanged_by_the_selection(z):
    rng = np.random.default_rng(11)
    for n in (3, 20, 150, 600):
        d = rng.laplace(0.002, 0.03, n)
        s = paired_shift(d, z=z)
        assert s.method == "walsh"
        assert (s.estimate, s.ci_low, s.ci_high) == _brute_force_interval(d, z)


def test_a_large_walsh_interval_needs_no_quadratic_memory():
    """30,000 pairs have 450 million Walsh averages (3.6 GB as floats): the selection finds the
    interval without them, and it covers the true shift of a symmetric distribution."""
    rng = np.random.default_rng(12)
    d = rng.laplace(0.0025, 0.03, 30_000)
    s = paired_shift(d, z=3.0, max_walsh=10 ** 9)
    assert s.method == "walsh" and s.n == 30_000
    assert s.ci_low < 0.0025 < s.ci_high and s.ci_high - s.ci_low < 0.003
