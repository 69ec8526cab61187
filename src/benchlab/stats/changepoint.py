"""Change points in a series of sessions, with the session as the unit of replication.

A benchmark measured nightly gives one series of sessions. Two sources of variation move a
session's median: its runs (within-session noise, which shrinks with more runs) and the offset
the session gets as a whole (reboots, placement, frequency state; 0.5-1 % on real machines,
which no number of runs removes). Testing consecutive sessions run against run (Mann-Whitney on
the runs, as if the runs were all the variance) calls those offsets steps: with 30 sessions and
0.5-1 % offsets it flags false regressions in most histories. Kalibera & Jones (2013) model the
levels of variation; here the session is the replicate, so its median already carries both.

Method: binary segmentation on the log medians m_1..m_J (log, so a step is a ratio):

1. For every split k of a segment, the two-sample t statistic of the session medians left and
   right of k (pooled SD of the sessions around their own segment means: within-session noise
   and session offsets together, the variance the sessions actually show);
2. the largest |t| over k is the segment's candidate; its significance is a permutation test
   of that maximum (``permutations`` random orders of the segment's medians, seeded: with no
   change the sessions are exchangeable, so the maximum over splits is calibrated whatever
   the noise distribution, and the many splits are accounted for, as E-divisive means does
   (Matteson & James 2014) and Hunter/Apache Otava use it);
3. a change point needs p < alpha AND a ratio between the segment medians of at least
   ``min_effect`` (1 %: a significant 0.2 % step is not worth an alarm); then both halves
   are searched again (at least ``min_size`` sessions each side).

The answer per change point: where, the ratio after/before of the segments' medians with its
t interval, p, and whether it is a regression (higher after; for timings lower is better).

References
----------
Kalibera, T. and Jones, R. (2013). Rigorous benchmarking in reasonable time. *ISMM '13*.
Matteson, D. S. and James, N. A. (2014). A nonparametric approach for multiple change point
analysis of multivariate data. *JASA* 109, 334-345.
Daly, D. et al. (2020). The use of change point detection to identify software performance
regressions in a continuous integration system. *ICPE '20* (MongoDB, E-divisive).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchlab.errors import UserError


@dataclass(frozen=True)
class ChangePoint:
    """A change at ``index`` (the first session of the new level).

    Attributes
    ----------
    index : int
        0-based position of the first session after the change.
    ratio, ratio_low, ratio_high : float
        Median of the segment after / before, and its (1 - alpha) t interval.
    p_value : float
        Permutation p of the segment's largest |t| (one more than the count of permutations at
        least as large, over permutations + 1).
    regression : bool
        True when the level went up (slower, for lower-is-better metrics).
    """

    index: int
    ratio: float
    ratio_low: float
    ratio_high: float
    p_value: float
    regression: bool


def _split_stats(x: np.ndarray, min_size: int) -> np.ndarray:
    """|t| of the two-sample t statistic at every split k (left x[:k], right x[k:]); NaN where
    a side has fewer than ``min_size`` values. Works on rows (permutations) at once."""
    x = np.atleast_2d(x)
    n = x.shape[1]
    k = np.arange(1, n)
    c1 = np.cumsum(x, axis=1)[:, :-1]
    c2 = np.cumsum(x * x, axis=1)[:, :-1]
    total, total2 = c1[:, -1:] + x[:, -1:], c2[:, -1:] + x[:, -1:] ** 2
    mean_l, mean_r = c1 / k, (total - c1) / (n - k)
    ss_l = c2 - k * mean_l ** 2
    ss_r = (total2 - c2) - (n - k) * mean_r ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.sqrt(np.maximum(ss_l + ss_r, 0.0) / (n - 2))
        t = np.abs(mean_r - mean_l) / (pooled * np.sqrt(1.0 / k + 1.0 / (n - k)))
    t[:, (k < min_size) | (n - k < min_size)] = np.nan
    return t


def change_points(medians: Any, *, alpha: float = 0.01, min_effect: float = 0.01,
                  min_size: int = 3, permutations: int = 499,
                  seed: int = 0) -> list[ChangePoint]:
    """Change points of a series of positive session medians (see the module docstring).

    Parameters
    ----------
    medians : array_like
        One positive value per session, in time order (ns, or any positive metric).
    alpha : float
        Level of each segment's permutation test.
    min_effect : float
        Smallest ratio change (fraction) worth flagging.
    min_size : int
        Fewest sessions on each side of a change.
    permutations : int
        Random orders per test (the p resolution is 1 / (permutations + 1)).
    seed : int
        Seed of the permutations (the same series gives the same answer).

    Returns
    -------
    list of ChangePoint, in time order.
    """
    m = np.asarray(medians, dtype=np.float64)
    if m.ndim != 1 or not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise UserError("change points need one positive, finite median per session")
    if not 0.0 < alpha < 1.0 or min_size < 2 or permutations < 19:
        raise UserError("alpha must be in (0, 1), min_size >= 2 and permutations >= 19")
    from benchlab.stats import distributions as sps

    logs = np.log(m)
    rng = np.random.default_rng(seed)
    found: list[ChangePoint] = []

    def search(lo: int, hi: int) -> None:
        seg = logs[lo:hi]
        n = seg.size
        if n < 2 * min_size or np.ptp(seg) == 0.0:
            return
        t = _split_stats(seg, min_size)[0]
        if np.all(np.isnan(t)):
            return
        k = int(np.nanargmax(t)) + 1
        observed = float(t[k - 1])
        perms = np.array([rng.permutation(seg) for _ in range(permutations)])
        maxima = np.nanmax(_split_stats(perms, min_size), axis=1)
        p = (1.0 + float(np.sum(maxima >= observed - 1e-12))) / (permutations + 1.0)
        left, right = seg[:k], seg[k:]
        diff = float(np.mean(right) - np.mean(left))
        pooled = math.sqrt((float(np.sum((left - left.mean()) ** 2)) +
                            float(np.sum((right - right.mean()) ** 2))) / (n - 2))
        half = float(sps.t.ppf(1 - alpha / 2, n - 2)) * pooled * math.sqrt(1 / k + 1 / (n - k))
        ratio = math.exp(float(np.median(right)) - float(np.median(left)))
        if p < alpha and abs(ratio - 1.0) >= min_effect:
            found.append(ChangePoint(lo + k, ratio, math.exp(diff - half), math.exp(diff + half),
                                     p, ratio > 1.0))
            search(lo, lo + k)
            search(lo + k, hi)

    search(0, logs.size)
    return sorted(found, key=lambda c: c.index)
