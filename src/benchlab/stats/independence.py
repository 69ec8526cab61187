"""Independence of successive measurements: autocorrelation, Ljung-Box, effective n.

Benchmark iterations run one after another on one machine; caches, frequency
scaling and background load make neighbours correlated. Positive
autocorrelation makes every i.i.d.-based interval (t, bootstrap) too narrow.

References
----------
.. [1] Box, G. E. P., Jenkins, G. M. and Reinsel, G. C. (1994). Time Series
       Analysis, 3rd ed. Prentice Hall. Sec. 2.1.6 (sample ACF).
.. [2] Ljung, G. M. and Box, G. E. P. (1978). On a measure of lack of fit in
       time series models. Biometrika 65(2), 297-303.
.. [3] Geyer, C. J. (1992). Practical Markov chain Monte Carlo. Statistical
       Science 7(4), 473-483 (initial positive sequence truncation).
.. [4] Thiébaux, H. J. and Zwiers, F. W. (1984). The interpretation and
       estimation of effective sample size. J. Climate Appl. Meteor. 23, 800-811.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats.descriptive import InvalidSampleError, as_sample

#: The JayBeams rule: a max |ACF| (lags >= 1) at or above this suggests dependence.
JAYBEAMS_MAX_ACF = 0.05


def default_max_lag(n: int) -> int:
    """R's ``acf`` default ``lag.max = floor(10 log10(n))``, capped at ``n - 1``."""
    return int(min(np.floor(10 * np.log10(n)), n - 1))


def acf(x: ArrayLike, max_lag: int | None = None) -> np.ndarray:
    """Sample autocorrelation function, as R's ``acf(x, plot = FALSE)``.

    Parameters
    ----------
    x : array_like
        Measurements in run order (at least 3, not constant).
    max_lag : int or None
        Largest lag; default ``floor(10 log10(n))`` capped at n - 1 (R).

    Returns
    -------
    ndarray
        ``r[0..max_lag]`` (dimensionless, ``r[0] = 1``), biased estimator
        ``r_k = sum_{t<n-k} (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2``
        (denominator n for both autocovariances) [1]_.
    """
    arr = as_sample(x, name="series", min_n=3, allow_constant=False)
    n = arr.size
    lag = default_max_lag(n) if max_lag is None else int(max_lag)
    if not 0 <= lag < n:
        raise InvalidSampleError(f"max_lag={max_lag} must be in [0, {n - 1}] for n={n}")
    return _acf_direct(arr, lag)


def unit_scaled(dev: np.ndarray) -> np.ndarray:
    """``dev`` divided by the power of two nearest above its largest magnitude: exact (the
    same autocorrelations to the last bit), and products of values near 1e300 no longer
    overflow (they printed numpy RuntimeWarnings and "max |ACF| nan")."""
    top = float(np.max(np.abs(dev))) if dev.size else 0.0
    if not (top > 0 and math.isfinite(top)):
        return dev
    return np.ldexp(dev, -math.frexp(top)[1])


def _acf_direct(arr: np.ndarray, lag: int) -> np.ndarray:
    """Biased ACF at lags 0..lag of a checked series, by direct dot products: exact, and
    O(n * lag) beats an FFT (O(n log n) with a large constant) for R's default lags."""
    n = arr.size
    dev = unit_scaled(arr - arr.mean())
    # einsum, not np.dot: OpenBLAS's threaded ddot spins its threads on a loaded machine
    # (measured 0.5 s CPU for 61 lags of 1M values against einsum's 0.05 s); the sums agree
    # to ~1e-16 relative.
    denom = float(np.einsum("i,i->", dev, dev))
    return np.array([np.einsum("i,i->", dev[: n - k], dev[k:]) / denom
                     for k in range(lag + 1)])


