"""Power of the two-sample t test and the sample size that reaches a target power.

Matches R's ``power.t.test(n, delta, sd, sig.level, power, type = "two.sample")``: the power
is the exact noncentral-t probability

    power(n) = P(T' > t_{1-alpha/2, nu}),   T' ~ t(nu, ncp),  nu = 2(n - 1),
    ncp = sqrt(n / 2) * delta / sd,

(two-sided; ``strict=True`` adds the lower rejection region P(T' < -t_{1-alpha/2, nu}), as R's
``strict = TRUE``), and the sample size per group is the root of power(n) = target, found with
Brent's method to 1e-10 instead of R's default ``uniroot`` tolerance (about 1.2e-4 samples).

The JayBeams planning rules (``bm_order_book_analyze.R`` in JayBeams) are in
:func:`required_sample_size`: the t-test n is multiplied by 1.15 for a rank test (the
asymptotic relative efficiency of Mann-Whitney vs the t test is >= 0.864 = 1/1.157 for any
distribution, and 3/pi = 0.955 for normal data), rounded up to a multiple of 1000, with a floor
of 5000 samples; and the smallest interesting effect is one clock cycle saved per iteration,
:func:`minimum_interesting_effect`.

References
----------
R Core Team, ``stats::power.t.test``.
Hodges, J. L. and Lehmann, E. L. (1956). The efficiency of some nonparametric competitors of
the t-test. *Ann. Math. Statist.* 27, 324-335.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

from benchlab.errors import UserError

# The special functions and Brent's root search come from benchlab.stats.distributions, not
# scipy: the base install has no scipy, and importing it cost `benchlab compare` ~0.15-0.5 s.
from benchlab.stats import distributions as special
from benchlab.stats.distributions import brentq as _brentq

Sidedness = Literal["two-sided", "one-sided"]


def _check_probability(value: float, name: str) -> None:
    if not (isinstance(value, (int, float)) and 0.0 < float(value) < 1.0):
        raise UserError(f"{name} must be strictly between 0 and 1 (got {value!r}); pass e.g. 0.05")


def _check_positive(value: float, name: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise UserError(f"{name} must be a positive finite number (got {value!r})")


def t_test_power(
    n: float,
    delta: float,
    sd: float,
    *,
    alpha: float = 0.05,
    alternative: Sidedness = "two-sided",
    strict: bool = False,
) -> float:
    """Power of the two-sample t test with ``n`` observations per group.

    Parameters
    ----------
    n : float
        Observations per group (may be fractional, as in R); must be > 1.
    delta : float
        True difference of means, same unit as ``sd`` (e.g. ns).
    sd : float
        Common standard deviation (same unit as ``delta``).
    alpha : float
        Significance level.
    alternative : {"two-sided", "one-sided"}
        Two-sided test at alpha (critical value t_{1-alpha/2}) or one-sided (t_{1-alpha}).
    strict : bool
        Two-sided only: also count rejections in the wrong tail (R's ``strict = TRUE``).

    Returns
    -------
    float
        Probability of rejecting the null hypothesis, in [0, 1].
    """
    _check_positive(sd, "sd")
    _check_probability(alpha, "alpha")
    if not (isinstance(n, (int, float)) and n > 1):
        raise UserError(f"n must be more than 1 observation per group (got {n!r})")
    if not math.isfinite(delta):
        raise UserError(f"delta must be finite (got {delta!r})")
    nu = 2.0 * (n - 1.0)
    tside = 2 if alternative == "two-sided" else 1
    q = float(special.stdtrit(nu, 1.0 - alpha / tside))
    ncp = math.sqrt(n / 2.0) * abs(delta) / sd
    power = 1.0 - _nct_cdf(q, nu, ncp)
    if strict and tside == 2:
        power += _nct_cdf(-q, nu, ncp)
    return min(max(power, 0.0), 1.0)


def _nct_cdf(x: float, nu: float, ncp: float) -> float:
    """P(T' <= x) for the noncentral t; ``ncp >= 0``.

    ``distributions.nctdtr`` sums the upper side directly: good to ~1e-15 for x >= 0, and to
    ~1e-13 absolute for x < 0 (the lower tail is 1 minus a sum), all a power needs. Below two
    degrees of freedom (n < 2 per group, where ``strict=True`` asks for a lower tail that
    nctdtr cannot tell from 0) the lower tail is the expectation over the chi-square variable V
    of the normal probability, P(T' <= x) = E[Phi(x sqrt(V/nu) - ncp)], integrated over V's
    quantiles, which keeps its relative accuracy: it agrees with scipy's nctdtr to 1e-12
    where that is defined and with simulation where it is not (nu = 0.2 to 1 with ncp = 8).
    It costs ~0.3 s (2400 chi-square quantiles), so only there.
    """
    value = float(special.nctdtr(nu, ncp, x))
    if x >= 0 or value > 1e-8 or nu >= 2.0:
        return value
    return min(max(_chi_square_expectation(x, nu, ncp), 0.0), 1.0)


def _chi_square_expectation(x: float, nu: float, ncp: float) -> float:
    """E[Phi(x sqrt(V/nu) - ncp)] over V ~ chi-square(nu), as an integral over V's quantile
    p in [0, 1]: composite 30-point Gauss-Legendre on a mesh graded towards both ends (where
    the quantile runs off to 0 and infinity). Written here, not with ``scipy.integrate.quad``:
    the base install has no scipy; it agrees with quad to 1e-10 (tests/stats)."""
    import numpy as np

    ends = np.array([10.0 ** -k for k in range(40, 0, -1)])
    edges = np.unique(np.concatenate(([0.0], ends, [0.5], 1.0 - ends[::-1], [1.0])))
    nodes, weights = np.polynomial.legendre.leggauss(30)
    lo, hi = edges[:-1, None], edges[1:, None]
    p = (lo + hi) / 2 + (hi - lo) / 2 * nodes
    quantiles = special.chdtri(nu, 1.0 - p)
    values = special.ndtr(x * np.sqrt(quantiles / nu) - ncp)
    return float(np.sum((hi - lo) / 2 * weights * values))


def t_test_sample_size(
    delta: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Sidedness = "two-sided",
    strict: bool = False,
) -> float:
    """Observations per group for the two-sample t test to reach ``power`` (R's ``n``).

    Parameters
    ----------
    delta, sd : float
        Difference to detect and standard deviation, same unit (e.g. ns).
    alpha : float
        Significance level.
    power : float
        Target power, in (0, 1).
    alternative, strict : see :func:`t_test_power`.

    Returns
    -------
    float
        The (fractional) n per group, >= 2; round up for a plan.
    """
    _check_positive(abs(delta) if isinstance(delta, (int, float)) else delta, "|delta|")
    _check_probability(power, "power")

    def gap(n: float) -> float:
        return t_test_power(n, delta, sd, alpha=alpha, alternative=alternative, strict=strict) - power

    lower = 2.0
    if gap(lower) >= 0:
        return lower
    upper = 1e7
    while gap(upper) < 0:
        upper *= 10
        if upper > 1e15:
            raise UserError(
                f"an effect of {delta:g} with sd {sd:g} needs more than 1e15 samples; "
                "use a larger minimum effect"
            )
    return _brentq(gap, lower, upper, xtol=1e-10, rtol=1e-15, maxiter=500)


def t_test_detectable_difference(
    n: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Sidedness = "two-sided",
) -> float:
    """Smallest true difference the two-sample t test detects with ``power`` at ``n`` per group.

    Returns the difference in the unit of ``sd`` (R's ``power.t.test(n=, sd=, power=)$delta``).
    """
    _check_positive(sd, "sd")
    _check_probability(power, "power")

    def gap(delta: float) -> float:
        return t_test_power(n, delta, sd, alpha=alpha, alternative=alternative) - power

    upper = sd
    while gap(upper) < 0:
        upper *= 2
    return _brentq(gap, 0.0, upper, xtol=1e-12 * sd, rtol=1e-15)


def minimum_interesting_effect(iterations: int, clock_ghz: float) -> float:
    """Smallest effect worth detecting: one clock cycle saved per iteration, in ns.

    A benchmark that runs ``iterations`` operations per measurement on a ``clock_ghz`` GHz
    core saves ``iterations / clock_ghz`` ns per measurement if each operation saves one cycle.
    The JayBeams analysis: 20,000 iterations at 3 GHz -> 6,667 ns = 6.667 us.
    """
    _check_positive(iterations, "iterations")
    _check_positive(clock_ghz, "clock_ghz")
    return float(iterations) / float(clock_ghz)


@dataclass(frozen=True)
class SampleSizePlan:
    """How many samples per group a rank comparison needs (the JayBeams rule).

    Attributes
    ----------
    delta : float
        Effect to detect (same unit as ``sd``, e.g. ns).
    sd : float
        Standard deviation assumed (e.g. the bootstrap upper estimate).
    alpha, power : float
        Significance level and target power.
    n_t_test : float
        Per-group n of the two-sample t test (R's ``power.t.test(...)$n``).
    n_required : int
        max(minimum, round_to * ceil(nonparametric_factor * n_t_test / round_to)).
    nonparametric_factor : float
        Inflation for a rank test instead of the t test (1.15).
    """

    delta: float
    sd: float
    alpha: float
    power: float
    n_t_test: float
    n_required: int
    nonparametric_factor: float
    round_to: int
    minimum: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return asdict(self)


def required_sample_size(
    delta: float,
    sd: float,
    *,
    alpha: float = 0.01,
    power: float = 0.95,
    nonparametric_factor: float = 1.15,
    round_to: int = 1000,
    minimum: int = 5000,
) -> SampleSizePlan:
    """Samples per group to detect ``delta`` with a rank test, by the JayBeams rule.

    n_required = max(minimum, round_to * ceil(nonparametric_factor * n / round_to)) where n is
    the t test's n from :func:`t_test_sample_size` (two-sided, ``alpha``, ``power``).

    Parameters
    ----------
    delta : float
        Effect to detect, same unit as ``sd`` (e.g. ns).
    sd : float
        Standard deviation of one measurement (e.g. ns).
    alpha, power : float
        Significance level (seed: 0.01) and power (seed: 0.95).
    nonparametric_factor : float
        Extra cost of Mann-Whitney over the t test (seed: 1.15).
    round_to, minimum : int
        Rounding granularity and floor, in samples (seed: 1000 and 5000).

    Examples
    --------
    The JayBeams analysis (workstation): delta = 66.67 us, sd = 197 us -> n = 312.8 -> 5000 samples;
    delta = 6.667 us -> n = 31112 -> 36000 samples.
    """
    n = t_test_sample_size(delta, sd, alpha=alpha, power=power)
    required = max(int(minimum), int(round_to) * math.ceil(nonparametric_factor * n / round_to))
    return SampleSizePlan(
        delta=float(delta),
        sd=float(sd),
        alpha=float(alpha),
        power=float(power),
        n_t_test=n,
        n_required=int(required),
        nonparametric_factor=float(nonparametric_factor),
        round_to=int(round_to),
        minimum=int(minimum),
    )
