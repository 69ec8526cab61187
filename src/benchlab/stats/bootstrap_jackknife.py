"""Jackknife values for BCa's acceleration: closed forms for named statistics, exact or
grouped (delete-a-block) for callables. See :mod:`benchlab.stats.bootstrap` ("Jackknife for
BCa")."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats._bootstrap_base import (
    DEFAULT_MEMORY_BUDGET,
)
from benchlab.stats.descriptive import InvalidSampleError, as_sample, power_of_two_scale

# ----------------------------------------------------------------------------- jackknife


def jackknife_diffs(x: ArrayLike, statistic: str) -> np.ndarray:
    """Exact jackknife differences ``t0 - t_(-i)`` for a named statistic, in O(n).

    Parameters
    ----------
    x : array_like
        Sample (at least 3 values).
    statistic : {"mean", "var", "sd", "median"}

    Returns
    -------
    ndarray
        ``d[i] = t(x) - t(x without x[i])`` in the order of `x`, unit of the
        statistic.

    Notes
    -----
    Closed forms with ``m`` = mean, ``v`` = variance (n - 1), ``c_i = n/(n-1)
    (x_i - m)^2``: mean ``d_i = (x_i - m)/(n - 1)``; variance
    ``d_i = (c_i - v)/(n - 2)`` (from the downdate ``SS_(-i) = SS - c_i``,
    written so no large numbers cancel); sd ``d_i = dv_i / (s + sqrt(v - dv_i))``.
    Median: with ``s`` sorted, removing ``s[j]`` leaves ``r(p) = s[p]`` for
    ``p < j`` else ``s[p+1]``, and the median of n - 1 values is
    ``(r((n-2)//2) + r((n-1)//2)) / 2``.
    """
    arr = as_sample(x, min_n=3)
    n = arr.size
    if statistic == "mean":
        return (arr - arr.mean()) / (n - 1)
    if statistic in ("var", "sd", "std"):
        m = arr.mean()
        v = float(np.sum((arr - m) ** 2)) / (n - 1)
        c = n / (n - 1) * (arr - m) ** 2
        dv = (c - v) / (n - 2)
        if statistic == "var":
            return dv
        s = np.sqrt(v)
        return dv / (s + np.sqrt(np.maximum(v - dv, 0.0)))
    if statistic == "median":
        order = np.argsort(arr, kind="stable")
        s = arr[order]
        t0 = float(np.median(s))
        j = np.arange(n)
        lo, hi = (n - 2) // 2, (n - 1) // 2
        r_lo = np.where(lo < j, s[lo], s[min(lo + 1, n - 1)])
        r_hi = np.where(hi < j, s[hi], s[min(hi + 1, n - 1)])
        d_sorted = t0 - 0.5 * (r_lo + r_hi)
        d = np.empty(n)
        d[order] = d_sorted
        return d
    raise InvalidSampleError(
        f"no closed-form jackknife for {statistic!r}; use mean, var, sd or median"
    )


def jackknife_callable(
    arr: np.ndarray,
    t_of: Callable[[np.ndarray], np.ndarray],
    t0: float,
    rng: np.random.Generator,
    max_exact: int,
    n_groups: int,
) -> tuple[np.ndarray, str]:
    """Jackknife differences for a statistic given as ``t_of(batch_2d) -> (rows,)``."""
    n = arr.size
    if n <= max_exact:
        cols = np.arange(n - 1)
        rows_per_batch = max(1, DEFAULT_MEMORY_BUDGET // (16 * n))
        out = np.empty(n)
        for start in range(0, n, rows_per_batch):
            left_out = np.arange(start, min(n, start + rows_per_batch))
            idx = cols[None, :] + (cols[None, :] >= left_out[:, None])
            out[left_out] = t0 - t_of(arr[idx])
        return out, "exact"
    groups = min(n_groups, n)
    labels = rng.permutation(n) % groups
    out = np.empty(groups)
    for g in range(groups):
        out[g] = t0 - t_of(arr[labels != g][None, :])[0]
    return out, f"grouped({groups})"


def bca_acceleration(jackknife_diffs: ArrayLike) -> float:
    """BCa acceleration ``a = sum(d^3) / (6 sum(d^2)^(3/2))`` (dimensionless).

    `jackknife_diffs` are ``t0 - t_(-j)`` (any positive multiple gives the
    same ``a``), pooled over both samples in the two-sample case. Pooling the
    *unscaled* differences weights each sample as Davison & Hinkley's
    stratified formula; R's ``usual.jack`` multiplies each stratum by
    ``n_s - 1``, which differs from this only when sample sizes differ.
    """
    d = np.asarray(jackknife_diffs, dtype=np.float64)
    d = np.ldexp(d, -power_of_two_scale(d))  # a is scale-free; cubes near 1e300 overflow
    ss = float(np.sum(d * d))
    if not ss > 0:
        raise InvalidSampleError(
            "BCa acceleration undefined: every jackknife value equals the estimate;"
            " use kind='percentile'"
        )
    return float(np.sum(d**3) / (6.0 * ss**1.5))
