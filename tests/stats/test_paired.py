"""The paired Hodges-Lehmann interval: its Walsh-average order statistics are selected exactly
without forming the n(n+1)/2 averages, so the answer is the one sorting them all gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.stats.distributions import ndtr
from benchlab.stats.paired import (
    EXACT_SIGNED_RANK,
    _exact_excluded,
    paired_shift,
    walsh_order_statistic,
)


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
    # the order statistics' ranks as paired_shift chooses them (exact signed-rank up to
    # EXACT_SIGNED_RANK pairs); beyond reach of any rank the interval is the whole line
    if n <= EXACT_SIGNED_RANK:
        excluded = _exact_excluded(n, float(ndtr(-z)))
    else:
        excluded = math.floor(total / 2.0 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0))
    mids = sorted({(total - 1) // 2, total // 2})
    if excluded < 0 or 2 * excluded >= total:
        return float(np.mean(walsh[mids])), -math.inf, math.inf
    lo, hi = excluded, total - 1 - excluded
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


def test_order_statistics_match_r_qsignrank():
    """The interval's ranks from the exact signed-rank distribution, as R's wilcox.test(x,
    conf.int = TRUE) chooses them (diffs[qsignrank(0.025, n)]: qsignrank is 9 at n = 10 and
    90 at n = 25, the tables' critical values 8 and 89 plus one), checked against
    scipy.stats's exact distribution (R is not installed on the machine that wrote this)."""
    from scipy.stats._wilcoxon import _get_wilcoxon_distr

    for n in (5, 10, 25, 60):
        cdf = np.cumsum(_get_wilcoxon_distr(n))
        for tail in (0.025, 0.005, 1e-4):
            want = int(np.searchsorted(cdf, tail * (1 + 1e-12), side="right")) - 1
            assert _exact_excluded(n, tail) == want
    assert _exact_excluded(10, 0.025) == 8 and _exact_excluded(25, 0.025) == 89


def test_no_interval_where_no_order_statistic_reaches_the_level():
    """10 pairs at a sequential first look's |z| = 4.5 (one-sided 3.4e-6): even [min, max]
    holds only 1 - 2 * 2^-10, so the interval is the whole line (before: [min, max], and ten
    pairs all beyond 1 + threshold were called a regression at an error ~300x the spent one)."""
    d = np.log(1.02) + np.abs(np.random.default_rng(3).normal(0.0, 0.01, 10)) + 1e-4
    s = paired_shift(d, z=4.5)
    assert s.ci_low == -math.inf and s.ci_high == math.inf and s.estimate > np.log(1.02)
    assert math.isfinite(paired_shift(d, z=2.0).ci_low)
