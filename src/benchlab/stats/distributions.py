"""The special functions benchlab's statistics need, written on ``math`` and numpy, no scipy.

Why this module exists: scipy and scipy.libs are ~143 MB of the base install (goal
<= 150 MB with numpy's ~73 MB), and ``import scipy.special`` costs ``benchlab compare`` ~0.15 s
of its 0.3 s start-up budget. benchlab needs only the handful below, so they are written here
and nothing in benchlab imports scipy (tests/install/test_no_scipy.py).

Accuracy, against the committed vectors of ``tests/vectors/make_vectors_distributions.py``
(scipy.special, exact rational sums for the binomial) across tails, tiny and huge degrees of
freedom and the edges 0, inf, nan: ~5e-14 relative (1e-12 for values below 1e-100, where the
exponent's own rounding dominates); the noncentral t to ~2e-13 absolute (its lower tail at
t < 0 is 1 minus the upper sum). scipy.special.bdtr itself is off by 1.4e-12 at n = 1000 and
2e-10 at n = 1e5, stdtr(1, 1e-8) by 1.5e-9; this module is not.

Methods:

- normal: ``math.erfc`` (as Cephes' ``ndtr``) and the standard library's AS 241 quantile
  (``statistics.NormalDist.inv_cdf``, ~1e-16);
- regularised incomplete beta and gamma: the continued fractions (modified Lentz) and series of
  Numerical Recipes (3rd ed., 6.2 and 6.4), with the prefactors x^a y^b / B(a, b) and
  x^a e^-x / Gamma(a) computed from Stirling's series and Loader's ``bd0`` (as R's nmath does)
  rather than from differences of ``lgamma``, which lose ~1e-10 relative at a ~ 1e5; for one
  large and one small parameter (the Student t at df >= 30) DiDonato & Morris' expansion, where
  the continued fraction is ill-conditioned;
- Student t and chi-square distributions from them, as Cephes does; the binomial by summing
  its terms outwards from the one next to the mean; quantiles by a Newton iteration kept
  inside a bracket (bisection when it would leave it);
- the noncentral t distribution by Benton & Krishnamoorthy's (2003) Poisson-weighted sums of
  incomplete beta functions, summed outwards from the Poisson mode;
- Brent's root finder as scipy's ``brentq`` (its C code, step for step).

Long because: one module (~900 lines) on purpose, the functions share the
incomplete beta and gamma machinery and are read and checked together against one vector file.

Scalar functions take and return Python floats; :func:`ndtr`, :func:`ndtri` and :func:`chdtri`
also take numpy arrays (element by element) because the bootstrap, the group-sequential
boundaries and the power integral call them on arrays.

References
----------
Press, W. H. et al. (2007). *Numerical Recipes*, 3rd ed., sections 6.2, 6.4, 9.3.
Benton, D. and Krishnamoorthy, K. (2003). Computing discrete mixtures of continuous
distributions: noncentral chisquare, noncentral t and the distribution of the square of the
sample multiple correlation coefficient. *Comput. Statist. Data Anal.* 43, 249-267.
Loader, C. (2000). Fast and accurate computation of binomial probabilities.
DiDonato, A. R. and Morris, A. H. (1992). Algorithm 708: significant digit computation of the
incomplete beta function ratios. *ACM Trans. Math. Softw.* 18, 360-373.
Moshier, S. L. Cephes Math Library (``ndtr``, ``stdtr``, ``chdtrc``, ``bdtr``).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

_EPS = 2.220446049250313e-16
_TINY = 1e-300
_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_standard_normal = None  # statistics.NormalDist(), made at the first quantile


# --------------------------------------------------------------------------- normal


def _ndtr_scalar(x: float) -> float:
    if math.isnan(x):
        return math.nan
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _ndtri_scalar(p: float) -> float:
    if math.isnan(p) or p < 0.0 or p > 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    global _standard_normal
    if _standard_normal is None:
        from statistics import NormalDist  # ~4 ms of import, for quantiles only

        _standard_normal = NormalDist()
    return _standard_normal.inv_cdf(p)


_ndtr_array = np.frompyfunc(_ndtr_scalar, 1, 1)
_ndtri_array = np.frompyfunc(_ndtri_scalar, 1, 1)


def ndtr(x):
    """Standard normal cumulative distribution function, P(Z <= x).

    Parameters
    ----------
    x : float or array_like
        Argument (a z score, unitless).

    Returns
    -------
    float or numpy.ndarray
        Probability in [0, 1]; nan for nan. A float for a scalar argument.
    """
    if np.ndim(x) == 0:
        return _ndtr_scalar(float(x))
    with np.errstate(all="ignore"):  # the element functions handle inf and nan themselves
        return _ndtr_array(np.asarray(x, dtype=float)).astype(float)


def ndtri(p):
    """Inverse of :func:`ndtr`: the z with P(Z <= z) = p.

    Parameters
    ----------
    p : float or array_like
        Probability in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        -inf at 0, inf at 1, nan outside [0, 1] or for nan.
    """
    if np.ndim(p) == 0:
        return _ndtri_scalar(float(p))
    with np.errstate(all="ignore"):
        return _ndtri_array(np.asarray(p, dtype=float)).astype(float)


# --------------------------------------------------------------------------- helpers


def _stirling_correction(z: float) -> float:
    """lgamma(z) - ((z - 1/2) ln z - z + ln sqrt(2 pi)) for z >= 10, to ~1e-17 absolute."""
    if z < 10.0:
        return math.lgamma(z) - ((z - 0.5) * math.log(z) - z + _LN_SQRT_2PI)
    w = 1.0 / (z * z)
    return (1.0 / 12.0 + w * (-1.0 / 360.0 + w * (1.0 / 1260.0 + w * (
        -1.0 / 1680.0 + w * (1.0 / 1188.0 + w * (-691.0 / 360360.0 + w / 156.0)))))) / z


def _bd0(x: float, mean: float) -> float:
    """x ln(x / mean) + mean - x without cancellation (Loader 2000)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        s = (x - mean) * v
        ej = 2.0 * x * v
        v2 = v * v
        j = 1
        while True:
            ej *= v2
            s_next = s + ej / (2 * j + 1)
            if s_next == s:
                return s
            s = s_next
            j += 1
    if x == 0.0:
        return mean
    if mean == 0.0:
        return math.inf
    return x * math.log(x / mean) + mean - x


