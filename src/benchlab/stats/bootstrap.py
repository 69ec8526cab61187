"""Bootstrap confidence intervals: percentile, basic, normal and BCa.

One sample (``bootstrap_ci``) or two independent samples
(``bootstrap_ci_2samp``: each sample is resampled independently, as R's
``boot(..., strata = group)``), for a named statistic or any vectorised
callable. Seeded with a numpy ``Generator``; memory-bounded (resamples are
drawn and reduced in batches), so it works at 1M measurements per sample.

Interval definitions (``B`` replicates ``t*``, estimate ``t0``, level
``c = confidence``, ``z = Phi^-1((1 + c) / 2)``), exactly as R's
``boot.ci`` [2]_:

* ``"percentile"``: ``(q(alpha/2), q(1 - alpha/2))`` of ``t*``.
* ``"basic"``:  ``(2 t0 - q(1 - alpha/2), 2 t0 - q(alpha/2))``.
* ``"normal"``: ``(2 t0 - mean(t*)) -/+ z sd(t*)`` (bias-corrected; sd with
  denominator B - 1).
* ``"bca"``: percentile interval at adjusted levels
  ``Phi(z0 + (z0 + z_a) / (1 - a (z0 + z_a)))``, with
  ``z0 = Phi^-1(#{t* < t0} / B)`` (strict ``<``, as R) and acceleration
  ``a = sum(d^3) / (6 (sum(d^2))^(3/2))`` where ``d_j = t0 - t_(-j)`` are
  jackknife differences (Davison & Hinkley eq. 5.25 with jackknife influence
  values, = R's ``boot.ci(..., L = empinf(b, type = "jack"))``). R's default
  ``L`` is a *regression* estimate from the bootstrap array; it estimates the
  same ``a`` with Monte-Carlo noise, so defaults agree within that noise.

Quantiles ``q(p)`` of ``t*`` default to ``quantile_rule="r"``: R boot's
``norm.inter`` — order statistic ``k = floor((B + 1) p)``; if ``(B+1)p`` is an
integer, ``t*_(k)``; otherwise interpolate between ``t*_(k)`` and
``t*_(k+1)`` linearly on the normal-quantile scale; ``k = 0`` or ``B`` use the
extreme order statistic. Given the same replicates this reproduces R's
endpoints exactly (tested to 1e-12 on replicates exported from R).
``quantile_rule="linear"`` uses numpy's linear (R type 7) quantile instead.

Jackknife for BCa (the O(n^2) part done naively):

* ``"mean"``, ``"var"``, ``"sd"``, ``"median"``: exact leave-one-out values in
  O(n) (O(n log n) for the median's sort) from closed forms
  (``jackknife_diffs``).
* callables with ``n <= max_exact_jackknife`` (default 5,000): exact
  leave-one-out, evaluated in batches.
* callables with larger n: grouped (delete-a-block) jackknife. The sample is
  randomly partitioned (seeded) into ``n_jackknife_groups`` blocks (default
  1,000) and ``d_g = t0 - t_(-block g)``. For a smooth statistic ``d_g`` is
  approximately the sum of the per-observation differences in the block, so
  ``sum d^3`` and ``sum d^2`` estimate the same sums as the full jackknife and
  ``a`` is consistent; the approximation adds sampling noise of relative
  order ``1/sqrt(groups)`` to ``a`` (a is itself O(1/sqrt(n)), so its effect
  on the interval is small). Reported as ``jackknife_method="grouped(G)"``.

Median replicates use an exact shortcut by default (``median_sampler="order"``):
the median of a resample of sorted data ``s`` is ``s[ceil(n U_(k)) - 1]``
where ``U_(k)`` is the k-th order statistic of n uniforms,
``U_(k) ~ Beta(k, n - k + 1)`` (and for even n, ``U_(k+1) = U_(k) + (1 -
U_(k)) Beta(1, n - k)``). This has exactly the distribution of resampling, at
O(1) per replicate instead of O(n). ``median_sampler="resample"`` resamples.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall. Ch. 13-14 (percentile, BCa).
.. [2] Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press. Sec. 5.2-5.3 (normal, basic,
       BCa); R package ``boot`` (``boot.ci``, ``norm.inter``).
.. [3] Shao, J. and Wu, C. F. J. (1989). A general theory for jackknife
       variance estimation. Ann. Statist. 17(3), 1176-1197 (delete-d / grouped
       jackknife).
"""

from __future__ import annotations

# This module is the public face of the bootstrap (the methods are documented above); the
# work is split by concern: _bootstrap_base (constants, checks), bootstrap_jackknife (BCa's
# jackknife), bootstrap_resampling (replicates), bootstrap_intervals (interval definitions).
# The names below are re-exported so that ``benchlab.stats.bootstrap`` stays the one import.
from collections.abc import Callable, Sequence
from typing import Any

