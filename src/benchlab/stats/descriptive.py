"""Descriptive and robust summaries of one sample of measurements.

All functions take a 1-D array-like of finite numbers (typically durations in
ns or s) and return values in the same unit as the input unless stated
otherwise. Bad input (empty, NaN/inf, too few values) raises
:class:`InvalidSampleError`, a :class:`benchlab.errors.UserError` that the CLI
prints as one line.

Quantile convention
-------------------
Every quantile in ``benchlab.stats`` (quartiles, percentiles, IQR, Tukey
fences) defaults to Hyndman & Fan's definition 7, which is R's
``quantile(type = 7)`` default and numpy's ``method="linear"``: for sorted
values ``x[0] <= ... <= x[n-1]`` and probability ``p``, ``h = (n - 1) p`` and
``Q(p) = x[floor(h)] + (h - floor(h)) (x[floor(h) + 1] - x[floor(h)])``.
Other numpy methods can be requested by name (``"median_unbiased"`` is R type
8, ``"inverted_cdf"`` is R type 1, ...).

References
----------
.. [1] Hyndman, R. J. and Fan, Y. (1996). Sample quantiles in statistical
       packages. The American Statistician 50(4), 361-365.
.. [2] Rousseeuw, P. J. and Croux, C. (1993). Alternatives to the median
       absolute deviation. JASA 88(424), 1273-1283.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.errors import UserError

#: Factor that makes the MAD a consistent estimator of the standard deviation
#: of a normal distribution (1 / Phi^-1(3/4), rounded as R's ``mad`` does).
MAD_NORMAL_SCALE = 1.4826

DEFAULT_QUANTILE_METHOD = "linear"  # R type 7


class InvalidSampleError(UserError, ValueError):
    """A sample that a statistic cannot be computed on (empty, NaN/inf, too short, constant).

    Subclasses both :class:`benchlab.errors.UserError` (so the CLI shows it as
    one line and exits 2) and :class:`ValueError` (so library callers can catch
    it the usual way).
    """


def as_sample(
    x: ArrayLike, *, name: str = "sample", min_n: int = 3, allow_constant: bool = True
) -> np.ndarray:
    """Validate one sample and return it as a 1-D float64 array.

    Parameters
    ----------
    x : array_like
        Measurements (any unit). Must be 1-D after ``numpy.asarray``.
    name : str
        What to call the sample in the error message.
    min_n : int
        Minimum number of values.
    allow_constant : bool
        If False, a sample whose values are all equal is rejected (for
        statistics that divide by the spread).

    Raises
    ------
    InvalidSampleError
        One line naming the problem and the fix.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidSampleError(f"{name} is not numeric ({exc}); pass numbers only") from None
    if arr.ndim != 1:
        if arr.ndim == 0:
            arr = arr.reshape(1)
        else:
            raise InvalidSampleError(
                f"{name} has shape {arr.shape}; pass a 1-D sequence of measurements"
            )
    if arr.size == 0:
        raise InvalidSampleError(f"{name} is empty; need at least {min_n} measurements")
    bad = ~np.isfinite(arr)
    if bad.any():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(bad.sum()) - n_nan
        raise InvalidSampleError(
            f"{name} contains {n_nan} NaN and {n_inf} infinite values;"
            " remove or repair them before analysis"
        )
    if arr.size < min_n:
        raise InvalidSampleError(
            f"{name} has {arr.size} value(s); need at least {min_n} measurements"
        )
    if not allow_constant and arr.min() == arr.max():
        raise InvalidSampleError(
            f"{name} is constant (all {arr.size} values equal {arr[0]:g}); this statistic"
            " needs variation — check the timer resolution or the measured command"
        )
    return arr


def percentile(x: ArrayLike, q: ArrayLike, *, method: str = DEFAULT_QUANTILE_METHOD) -> Any:
    """Percentile(s) of a sample.

    Parameters
    ----------
    x : array_like
        Sample (any unit).
    q : float or array_like
        Percent(s) in [0, 100], e.g. ``99.9``.
    method : str
        numpy quantile method; default ``"linear"`` = R ``quantile(type=7)``.

    Returns
    -------
    float or ndarray
        Same unit as `x`.
    """
    arr = as_sample(x, name="sample", min_n=1)
    q_arr = np.asarray(q, dtype=np.float64)
    if np.any((q_arr < 0) | (q_arr > 100)) or not np.all(np.isfinite(q_arr)):
        raise InvalidSampleError(f"percentile {q} is outside [0, 100]; use percent, e.g. 99.9")
    out = _linear(arr, q_arr) if method == "linear" else np.percentile(arr, q_arr, method=method)
    return float(out) if np.ndim(out) == 0 else out


