"""Rank-based two-sample comparison: Mann-Whitney U and the Hodges-Lehmann shift.

Both follow R's ``wilcox.test(x, y, conf.int = TRUE)`` (R 4.2, ``stats:::wilcox.test.default``)
so that a result can be checked against R:

* exact branch -- both samples have fewer than 50 values and the pooled sample has no ties: the
  p-value comes from the exact null distribution of W (R's ``pwilcox``), the interval from the
  order statistics of all pairwise differences at R's ``qwilcox`` critical value;
* normal branch -- otherwise: normal approximation with tie and continuity correction.

R locates the normal-branch estimate and interval by root finding (``uniroot``, tolerance 1e-4)
on a re-ranking function W(d). W(d) is a step function of d that jumps exactly at the pairwise
differences, so its roots are order statistics of the pairwise differences x_i - y_j. We compute
those order statistics exactly (see :func:`pairwise_difference_quantiles`), which equals brute
force bit for bit. The interval's ends equal R's within R's root-finding tolerance (about 1e-4
data units). The estimate does too for odd n*m; for even n*m benchlab takes the midpoint of the
two middle differences (the median of all n*m, as brute force confirms), while R's ``uniroot``
stops wherever in the gap between them its step function W(d) first crosses its target, so R's
estimate may differ from benchlab's by up to half that gap.

The k-th smallest of the n*m implicit differences is found without materialising them: with x
and y sorted ascending, row i of the matrix D[i, j] = x_i - y_j is descending in j, so the number
of entries <= t is one vectorised binary search per row (``np.searchsorted``, O(n log m)), or
for integer samples of a modest range one lookup per row in a table of y's counts (O(n)). A
Floyd-Rivest style selection samples the still-undecided entries, brackets the wanted rank
between two sampled pivots, counts exactly, and repeats until few enough candidates remain to
materialise them and finish with ``np.partition``. Each round shrinks the candidate set by about
a factor of 100, so 1M x 1M (1e12 differences) needs a handful of counting passes.

References
----------
Hollander, M., Wolfe, D. A. and Chicken, E. (2014). *Nonparametric Statistical Methods*, 3rd ed.,
Wiley, sections 4.1-4.3.
Bauer, D. F. (1972). Constructing confidence sets using rank statistics. *JASA* 67, 687-690.
Monahan, J. F. (1984). Algorithm 616: fast computation of the Hodges-Lehmann location estimator.
*ACM TOMS* 10, 265-270.
Floyd, R. W. and Rivest, R. L. (1975). Expected time bounds for selection. *CACM* 18, 165-172.

Long because: the test and the interval that inverts it share their tie terms, their exact or
normal branch and the ranks that end the interval; split, each half would reach into the
other's private steps (the selection itself is :mod:`benchlab.stats.rank_selection`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from benchlab.errors import UserError
from benchlab.stats.descriptive import InvalidSampleError, as_sample
from benchlab.stats.rank_exact import wilcox_cdf, wilcox_quantile, wilcox_sf
from benchlab.stats.rank_selection import (  # noqa: F401  (public here since before the split)
    pair_digest,
    pairwise_difference_quantiles,
    selections_are_kept,
    sorted_difference_quantiles,
)


def __getattr__(name: str) -> Any:
    """``median_ratio``, still importable from here (its old home), loaded on first use: its
    bootstrap imports ``numpy.random`` (~10 ms) that a run's verdict never needs."""
    if name == "median_ratio":
        from benchlab.stats.ratio import median_ratio

        return median_ratio
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Alternative = Literal["two-sided", "less", "greater"]

# Both samples below this size and no ties -> exact distribution, as R's default ``exact = NULL``.
EXACT_LIMIT = 50


