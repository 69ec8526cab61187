"""The exact null distribution of the Wilcoxon rank-sum statistic W (R's ``dwilcox``,
``pwilcox``, ``qwilcox``), for small samples without ties. See :mod:`benchlab.stats.rank`."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from benchlab.errors import UserError


@lru_cache(maxsize=64)
def _wilcox_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of arrangements giving W = 0..m*n (W = rank sum of the m-sample minus m(m+1)/2).

    Generating function prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i) (Gaussian binomial), evaluated
    with exact Python integers: multiply by (1 - q^a), divide by (1 - q^i) as a strided cumsum.
    """
    size = m * n + 1
    # int64 while every intermediate fits (they are bounded by C(m+n, n)), else exact objects.
    dtype = np.int64 if math.comb(m + n, n) < 2**62 else object
    poly = np.zeros(size, dtype=dtype)
    poly[0] = 1
    for i in range(1, m + 1):
        a = n + i
        if a < size:
            poly[a:] = poly[a:] - poly[: size - a]
        # Dividing by (1 - q^i) is p[k] += p[k - i]: a cumsum down the columns of a
        # (size / i) x i reshape, one numpy call instead of i strided ones.
        pad = (-size) % i
        grid = np.concatenate([poly, np.zeros(pad, dtype=dtype)]).reshape(-1, i)
        poly = np.cumsum(grid, axis=0).reshape(-1)[:size]
    return tuple(int(v) for v in poly)


def wilcox_cdf(q: float, m: int, n: int) -> float:
    """P(W <= q) for the Mann-Whitney statistic W of samples of sizes m and n (R's ``pwilcox``)."""
    q = math.floor(q + 1e-7)
    if q < 0:
        return 0.0
    if q >= m * n:
        return 1.0
    counts = _wilcox_counts(m, n)
    total = math.comb(m + n, n)
    return float(sum(counts[: q + 1]) / total)


def wilcox_sf(q: float, m: int, n: int) -> float:
    """P(W > q) (R's ``pwilcox(q, m, n, lower.tail = FALSE)``), computed without cancellation."""
    q = math.floor(q + 1e-7)
    if q < 0:
        return 1.0
    if q >= m * n:
        return 0.0
    counts = _wilcox_counts(m, n)
    total = math.comb(m + n, n)
    return float(sum(counts[q + 1 :]) / total)


# Cached: a verdict asks the same few quantiles (alpha/2 at the same sizes) for every pair, and
# each answer is a Python loop over the distribution (~0.2 ms at 20 x 20).
@lru_cache(maxsize=1024)
def wilcox_quantile(p: float, m: int, n: int) -> int:
    """Smallest w with P(W <= w) >= p (R's ``qwilcox``, including its 10*eps fuzz)."""
    if not 0.0 <= p <= 1.0:
        raise UserError(f"probability {p} is outside [0, 1]; pass a probability")
    counts = _wilcox_counts(m, n)
    total = float(math.comb(m + n, n))
    eps = np.finfo(float).eps
    cum = 0.0
    if p <= 0.5:
        target = p - 10 * eps
        for w, c in enumerate(counts):
            cum += c / total
            if cum >= target:
                return w
        return m * n
    target = 1 - p + 10 * eps
    for w, c in enumerate(counts):
        cum += c / total
        if cum > target:
            return m * n - w
    return 0
