"""Equivalence testing: "no change beyond ±margin%" by two one-sided tests (TOST).

References
----------
.. [1] Schuirmann, D. J. (1987). A comparison of the two one-sided tests
       procedure and the power approach for assessing the equivalence of
       average bioavailability. J. Pharmacokinet. Biopharm. 15(6), 657-680.
.. [2] Welch, B. L. (1947). The generalization of "Student's" problem when
       several different population variances are involved. Biometrika 34,
       28-35.
.. [3] Lakens, D. (2017). Equivalence tests: a practical primer for t tests,
       correlations, and meta-analyses. Soc. Psychol. Personal. Sci. 8(4), 355-362.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats.descriptive import InvalidSampleError, as_sample
from benchlab.stats.distributions import t as student_t


@dataclass(frozen=True)
class TostResult:
    """Outcome of a TOST equivalence test of mean(y) - mean(x).

    Attributes
    ----------
    equivalent : bool
        True when both one-sided nulls are rejected (``p_value < alpha``),
        i.e. the difference lies within ``±delta``.
    p_value : float
        ``max(p_lower, p_upper)``.
    p_lower, p_upper : float
        One-sided Welch p-values of H0: diff <= -delta and H0: diff >= +delta.
    difference : float
        ``mean(y) - mean(x)`` (unit of the data).
    delta : float
        Equivalence bound in the data's unit (``margin_percent/100 * mean(x)``).
    interval : tuple of float
        ``(1 - 2 alpha)`` Welch interval of the difference (unit of data); it
        lies inside ``(-delta, delta)`` exactly when ``equivalent``.
    interval_percent : tuple of float
        The same interval as percent of mean(x).
    df : float
        Welch-Satterthwaite degrees of freedom.
    """

    equivalent: bool
    p_value: float
    p_lower: float
    p_upper: float
    difference: float
    delta: float
    margin_percent: float
    alpha: float
    interval: tuple[float, float]
    interval_percent: tuple[float, float]
    df: float
    method: str = "TOST, Welch t on the difference of means"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tost_welch(
    x: ArrayLike, y: ArrayLike, margin_percent: float, *, alpha: float = 0.05
) -> TostResult:
    """Test that y's mean is within ±margin_percent of x's mean (TOST, [1]_ [3]_).

    Underlying test: two one-sided Welch t-tests [2]_ on ``d = mean(y) -
    mean(x)`` with bound ``delta = margin_percent / 100 * mean(x)``. The bound
    is computed from the *observed* baseline mean and then treated as fixed
    (the usual practice; the baseline's own uncertainty enters only through
    the standard error of d). Identical to R's
    ``t.test(y, x, mu = -delta, alternative = "greater")`` and
    ``t.test(y, x, mu = delta, alternative = "less")``.

    Parameters
    ----------
    x : array_like
        Baseline measurements (at least 3, not constant; any unit).
    y : array_like
        Candidate measurements (same unit).
    margin_percent : float
        Equivalence margin in percent of mean(x), e.g. 2 for ±2%.
    alpha : float
        Level of each one-sided test; the matching interval has coverage
        1 - 2 alpha (90% for 0.05).

    Notes
    -----
    The t-test assumes approximately normal sample means (large n makes this
    reasonable) and independent measurements — check ``check_independence``.
    """
    xa = as_sample(x, name="baseline (x)", min_n=3, allow_constant=False)
    ya = as_sample(y, name="candidate (y)", min_n=3, allow_constant=False)
    if not margin_percent > 0:
        raise InvalidSampleError(f"margin_percent={margin_percent} must be positive, e.g. 2")
    if not 0 < alpha < 0.5:
        raise InvalidSampleError(f"alpha={alpha} must be in (0, 0.5)")
    mx, my = float(xa.mean()), float(ya.mean())
    if mx == 0:
        raise InvalidSampleError("baseline mean is 0; a percentage margin is undefined")
    vx, vy = xa.var(ddof=1) / xa.size, ya.var(ddof=1) / ya.size
    se = float(np.sqrt(vx + vy))
    df = float((vx + vy) ** 2 / (vx**2 / (xa.size - 1) + vy**2 / (ya.size - 1)))
    diff = my - mx
    delta = abs(margin_percent / 100.0 * mx)
    p_lower = float(student_t.sf((diff + delta) / se, df))
    p_upper = float(student_t.cdf((diff - delta) / se, df))
    half = float(student_t.ppf(1 - alpha, df)) * se
    lo, hi = diff - half, diff + half
    p = max(p_lower, p_upper)
    return TostResult(
        equivalent=bool(p < alpha), p_value=p, p_lower=p_lower, p_upper=p_upper,
        difference=diff, delta=delta, margin_percent=float(margin_percent), alpha=float(alpha),
        interval=(lo, hi), interval_percent=(100 * lo / abs(mx), 100 * hi / abs(mx)), df=df,
    )
