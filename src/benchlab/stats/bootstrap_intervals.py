"""Intervals from bootstrap replicates: percentile, basic, normal and BCa (R's ``boot.ci``
definitions, quantiles by ``norm.inter``), and the percentile fallback where BCa is undefined.
See :mod:`benchlab.stats.bootstrap`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats._bootstrap_base import (
    BootstrapDistribution,
    check_confidence,
    check_finite_replicates,
    check_kind,
)
from benchlab.stats.bootstrap_jackknife import bca_acceleration
from benchlab.stats.descriptive import InvalidSampleError, scaled_sd


@dataclass(frozen=True)
class BootstrapCI:
    """One bootstrap confidence interval.

    ``low``/``high``/``estimate``/``standard_error``/``bias`` are in the
    statistic's unit (e.g. ns for the mean of ns; dimensionless for ratios).
    ``standard_error`` = sd(t*), ``bias`` = mean(t*) - t0. ``z0`` and
    ``acceleration`` are set for BCa only.
    """

    low: float
    high: float
    kind: str
    confidence: float
    estimate: float
    standard_error: float
    bias: float
    n_resamples: int
    statistic: str
    seed: int | None
    quantile_rule: str
    z0: float | None = None
    acceleration: float | None = None
    jackknife_method: str | None = None
    sampler: str = "resample"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}



# ----------------------------------------------------------------------------- intervals


def norm_inter(replicates: ArrayLike, probabilities: ArrayLike) -> np.ndarray:
    """Quantiles of bootstrap replicates by R boot's ``norm.inter`` rule.

    Parameters
    ----------
    replicates : array_like
        ``t*`` (any order).
    probabilities : array_like
        Levels in (0, 1).

    Returns
    -------
    ndarray
        For each level ``p``: ``rk = (B + 1) p``, ``k = trunc(rk)``; if ``rk`` is
        an integer, ``t*_(k)``; ``k = 0`` gives ``t*_(1)`` and ``k = B`` gives
        ``t*_(B)``; otherwise ``t*_(k) + (Phi^-1(p) - Phi^-1(k/(B+1))) /
        (Phi^-1((k+1)/(B+1)) - Phi^-1(k/(B+1))) (t*_(k+1) - t*_(k))``.
    """
    t = np.sort(np.asarray(replicates, dtype=np.float64))
    B = t.size
    alpha = np.atleast_1d(np.asarray(probabilities, dtype=np.float64))
    rk = (B + 1) * alpha
    k = np.trunc(rk).astype(np.int64)
    out = np.empty(alpha.size)
    for i in range(alpha.size):
        ki = int(k[i])
        if ki <= 0:
            out[i] = t[0]
        elif ki >= B:
            out[i] = t[B - 1]
        elif ki == rk[i]:
            out[i] = t[ki - 1]
        else:
            from benchlab.stats import distributions as special

            z = special.ndtri(alpha[i])
            z_k = special.ndtri(ki / (B + 1))
            z_k1 = special.ndtri((ki + 1) / (B + 1))
            out[i] = t[ki - 1] + (z - z_k) / (z_k1 - z_k) * (t[ki] - t[ki - 1])
    return out


def _quantiles(reps: np.ndarray, probs: np.ndarray, rule: str) -> np.ndarray:
    if rule == "r":
        return norm_inter(reps, probs)
    if rule == "linear":
        return np.quantile(reps, probs, method="linear")
    raise InvalidSampleError(f"quantile_rule={rule!r} is unknown; use 'r' or 'linear'")


def interval_from_distribution(
    dist: BootstrapDistribution,
    kind: str = "bca",
    confidence: float = 0.95,
    *,
    quantile_rule: str = "r",
) -> BootstrapCI:
    """Turn bootstrap replicates into an interval of the given kind.

    Parameters
    ----------
    dist : BootstrapDistribution
        From ``bootstrap_distribution`` / ``bootstrap_distribution_2samp``, or
        built by hand from external replicates (e.g. R's ``boot``'s ``t``).
    kind : {"percentile", "basic", "normal", "bca"}
    confidence : float
        Two-sided coverage, e.g. 0.95.
    quantile_rule : {"r", "linear"}
        How quantiles of ``t*`` are taken (module docstring).
    """
    kind = check_kind(kind)
    conf = check_confidence(confidence)
    reps = np.asarray(dist.replicates, dtype=np.float64)
    check_finite_replicates(reps, dist.statistic)
    t0 = dist.estimate
    B = reps.size
    se = scaled_sd(reps)  # replicates near 1e300 square to inf
    bias = float(np.mean(reps) - t0)
    tails = np.array([(1 - conf) / 2, (1 + conf) / 2])
    adjusted = tails
    z0 = acc = None
    extra: dict[str, Any] = {}
    if kind == "percentile":
        low, high = _quantiles(reps, tails, quantile_rule)
    elif kind == "basic":
        q = _quantiles(reps, tails[::-1], quantile_rule)
        low, high = 2 * t0 - q[0], 2 * t0 - q[1]
    elif kind == "normal":
        from benchlab.stats import distributions as special

        half = se * float(special.ndtri((1 + conf) / 2))
        low, high = t0 - bias - half, t0 - bias + half
    else:
        if dist.jackknife_diffs is None:
            raise InvalidSampleError("BCa needs jackknife values; compute with jackknife=True")
        frac = float(np.sum(reps < t0)) / B
        if not 0.0 < frac < 1.0:
            raise InvalidSampleError(
                f"BCa undefined: {'no' if frac == 0 else 'every'} bootstrap replicate is below"
                " the estimate (bias correction z0 is infinite); use kind='percentile'"
            )
        from benchlab.stats import distributions as special

        z0 = float(special.ndtri(frac))
        acc = bca_acceleration(dist.jackknife_diffs)
        z_tails = special.ndtri(tails)
        adjusted = special.ndtr(z0 + (z0 + z_tails) / (1 - acc * (z0 + z_tails)))
        extra["adjusted_levels"] = adjusted.tolist()
        low, high = _quantiles(reps, adjusted, quantile_rule)
    if kind != "normal":
        used = adjusted if kind == "bca" else tails
        ranks = (B + 1) * np.asarray(used)
        # R warns "extreme order statistics used as endpoints" in this case: the interval
        # then rests on the most extreme replicate(s) and needs more resamples.
        extra["extreme_order_statistics"] = bool(np.any((ranks <= 1) | (ranks >= B)))
    return BootstrapCI(
        low=float(low), high=float(high), kind=kind, confidence=conf, estimate=float(t0),
        standard_error=se, bias=bias, n_resamples=B, statistic=dist.statistic,
        seed=dist.seed, quantile_rule=quantile_rule, z0=z0, acceleration=acc,
        jackknife_method=dist.jackknife_method if kind == "bca" else None,
        sampler=dist.sampler, extra=extra,
    )


def interval_with_fallback(
    dist: BootstrapDistribution,
    kind: str = "bca",
    confidence: float = 0.95,
    *,
    quantile_rule: str = "r",
) -> BootstrapCI:
    """``interval_from_distribution``, or the percentile interval where BCa is undefined.

    Timings on a clock grid (every value a multiple of 1 µs, say) make the median's
    jackknife values all equal or put most replicates exactly on the estimate; BCa's bias
    correction or acceleration is then undefined. The percentile interval needs neither,
    and it is what BCa reduces to when z0 = a = 0. When this happens the result has
    ``kind="percentile"`` and ``extra["fallback"] = {"from": "bca", "reason": ...}`` so
    callers can say so.
    """
    try:
        return interval_from_distribution(dist, kind, confidence, quantile_rule=quantile_rule)
    except InvalidSampleError as exc:
        if check_kind(kind) != "bca":
            raise
        ci = interval_from_distribution(dist, "percentile", confidence,
                                        quantile_rule=quantile_rule)
        ci.extra["fallback"] = {"from": "bca", "reason": str(exc).split(";")[0]}
        return ci