def average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank: ``scipy.stats.rankdata(a)``'s algorithm
    and numbers (half-integers, exact in float64) without importing scipy.stats (~1 s, most of
    `benchlab history`'s start-up)."""
    # Any order of equal values gives the same average ranks, so the sort need not be stable:
    # numpy's default (vectorised) argsort is ~3x faster than its merge sort on 1M values.
    sorter = np.argsort(a)
    ordered = a[sorter]
    if ordered.size == 0:
        return np.empty(0)
    # The same arrays np.r_ built, without its index-parsing machinery (~0.1 ms a call, a
    # tenth of a verdict's pair at n = 20).
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    dense = first.cumsum()  # in sorted order: ranked there, then put back in one scatter
    bounds = np.append(np.flatnonzero(first), first.size)
    ranks = np.empty(ordered.size)
    ranks[sorter] = 0.5 * (bounds[dense] + bounds[dense - 1] + 1)
    return ranks


# --------------------------------------------------------------------------- input checking


def _reject_constant_pool(x: np.ndarray, y: np.ndarray) -> None:
    if x.min() == x.max() == y.min() == y.max():
        raise InvalidSampleError(
            f"both samples are constant (every value is {x[0]:g}); a rank test needs variation - "
            "check the timer resolution or increase the work per measurement"
        )


def _sorted_tie_term(sorted_values: np.ndarray) -> float:
    """sum(t^3 - t) over groups of tied values (the tie correction of the rank variance), of
    an array sorted ascending."""
    if sorted_values.size < 2:
        return 0.0
    equal_next = sorted_values[1:] == sorted_values[:-1]
    if not equal_next.any():
        return 0.0
    change = np.flatnonzero(~equal_next)
    bounds = np.concatenate([[-1], change, [sorted_values.size - 1]])
    counts = np.diff(bounds).astype(np.float64)
    counts = counts[counts > 1]
    return float(np.sum(counts**3 - counts))


# --------------------------------------------------------------------------- Mann-Whitney U


@dataclass(frozen=True)
class MannWhitneyResult:
    """Mann-Whitney U (Wilcoxon rank-sum) test of x against y, as R's ``wilcox.test``.

    Attributes
    ----------
    statistic : float
        R's W: rank sum of x minus n_x(n_x+1)/2 (= number of pairs with x_i > y_j, ties 1/2).
    p_value : float
        P-value for ``alternative``.
    method : {"exact", "normal"}
        Exact null distribution, or normal approximation with tie and continuity correction.
    z : float or None
        Standardised statistic (normal branch only).
    n_x, n_y : int
        Sample sizes.
    alternative : str
        "two-sided", "less" (x shifted below y) or "greater".
    ties : bool
        Whether the pooled sample has ties.
    """

    statistic: float
    p_value: float
    method: str
    z: float | None
    n_x: int
    n_y: int
    alternative: str
    ties: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return asdict(self)


# Exact counts are Python integers above 66 values: O(n_x * n_y * n_x) work, ~0.3 s at 100 x 100.
_EXACT_MAX_PAIRS = 10_000


def _use_exact(n_x: int, n_y: int, exact: bool | None, ties: bool) -> bool:
    wanted = (n_x < EXACT_LIMIT and n_y < EXACT_LIMIT) if exact is None else bool(exact)
    if wanted and exact and n_x * n_y > _EXACT_MAX_PAIRS:
        raise UserError(
            f"the exact distribution for {n_x} x {n_y} samples is too expensive to count; "
            "use exact=None (normal approximation above 50 values, as R)"
        )
    return wanted and not ties


def rank_sum_statistic(x: np.ndarray, y: np.ndarray) -> float:
    """Wilcoxon's W = the rank sum of x in the pooled sample minus n_x (n_x + 1) / 2 (average
    ranks for ties), counted as sum_i #{y_j < x_i} + #{y_j == x_i} / 2: two binary searches of
    the sorted y per value of x, not a ranking of the pooled sample (an argsort of n + m values
    and three permutations: ~5x more at 10M). Exact: twice W is an integer below 2**53.

    Parameters
    ----------
    x, y : numpy.ndarray
        Finite samples (any unit, the same for both).

    Returns
    -------
    float
        W, unitless (a count of pairs, ties counted half).
    """
    xs, ys = np.sort(x), np.sort(y)  # sorted keys make the searches walk y once
    below = int(np.searchsorted(ys, xs, side="left").sum(dtype=np.int64))
    up_to = int(np.searchsorted(ys, xs, side="right").sum(dtype=np.int64))
    return 0.5 * float(below + up_to)


def mann_whitney_u(
    x: Any,
    y: Any,
    *,
    alternative: Alternative = "two-sided",
    exact: bool | None = None,
    correct: bool = True,
) -> MannWhitneyResult:
    """Mann-Whitney U test (Wilcoxon rank-sum), identical to R's ``wilcox.test(x, y)``.

    Parameters
    ----------
    x, y : array_like
        The two samples (any unit; ns for timings). At least 3 finite values each.
    alternative : {"two-sided", "less", "greater"}
        "less": x tends to be smaller than y.
    exact : bool or None
        None (default): exact when both samples have < 50 values; the exact branch is never used
        with ties (as R, which then warns and falls back to the normal approximation).
    correct : bool
        Continuity correction in the normal approximation (R's default True).

    Returns
    -------
    MannWhitneyResult

    Raises
    ------
    UserError
        Empty, too small or non-finite samples, or a pooled sample with a single value.
    """
    x = as_sample(x, name="first sample")
    y = as_sample(y, name="second sample")
    _reject_constant_pool(x, y)
    if alternative not in ("two-sided", "less", "greater"):
        raise UserError(f"unknown alternative {alternative!r}; use two-sided, less or greater")
    if x.size + y.size < _REMEMBER_TESTS_FROM:
        return _mann_whitney(x, y, alternative, exact, correct)
    options = repr((alternative, exact, correct)).encode()
    digest_x, digest_y = pair_digest(x, x[:0]), pair_digest(y, y[:0])
    key = digest_x + digest_y + options
    result = _KNOWN_TESTS.pop(key, None)
    if result is None:
        swapped = _KNOWN_TESTS.get(digest_y + digest_x + options)
        result = (_swapped(swapped) if swapped is not None and alternative == "two-sided"
                  and swapped.method == "normal" else
                  _mann_whitney(x, y, alternative, exact, correct))
    _KNOWN_TESTS[key] = result  # the newest last; the oldest leaves first
    while len(_KNOWN_TESTS) > _KNOWN_TEST_PAIRS:
        del _KNOWN_TESTS[next(iter(_KNOWN_TESTS))]
    return result


def _swapped(r: MannWhitneyResult) -> MannWhitneyResult:
    """The two-sided normal-branch test of y against x from that of x against y, bit for bit
    what computing it gives: W' = n_x n_y - W and z' = -z (both exact: W is a count of pairs,
    the correction changes sign with z), and the same p-value (symmetric in z)."""
    return MannWhitneyResult(r.n_x * r.n_y - r.statistic, r.p_value, r.method,
                             None if r.z is None else -r.z, r.n_y, r.n_x, r.alternative, r.ties)


# Tests already computed, by the digest of both samples and the options: a verdict asks for the
# p-value of a pair several times (the family's Holm step, the interval, the equivalence test),
# ~55 ms each at 2 x 500,000 values, where the digest costs ~8 ms. Few values are recomputed.
_KNOWN_TESTS: dict[bytes, MannWhitneyResult] = {}
_KNOWN_TEST_PAIRS = 8
_REMEMBER_TESTS_FROM = 20_000


def forget_remembered() -> None:
    """Forget the tests and the order statistics computed before (each computed anew), as in
    a new process: for timing a call cold."""
    from benchlab.stats import rank_selection

    _KNOWN_TESTS.clear()
    rank_selection.forget_selections()


def _mann_whitney(x: np.ndarray, y: np.ndarray, alternative: str, exact: bool | None,
                  correct: bool) -> MannWhitneyResult:
    """:func:`mann_whitney_u` of validated samples."""
    n_x, n_y = x.size, y.size
    w = rank_sum_statistic(x, y)
    tie_term = _sorted_tie_term(np.sort(np.concatenate([x, y])))
    ties = tie_term > 0
    if _use_exact(n_x, n_y, exact, ties):
        w_int = int(round(w))
        if alternative == "two-sided":
            if w > n_x * n_y / 2:
                p = wilcox_sf(w_int - 1, n_x, n_y)
            else:
                p = wilcox_cdf(w_int, n_x, n_y)
            p = min(2 * p, 1.0)
        elif alternative == "greater":
            p = wilcox_sf(w_int - 1, n_x, n_y)
        else:
            p = wilcox_cdf(w_int, n_x, n_y)
        return MannWhitneyResult(w, p, "exact", None, n_x, n_y, alternative, ties)

    z = w - n_x * n_y / 2
    n = n_x + n_y
    sigma = math.sqrt((n_x * n_y / 12) * ((n + 1) - tie_term / (n * (n - 1))))
    if correct:
        if alternative == "two-sided":
            correction = math.copysign(0.5, z) if z != 0 else 0.0
        elif alternative == "greater":
            correction = 0.5
        else:
            correction = -0.5
    else:
        correction = 0.0
    z = (z - correction) / sigma
    from benchlab.stats import distributions as special

    if alternative == "two-sided":
        p = 2 * min(special.ndtr(z), special.ndtr(-z))
    elif alternative == "greater":
        p = special.ndtr(-z)
    else:
        p = special.ndtr(z)
    return MannWhitneyResult(w, float(min(p, 1.0)), "normal", float(z), n_x, n_y, alternative, ties)


# --------------------------------------------------------------------------- Hodges-Lehmann


@dataclass(frozen=True)
class HodgesLehmannResult:
    """Hodges-Lehmann shift of x relative to y and its distribution-free confidence interval.

    Attributes
    ----------
    estimate : float
        Median of all pairwise differences x_i - y_j (data unit, e.g. ns). Negative: x is
        smaller (faster, for timings) than y.
    ci_low, ci_high : float
        Confidence interval bounds (data unit).
    conf_level : float
        Requested confidence level.
    achieved_conf_level : float
        Coverage actually guaranteed (exact branch: from the discrete W distribution; normal
        branch: the requested level).
    method : {"exact", "normal"}
        Which branch of R's ``wilcox.test`` this corresponds to.
    rank_low, rank_high : int
        1-based ranks of the interval bounds among the sorted n*m pairwise differences.
    """

    estimate: float
    ci_low: float
    ci_high: float
    conf_level: float
    achieved_conf_level: float
    method: str
    rank_low: int
    rank_high: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return asdict(self)


def hodges_lehmann(
    x: Any,
    y: Any,
    *,
    conf_level: float = 0.95,
    exact: bool | None = None,
    correct: bool = True,
) -> HodgesLehmannResult:
    """Hodges-Lehmann estimate of the shift x - y with its two-sided confidence interval.

    Same definition as R's ``wilcox.test(x, y, conf.int = TRUE)``: in the exact branch (both
    samples < 50 values, no ties) the interval is [D_(q), D_(nm-q+1)] with q = qwilcox(alpha/2)
    (q = 1 if that is 0); otherwise, with the normal approximation, the ranks are
    k_lo = floor(nm/2 - 0.5 - z*sigma) + 1 and k_hi = floor(nm/2 + 0.5 + z*sigma) + 1 where
    z = Phi^-1(1 - alpha/2) and sigma is the rank-sum SD with the tie correction counted within
    x and within y separately (the pairwise shift separates the two samples' values). The
    estimate is the median of the pairwise differences (mean of the two middle ones for even
    n*m). Unlike R, no root finding: values are exact order statistics; for even n*m in the
    normal branch R's estimate is some point of the gap between the two middle differences,
    not necessarily its midpoint (see the module docstring).

    Parameters
    ----------
    x, y : array_like
        Samples (e.g. ns). At least 3 finite values each.
    conf_level : float
        Confidence level of the interval, in (0, 1).
    exact, correct : see :func:`mann_whitney_u`.

    Returns
    -------
    HodgesLehmannResult
    """
    x = as_sample(x, name="first sample")
    y = as_sample(y, name="second sample")
    _reject_constant_pool(x, y)
    if not 0.0 < conf_level < 1.0:
        raise UserError(f"confidence level {conf_level} is not in (0, 1); pass e.g. 0.95")
    xs, ys = np.sort(x), np.sort(y)
    nm = xs.size * ys.size
    k_lo, k_hi, achieved, method = _interval_ranks(xs, ys, conf_level, exact, correct)
    values = sorted_difference_quantiles(xs, ys, [k_lo, k_hi, *_middle_ranks(nm)])
    estimate = float(np.mean(values[2:]))
    return HodgesLehmannResult(
        estimate=estimate,
        ci_low=float(values[0]),
        ci_high=float(values[1]),
        conf_level=conf_level,
        achieved_conf_level=float(achieved),
        method=method,
        rank_low=int(k_lo),
        rank_high=int(k_hi),
    )


def _interval_ranks(xs: np.ndarray, ys: np.ndarray, conf_level: float, exact: bool | None,
                    correct: bool, tie_terms: tuple[float, float] | None = None,
                    ) -> tuple[int, int, float, str]:
    """The 1-based ranks of the pairwise differences that end :func:`hodges_lehmann`'s interval
    of sorted samples ``xs``, ``ys`` at ``conf_level``, its achieved level and its method.
    ``tie_terms``: both samples' :func:`_sorted_tie_term`, when known."""
    n_x, n_y = xs.size, ys.size
    nm = n_x * n_y
    alpha = 1 - conf_level
    tie_x, tie_y = tie_terms or (_sorted_tie_term(xs), _sorted_tie_term(ys))
    wants_exact = (n_x < EXACT_LIMIT and n_y < EXACT_LIMIT) if exact is None else bool(exact)
    ties = wants_exact and (tie_x > 0 or tie_y > 0 or not set(xs.tolist()).isdisjoint(ys.tolist()))
    if _use_exact(n_x, n_y, exact, ties):
        qu = wilcox_quantile(alpha / 2, n_x, n_y)
        if qu == 0:
            qu = 1
        ql = nm - qu
        achieved_alpha = 2 * wilcox_cdf(qu - 1, n_x, n_y)
        k_lo, k_hi = qu, ql + 1
        achieved = 1 - achieved_alpha
        method = "exact"
    else:
        from benchlab.stats import distributions as special

        z = float(-special.ndtri(alpha / 2))  # norm.isf, as scipy.stats computes it
        n = n_x + n_y
        sigma = math.sqrt(
            (nm / 12) * ((n + 1) - (tie_x + tie_y) / (n * (n - 1)))
        )
        cc = 0.5 if correct else 0.0
        k_lo = math.floor(nm / 2 - cc - z * sigma) + 1
        k_hi = math.floor(nm / 2 + cc + z * sigma) + 1
        k_lo = min(max(k_lo, 1), nm)
        k_hi = min(max(k_hi, 1), nm)
        achieved = conf_level
        method = "normal"
    return int(k_lo), int(k_hi), float(achieved), method


def _middle_ranks(nm: int) -> list[int]:
    """The rank(s) of the median of ``nm`` differences: one for odd ``nm``, two for even."""
    return [(nm + 1) // 2] if nm % 2 else [nm // 2, nm // 2 + 1]


def hodges_lehmann_estimate(x: Any, y: Any) -> float:
    """The Hodges-Lehmann estimate of the shift x - y alone (the median of the pairwise
    differences), in the unit of x: :func:`hodges_lehmann`'s estimate without selecting the
    ends of an interval nobody reads."""
    xs = np.sort(as_sample(x, name="first sample"))
    ys = np.sort(as_sample(y, name="second sample"))
    return float(np.mean(sorted_difference_quantiles(xs, ys, _middle_ranks(xs.size * ys.size))))


def select_hodges_lehmann(x: Any, y: Any, conf_levels: Sequence[float], *,
                          exact: bool | None = None, correct: bool = True) -> None:
    """Select, in one pass over the pairwise differences, the order statistics
    :func:`hodges_lehmann` will need for each of ``conf_levels``; the calls that follow read
    them from memory. A verdict asks for its interval and its equivalence interval of the same
    pair, whose ends lie close together around the median: selecting them together shares the
    passes that narrow down to that band."""
    xs = np.sort(as_sample(x, name="first sample"))
    ys = np.sort(as_sample(y, name="second sample"))
    if not selections_are_kept(xs.size * ys.size) or xs[0] == xs[-1] == ys[0] == ys[-1]:
        return  # so few differences are partitioned whole at each call, nothing kept
    ranks = set(_middle_ranks(xs.size * ys.size))
    tie_terms = (_sorted_tie_term(xs), _sorted_tie_term(ys))  # the same at every level
    for level in conf_levels:
        if 0.0 < level < 1.0:
            ranks.update(_interval_ranks(xs, ys, level, exact, correct, tie_terms)[:2])
    sorted_difference_quantiles(xs, ys, sorted(ranks))