def _beta_prefactor(a: float, b: float, x: float, y: float) -> float:
    """x^a y^b / B(a, b) with y = 1 - x given separately (both accurate)."""
    if x == 0.0 or y == 0.0:
        return 0.0
    if a >= 10.0 and b >= 10.0:
        n = a + b
        log_value = (-_bd0(a, n * x) - _bd0(b, n * y) + _stirling_correction(n)
                     - _stirling_correction(a) - _stirling_correction(b))
        return math.sqrt(a * b / (2.0 * math.pi * n)) * math.exp(log_value)
    if a >= 10.0 or b >= 10.0:
        big, small, x_big, x_small = (a, b, x, y) if a >= 10.0 else (b, a, y, x)
        n = big + small
        log_value = (-_bd0(big, n * x_big) + small * math.log(n * x_small) - n * x_small
                     - math.lgamma(small) - 0.5 * math.log1p(small / big)
                     + _stirling_correction(n) - _stirling_correction(big))
        return math.exp(log_value)
    log_value = (a * math.log(x) + b * math.log(y) + math.lgamma(a + b) - math.lgamma(a)
                 - math.lgamma(b))
    return math.exp(log_value)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Numerical Recipes' continued fraction for I_x(a, b) (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    max_iterations = 10000 + int(20.0 * math.sqrt(max(a, b)))
    for m in range(1, max_iterations):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= _EPS:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def _log_gamma_ratio(a: float, b: float) -> float:
    """ln(Gamma(a + b) / Gamma(a)) for a >= 10, without the cancellation of two lgamma."""
    return (b * math.log(a + b) + (a - 0.5) * math.log1p(b / a) - b
            + _stirling_correction(a + b) - _stirling_correction(a))


