"""The shift within pairs: Hodges-Lehmann one-sample estimate with its signed-rank interval.

Two programs measured as interleaved pairs (one run of each, in random order, back to back)
share whatever the machine did during the pair: a burst of load, a frequency change, another
tenant. The difference within a pair, d_i = log(head_i) - log(base_i), cancels it, so the
interval of the typical d is far narrower than a two-sample interval on a shared, noisy
machine (on this 2-vCPU machine under load: robust SD of single runs 0.64, of pair differences
0.12). Randomising the order within each pair makes d symmetric about 0 when the programs are
the same, which is the signed-rank test's assumption.

:func:`paired_shift` returns the median of the Walsh averages (d_i + d_j) / 2, i <= j, and the
distribution-free interval between two of their order statistics (Hollander, Wolfe & Chicken
2014, sec. 3.2; the exact signed-rank distribution up to 200 pairs, its normal approximation
beyond, no tie correction). Where no order statistic reaches the level (few pairs, a
sequential look's large critical value) the interval is the whole line: such a look cannot
decide, where clamping to [min, max] spent more error than the look was allowed.
The order statistics are selected exactly without forming the n(n+1)/2 averages
(:func:`walsh_order_statistic`: O(n log n) counts per bisection step, as in Johnson &
Mizoguchi 1978 and Monahan 1984), so a look at 3,000 pairs costs ~2 ms, not ~60 ms.
With more than ``max_walsh`` pairs the median of d and the sign test's order-statistic interval
are used instead (sec. 3.6): still distribution-free, less efficient under normal noise, more
efficient under peaked, heavy-tailed noise. The pairs of a ~4 ms program on this 2-vCPU machine
are of the second kind (Laplace-like: quartiles +-2 %, 1 %/99 % at +-10..30 %): at the same
critical value the sign interval was 7 % narrower on average than the signed-rank one at
1,500-8,500 pairs (20 gate/metric cases, quiet, load ~1; docs/ci.md), hence the switch stays.

References
----------
Hollander, M., Wolfe, D. A. and Chicken, E. (2014). *Nonparametric Statistical Methods*,
3rd ed. Wiley.
Johnson, D. B. and Mizoguchi, T. (1978). Selecting the Kth element in X + Y and X1 + X2 + ... +
Xm. *SIAM J. Comput.* 7, 147-153.
Monahan, J. F. (1984). Algorithm 616: fast computation of the Hodges-Lehmann location
estimator. *ACM Trans. Math. Softw.* 10, 265-270.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from benchlab.errors import UserError

MAX_WALSH = 3000
#: Up to this many pairs the interval's order statistics come from the exact signed-rank
#: distribution (no ties), beyond it from its normal approximation.
EXACT_SIGNED_RANK = 200


@lru_cache(maxsize=64)
def _signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(T+ <= t), t = 0 .. n(n+1)/2, of the signed-rank statistic of n pairs (no ties)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    top = 0
    for r in range(1, n + 1):  # each rank is in the positive sum or not
        counts[r:top + r + 1] += counts[:top + 1].copy()
        top += r
    return tuple(np.cumsum(counts) / 2.0**n)


def _exact_excluded(n: int, tail: float) -> int:
    """How many Walsh averages the interval leaves out at each end: the largest c with
    P(T+ <= c - 1) <= ``tail`` (Hollander, Wolfe and Chicken 2014, 3.2); -1 when even
    P(T+ = 0) = 2^-n exceeds it (no interval at that level)."""
    cdf = np.asarray(_signed_rank_cdf(n))
    return int(np.searchsorted(cdf, tail * (1 + 1e-12), side="right")) - 1


def excluded_averages(n: int, tail: float) -> int:
    """How many Walsh averages of ``n`` pairs the interval leaves out at each end for a one-sided
    error ``tail``: the exact signed-rank count up to :data:`EXACT_SIGNED_RANK` pairs, its
    normal approximation beyond; -1 when no order statistic reaches the level. The interval's
    lower end exceeds a value exactly when at most this many averages lie at or below it."""
    if n <= EXACT_SIGNED_RANK:
        return _exact_excluded(n, tail)
    if not tail > 0.0:
        return -1
    from benchlab.stats import distributions as special

    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    return max(math.floor(n * (n + 1) / 4.0 + float(special.ndtri(tail)) * sigma), -1)


@dataclass(frozen=True)
class PairedShift:
    """Estimate and interval of the typical within-pair difference (the unit of ``d``).

    ``method`` is ``walsh`` (signed-rank) or ``sign`` (order statistics of d); ``n`` the pairs.
    """

    estimate: float
    ci_low: float
    ci_high: float
    conf_level: float
    n: int
    method: str


def paired_shift(d: Any, *, conf_level: float = 0.95, z: float | None = None,
                 max_walsh: int = MAX_WALSH) -> PairedShift:
    """Hodges-Lehmann estimate of the typical difference ``d`` and its two-sided interval.

    Parameters
    ----------
    d : array_like
        Within-pair differences (any unit; the gate passes log ratios). At least 3, finite.
    conf_level : float
        Coverage in (0, 1).
    z : float or None
        The normal quantile to use instead of ``conf_level``'s (a group-sequential critical
        value such as 12.5 is a coverage that rounds to 1 in floating point).
    max_walsh : int
        Above this many pairs the sign-test interval is used (memory: n(n+1)/2 averages).

    Returns
    -------
    PairedShift
    """
    x = np.sort(np.asarray(d, dtype=np.float64))
    n = int(x.size)
    if n < 3 or not np.all(np.isfinite(x)):
        raise UserError("a paired interval needs at least 3 finite differences")
    if not 0.0 < conf_level < 1.0:
        raise UserError(f"conf_level={conf_level} must be in (0, 1)")
    from benchlab.stats import distributions as special

    if z is None:
        z = float(special.ndtri(1.0 - (1.0 - conf_level) / 2.0))
    else:
        conf_level = 1.0 - 2.0 * float(special.ndtr(-z))
    if n <= max_walsh:
        total = n * (n + 1) // 2
        excluded = excluded_averages(n, float(special.ndtr(-z)))
        mids = sorted({(total - 1) // 2, total // 2})
        if excluded < 0 or 2 * excluded >= total:
            # No order statistic reaches this level (the first look of a sequential gate at
            # 10 pairs with |z| ~ 4.5: 2^-10 = 0.001 per side at [min, max] against the 3e-6
            # spent): the interval is the whole line, so the look cannot decide.
            estimate = float(np.mean([walsh_order_statistic(x, k) for k in mids]))
            return PairedShift(estimate, -math.inf, math.inf, conf_level, n, "walsh")
        lo, hi = int(excluded), int(total - 1 - excluded)
        at = {k: walsh_order_statistic(x, k) for k in {lo, hi, *mids}}
        estimate = float(np.mean([at[k] for k in mids]))
        return PairedShift(estimate, at[lo], at[hi], conf_level, n, "walsh")
    lo = int(min(max(math.floor(n / 2.0 - z * math.sqrt(n) / 2.0), 0), n - 1))
    hi = int(min(max(math.ceil(n / 2.0 + z * math.sqrt(n) / 2.0) - 1, 0), n - 1))
    return PairedShift(float(np.median(x)), float(x[lo]), float(x[hi]), conf_level, n, "sign")


def _first_above(x: np.ndarray, v: float) -> np.ndarray:
    """For sorted ``x``: for each i, the first j with (x[i] + x[j]) * 0.5 > v (n when none).

    The averages are computed as the caller's selection computes them, so a rounding of
    2 v - x[i] never puts an average on the wrong side; a correction jumps a whole block of
    equal values at a time.
    """
    n = x.size
    j = np.searchsorted(x, 2.0 * v - x, side="right")
    while True:
        at = np.minimum(j, n - 1)
        before = np.maximum(j - 1, 0)
        up = (j < n) & ((x + x[at]) * 0.5 <= v)
        down = (j > 0) & ((x + x[before]) * 0.5 > v)
        if not (up.any() or down.any()):
            return j
        j = np.where(up, np.searchsorted(x, x[at], side="right"), j)
        j = np.where(down, np.searchsorted(x, x[before], side="left"), j)


def walsh_order_statistic(x: Any, k: int) -> float:
    """The ``k``-th smallest (0-based) Walsh average (x[i] + x[j]) / 2, i <= j, exactly.

    Parameters
    ----------
    x : array_like
        Sorted, finite values (any unit; the result has the same unit).
    k : int
        0 <= k < n (n + 1) / 2.

    Returns
    -------
    float
        The same number as sorting all n(n+1)/2 averages would give, found by bisection on the
        value with O(n log n) counts (at most ~60 steps, usually ~20) until at most 4n
        averages remain between the bounds, which are then formed and selected.
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    total = n * (n + 1) // 2
    if not 0 <= k < total:
        raise UserError(f"k={k} is not an order statistic of {total} Walsh averages")
    index = np.arange(n)

    def count_at_most(v: float) -> int:
        return int(np.maximum(_first_above(x, v) - index, 0).sum())

    # invariant: count_at_most(lo) <= k < count_at_most(hi)
    lo, hi = float(np.nextafter(x[0], -np.inf)), float(x[-1])
    below, upto = 0, total
    while upto - below > max(4 * n, 4096):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # adjacent floats: every average left between them is hi
            return hi
        c = count_at_most(mid)
        if c <= k:
            lo, below = mid, c
        else:
            hi, upto = mid, c
    start = np.maximum(_first_above(x, lo), index)
    lengths = np.maximum(_first_above(x, hi), index) - start
    rows = np.repeat(index, lengths)
    offsets = np.cumsum(lengths) - lengths
    cols = np.arange(int(lengths.sum())) + np.repeat(start - offsets, lengths)
    between = (x[rows] + x[cols]) * 0.5
    return float(np.partition(between, k - below)[k - below])