def _acf_all(dev: np.ndarray) -> np.ndarray:
    """All lags of the biased ACF by FFT (O(n log n)); dev is centred."""
    n = dev.size
    size = 1 << int(np.ceil(np.log2(2 * n - 1)))
    f = np.fft.rfft(unit_scaled(dev), size)
    acov = np.fft.irfft(f * np.conj(f), size)[:n]
    return acov / acov[0]


@dataclass(frozen=True)
class LjungBoxResult:
    """Ljung-Box portmanteau test: ``statistic`` (dimensionless Q), ``df``,
    ``p_value``, ``lag``."""

    statistic: float
    df: int
    p_value: float
    lag: int


def ljung_box(x: ArrayLike, lag: int | None = None, *, fitdf: int = 0) -> LjungBoxResult:
    """Ljung-Box test of no autocorrelation up to `lag`, as R's
    ``Box.test(x, lag, type = "Ljung-Box", fitdf)``.

    ``Q = n (n + 2) sum_{k=1}^{lag} r_k^2 / (n - k)``, ``p = P(chi2_{lag - fitdf} > Q)``
    [2]_.

    Parameters
    ----------
    x : array_like
        Series in run order.
    lag : int or None
        Number of lags. Default ``min(10, n // 5)`` (Hyndman's rule for
        non-seasonal data; note R's own default is 1).
    fitdf : int
        Degrees of freedom to subtract (0 for raw measurements).
    """
    arr = as_sample(x, name="series", min_n=3, allow_constant=False)
    n = arr.size
    if lag is None:
        lag = max(1, min(10, n // 5))
    lag = int(lag)
    if not 1 <= lag < n:
        raise InvalidSampleError(f"lag={lag} must be in [1, {n - 1}] for n={n}")
    if not 0 <= fitdf < lag:
        raise InvalidSampleError(f"fitdf={fitdf} must be in [0, lag)")
    return _ljung_box_from_acf(_acf_direct(arr, lag), n, fitdf)


def _ljung_box_from_acf(r: np.ndarray, n: int, fitdf: int = 0) -> LjungBoxResult:
    """Ljung-Box from an already computed ACF ``r[0..lag]`` of a series of n values."""
    lag = r.size - 1
    q = float(n * (n + 2) * np.sum(r[1:] ** 2 / (n - np.arange(1, lag + 1))))
    df = lag - fitdf
    return LjungBoxResult(statistic=q, df=df, p_value=chi2_sf_integer_df(q, df), lag=lag)


def chi2_sf_integer_df(q: float, df: int) -> float:
    """P(X > q) for X chi-square with a positive integer ``df`` (what scipy.stats.chi2.sf and
    scipy.special.chdtrc give, to ~1e-15 relative), as the finite sums of the regularised upper
    incomplete gamma function Q(df/2, q/2): without importing scipy.special, which costs
    `benchlab show` ~0.15 s. Other df (or a huge one) go to scipy's chdtrc."""
    if not (isinstance(df, int) and 0 < df <= 200) or not math.isfinite(q):
        from benchlab.stats.distributions import chdtrc

        return float(chdtrc(df, q))
    if q <= 0:
        return 1.0
    half = q / 2.0
    if df % 2 == 0:  # Q(m, x) = e^-x * sum_{i<m} x^i / i!
        term = total = math.exp(-half)
        for i in range(1, df // 2):
            term *= half / i
            total += term
    else:  # Q(m + 1/2, x) = erfc(sqrt x) + e^-x * sum_{i=1..m} x^(i-1/2) / Gamma(i + 1/2)
        total = math.erfc(math.sqrt(half))
        term = math.exp(-half) * math.sqrt(half) / math.gamma(1.5)
        for i in range(1, (df - 1) // 2 + 1):
            if i > 1:
                term *= half / (i - 0.5)
            total += term
    return min(1.0, total)


def effective_sample_size(x: ArrayLike) -> float:
    """Effective number of independent measurements.

    ``n_eff = n / (1 + 2 sum_{k=1}^{K} r_k)`` where ``r_k`` is the biased
    ACF and ``K`` is the last lag before the first ``r_k <= 0`` (initial
    positive sequence, after Geyer [3]_; the variance-inflation form is [4]_).
    The result is in (0, n]; negative autocorrelation is not credited (n_eff
    is never above n). Dimensionless (a count, not rounded).

    For AR(1) noise with coefficient phi, ``n_eff -> n (1 - phi) / (1 + phi)``.
    """
    arr = as_sample(x, name="series", min_n=3, allow_constant=False)
    return _effective_n(arr, _acf_direct(arr, default_max_lag(arr.size)))


def _effective_n(arr: np.ndarray, r_head: np.ndarray) -> float:
    """Effective n from the direct ACF ``r_head`` of the first lags when it already reaches
    the first non-positive lag (the usual case: a few lags), else from every lag by FFT."""
    nonpos = np.flatnonzero(r_head[1:] <= 0)
    if nonpos.size:
        r, k_end = r_head, int(nonpos[0]) + 1
    else:
        r = _acf_all(arr - arr.mean())  # 0.25 s at 1M values: only when the head is positive
        nonpos = np.flatnonzero(r[1:] <= 0)
        k_end = int(nonpos[0]) + 1 if nonpos.size else r.size
    tau = 1.0 + 2.0 * float(np.sum(r[1:k_end]))
    return float(arr.size / tau)


@dataclass(frozen=True)
class IndependenceReport:
    """Summary of the independence checks of one series.

    ``max_abs_acf`` (dimensionless) at ``max_abs_acf_lag`` over lags
    1..``max_lag``; ``passed`` is the JayBeams rule ``max_abs_acf < threshold``.
    """

    n: int
    max_lag: int
    max_abs_acf: float
    max_abs_acf_lag: int
    threshold: float
    passed: bool
    ljung_box: LjungBoxResult
    effective_n: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_independence(
    x: ArrayLike, *, threshold: float = JAYBEAMS_MAX_ACF, max_lag: int | None = None
) -> IndependenceReport:
    """The JayBeams autocorrelation check plus Ljung-Box and effective n.

    The JayBeams analysis computes ``max(abs(acf(x)$acf[-1]))`` with R's default lags and
    warns when it is ``>= 0.05``; ``passed`` is the opposite. The Ljung-Box
    test uses the same ``max_lag``.
    """
    return independence_and_acf(x, threshold=threshold, max_lag=max_lag)[0]


def independence_and_acf(
    x: ArrayLike, *, threshold: float = JAYBEAMS_MAX_ACF, max_lag: int | None = None
) -> tuple[IndependenceReport, np.ndarray]:
    """:func:`check_independence` and the ACF it is computed from.

    Returns
    -------
    report : IndependenceReport
        As :func:`check_independence` returns it.
    r : ndarray
        ``acf(x, report.max_lag)`` (dimensionless, ``r[0] = 1``): the same numbers, computed
        once for the check, Ljung-Box and a correlogram (each an O(n * lag) pass at 1M values).
    """
    arr = as_sample(x, name="series", min_n=3, allow_constant=False)
    lag = default_max_lag(arr.size) if max_lag is None else int(max_lag)
    if lag < 1:
        raise InvalidSampleError(f"max_lag={lag} must be >= 1")
    if lag >= arr.size:
        raise InvalidSampleError(f"max_lag={max_lag} must be in [0, {arr.size - 1}] "
                                 f"for n={arr.size}")
    r = _acf_direct(arr, lag)
    abs_r = np.abs(r[1:])
    at = int(np.argmax(abs_r)) + 1
    m = float(abs_r[at - 1])
    report = IndependenceReport(
        n=int(arr.size), max_lag=lag, max_abs_acf=m, max_abs_acf_lag=at,
        threshold=float(threshold), passed=bool(m < threshold),
        ljung_box=_ljung_box_from_acf(r, int(arr.size)),
        effective_n=_effective_n(arr, r),
    )
    return report, r