def _beta_large_a(a: float, b: float, log_x: float) -> float:
    """I_x(a, b) for a >= 15 and b <= 1 from ln x: the asymptotic expansion in a of
    DiDonato & Morris (1992, TOMS 708's ``bgrat``). The continued fraction is ill-conditioned
    there when x is near 1 (1e-8 relative at a = 5e8: the Student t at huge df)."""
    bm1 = b - 1.0
    nu = a + 0.5 * bm1
    z = -nu * log_x
    r = _gamma_prefactor(b, z)  # z^b e^-z / Gamma(b)
    upper = _gammainc_pair(b, z)[1]
    if z == 0.0:
        return 1.0
    u = math.exp(_log_gamma_ratio(a, b) - b * math.log(nu))
    if r == 0.0:  # z so large that I_x(a, b) underflows with it
        return u * upper
    j = upper / r
    total = j
    v = 0.25 / (nu * nu)
    t2 = 0.25 * log_x * log_x
    t_power, cn, n2 = 1.0, 1.0, 0.0
    c: list[float] = []
    d: list[float] = []
    for n in range(1, 60):
        bp2n = b + n2
        j = (bp2n * (bp2n + 1.0) * j + (z + bp2n + 1.0) * t_power) * v
        n2 += 2.0
        t_power *= t2
        cn /= n2 * (n2 + 1.0)
        c.append(cn)
        s = 0.0
        coef = b - n
        for i in range(1, n):
            s += coef * c[i - 1] * d[n - 1 - i]
            coef += b
        d.append(bm1 * cn + s / n)
        dj = d[-1] * j
        total += dj
        if abs(dj) <= _EPS * 0.5 * total:
            break
    return u * r * total


def _betainc_pair(a: float, b: float, x: float, y: float) -> tuple[float, float]:
    """(I_x(a, b), 1 - I_x(a, b)), each accurate (the smaller one to ~1e-15 relative)."""
    if x <= 0.0:
        return 0.0, 1.0
    if y <= 0.0:
        return 1.0, 0.0
    if x < (a + 1.0) / (a + b + 2.0):
        value = _beta_prefactor(a, b, x, y) * _beta_continued_fraction(a, b, x) / a
        return value, 1.0 - value
    value = _beta_prefactor(b, a, y, x) * _beta_continued_fraction(b, a, y) / b
    return 1.0 - value, value


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b) (scipy.special.betainc).

    Parameters
    ----------
    a, b : float
        Positive shape parameters.
    x : float
        Argument in [0, 1].

    Returns
    -------
    float
        I_x(a, b) in [0, 1]; nan for nan or out-of-domain arguments.
    """
    if any(math.isnan(v) for v in (a, b, x)) or a <= 0 or b <= 0 or not 0.0 <= x <= 1.0:
        return math.nan
    return _betainc_pair(a, b, x, 1.0 - x)[0]


def _gamma_prefactor(a: float, x: float) -> float:
    """x^a e^-x / Gamma(a)."""
    if x == 0.0:
        return 0.0
    if a >= 10.0:
        return math.sqrt(a / (2.0 * math.pi)) * math.exp(-_bd0(a, x) - _stirling_correction(a))
    return math.exp(a * math.log(x) - x - math.lgamma(a))


def _gammainc_pair(a: float, x: float) -> tuple[float, float]:
    """(P(a, x), Q(a, x)), the regularised lower and upper incomplete gamma functions."""
    if x <= 0.0:
        return 0.0, 1.0
    if math.isinf(x):
        return 1.0, 0.0
    front = _gamma_prefactor(a, x)
    max_iterations = 10000 + int(20.0 * math.sqrt(a))
    if x < a + 1.0:  # series for P
        term = total = 1.0 / a
        ap = a
        for _ in range(max_iterations):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * _EPS:
                value = total * front
                return value, 1.0 - value
        raise ArithmeticError(f"incomplete gamma: no convergence for a={a}, x={x}")
    b = x + 1.0 - a  # continued fraction for Q
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, max_iterations):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= _EPS:
            value = front * h
            return 1.0 - value, value
    raise ArithmeticError(f"incomplete gamma: no convergence for a={a}, x={x}")


def gammainc(a: float, x: float) -> float:
    """Regularised lower incomplete gamma function P(a, x) (scipy.special.gammainc).

    Parameters
    ----------
    a : float
        Positive shape.
    x : float
        Non-negative argument.

    Returns
    -------
    float
        P(a, x) in [0, 1]; nan for nan or out-of-domain arguments.
    """
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    return _gammainc_pair(a, x)[0]


def gammaincc(a: float, x: float) -> float:
    """Regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (scipy.special.gammaincc); parameters as :func:`gammainc`."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    return _gammainc_pair(a, x)[1]


