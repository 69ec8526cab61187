"""Pearson and Spearman correlation with p-values, as R's ``cor.test``.

References
----------
.. [1] R Core Team, ``cor.test`` (stats package): Pearson t-test with Fisher-z
       interval; Spearman with the asymptotic t approximation (``exact = FALSE``).
.. [2] Best, D. J. and Roberts, D. E. (1975). Algorithm AS 89: the upper tail
       probabilities of Spearman's rho. Applied Statistics 24, 377-379.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats import distributions as special
from benchlab.stats.descriptive import InvalidSampleError, as_sample
from benchlab.stats.distributions import t as student_t
from benchlab.stats.rank import average_ranks


@dataclass(frozen=True)
class CorrelationResult:
    """Correlation coefficient (dimensionless, in [-1, 1]) and two-sided test of zero.

    ``statistic`` is the t statistic (Pearson) or R's S = (n^3 - n)(1 - rho)/6
    (Spearman). ``conf_int`` is set for Pearson only (Fisher z).
    """

    method: str
    estimate: float
    p_value: float
    n: int
    statistic: float
    conf_int: tuple[float, float] | None = None
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    xa = as_sample(x, name="x", min_n=3, allow_constant=False)
    ya = as_sample(y, name="y", min_n=3, allow_constant=False)
    if xa.size != ya.size:
        raise InvalidSampleError(
            f"x has {xa.size} values and y has {ya.size}; correlation needs paired samples"
        )
    return xa, ya


def _pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r as ``scipy.stats.pearsonr`` computes it (scaled by the largest magnitude
    against overflow, centred, normalised, then one dot product), without scipy."""
    x = x / np.max(np.abs(x))
    y = y / np.max(np.abs(y))
    xm, ym = x - x.mean(), y - y.mean()
    return float(np.dot(xm / np.linalg.norm(xm), ym / np.linalg.norm(ym)))


def pearson(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> CorrelationResult:
    """Pearson's r with two-sided t-test p-value and Fisher-z interval.

    Same as R ``cor.test(x, y, method = "pearson", conf.level = confidence)``:
    ``t = r sqrt((n - 2)/(1 - r^2))`` on n - 2 df; interval
    ``tanh(atanh(r) -/+ z / sqrt(n - 3))`` (needs n >= 4).
    """
    xa, ya = _pair(x, y)
    n = xa.size
    r = float(np.clip(_pearson_r(xa, ya), -1.0, 1.0))
    t = r * np.sqrt((n - 2) / (1 - r * r)) if abs(r) < 1 else np.copysign(np.inf, r)
    p = float(2 * student_t.sf(abs(t), n - 2))
    ci = None
    if n > 3:
        z = float(special.ndtri((1 + confidence) / 2))
        half = z / np.sqrt(n - 3)
        zr = np.arctanh(r) if abs(r) < 1 else np.copysign(np.inf, r)
        ci = (float(np.tanh(zr - half)), float(np.tanh(zr + half)))
    return CorrelationResult("pearson", r, p, n, float(t), ci, confidence if ci else None)


def spearman(x: ArrayLike, y: ArrayLike) -> CorrelationResult:
    """Spearman's rho with the asymptotic two-sided p-value.

    rho is Pearson's r of mid-ranks (ties averaged). The p-value is
    ``2 P(T_{n-2} > |rho| sqrt((n - 2)/(1 - rho^2)))``, which is R's
    ``cor.test(method = "spearman", exact = FALSE)`` and R's default whenever
    there are ties or n > 1289. For n <= 1289 without ties R's default uses
    the AS 89 Edgeworth approximation [2]_ instead, which differs at small n;
    benchmark samples are large, so the asymptotic form is used always.
    """
    xa, ya = _pair(x, y)
    n = xa.size
    rx, ry = average_ranks(xa), average_ranks(ya)
    rho = float(np.clip(np.corrcoef(rx, ry)[0, 1], -1.0, 1.0))
    if abs(rho) < 1:
        t = rho * np.sqrt((n - 2) / (1 - rho * rho))
        p = float(2 * student_t.sf(abs(t), n - 2))
    else:
        p = 0.0
    s_stat = float((n**3 - n) * (1 - rho) / 6)
    return CorrelationResult("spearman", rho, p, n, s_stat)