def median(x: ArrayLike) -> float:
    """``float(np.median(x))`` of a 1-D sample, bit for bit (numpy's partition and ``np.mean``
    of the middle one or two; NaN when one is NaN or the sample is empty), without numpy's NaN
    check that imports numpy.ma (~20 ms of ``benchlab show``). Unit of `x`."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        return math.nan
    half = arr.size // 2
    even = arr.size % 2 == 0
    ordered = np.partition(arr, [half - 1, half, -1] if even else [half, -1])
    if np.isnan(ordered[-1]):
        return math.nan
    return float(np.mean(ordered[half - 1:half + 1] if even else ordered[half:half + 1]))


def _linear(arr: np.ndarray, q: np.ndarray) -> Any:
    """``np.percentile(arr, q, method="linear")`` bit for bit (the same float operations: index
    ``(n - 1) * q / 100``, numpy's ``_lerp``), of a 1-D float64 ``arr`` and percents ``q``.
    numpy's own partitions at ``np.unique`` of the indexes, whose ``np.ma.is_masked`` imports
    numpy.ma (~20 ms of ``benchlab show``). Unit of ``arr``."""
    below, above, gamma = _linear_positions(arr.size, q)
    # numpy's kth exactly (so equal values, 0.0 and -0.0, land where numpy puts them)
    ordered = np.partition(arr, sorted({0, -1, *below.tolist(), *above.tolist()}))
    return _lerp(ordered, below, above, gamma, np.shape(q))


def _linear_positions(n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The order statistics (indexes below and above, -1 for the last) and the weight of the
    upper one of each percent in ``q``, as numpy's ``method="linear"`` computes them."""
    virtual = (n - 1) * np.true_divide(np.atleast_1d(q), 100)
    top = virtual >= n - 1
    below = np.floor(virtual).astype(np.intp)
    below[top] = -1
    above = below + 1
    above[top] = -1
    return below, above, virtual - below


def _lerp(ordered: np.ndarray, below: np.ndarray, above: np.ndarray, gamma: np.ndarray,
          shape: tuple) -> Any:
    """numpy's ``_lerp`` between the order statistics ``ordered[below]`` and ``ordered[above]``
    (``ordered`` sorted, or partitioned at those indexes). Unit of ``ordered``."""
    a, b = ordered[below], ordered[above]
    diff = b - a
    out = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma).reshape(shape)
    return out[()] if out.ndim == 0 else out


def mad_raw(x: ArrayLike) -> float:
    """Raw median absolute deviation ``median(|x - median(x)|)``, no scale factor.

    Same unit as `x`. Equals R's ``mad(x, constant = 1)``. This is the MAD
    the TCP-latency report uses for its outlier rule and uncertainty.
    """
    arr = as_sample(x, min_n=1)
    return median(np.abs(arr - median(arr)))


def power_of_two_scale(x: np.ndarray) -> int:
    """The exponent e with max |x| = m * 2**e, 0.5 <= m < 1 (0 for zeros or non-finite
    values): ``np.ldexp(x, -e)`` scales ``x`` exactly to below 1, so that squares and cubes of
    values near 1e300 do not overflow to inf (and say nothing of RuntimeWarnings)."""
    return _exponent_of(float(np.max(np.abs(x))) if np.size(x) else 0.0)


def _exponent_of(top: float) -> int:
    """:func:`power_of_two_scale` of a sample whose largest magnitude is ``top``."""
    return math.frexp(top)[1] if top > 0 and math.isfinite(top) else 0


def scaled_sd(x: np.ndarray, ddof: int = 1) -> float:
    """The standard deviation of ``x`` (its unit), computed on ``x`` scaled by a power of two
    (:func:`power_of_two_scale`): finite for values near 1e300, exact otherwise."""
    return _sd_scaled(np.asarray(x, dtype=np.float64), power_of_two_scale(x), ddof)


def _sd_scaled(arr: np.ndarray, e: int, ddof: int = 1) -> float:
    """:func:`scaled_sd` of a float64 ``arr`` whose :func:`power_of_two_scale` is ``e``."""
    return float(np.ldexp(np.ldexp(arr, -e).std(ddof=ddof), e))


def mad_scaled(x: ArrayLike) -> float:
    """MAD scaled by 1.4826 to estimate the standard deviation under normality.

    Same unit as `x`. Equals R's default ``mad(x)`` (constant 1.4826) [2]_.
    """
    return MAD_NORMAL_SCALE * mad_raw(x)


def iqr(x: ArrayLike, *, method: str = DEFAULT_QUANTILE_METHOD) -> float:
    """Interquartile range Q3 - Q1 (default quantile type 7 = R's ``IQR``). Unit of `x`."""
    arr = as_sample(x, min_n=1)
    q1, q3 = percentile(arr, [25.0, 75.0], method=method)
    return float(q3 - q1)


