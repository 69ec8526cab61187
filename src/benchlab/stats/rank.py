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
force bit for bit and equals R within R's own root-finding tolerance (about 1e-4 data units).

The k-th smallest of the n*m implicit differences is found without materialising them: with x
and y sorted ascending, row i of the matrix D[i, j] = x_i - y_j is descending in j, so the number
of entries <= t is one vectorised binary search per row (``np.searchsorted``, O(n log m)). A
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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal, Sequence

import numpy as np
from scipy import special
from scipy.stats import norm, rankdata

from benchlab.errors import UserError
from benchlab.stats.descriptive import InvalidSampleError, as_sample
from benchlab.stats.ratio import median_ratio  # noqa: F401  (re-exported: its old home)

Alternative = Literal["two-sided", "less", "greater"]

# Both samples below this size and no ties -> exact distribution, as R's default ``exact = NULL``.
EXACT_LIMIT = 50
# Few enough remaining candidates to materialise them (values, 8 bytes each, plus indices).
_MATERIALISE_LIMIT = 1_500_000
# Sampled candidates per selection round; the bracket keeps about 2*_MARGIN*sqrt(p(1-p)/s).
_ROUND_SAMPLE = 200_000
_MARGIN = 3.5


# --------------------------------------------------------------------------- input checking


def _reject_constant_pool(x: np.ndarray, y: np.ndarray) -> None:
    if x.min() == x.max() == y.min() == y.max():
        raise InvalidSampleError(
            f"both samples are constant (every value is {x[0]:g}); a rank test needs variation - "
            "check the timer resolution or increase the work per measurement"
        )


def _tie_term(values: np.ndarray) -> float:
    """sum(t^3 - t) over groups of tied values (the tie correction of the rank variance)."""
    _, counts = np.unique(values, return_counts=True)
    counts = counts[counts > 1].astype(np.float64)
    return float(np.sum(counts**3 - counts))


def _sorted_tie_term(sorted_values: np.ndarray) -> float:
    """:func:`_tie_term` for an already sorted array (no second sort)."""
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


# --------------------------------------------------------------------------- exact W distribution