def _solve_decreasing(f: Callable[[float], tuple[float, float]], lo: float, hi: float,
                      start: float) -> float:
    """Root of a decreasing ``f`` in [lo, hi] (f(lo) >= 0 >= f(hi)); ``f`` returns (value,
    derivative). Newton steps inside the bracket, bisection (geometric across decades)
    when a step would leave it."""
    x = min(max(start, lo), hi)
    previous_step = math.inf
    for _ in range(400):
        if math.isinf(x):  # the root overflows a double
            return x
        value, slope = f(x)
        if value == 0.0:
            return x
        if value > 0.0:
            lo = x
        else:
            hi = x
        step = value / slope if slope < 0.0 else math.nan
        if abs(step) <= 4.0 * _EPS * abs(x):
            return x - step
        if abs(step) <= 1e-13 * abs(x) and abs(step) >= 0.5 * previous_step:
            return x - step  # no longer shrinking: the function's rounding is reached
        candidate = x - step
        if not (lo < candidate < hi) or math.isnan(candidate):
            if math.isinf(hi):
                candidate = max(2.0 * x, 1.0)
            elif lo == 0.0:  # down by decades: a root may be as small as 1e-300
                candidate = hi / 16.0
            elif hi / lo > 4.0:
                candidate = math.sqrt(lo * hi)
            else:
                candidate = 0.5 * (lo + hi)
            step = x - candidate
        if math.isfinite(hi) and hi - lo <= 4.0 * _EPS * hi:
            return candidate
        previous_step = abs(step)
        x = candidate
    return x


def _solve_log_probability(probability: Callable[[float], float],
                           density: Callable[[float], float], target: float, start: float,
                           *, increasing: bool) -> float:
    """x >= 0 where ``probability(x)`` (a distribution's upper tail, or with ``increasing`` its
    distribution function) equals ``target`` > 0, ``density`` being its derivative's size.

    Solved on logarithms, log P(x) - log target, nearly linear in the tails where the quantiles
    matter, by :func:`_solve_decreasing` in the bracket [0, inf) from ``start``; a probability
    that underflows to 0 says x is past the root (tail) or short of it (distribution function).
    """
    log_target = math.log(target)

    def excess(x: float) -> tuple[float, float]:
        # decreasing in x: log tail - log target, or log target - log cdf
        value = probability(x)
        if value <= 0.0:
            return (math.inf if increasing else -math.inf), -1.0
        log_excess = log_target - math.log(value) if increasing else math.log(value) - log_target
        return log_excess, -density(x) / value

    return _solve_decreasing(excess, 0.0, math.inf, start)


# --------------------------------------------------------------------------- Student t


def _t_tail(df: float, t: float) -> float:
    """P(T > t) for t >= 0."""
    if math.isinf(t):
        return 0.0
    if math.isinf(df) or df > 1e20:
        return _ndtr_scalar(-t)
    t2 = t * t
    if df >= 30.0 and t2 <= 16.0 * df:  # x = df / (df + t^2) near 1: the continued
        # fraction is ill-conditioned there for large df, the expansion in df is not
        return 0.5 * _beta_large_a(0.5 * df, 0.5, -math.log1p(t2 / df))
    if t2 > 1e200:  # x = df / t^2 would underflow: the series' first term, in logarithms
        a = 0.5 * df
        log_x = math.log(df) - 2.0 * math.log(t)
        log_beta = math.lgamma(a) + math.lgamma(0.5) - math.lgamma(a + 0.5)
        return 0.5 * math.exp(a * log_x - math.log(a) - log_beta)
    x, y = df / (df + t2), t2 / (df + t2)
    return 0.5 * _betainc_pair(0.5 * df, 0.5, x, y)[0]