def cdf_points(x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Points of the empirical CDF, for plotting or tabulating.

    Returns
    -------
    values : ndarray
        Sorted sample (unit of `x`).
    probabilities : ndarray
        ``i / n`` for ``i = 1..n`` (dimensionless): the fraction of the sample
        ``<= values[i-1]`` — the right-continuous ECDF of R's ``ecdf``. Tied
        values appear once per occurrence; the last of a tie carries the ECDF
        value.
    """
    arr = np.sort(as_sample(x, min_n=1))
    return arr, np.arange(1, arr.size + 1, dtype=np.float64) / arr.size


@dataclass(frozen=True)
class Summary:
    """Descriptive summary of one sample; every field is in the sample's unit
    except ``n`` (count), ``cv`` (dimensionless ratio sd/mean) and
    ``quantile_method`` (name)."""

    n: int
    mean: float
    sd: float  # sample standard deviation, denominator n - 1
    cv: float  # sd / mean; nan when mean == 0
    min: float
    q1: float
    median: float
    q3: float
    max: float
    p90: float
    p95: float
    p99: float
    p99_9: float
    iqr: float
    mad_raw: float  # median(|x - median|)
    mad_scaled: float  # 1.4826 * mad_raw, estimates sd under normality
    quantile_method: str

    def to_dict(self) -> dict[str, Any]:
        """Plain ``dict`` of the fields (JSON-serialisable)."""
        return asdict(self)


def summarize(x: ArrayLike, *, method: str = DEFAULT_QUANTILE_METHOD) -> Summary:
    """Summarise a sample: location, spread and tail percentiles.

    Parameters
    ----------
    x : array_like
        At least 3 finite measurements (any unit, e.g. ns).
    method : str
        Quantile method for quartiles, percentiles and IQR (default ``"linear"``,
        R type 7; see the module docstring).

    Returns
    -------
    Summary
        A constant sample is accepted (sd = 0, MAD = 0): it is a legitimate,
        if suspicious, measurement outcome (e.g. a coarse timer).

    Examples
    --------
    >>> summarize([1.0, 2.0, 3.0, 4.0]).median
    2.5
    """
    arr = as_sample(x, min_n=3)
    lowest, highest = float(arr.min()), float(arr.max())
    if method == "linear" and (lowest > 0 or highest < 0):
        qs, center, raw = _sorted_order_statistics(arr)
    else:  # a zero may be 0.0 or -0.0: numpy's partitions decide which one each statistic is
        qs = percentile(arr, list(SUMMARY_PERCENTS), method=method)
        center = median(arr)
        raw = median(np.abs(arr - center))
    mean = float(arr.mean())
    sd = _sd_scaled(arr, _exponent_of(max(-lowest, highest)))
    return Summary(
        n=int(arr.size),
        mean=mean,
        sd=sd,
        cv=sd / mean if mean != 0 else float("nan"),
        min=lowest,
        q1=float(qs[0]),
        median=center,
        q3=float(qs[2]),
        max=highest,
        p90=float(qs[3]),
        p95=float(qs[4]),
        p99=float(qs[5]),
        p99_9=float(qs[6]),
        iqr=float(qs[2] - qs[0]),
        mad_raw=raw,
        mad_scaled=MAD_NORMAL_SCALE * raw,
        quantile_method=method,
    )


#: The percents :func:`summarize` reports: q1, median, q3, p90, p95, p99, p99.9.
SUMMARY_PERCENTS = (25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9)


def _sorted_order_statistics(arr: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(:data:`SUMMARY_PERCENTS` as :func:`percentile`, :func:`median`, raw MAD) of a finite
    1-D float64 sample without zeros, from one sort: the same values bit for bit as the
    partitions of those functions (a sort and a partition order ties differently, and only
    0.0 and -0.0 tie without being the same number). A sort of 500,000 values costs about
    half of one partition with the summary's 16 order statistics, and there were four."""
    ordered = np.sort(arr)
    qs = _lerp(ordered, *_linear_positions(ordered.size, np.asarray(SUMMARY_PERCENTS)),
               (len(SUMMARY_PERCENTS),))
    center = _middle_of(ordered)
    half = ordered.size // 2
    ranks = (half - 1, half) if ordered.size % 2 == 0 else (half,)
    split = int(np.searchsorted(ordered, center))
    raw = float(np.mean([_kth_deviation(ordered, split, center, k) for k in ranks]))
    return qs, center, raw


def _middle_of(ordered: np.ndarray) -> float:
    """:func:`median` of a sorted sample (the same ``np.mean`` of the middle one or two)."""
    half = ordered.size // 2
    return float(np.mean(ordered[half - 1:half + 1] if ordered.size % 2 == 0
                         else ordered[half:half + 1]))


def _kth_deviation(ordered: np.ndarray, split: int, center: float, k: int) -> float:
    """The ``k``-th smallest (from 0) of ``|x - center|`` over a sorted sample, of which the
    first ``split`` values lie below ``center``: below it the deviations ``center - x`` (the
    same number as ``|x - center|``: rounding to nearest is symmetric) grow leftwards, from
    ``split`` on the deviations ``x - center`` grow rightwards; the k + 1 smallest take some
    from each run, and how many from the left one is found by bisection (log2 n steps)."""
    def left(j: int) -> float:
        return center - float(ordered[split - 1 - j])

    def right(j: int) -> float:
        return float(ordered[split + j]) - center

    taken = k + 1
    lo, hi = max(0, taken - (ordered.size - split)), min(taken, split)
    while lo < hi:  # the fewest from the left such that the next left one is not smaller
        mid = (lo + hi) // 2
        if left(mid) < right(taken - mid - 1):
            lo = mid + 1
        else:
            hi = mid
    return max(([left(lo - 1)] if lo > 0 else []) + ([right(taken - lo - 1)] if taken > lo else []))