@lru_cache(maxsize=64)
def _wilcox_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of arrangements giving W = 0..m*n (W = rank sum of the m-sample minus m(m+1)/2).

    Generating function prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i) (Gaussian binomial), evaluated
    with exact Python integers: multiply by (1 - q^a), divide by (1 - q^i) as a strided cumsum.
    """
    size = m * n + 1
    # int64 while every intermediate fits (they are bounded by C(m+n, n)), else exact objects.
    dtype = np.int64 if math.comb(m + n, n) < 2**62 else object
    poly = np.zeros(size, dtype=dtype)
    poly[0] = 1
    for i in range(1, m + 1):
        a = n + i
        if a < size:
            poly[a:] = poly[a:] - poly[: size - a]
        # Dividing by (1 - q^i) is p[k] += p[k - i]: a cumsum down the columns of a
        # (size / i) x i reshape, one numpy call instead of i strided ones.
        pad = (-size) % i
        grid = np.concatenate([poly, np.zeros(pad, dtype=dtype)]).reshape(-1, i)
        poly = np.cumsum(grid, axis=0).reshape(-1)[:size]
    return tuple(int(v) for v in poly)


def wilcox_cdf(q: float, m: int, n: int) -> float:
    """P(W <= q) for the Mann-Whitney statistic W of samples of sizes m and n (R's ``pwilcox``)."""
    q = math.floor(q + 1e-7)
    if q < 0:
        return 0.0
    if q >= m * n:
        return 1.0
    counts = _wilcox_counts(m, n)
    total = math.comb(m + n, n)
    return float(sum(counts[: q + 1]) / total)


def wilcox_sf(q: float, m: int, n: int) -> float:
    """P(W > q) (R's ``pwilcox(q, m, n, lower.tail = FALSE)``), computed without cancellation."""
    q = math.floor(q + 1e-7)
    if q < 0:
        return 1.0
    if q >= m * n:
        return 0.0
    counts = _wilcox_counts(m, n)
    total = math.comb(m + n, n)
    return float(sum(counts[q + 1 :]) / total)


def wilcox_quantile(p: float, m: int, n: int) -> int:
    """Smallest w with P(W <= w) >= p (R's ``qwilcox``, including its 10*eps fuzz)."""
    if not 0.0 <= p <= 1.0:
        raise UserError(f"probability {p} is outside [0, 1]; pass a probability")
    counts = _wilcox_counts(m, n)
    total = float(math.comb(m + n, n))
    eps = np.finfo(float).eps
    cum = 0.0
    if p <= 0.5:
        target = p - 10 * eps
        for w, c in enumerate(counts):
            cum += c / total
            if cum >= target:
                return w
        return m * n
    target = 1 - p + 10 * eps
    for w, c in enumerate(counts):
        cum += c / total
        if cum > target:
            return m * n - w
    return 0


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
    n_x, n_y = x.size, y.size
    pooled = np.concatenate([x, y])
    ranks = rankdata(pooled)
    w = float(ranks[:n_x].sum() - n_x * (n_x + 1) / 2)
    tie_term = _tie_term(pooled)
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
    if alternative == "two-sided":
        p = 2 * min(special.ndtr(z), special.ndtr(-z))
    elif alternative == "greater":
        p = special.ndtr(-z)
    else:
        p = special.ndtr(z)
    return MannWhitneyResult(w, float(min(p, 1.0)), "normal", float(z), n_x, n_y, alternative, ties)


# --------------------------------------------------------------------------- exact selection


class _DifferenceMatrix:
    """The implicit n x m matrix D[i, j] = x_i - y_j with x, y sorted ascending.

    Row i is non-increasing in j, so {j : D[i, j] <= t} is a suffix [first_le(t)_i, m).
    """

    def __init__(self, x_sorted: np.ndarray, y_sorted: np.ndarray):
        self.x = x_sorted
        self.y = y_sorted
        self.n = x_sorted.size
        self.m = y_sorted.size
        # When every value is an integer of magnitude < 2**52, x_i - y_j and x_i - t are exact,
        # so the searchsorted boundary is the floating-point boundary and needs no repair.
        both = np.concatenate([x_sorted[[0, -1]], y_sorted[[0, -1]]])
        self.exact_arithmetic = bool(
            np.all(np.abs(both) < 2.0**51)
            and np.all(np.floor(x_sorted) == x_sorted)
            and np.all(np.floor(y_sorted) == y_sorted)
        )

    def first_le(self, t: float) -> np.ndarray:
        """Per row, the first column j with fl(x_i - y_j) <= t (m if none)."""
        idx = np.searchsorted(self.y, self.x - t, side="left")
        if not self.exact_arithmetic:
            self._repair(idx, t, strict=False)
        return idx

    def first_lt(self, t: float) -> np.ndarray:
        """Per row, the first column j with fl(x_i - y_j) < t (m if none)."""
        idx = np.searchsorted(self.y, self.x - t, side="right")
        if not self.exact_arithmetic:
            self._repair(idx, t, strict=True)
        return idx

    def _repair(self, idx: np.ndarray, t: float, *, strict: bool) -> None:
        # fl(x_i - y_j) <= t and y_j >= fl(x_i - t) can disagree within an ulp; the computed
        # difference is what brute force sorts, so move each boundary until it agrees with it.
        # The first check is one pass over whole arrays; rows that need a move are rare.
        x, y, m = self.x, self.y, self.m
        inside = np.less if strict else np.less_equal
        rows = np.flatnonzero((idx > 0) & inside(x - y[np.maximum(idx - 1, 0)], t))
        while rows.size:
            idx[rows] -= 1
            j = idx[rows]
            rows = rows[(j > 0) & inside(x[rows] - y[np.maximum(j - 1, 0)], t)]
        rows = np.flatnonzero((idx < m) & ~inside(x - y[np.minimum(idx, m - 1)], t))
        while rows.size:
            idx[rows] += 1
            j = idx[rows]
            rows = rows[(j < m) & ~inside(x[rows] - y[np.minimum(j, m - 1)], t)]

    def count(self, first: np.ndarray) -> int:
        return int(self.m * self.n - int(first.sum(dtype=np.int64)))

    def values(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """All D[i, j] with start_i <= j < stop_i, in no particular order."""
        widths = (stop - start).astype(np.int64)
        total = int(widths.sum())
        rows = np.repeat(np.arange(self.n), widths)
        offsets = np.cumsum(widths) - widths
        cols = start[rows] + (np.arange(total, dtype=np.int64) - offsets[rows])
        return self.x[rows] - self.y[cols]

    def sample(
        self, start: np.ndarray, stop: np.ndarray, size: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``size`` values drawn uniformly (with replacement) among D[i, j], start_i <= j < stop_i."""
        if int(start.max()) == 0 and int(stop.min()) == self.m:
            # The whole matrix (first round): independent uniform rows and columns.
            return (self.x[rng.integers(0, self.n, size=size)]
                    - self.y[rng.integers(0, self.m, size=size)])
        widths = (stop - start).astype(np.int64)
        cum = np.cumsum(widths)
        # Sorted picks make the lookups below cache-friendly (3x faster than random order).
        picks = np.sort(rng.integers(0, int(cum[-1]), size=size))
        rows = np.searchsorted(cum, picks, side="right")
        cols = start[rows] + (picks - (cum[rows] - widths[rows]))
        return self.x[rows] - self.y[cols]


def _select(
    mat: _DifferenceMatrix,
    ranks: Sequence[int],
    lo_first: np.ndarray,
    hi_first: np.ndarray,
    cnt_lo: int,
    cnt_hi: int,
    rng: np.random.Generator,
) -> dict[int, float]:
    """Values of the given 1-based ranks, all of which lie in (lo, hi].

    ``lo_first``/``hi_first`` are first_le boundaries of lo and hi, ``cnt_lo < min(ranks)`` and
    ``max(ranks) <= cnt_hi`` are the counts of entries <= lo and <= hi.
    """
    ranks = sorted(set(ranks))
    while True:
        active = cnt_hi - cnt_lo
        if active <= _MATERIALISE_LIMIT:
            vals = mat.values(hi_first, lo_first)
            local = [r - cnt_lo - 1 for r in ranks]
            part = np.partition(vals, local)
            return {r: float(part[i]) for r, i in zip(ranks, local)}
        # Ranks far apart relative to the bracket (the interval bounds and the median after the
        # first round) are selected separately; neighbours (the two middle ranks) stay together.
        # Split as soon as the gap exceeds the bracket one more joint round would leave
        # (about 2 * _MARGIN / sqrt(_ROUND_SAMPLE) of the entries, 1/64 of them).
        clusters: list[list[int]] = [[ranks[0]]]
        for r in ranks[1:]:
            if r - clusters[-1][-1] > active // 64:
                clusters.append([r])
            else:
                clusters[-1].append(r)
        if len(clusters) > 1:
            out: dict[int, float] = {}
            for cluster in clusters:
                out.update(_select(mat, cluster, lo_first, hi_first, cnt_lo, cnt_hi, rng))
            return out
        # Enough samples for the next bracket to be small enough to materialise, if that is
        # cheaper than a full round (the bracket keeps ~2 * _MARGIN / sqrt(s) of the entries).
        wanted = int((2.5 * _MARGIN * active / _MATERIALISE_LIMIT) ** 2)
        sample = mat.sample(hi_first, lo_first, max(1000, min(_ROUND_SAMPLE, wanted)), rng)
        s = sample.size
        p_lo = (ranks[0] - cnt_lo) / active
        p_hi = (ranks[-1] - cnt_lo) / active
        i_lo = int(math.floor(p_lo * s - _MARGIN * math.sqrt(s * p_lo * (1 - p_lo)) - 1))
        i_hi = int(math.ceil(p_hi * s + _MARGIN * math.sqrt(s * p_hi * (1 - p_hi)) + 1))
        i_mid = min(max(int(p_lo * s), 0), s - 1)
        # Only three order statistics of the sample are needed: partition, not sort.
        sample = np.partition(sample, sorted({min(max(i, 0), s - 1) for i in (i_lo, i_mid, i_hi)}))
        in_block = sample[min(max(i_lo, 0), s - 1)] == sample[i_mid] or (
            sample[i_mid] == sample[min(max(i_hi, 0), s - 1)])
        if in_block:
            # The target sits in a run of equal sampled values (integer timings): a block of
            # equal differences spanning the margin. Resolve it directly (two counts) instead
            # of bracketing it with pivots that cannot split it.
            return _resolve_block(mat, ranks, float(sample[i_mid]), lo_first, hi_first,
                                  cnt_lo, cnt_hi, rng)
        new_lo_first, new_hi_first = lo_first, hi_first
        new_cnt_lo, new_cnt_hi = cnt_lo, cnt_hi
        lo_ok = hi_ok = False
        # The lower pivot bounds the entries < t_lo and the upper one the entries <= t_hi, so
        # the bracket keeps both pivots' values: with integer timings most differences come in
        # blocks of equal values, and a bracket [t, t] resolves every rank in it at once.
        t_lo = float(sample[i_lo]) if i_lo >= 0 else None
        t_hi = float(sample[i_hi]) if i_hi < s else None
        if t_lo is not None:
            first = mat.first_lt(t_lo)
            c = mat.count(first)
            if c < ranks[0]:
                new_lo_first, new_cnt_lo, lo_ok = first, c, True
            elif c >= ranks[-1]:
                new_hi_first, new_cnt_hi = first, c
        if t_hi is not None and new_cnt_hi == cnt_hi:
            first = mat.first_le(t_hi)
            c = mat.count(first)
            if c >= ranks[-1]:
                new_hi_first, new_cnt_hi, hi_ok = first, c, True
            elif new_cnt_lo < c < ranks[0]:
                new_lo_first, new_cnt_lo = first, c
        if lo_ok and hi_ok and t_lo == t_hi:
            return {r: t_lo for r in ranks}
        if new_cnt_hi - new_cnt_lo > active // 2:
            # No progress: the wanted ranks sit inside a huge block of equal differences
            # (heavily tied data), or the pivots missed. Resolve the ranks that fall in the block
            # of the sampled value at the target, then select the rest on either side of it;
            # both sides exclude that block, so this terminates.
            return _resolve_block(mat, ranks, float(sample[i_mid]), lo_first, hi_first,
                                  cnt_lo, cnt_hi, rng)
        lo_first, hi_first, cnt_lo, cnt_hi = new_lo_first, new_hi_first, new_cnt_lo, new_cnt_hi


def _resolve_block(
    mat: _DifferenceMatrix,
    ranks: list[int],
    t: float,
    lo_first: np.ndarray,
    hi_first: np.ndarray,
    cnt_lo: int,
    cnt_hi: int,
    rng: np.random.Generator,
) -> dict[int, float]:
    """Ranks inside the block of differences equal to ``t`` (an active value) get ``t``; the
    others are selected on either side. Both sides exclude the block, so this terminates."""
    le_first = mat.first_le(t)
    lt_first = mat.first_lt(t)
    c_le, c_lt = mat.count(le_first), mat.count(lt_first)
    out = {r: t for r in ranks if c_lt < r <= c_le}
    below = [r for r in ranks if r <= c_lt]
    above = [r for r in ranks if r > c_le]
    if below:
        # lt_first bounds exactly the entries < t, i.e. <= the largest value below t.
        out.update(_select(mat, below, lo_first, lt_first, cnt_lo, c_lt, rng))
    if above:
        out.update(_select(mat, above, le_first, hi_first, c_le, cnt_hi, rng))
    return out


def pairwise_difference_quantiles(x: Any, y: Any, ranks: Sequence[int]) -> np.ndarray:
    """Exact order statistics of the n*m pairwise differences x_i - y_j, without forming them.

    Parameters
    ----------
    x, y : array_like
        Finite samples (same unit; the result is in that unit).
    ranks : sequence of int
        1-based ranks k (1 = smallest difference, n*m = largest).

    Returns
    -------
    numpy.ndarray
        ``values[i]`` is the ranks[i]-th smallest of the floating-point differences
        ``x[i] - y[j]``: exactly what sorting all n*m differences would give.

    Notes
    -----
    Expected O((n + m) log(n + m)) time and O(n + m) memory; 1M x 1M takes about a second.
    The pivots are drawn from a fixed-seed generator: results never depend on it, only the
    running time could.
    """
    xs = np.sort(np.asarray(x, dtype=np.float64).reshape(-1))
    ys = np.sort(np.asarray(y, dtype=np.float64).reshape(-1))
    if xs.size == 0 or ys.size == 0 or not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise UserError("pairwise differences need non-empty, finite samples; clean the data")
    return _sorted_difference_quantiles(xs, ys, ranks)


def _sorted_difference_quantiles(xs: np.ndarray, ys: np.ndarray, ranks: Sequence[int]) -> np.ndarray:
    total = xs.size * ys.size
    ks = [int(k) for k in ranks]
    for k in ks:
        if not 1 <= k <= total:
            raise UserError(f"rank {k} is outside 1..{total}; pass ranks of existing differences")
    mat = _DifferenceMatrix(xs, ys)
    rng = np.random.default_rng(0x4C)
    lo_first = np.full(xs.size, ys.size, dtype=np.int64)
    hi_first = np.zeros(xs.size, dtype=np.int64)
    found = _select(mat, ks, lo_first, hi_first, 0, total, rng)
    return np.array([found[k] for k in ks], dtype=np.float64)


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
    n*m). Unlike R, no root finding: values are exact order statistics.

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
    n_x, n_y = x.size, y.size
    nm = n_x * n_y
    alpha = 1 - conf_level
    xs, ys = np.sort(x), np.sort(y)
    tie_x, tie_y = _sorted_tie_term(xs), _sorted_tie_term(ys)
    wants_exact = (n_x < EXACT_LIMIT and n_y < EXACT_LIMIT) if exact is None else bool(exact)
    ties = wants_exact and (tie_x > 0 or tie_y > 0 or np.intersect1d(xs, ys).size > 0)
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
        z = float(norm.isf(alpha / 2))
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
    mid = [(nm + 1) // 2] if nm % 2 else [nm // 2, nm // 2 + 1]
    values = _sorted_difference_quantiles(xs, ys, [k_lo, k_hi, *mid])
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