from numpy.typing import ArrayLike

from benchlab.stats._bootstrap_base import (
    DEFAULT_JACKKNIFE_GROUPS,
    DEFAULT_MAX_EXACT_JACKKNIFE,
    DEFAULT_N_RESAMPLES,
    KINDS,
    ONE_SAMPLE_STATISTICS,
    TWO_SAMPLE_STATISTICS,
    BootstrapDistribution,
    OneSampleStatistic,
    SeedLike,
    check_kind,
)
from benchlab.stats.bootstrap_intervals import (
    BootstrapCI,
    interval_from_distribution,
    interval_with_fallback,
    norm_inter,
)
from benchlab.stats.bootstrap_jackknife import (
    bca_acceleration,
    jackknife_diffs,
)
from benchlab.stats.bootstrap_resampling import (
    bootstrap_distribution,
    bootstrap_distribution_2samp,
    median_order_sampler,
)
from benchlab.stats.descriptive import InvalidSampleError

# The public face: its own functions and the split modules' names it re-exports.
__all__ = [
    "bootstrap_ci",
    "bootstrap_ci_2samp",
    "bootstrap_cis",
    "ci_mean",
    "ci_median",
    "ci_sd",
    "ci_median_ratio",
    "ci_mean_diff",
    "InvalidSampleError",
    "BootstrapDistribution",
    "DEFAULT_JACKKNIFE_GROUPS",
    "DEFAULT_MAX_EXACT_JACKKNIFE",
    "DEFAULT_N_RESAMPLES",
    "KINDS",
    "ONE_SAMPLE_STATISTICS",
    "OneSampleStatistic",
    "SeedLike",
    "TWO_SAMPLE_STATISTICS",
    "bca_acceleration",
    "jackknife_diffs",
    "median_order_sampler",
    "bootstrap_distribution",
    "bootstrap_distribution_2samp",
    "BootstrapCI",
    "interval_from_distribution",
    "interval_with_fallback",
    "norm_inter",
]


# ----------------------------------------------------------------------------- public API


def bootstrap_ci(
    x: ArrayLike,
    statistic: OneSampleStatistic = "mean",
    *,
    kind: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: SeedLike = None,
    batch: int | None = None,
    quantile_rule: str = "r",
    median_sampler: str = "order",
    max_exact_jackknife: int = DEFAULT_MAX_EXACT_JACKKNIFE,
    n_jackknife_groups: int = DEFAULT_JACKKNIFE_GROUPS,
) -> BootstrapCI:
    """Bootstrap confidence interval of a one-sample statistic.

    Parameters
    ----------
    x : array_like
        At least 3 finite, not-all-equal measurements (any unit).
    statistic : {"mean", "median", "sd", "var"} or callable
        A callable must reduce a 1-D sample to a float; if it accepts an
        ``axis`` keyword it is called on 2-D batches (rows = resamples,
        ``axis=-1``), otherwise row by row (slower).
    kind : {"bca", "percentile", "basic", "normal"}
        See the module docstring ("perc" and "norm" are accepted too).
    confidence : float
        Two-sided coverage in (0, 1).
    n_resamples : int
        Number of bootstrap resamples B (default 10,000).
    seed : int, numpy.random.Generator or None
        Random source. None draws fresh entropy and records the integer in
        the result's ``seed`` so the interval can be reproduced.
    batch : int or None
        Resamples drawn at once; None picks the largest batch whose indices
        and values fit ~96 MiB (e.g. 6 resamples at n = 1M).
    quantile_rule : {"r", "linear"}
        Quantile of ``t*``: R boot's ``norm.inter`` (default) or type 7.
    median_sampler : {"order", "resample"}
        Exact order-statistic shortcut for the median (default) or plain
        resampling.
    max_exact_jackknife, n_jackknife_groups : int
        BCa jackknife for callables: exact up to this n, else grouped.

    Returns
    -------
    BootstrapCI
        ``low``, ``high`` and ``estimate`` in the statistic's unit.

    Raises
    ------
    InvalidSampleError
        Bad sample, unknown option, or an interval that is undefined
        (e.g. BCa when every replicate equals the estimate).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(1).lognormal(size=200)
    >>> ci = bootstrap_ci(x, "median", kind="bca", seed=42)
    >>> ci.low < ci.estimate < ci.high
    True
    """
    dist = bootstrap_distribution(
        x, statistic, n_resamples=n_resamples, seed=seed, batch=batch,
        jackknife=check_kind(kind) == "bca", median_sampler=median_sampler,
        max_exact_jackknife=max_exact_jackknife, n_jackknife_groups=n_jackknife_groups,
    )
    return interval_from_distribution(dist, kind, confidence, quantile_rule=quantile_rule)