def stdtr(df: float, t: float) -> float:
    """Student t cumulative distribution function, P(T <= t) (scipy.special.stdtr).

    Parameters
    ----------
    df : float
        Degrees of freedom, > 0 (inf gives the normal).
    t : float
        Argument.

    Returns
    -------
    float
        Probability; nan for nan or df <= 0.
    """
    if math.isnan(df) or math.isnan(t) or df <= 0:
        return math.nan
    tail = _t_tail(df, abs(t))
    return tail if t < 0 else 1.0 - tail


def _t_pdf(df: float, t: float) -> float:
    if df > 1e20:
        return math.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi)
    log_norm = math.lgamma(0.5 * (df + 1.0)) - math.lgamma(0.5 * df) - 0.5 * math.log(df * math.pi)
    ratio = t * t / df
    log_kernel = math.log1p(ratio) if math.isfinite(ratio) else 2.0 * math.log(abs(t)) - math.log(df)
    return math.exp(log_norm - 0.5 * (df + 1.0) * log_kernel)


def _t_start(df: float, tail: float) -> float:
    """A starting t with P(T > t) ~ tail: the Cornish-Fisher expansion about the normal
    quantile where the tail is mild for ``df``, else the power-law tail
    P(T > t) ~ Gamma((df+1)/2) df^((df-1)/2) / (Gamma(df/2) sqrt(pi)) t^-df."""
    z = -_ndtri_scalar(tail)
    if z * z <= df:
        return (z + (z ** 3 + z) / (4.0 * df)
                + (5.0 * z ** 5 + 16.0 * z ** 3 + 3.0 * z) / (96.0 * df * df))
    log_c = (math.lgamma(0.5 * (df + 1.0)) + 0.5 * (df - 1.0) * math.log(df)
             - math.lgamma(0.5 * df) - 0.5 * math.log(math.pi))
    log_t = (log_c - math.log(tail)) / df
    return math.exp(min(log_t, 700.0))


def _t_tail_inverse(df: float, tail: float) -> float:
    """t >= 0 with P(T > t) = tail, 0 < tail <= 1/2."""
    if tail == 0.5:
        return 0.0
    if df == 1.0:
        return 1.0 / math.tan(math.pi * tail)
    if df == 2.0:
        return (1.0 - 2.0 * tail) / math.sqrt(2.0 * tail * (1.0 - tail))
    if df > 1e20:
        return -_ndtri_scalar(tail)
    return _solve_log_probability(lambda t: _t_tail(df, t), lambda t: _t_pdf(df, t), tail,
                                  _t_start(df, tail), increasing=False)


def stdtrit(df: float, p: float) -> float:
    """Inverse of :func:`stdtr` in t: the Student t quantile (scipy.special.stdtrit).

    Parameters
    ----------
    df : float
        Degrees of freedom, > 0.
    p : float
        Probability in [0, 1].

    Returns
    -------
    float
        The t with P(T <= t) = p; -inf at 0, inf at 1, nan outside.
    """
    if math.isnan(df) or math.isnan(p) or df <= 0 or not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p < 0.5:
        return -_t_tail_inverse(df, p)
    return _t_tail_inverse(df, 1.0 - p)


class t:
    """The Student t distribution with the methods benchlab uses of ``scipy.stats.t``
    (scalars only)."""

    @staticmethod
    def cdf(x: float, df: float) -> float:
        """P(T <= x)."""
        return stdtr(float(df), float(x))

    @staticmethod
    def sf(x: float, df: float) -> float:
        """P(T > x), accurate in the upper tail."""
        return stdtr(float(df), -float(x))

    @staticmethod
    def ppf(q: float, df: float) -> float:
        """The x with P(T <= x) = q."""
        return stdtrit(float(df), float(q))

    @staticmethod
    def isf(q: float, df: float) -> float:
        """The x with P(T > x) = q."""
        return -stdtrit(float(df), float(q))


# --------------------------------------------------------------------------- chi-square


def chdtrc(df: float, x: float) -> float:
    """Chi-square survival function, P(X > x) for X ~ chi-square(df) (scipy.special.chdtrc).

    Parameters
    ----------
    df : float
        Degrees of freedom, > 0.
    x : float
        Argument (x < 0 gives 1).

    Returns
    -------
    float
        Probability; nan for nan or df <= 0.
    """
    return _chi_square_side(df, x, upper=True)


