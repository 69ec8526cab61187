"""Distribution-free confidence interval of the median from two order statistics.

For n independent values from a continuous distribution, the number of values below the true
median is Binomial(n, 1/2), so ``[x_(k), x_(n-k+1)]`` (1-based order statistics) covers the
median with probability ``1 - 2 P(B <= k - 1)`` whatever the distribution [1]_. ``k`` is the
largest index whose coverage is still at least the requested level, so the interval is exact
(conservative: it covers at least that often). No resampling: a sort and a few binomial tail
evaluations, which is what a history of hundreds of sessions wants.

References
----------
.. [1] Hollander, M., Wolfe, D. A. and Chicken, E. (2014). Nonparametric Statistical Methods,
       3rd ed. Wiley. Sec. 3.6 (distribution-free interval for the median).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats.descriptive import InvalidSampleError, as_sample


@dataclass(frozen=True)
class MedianInterval:
    """``low`` and ``high`` (unit of the data) are the order statistics ``x_(k)`` and
    ``x_(n-k+1)`` (1-based ``k``); ``coverage`` is the achieved level (>= the requested one,
    except when n is too small for it: then ``k = 1``, the sample range, and its coverage)."""

    low: float
    high: float
    k: int
    coverage: float


def median_order_interval(x: ArrayLike, confidence: float = 0.95) -> MedianInterval:
    """Exact distribution-free interval of the median (see the module docstring).

    Parameters
    ----------
    x : array_like
        Finite values (at least 1), any unit.
    confidence : float
        Requested coverage in (0, 1).

    Returns
    -------
    MedianInterval
        Equal to ``scipy.stats.quantile_test(x, p=0.5).confidence_interval(confidence)`` where
        that is defined; for n too small to reach ``confidence`` (n <= 5 at 95 %) the range
        ``[min, max]`` with its achieved coverage ``1 - 2 / 2**n`` instead of NaN.
    """
    from benchlab.stats.distributions import bdtr

    if not 0.0 < confidence < 1.0:
        raise InvalidSampleError(f"confidence={confidence} must be in (0, 1)")
    arr = np.sort(as_sample(x, name="sample", min_n=1, allow_constant=True))
    n = arr.size
    tail = (1.0 - confidence) / 2.0
    # largest k in [1, ceil(n/2)] with P(B <= k - 1) <= tail; P is increasing in k
    lo_k, hi_k = 0, (n + 1) // 2
    while lo_k < hi_k:
        mid = (lo_k + hi_k + 1) // 2
        if float(bdtr(mid - 1, n, 0.5)) <= tail:
            lo_k = mid
        else:
            hi_k = mid - 1
    k = max(lo_k, 1)
    coverage = 1.0 - 2.0 * float(bdtr(k - 1, n, 0.5))
    return MedianInterval(float(arr[k - 1]), float(arr[n - k]), k, coverage)
