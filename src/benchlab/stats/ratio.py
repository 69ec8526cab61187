"""The ratio of two medians, median(a) / median(b), with a confidence interval.

One direction everywhere in benchlab: **first sample over second, the second being the
baseline** (0.9 = A's median 10 % below B's: A is faster, for timings). The confidence
argument is ``confidence_level`` as in scipy. :func:`benchlab.stats.bootstrap.ci_median_ratio`
gives the same number with the plain bootstrap (no fallbacks).

Real timings need two cases that a textbook bootstrap does not handle:

* values on a clock grid (ties): BCa is undefined for the median there, so the interval falls
  back to the percentile interval and says so (``extra["fallback"]``);
* a constant sample (A = 5 ns every time): its median has no sampling variability, so the
  interval is the other sample's median interval mapped through ``c / m`` or ``m / c``
  (``kind="constant"`` when both are constant: an interval of zero width).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchlab.stats.bootstrap import (
    BootstrapCI,
    bootstrap_distribution,
    bootstrap_distribution_2samp,
    interval_with_fallback,
)
from benchlab.stats.descriptive import InvalidSampleError, as_sample


def _degenerate(value: float, confidence_level: float, n_resamples: int, seed: Any,
                note: str) -> BootstrapCI:
    return BootstrapCI(low=value, high=value, kind="constant", confidence=confidence_level,
                       estimate=value, standard_error=0.0, bias=0.0, n_resamples=0,
                       statistic="median_ratio", seed=seed if isinstance(seed, int) else None,
                       quantile_rule="r", extra={"note": note})


def median_ratio(
    a: Any,
    b: Any,
    *,
    confidence_level: float = 0.95,
    kind: str = "bca",
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = 0,
) -> BootstrapCI:
    """Ratio median(a) / median(b) with a bootstrap confidence interval (dimensionless).

    Parameters
    ----------
    a, b : array_like
        Candidate and baseline samples (same unit, e.g. ns), at least 3 values each. Ties and
        constant samples are allowed.
    confidence_level : float
        Two-sided coverage, in (0, 1).
    kind : {"bca", "percentile", "basic", "normal"}
        Bootstrap interval type (BCa by default: the ratio's distribution is skewed). Falls
        back to "percentile" where BCa is undefined (``extra["fallback"]`` says why).
    n_resamples : int
        Bootstrap replicates.
    seed : int, Generator or None
        Random source; the default fixed seed makes reports reproducible.

    Returns
    -------
    benchlab.stats.bootstrap.BootstrapCI
        ``estimate``, ``low``, ``high`` of median(a) / median(b).

    Raises
    ------
    InvalidSampleError
        Bad samples, or a baseline median of 0 (the ratio is undefined; compare differences).
    """
    xa = as_sample(a, name="first sample")
    xb = as_sample(b, name="second sample (baseline)")
    med_a, med_b = float(np.median(xa)), float(np.median(xb))
    if med_b == 0:
        raise InvalidSampleError("the baseline's median is 0, so the ratio of medians is "
                                 "undefined; compare the difference (Hodges-Lehmann) instead")
    const_a, const_b = xa.min() == xa.max(), xb.min() == xb.max()
    if const_a and const_b:
        return _degenerate(med_a / med_b, confidence_level, n_resamples, seed,
                           "both samples are constant: the ratio has no sampling error")
    if const_a or const_b:
        varying = xb if const_a else xa
        dist = bootstrap_distribution(varying, "median", n_resamples=n_resamples, seed=seed,
                                      jackknife=kind == "bca")
        ci = interval_with_fallback(dist, kind, confidence_level)
        ends = (np.array([ci.low, ci.high]) if const_b else np.array([ci.high, ci.low]))
        if const_a and ci.low <= 0 <= ci.high:
            raise InvalidSampleError("the baseline's median interval contains 0, so the ratio "
                                     "of medians is unbounded; compare the difference instead")
        with np.errstate(divide="ignore"):
            mapped = ends / med_b if const_b else med_a / ends
        low, high = float(np.min(mapped)), float(np.max(mapped))
        extra = dict(ci.extra, note=f"{'first' if const_a else 'second'} sample is constant: "
                     "interval of the other sample's median, rescaled")
        return BootstrapCI(low=low, high=high, kind=ci.kind, confidence=ci.confidence,
                           estimate=med_a / med_b, standard_error=float("nan"),
                           bias=float("nan"), n_resamples=ci.n_resamples,
                           statistic="median_ratio", seed=ci.seed,
                           quantile_rule=ci.quantile_rule, sampler=ci.sampler, extra=extra)
    dist = bootstrap_distribution_2samp(xb, xa, "median_ratio", n_resamples=n_resamples,
                                        seed=seed, jackknife=kind == "bca")
    return interval_with_fallback(dist, kind, confidence_level)