def chdtr(df: float, x: float) -> float:
    """Chi-square cumulative distribution function P(X <= x) (scipy.special.chdtr);
    parameters as :func:`chdtrc`."""
    return _chi_square_side(df, x, upper=False)


def _chi_square_side(df: float, x: float, *, upper: bool) -> float:
    """P(X > x) with ``upper``, else P(X <= x): each computed, not 1 minus the other."""
    if math.isnan(df) or math.isnan(x) or df <= 0:
        return math.nan
    if x <= 0.0:
        return 1.0 if upper else 0.0
    return _gammainc_pair(0.5 * df, 0.5 * x)[1 if upper else 0]


def _chdtri_scalar(df: float, upper: float) -> float:
    if math.isnan(df) or math.isnan(upper) or df <= 0 or not 0.0 <= upper <= 1.0:
        return math.nan
    if upper == 0.0:
        return math.inf
    if upper == 1.0:
        return 0.0
    a = 0.5 * df
    use_upper = upper < 0.5  # the smaller of Q and P keeps its digits
    # Wilson-Hilferty start
    z = -_ndtri_scalar(upper)
    h = 2.0 / (9.0 * df)
    start = 0.5 * df * max(1.0 - h + z * math.sqrt(h), 1e-3) ** 3
    start = start if math.isfinite(start) and start > 0.0 else 1.0
    # in g = x/2: Q(a, g) = upper, or P(a, g) = 1 - upper
    half = _solve_log_probability(
        lambda g: _gammainc_pair(a, g)[1 if use_upper else 0],
        lambda g: _gamma_prefactor(a, g) / g if g > 0 else math.inf,
        upper if use_upper else 1.0 - upper, start, increasing=not use_upper)
    return 2.0 * half


_chdtri_array = np.frompyfunc(_chdtri_scalar, 2, 1)


def chdtri(df, y):
    """Inverse of :func:`chdtrc` in x: the x with P(X > x) = y (scipy.special.chdtri).

    Parameters
    ----------
    df : float or array_like
        Degrees of freedom, > 0.
    y : float or array_like
        Upper-tail probability in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        0 at y = 1, inf at y = 0, nan outside; a float for scalar arguments.
    """
    if np.ndim(df) == 0 and np.ndim(y) == 0:
        return _chdtri_scalar(float(df), float(y))
    with np.errstate(all="ignore"):
        return _chdtri_array(np.asarray(df, dtype=float), np.asarray(y, dtype=float)).astype(
            float)


# --------------------------------------------------------------------------- binomial


def bdtr(k: float, n: float, p: float) -> float:
    """Binomial cumulative distribution function, P(X <= k) for X ~ Binomial(n, p)
    (scipy.special.bdtr).

    Parameters
    ----------
    k : float
        Number of successes (floored); k < 0 gives 0, k >= n gives 1.
    n : float
        Number of trials, >= 0.
    p : float
        Success probability in [0, 1].

    Returns
    -------
    float
        Probability; nan for nan or out-of-domain n, p.
    """
    if any(math.isnan(v) for v in (k, n, p)) or n < 0 or not 0.0 <= p <= 1.0:
        return math.nan
    k = math.floor(k)
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    if n != math.floor(n) or n > 1e7:
        # P(X <= k) = I_{1-p}(n - k, k + 1)
        return _betainc_pair(n - k, k + 1.0, 1.0 - p, p)[0]
    # Integer n: the sum of the probabilities on the smaller side of the mean, from the
    # term next to the mean outwards (each from the previous by the ratio of consecutive
    # terms). The incomplete beta's continued fraction loses ~1e-10 relative at n ~ 1e5
    # near the mean, where both of its parameters are large.
    if k < n * p:
        return _binomial_side_sum(k, n, p, downwards=True)
    return 1.0 - _binomial_side_sum(k + 1, n, p, downwards=False)


