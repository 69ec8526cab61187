"""Integer samples (timings in ns) count a pivot's differences through a table of the second
sample's counts, one lookup per row instead of a binary search: the values must be exactly the
binary search's and brute force's, on every branch of the selection, and the table is built only
when it takes no more memory than the samples themselves."""

from __future__ import annotations

import numpy as np
import pytest

import benchlab.stats.rank_selection as rank_selection
from benchlab.stats.rank import pairwise_difference_quantiles


def _brute_force(x: np.ndarray, y: np.ndarray, ranks: list[int]) -> np.ndarray:
    return np.sort(np.subtract.outer(x, y).ravel())[np.asarray(ranks) - 1]


def _integer_samples(rng: np.random.Generator, kind: int, n: int, m: int):
    if kind == 0:  # skewed timings in ns
        return np.round(rng.lognormal(10, 0.5, n)), np.round(rng.lognormal(10.1, 0.5, m))
    if kind == 1:  # negative and positive, many ties
        return rng.integers(-7, 5, n).astype(float), rng.integers(-3, 9, m).astype(float)
    # far apart: every difference of one sign, y's range wider than x's
    return rng.integers(10**6, 10**6 + 50, n).astype(float), rng.integers(0, 3000, m).astype(float)


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_table_lookup_equals_binary_search_and_brute_force(kind, monkeypatch):
    monkeypatch.setattr(rank_selection, "_MATERIALISE_LIMIT", 500)  # many rounds, every branch
    monkeypatch.setattr(rank_selection, "_ROUND_SAMPLE", 300)
    monkeypatch.setattr(rank_selection, "_KNOWN", {})
    monkeypatch.setattr(rank_selection, "_TABLE_ENTRIES_PER_VALUE", 10**4)  # a table, even here
    rng = np.random.default_rng(40 + kind)
    for _ in range(25):
        n, m = int(rng.integers(40, 250)), int(rng.integers(40, 250))
        x, y = _integer_samples(rng, kind, n, m)
        nm = n * m
        ranks = [1, 2, nm // 2, nm // 2 + 1, nm - 1, nm, *rng.integers(1, nm + 1, 3).tolist()]
        looked_up = pairwise_difference_quantiles(x, y, ranks)
        rank_selection._KNOWN.clear()
        monkeypatch.setattr(rank_selection, "_TABLE_ENTRIES_PER_VALUE", 0)  # binary search
        searched = pairwise_difference_quantiles(x, y, ranks)
        monkeypatch.setattr(rank_selection, "_TABLE_ENTRIES_PER_VALUE", 10**4)  # a table
        rank_selection._KNOWN.clear()
        assert np.array_equal(looked_up, searched)
        assert np.array_equal(looked_up, _brute_force(x, y, ranks))


def test_a_pivot_between_integers_counts_as_brute_force():
    """The pivots are differences of the values (integers), but the boundaries are defined for
    any t: a half-integer t splits exactly as brute force does."""
    rng = np.random.default_rng(7)
    x = np.sort(rng.integers(0, 40, 60).astype(float))
    y = np.sort(rng.integers(0, 40, 70).astype(float))
    mat = rank_selection._DifferenceMatrix(x, y)
    assert mat._below is not None
    diffs = np.subtract.outer(x, y)
    for t in (-40.5, -3.5, -3.0, 0.0, 0.25, 7.5, 39.0, 45.5):
        assert mat.count(mat.first_le(t)) == int((diffs <= t).sum())
        assert mat.count(mat.first_lt(t)) == int((diffs < t).sum())


def test_the_table_is_built_only_for_integers_of_a_modest_range():
    rng = np.random.default_rng(8)
    timings = np.sort(np.round(rng.lognormal(10, 0.3, 5000)))  # ~22 us: a range of ~50,000 ns
    assert rank_selection._DifferenceMatrix(timings, timings)._below is not None
    slower = np.sort(np.round(rng.lognormal(13, 0.3, 5000)))  # ~440 us: a range of ~10^6 ns
    assert rank_selection._DifferenceMatrix(slower, slower)._below is None  # cheaper searched
    fractions = np.sort(rng.normal(size=5000))
    assert rank_selection._DifferenceMatrix(fractions, fractions)._below is None
    outlier = timings.copy()
    outlier[-1] = 1e12  # a range of 1e12 ns: a table would take 4 TB
    assert rank_selection._DifferenceMatrix(timings, outlier)._below is None
    # its values still come out exact, by binary search
    x, y = timings[::10], outlier[::10]
    ranks = [1, 1000, 125_000, 250_000]
    assert np.array_equal(pairwise_difference_quantiles(x, y, ranks), _brute_force(x, y, ranks))


def test_log_timings_are_searched_without_repair_and_count_as_brute_force(monkeypatch):
    """Logarithms of timings lie within a factor 2 of each other, so every difference is exact
    (Sterbenz) and a search for x_i - t nudged by its rounding error counts exactly: no repair
    pass. Pivots both at differences and between them (t +- one float)."""
    rng = np.random.default_rng(9)
    x = np.sort(np.log(np.round(rng.lognormal(13, 0.3, 300))))
    y = np.sort(np.log(np.round(rng.lognormal(13.02, 0.3, 280))))
    mat = rank_selection._DifferenceMatrix(x, y)
    assert mat.exact_differences and mat._below is None

    def no_repair(*_args, **_kwargs):
        raise AssertionError("the boundary was repaired")

    monkeypatch.setattr(mat, "_repair", no_repair)
    diffs = np.subtract.outer(x, y)
    for t in rng.choice(diffs.ravel(), 60):
        # ... and pivots larger than some x_i (the general error term, not the fast one)
        for pivot in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), t + 1e-9, 40 * t,
                      13.1 + t):
            assert mat.count(mat.first_le(pivot)) == int((diffs <= pivot).sum())
            assert mat.count(mat.first_lt(pivot)) == int((diffs < pivot).sum())


@pytest.mark.parametrize("scale", [1.0, -1.0])
def test_selection_over_log_timings_equals_brute_force(scale, monkeypatch):
    monkeypatch.setattr(rank_selection, "_MATERIALISE_LIMIT", 500)
    monkeypatch.setattr(rank_selection, "_ROUND_SAMPLE", 300)
    monkeypatch.setattr(rank_selection, "_KNOWN", {})
    rng = np.random.default_rng(10)
    for _ in range(20):
        n, m = int(rng.integers(40, 250)), int(rng.integers(40, 250))
        x = scale * np.log(np.round(rng.lognormal(10, 0.4, n)))
        y = scale * np.log(np.round(rng.lognormal(10.05, 0.4, m)))
        nm = n * m
        ranks = [1, 2, nm // 2, nm // 2 + 1, nm - 1, nm, *rng.integers(1, nm + 1, 3).tolist()]
        assert np.array_equal(pairwise_difference_quantiles(x, y, ranks), _brute_force(x, y, ranks))
