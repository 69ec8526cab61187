"""Several ranks of one pair's differences selected together: the clusters of distant ranks
share one sample of their common bracket, and a later selection of the same pair starts from
the boundaries its first round counted (the verdict's median, then its intervals' ends). Every
value must still be what sorting all n*m differences gives, on ties, on grids whose differences
round, and on logarithms of both signs."""

from __future__ import annotations

import numpy as np
import pytest

import benchlab.stats.rank_selection as rank_selection
from benchlab.stats import rank
from benchlab.stats.rank_selection import sorted_difference_quantiles


def _data(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n, m = int(rng.integers(60, 220)), int(rng.integers(60, 220))
    if kind == "ties":  # integer timings of a narrow range: blocks of equal differences
        return rng.integers(100, 112, n).astype(float), rng.integers(101, 113, m).astype(float)
    if kind == "grid":  # multiples of 0.1: differences that round
        return np.round(rng.normal(5, 1, n), 1), np.round(rng.normal(5.2, 1, m), 1)
    if kind == "signed_log":  # logs of values around 1: both signs, not exact differences
        return np.log(rng.lognormal(0, 0.4, n)), np.log(rng.lognormal(0.05, 0.4, m))
    # log-timings (~13): exact differences, the keys nudged by their rounding error
    return np.log(np.round(rng.lognormal(13, 0.3, n))), np.log(np.round(rng.lognormal(13.02, 0.3, m)))


@pytest.fixture()
def small_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Few candidates per round, so that small samples go through several rounds, clusters
    and remembered boundaries."""
    monkeypatch.setattr(rank_selection, "_MATERIALISE_LIMIT", 500)
    monkeypatch.setattr(rank_selection, "_ROUND_SAMPLE", 300)
    monkeypatch.setattr(rank_selection, "_KNOWN", {})


@pytest.mark.parametrize("kind", ["ties", "grid", "signed_log", "log_timings"])
def test_ranks_selected_together_and_after_the_median_equal_brute_force(small_rounds, kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    fenced = 0
    for _ in range(6):
        x, y = _data(kind, rng)
        xs, ys = np.sort(x), np.sort(y)
        diffs = np.sort(np.subtract.outer(xs, ys).ravel())
        nm = diffs.size
        middle = [nm // 2, nm // 2 + 1]
        assert sorted_difference_quantiles(xs, ys, middle).tolist() == diffs[
            [k - 1 for k in middle]].tolist()
        memory = next(reversed(rank_selection._KNOWN.values()))
        # the interval ends of two levels around the median: distant ranks, within the first
        # round's bracket of the median
        spread = int(rng.integers(nm // 100, nm // 30))
        ranks = [nm // 2 - spread, nm // 2 - spread // 2, nm // 2 + spread // 3, nm // 2 + spread]
        fenced += any(c < ranks[0] for c in memory.fences) and any(
            c >= ranks[-1] for c in memory.fences)
        got = sorted_difference_quantiles(xs, ys, ranks)
        assert got.tolist() == diffs[[k - 1 for k in ranks]].tolist()
        rank_selection._KNOWN.clear()  # with both extremes, all in one fresh selection
        ranks += [1, nm, *middle]
        assert sorted_difference_quantiles(xs, ys, ranks).tolist() == diffs[
            [k - 1 for k in ranks]].tolist()
    assert fenced >= 3  # most later selections did start from remembered boundaries


def test_a_remembered_rank_test_equals_a_fresh_one_either_way_round():
    """The verdict tests a pair as (baseline, candidate) and as (candidate, baseline): the
    second is derived from the first, and must equal computing it."""
    rng = np.random.default_rng(11)
    x = np.round(rng.lognormal(13, 0.3, 12_000))
    y = np.round(rng.lognormal(13.01, 0.3, 9_000))
    rank.forget_remembered()
    rank.mann_whitney_u(x, y)
    derived = rank.mann_whitney_u(y, x)
    rank.forget_remembered()
    fresh = rank.mann_whitney_u(y, x)
    assert derived == fresh and np.signbit(derived.z) == np.signbit(fresh.z)
    x[0] += 1e6  # changed in place: tested anew
    assert rank.mann_whitney_u(x, y).statistic != rank.mann_whitney_u(y, x).statistic
    rank.forget_remembered()