def _binomial_pmf(i: float, n: float, p: float) -> float:
    """P(X = i) for X ~ Binomial(n, p), 0 <= i <= n, by Loader's (2000) saddle point form."""
    q = 1.0 - p
    if i == 0:
        return math.exp(n * math.log1p(-p))
    if i == n:
        return math.exp(n * math.log(p))
    log_value = (_stirling_correction(n) - _stirling_correction(i) - _stirling_correction(n - i)
                 - _bd0(i, n * p) - _bd0(n - i, n * q))
    return math.exp(log_value) * math.sqrt(n / (2.0 * math.pi * i * (n - i)))


def _binomial_side_sum(start: float, n: float, p: float, downwards: bool) -> float:
    """P(X <= start) (downwards) or P(X >= start) (upwards), start on the far side of the mean."""
    q = 1.0 - p
    term = _binomial_pmf(start, n, p)
    total = term
    i = start
    while term > _EPS * 1e-3 * total and (i > 0 if downwards else i < n):
        if downwards:  # P(i - 1) = P(i) i q / ((n - i + 1) p)
            term *= i * q / ((n - i + 1.0) * p)
            i -= 1
        else:  # P(i + 1) = P(i) (n - i) p / ((i + 1) q)
            term *= (n - i) * p / ((i + 1.0) * q)
            i += 1
        total += term
    return total


# --------------------------------------------------------------------------- noncentral t


def _nct_mode_weights(nc: float, lam: float, k: int) -> tuple[float, float]:
    """The Poisson weight e^-lam lam^k / k! (Loader's saddle point form for k >= 10) and its
    companion nc/sqrt(2) e^-lam lam^k / Gamma(k + 3/2), lam = nc^2 / 2."""
    if lam == 0.0:
        p_weight = 1.0
    elif k >= 10:
        p_weight = math.exp(-_stirling_correction(float(k)) - _bd0(float(k), lam)) / math.sqrt(
            2.0 * math.pi * k)
    else:
        p_weight = math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1.0))
    if k >= 10:  # ln(Gamma(k + 1) / Gamma(k + 3/2)) without two large lgamma
        log_ratio = (-(k + 1.0) * math.log1p(0.5 / (k + 1.0)) - 0.5 * math.log(k + 1.0) + 0.5
                     + _stirling_correction(k + 1.0) - _stirling_correction(k + 1.5))
    else:
        log_ratio = math.lgamma(k + 1.0) - math.lgamma(k + 1.5)
    return p_weight, p_weight * nc / math.sqrt(2.0) * math.exp(log_ratio)


