"""Multiple-comparison adjustment of p-values (Holm, Benjamini-Hochberg), as R's ``p.adjust``.

References
----------
.. [1] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scandinavian Journal of Statistics 6, 65-70.
.. [2] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery
       rate. JRSS B 57, 289-300.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats.descriptive import InvalidSampleError


def _p_values(p: ArrayLike) -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidSampleError("p-values must be a non-empty 1-D sequence")
    finite = arr[~np.isnan(arr)]
    if np.any((finite < 0) | (finite > 1)):
        raise InvalidSampleError("p-values must lie in [0, 1]; check what was passed")
    return arr


def holm(p: ArrayLike) -> np.ndarray:
    """Holm step-down adjusted p-values (controls the family-wise error rate).

    ``p_adj(i) = min(1, max_{j <= i} (m - j + 1) p_(j))`` over p sorted
    ascending; NaNs stay NaN and do not count in m (as R). Returned in the
    input order; dimensionless.
    """
    arr = _p_values(p)
    out = np.full(arr.shape, np.nan)
    ok = ~np.isnan(arr)
    v = arr[ok]
    m = v.size
    order = np.argsort(v, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * v[order]))
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


def benjamini_hochberg(p: ArrayLike) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (controls the false discovery rate).

    ``p_adj(i) = min(1, min_{j >= i} m p_(j) / j)`` over p sorted ascending;
    NaNs stay NaN and do not count in m (as R). Input order; dimensionless.
    """
    arr = _p_values(p)
    out = np.full(arr.shape, np.nan)
    ok = ~np.isnan(arr)
    v = arr[ok]
    m = v.size
    order = np.argsort(v, kind="stable")[::-1]  # descending
    ranks = np.arange(m, 0, -1)
    adj = np.minimum(1.0, np.minimum.accumulate(m / ranks * v[order]))
    res = np.empty(m)
    res[order] = adj
    out[ok] = res
    return out


def p_adjust(p: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjust p-values like R's ``p.adjust(p, method)``; method "holm" or "BH"/"fdr"."""
    key = method.lower()
    if key == "holm":
        return holm(p)
    if key in ("bh", "fdr", "benjamini-hochberg"):
        return benjamini_hochberg(p)
    raise InvalidSampleError(f"p-adjust method {method!r} is unknown; use 'holm' or 'BH'")