def bootstrap_ci_2samp(
    x: ArrayLike,
    y: ArrayLike,
    statistic: str | Callable[..., Any] = "median_ratio",
    *,
    kind: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: SeedLike = None,
    batch: int | None = None,
    quantile_rule: str = "r",
    median_sampler: str = "order",
    max_exact_jackknife: int = DEFAULT_MAX_EXACT_JACKKNIFE,
    n_jackknife_groups: int = DEFAULT_JACKKNIFE_GROUPS,
) -> BootstrapCI:
    """Bootstrap confidence interval of a statistic of two independent samples.

    Each sample is resampled independently with replacement (its own size),
    as R's ``boot(..., strata = group)``.

    Parameters
    ----------
    x : array_like
        Baseline sample (at least 3 finite, not-all-equal values).
    y : array_like
        Candidate sample (same requirements; any size).
    statistic : str or callable
        Named statistics are "y relative to x":
        ``"median_ratio"`` = median(y) / median(x) (default, dimensionless),
        ``"mean_ratio"`` = mean(y) / mean(x), ``"sd_ratio"`` = sd(y) / sd(x),
        ``"mean_diff"`` = mean(y) - mean(x), ``"median_diff"`` = median(y) -
        median(x) (unit of the data). A callable is called as
        ``f(x_batch, y_batch, axis=-1)`` on 2-D batches if it accepts ``axis``,
        else ``f(x_resample, y_resample)`` per resample.
    kind, confidence, n_resamples, seed, batch, quantile_rule, median_sampler,
    max_exact_jackknife, n_jackknife_groups
        As in ``bootstrap_ci``. For BCa the jackknife leaves out each value of
        x and of y in turn; the pooled differences give the acceleration.

    Returns
    -------
    BootstrapCI

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> base, cand = rng.normal(100, 5, 500), rng.normal(110, 5, 500)
    >>> ci = bootstrap_ci_2samp(base, cand, "median_ratio", seed=1)
    >>> 1.05 < ci.low < ci.high < 1.15
    True
    """
    dist = bootstrap_distribution_2samp(
        x, y, statistic, n_resamples=n_resamples, seed=seed, batch=batch,
        jackknife=check_kind(kind) == "bca", median_sampler=median_sampler,
        max_exact_jackknife=max_exact_jackknife, n_jackknife_groups=n_jackknife_groups,
    )
    return interval_from_distribution(dist, kind, confidence, quantile_rule=quantile_rule)


def bootstrap_cis(
    x: ArrayLike,
    statistic: OneSampleStatistic = "mean",
    *,
    kinds: Sequence[str] = KINDS,
    confidence: float = 0.95,
    y: ArrayLike | None = None,
    **options: Any,
) -> dict[str, BootstrapCI]:
    """Several interval kinds from ONE set of replicates (one- or two-sample).

    Pass `y` for the two-sample form (then `statistic` is a two-sample
    statistic). `options` are those of ``bootstrap_ci`` except `kind`.
    Returns ``{kind: BootstrapCI}``.
    """
    canonical = [check_kind(k) for k in kinds]
    quantile_rule = options.pop("quantile_rule", "r")
    want_jk = "bca" in canonical
    if y is None:
        dist = bootstrap_distribution(x, statistic, jackknife=want_jk, **options)
    else:
        dist = bootstrap_distribution_2samp(x, y, statistic, jackknife=want_jk, **options)
    return {
        k: interval_from_distribution(dist, k, confidence, quantile_rule=quantile_rule)
        for k in canonical
    }


def ci_mean(x: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of the mean (unit of x); options as ``bootstrap_ci``."""
    return bootstrap_ci(x, "mean", **options)


def ci_median(x: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of the median (unit of x); options as ``bootstrap_ci``."""
    return bootstrap_ci(x, "median", **options)


def ci_sd(x: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of the standard deviation (n - 1; unit of x)."""
    return bootstrap_ci(x, "sd", **options)


def ci_median_ratio(
    a: ArrayLike, b: ArrayLike, *, confidence_level: float = 0.95, **options: Any
) -> BootstrapCI:
    """Bootstrap CI of median(a) / median(b) (dimensionless; b = baseline).

    Same direction and argument names as :func:`benchlab.stats.ratio.median_ratio`
    (first over second; 0.9 = A's median 10 % below B's); other options as
    ``bootstrap_ci_2samp``, whose own argument order is (baseline, candidate).
    """
    return bootstrap_ci_2samp(b, a, "median_ratio", confidence=confidence_level, **options)


def ci_mean_diff(x: ArrayLike, y: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of mean(y) - mean(x) (unit of the data; x = baseline)."""
    return bootstrap_ci_2samp(x, y, "mean_diff", **options)