def _nct_cdf_nonnegative(df: float, nc: float, t: float) -> float:
    """P(T' <= t) for t >= 0 (Benton & Krishnamoorthy 2003, summed from the Poisson mode)."""
    base = _ndtr_scalar(-nc)
    if t == 0.0:
        return base
    if math.isinf(t):
        return 1.0
    # Far from the bulk the sum runs over ~10 sqrt(nc^2 / 2) Poisson terms (thousands in a
    # power search's upper bracket) for a result a double cannot tell from 0 or 1. With
    # T' = (Z + nc) / S, S = sqrt(V / df): P(T' <= t) <= Phi(-nc/2) + P(S >= nc / (2 t)) for
    # nc > 0, and P(T' > t) <= Phi(nc) for nc < 0.
    if nc < 0.0 and _ndtr_scalar(nc) < 1e-17:
        return 1.0
    if nc > 0.0:
        s0 = nc / (2.0 * t)
        if s0 > 1.0 and _ndtr_scalar(-0.5 * nc) + chdtrc(df, df * s0 * s0) < 1e-300:
            return 0.0
    t2 = t * t
    x = t2 / (df + t2)
    y = df / (df + t2)
    lam = 0.5 * nc * nc
    b = 0.5 * df
    k = int(lam)
    p_weight, q_weight = _nct_mode_weights(nc, lam, k)
    a_p, a_q = k + 0.5, k + 1.0
    i_p = _betainc_pair(a_p, b, x, y)[0]
    i_q = _betainc_pair(a_q, b, x, y)[0]
    g_p = _beta_prefactor(a_p, b, x, y) / a_p  # I(a+1) = I(a) - g(a)
    g_q = _beta_prefactor(a_q, b, x, y) / a_q
    total = 0.0
    # forwards from the mode
    pw, qw, ip, iq, gp, gq, ap, aq = p_weight, q_weight, i_p, i_q, g_p, g_q, a_p, a_q
    poisson_left = 1.0
    j = k
    while True:
        term = pw * ip + qw * iq
        total += term
        poisson_left -= pw
        if j > k + 5 and (abs(term) <= _EPS * abs(total) * 1e-2 or poisson_left * ip < 1e-300
                          or (pw < 1e-300 and abs(qw) < 1e-300)):
            break
        if j > k + 100000:
            break
        j += 1
        pw *= lam / j
        qw *= lam / (j + 0.5)
        ip -= gp
        iq -= gq
        gp *= x * (ap + b) / (ap + 1.0)
        gq *= x * (aq + b) / (aq + 1.0)
        ap += 1.0
        aq += 1.0
    # backwards from the mode
    pw, qw, ip, iq, gp, gq, ap, aq = p_weight, q_weight, i_p, i_q, g_p, g_q, a_p, a_q
    j = k
    while j > 0:
        # g(a-1) = g(a) * a / (x (a - 1 + b)); I(a-1) = I(a) + g(a-1)
        gp = gp * ap / (x * (ap - 1.0 + b)) if x > 0 else 0.0
        gq = gq * aq / (x * (aq - 1.0 + b)) if x > 0 else 0.0
        ap -= 1.0
        aq -= 1.0
        ip += gp
        iq += gq
        pw *= j / lam
        qw *= (j + 0.5) / lam
        j -= 1
        term = pw * ip + qw * iq
        total += term
        if abs(term) <= _EPS * abs(total) * 1e-2 and pw < 1e-20:
            break
    return base + 0.5 * total


def nctdtr(df: float, nc: float, t: float) -> float:
    """Noncentral t cumulative distribution function, P(T' <= t) (scipy.special.nctdtr).

    Parameters
    ----------
    df : float
        Degrees of freedom, > 0.
    nc : float
        Noncentrality parameter.
    t : float
        Argument.

    Returns
    -------
    float
        Probability in [0, 1], to ~1e-15 absolute; nan for nan or df <= 0. For t < 0 it is
        1 - P(T'' <= -t) with T'' of noncentrality -nc, so far lower tails (below ~1e-15) are
        only as good as that difference.
    """
    if any(math.isnan(v) for v in (df, nc, t)) or df <= 0:
        return math.nan
    if math.isinf(df):
        return _ndtr_scalar(t - nc)
    if t >= 0.0:
        value = _nct_cdf_nonnegative(df, nc, t)
    else:
        value = 1.0 - _nct_cdf_nonnegative(df, -nc, -t)
    return min(max(value, 0.0), 1.0)


# --------------------------------------------------------------------------- root finding


def brentq(f: Callable[[float], float], a: float, b: float, xtol: float = 2e-12,
           rtol: float = 4 * _EPS, maxiter: int = 100) -> float:
    """A root of ``f`` in [a, b] where f(a) and f(b) differ in sign (scipy.optimize.brentq:
    its C code, ``Zeros/brentq.c``, step for step).

    Parameters
    ----------
    f : callable
        Continuous function of one float.
    a, b : float
        Bracket ends.
    xtol, rtol : float
        The root is found to ``xtol + rtol * |root|`` (absolute, in f's argument's unit).
    maxiter : int
        Steps before RuntimeError.

    Returns
    -------
    float
        The root.
    """
    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = float(f(xpre)), float(f(xcur))
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            try:
                if xpre == xblk:  # interpolate
                    stry = -fcur * (xcur - xpre) / (fcur - fpre)
                else:  # extrapolate
                    dpre = (fpre - fcur) / (xpre - xcur)
                    dblk = (fblk - fcur) / (xblk - xcur)
                    stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            except ZeroDivisionError:  # C divides to inf or nan here, and so bisects
                stry = math.inf
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):  # good short step
                spre, scur = scur, stry
            else:  # bisect
                spre = scur = sbis
        else:  # bisect
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = float(f(xcur))
    raise RuntimeError(f"root search did not converge in {maxiter} steps")
