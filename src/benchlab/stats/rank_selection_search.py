"""Searches of a sorted array for many keys that are themselves in ascending order, as the
pairwise-difference selection and the rank-sum statistic ask for them: one merge of the two
sorted arrays instead of one binary search per key.

numpy's binary search costs ~25-30 ns a key at 500,000 keys into 500,000 values (each of its
~19 steps a cache miss in the upper levels), more once the array leaves the cache; a stable
argsort of the two arrays side by side merges their two ascending runs in linear time (Timsort
finds the runs) at ~6 ns an element. Measured at 500k: 14.3 -> 9.4 ms; at 5M: 168 -> 128 ms.
"""

from __future__ import annotations

import numpy as np

# Keys per searched value below which one binary search per key is cheaper than a merge of
# both arrays (the merge touches every value of the array once).
_MERGE_MIN_KEYS_PER_VALUE = 0.5


def searchsorted_ascending(a: np.ndarray, keys: np.ndarray, side: str = "left") -> np.ndarray:
    """``np.searchsorted(a, keys, side)`` for ascending ``a`` and ascending ``keys``: per key,
    the number of values of ``a`` below it (``"left"``) or at most it (``"right"``), as int64.

    Parameters
    ----------
    a, keys : numpy.ndarray
        One-dimensional, both sorted ascending, of one comparable dtype, with no NaN.
    side : {"left", "right"}
        As numpy's.
    """
    n = keys.size
    if n < _MERGE_MIN_KEYS_PER_VALUE * a.size or a.size == 0:
        return np.searchsorted(a, keys, side=side).astype(np.int64, copy=False)
    # A stable sort keeps equal elements in their input order: keys placed before ``a`` come
    # before the values equal to them (counted out, "left"), placed after, behind them.
    if side == "left":
        order = np.argsort(np.concatenate([keys, a]), kind="stable")
        is_key = order < n
    else:
        order = np.argsort(np.concatenate([a, keys]), kind="stable")
        is_key = order >= a.size
    # The ascending keys keep their order, so key k is the k-th key found; the elements before
    # it are the k keys before it and the values of ``a`` it counts.
    counts = np.flatnonzero(is_key)
    counts -= np.arange(n, dtype=counts.dtype)
    return counts
