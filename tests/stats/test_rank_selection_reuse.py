"""The pairwise-difference selection is done once per pair of samples: a verdict asks for the
same Hodges-Lehmann estimate and interval several times (its p-value, its interval, the
equivalence test). Judged by the number of passes over the rows (each a binary search per row,
the selection's cost), never by time; values checked against a fresh selection and brute force."""

from __future__ import annotations

import numpy as np
import pytest

import benchlab.stats.rank_selection as rank_selection
from benchlab.stats.rank import hodges_lehmann
from benchlab.stats.verdict_model import verdict_model


@pytest.fixture()
def passes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the selection's passes (first_le / first_lt calls) from a clean memory."""
    count = {"passes": 0}
    matrix = rank_selection._DifferenceMatrix
    for name in ("first_le", "first_lt"):
        inner = getattr(matrix, name)

        def counted(self, t, _inner=inner):
            count["passes"] += 1
            return _inner(self, t)

        monkeypatch.setattr(matrix, name, counted)
    monkeypatch.setattr(rank_selection, "_KNOWN", {})
    return count


def _ar1_timings(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two autocorrelated series of integer ns (lag-1 0.5), the second 2 % slower: the verdict
    takes its inflated (autocorrelated) branch, which asks for the estimate most often."""
    rng = np.random.default_rng(seed)
    e = rng.normal(0, 0.3, 2 * n)
    ar = np.empty(2 * n)
    ar[0] = e[0]
    for i in range(1, 2 * n):
        ar[i] = 0.5 * ar[i - 1] + e[i]
    return np.round(np.exp(13 + ar[:n])), np.round(np.exp(13.02 + ar[n:]))


def _timings(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two independent series of integer ns, the second 2 % slower: the verdict asks for the
    same estimate for its interval, its equivalence test and the baseline's choice. (AR(1)
    series are widened, and their rank test's interval at the widened level is asked once.)"""
    rng = np.random.default_rng(seed)
    return (np.round(np.exp(13 + rng.normal(0, 0.3, n))),
            np.round(np.exp(13.02 + rng.normal(0, 0.3, n))))


def test_a_verdict_selects_the_differences_of_a_pair_once(passes, monkeypatch):
    x, y = _timings(20_000, seed=3)  # 4e8 differences: the selection, not a partition
    verdict = verdict_model([("b", y), ("a", x)])
    remembered = passes["passes"]
    monkeypatch.setattr(rank_selection, "_KNOWN_PAIRS", 0)  # every request selected anew
    rank_selection._KNOWN.clear()
    passes["passes"] = 0
    again = verdict_model([("b", y), ("a", x)])
    assert 0 < remembered < passes["passes"]  # the old code's count: every request anew
    assert again.to_dict() == verdict.to_dict()


def test_remembered_values_equal_a_fresh_selection_and_brute_force(passes, monkeypatch):
    monkeypatch.setattr(rank_selection, "_MATERIALISE_LIMIT", 500)
    monkeypatch.setattr(rank_selection, "_ROUND_SAMPLE", 300)
    rng = np.random.default_rng(21)
    for trial in range(12):
        n, m = int(rng.integers(40, 200)), int(rng.integers(40, 200))
        x = np.round(rng.lognormal(5, 0.5, n)) if trial % 2 else rng.normal(size=n)
        y = np.round(rng.lognormal(5.1, 0.5, m)) if trial % 2 else rng.normal(0.2, 1, m)
        diffs = np.sort(np.subtract.outer(x, y).ravel())
        for level in (0.95, 0.9, 0.95, 0.99):  # the repeated level is answered from memory
            hl = hodges_lehmann(x, y, conf_level=level)
            assert hl.ci_low == diffs[hl.rank_low - 1]
            assert hl.ci_high == diffs[hl.rank_high - 1]
            assert hl.estimate == np.median(diffs)
        remembered = hodges_lehmann(x, y)
        rank_selection._KNOWN.clear()
        assert hodges_lehmann(x, y) == remembered
    assert len(rank_selection._KNOWN) <= rank_selection._KNOWN_PAIRS


def test_a_changed_sample_is_selected_anew(passes):
    x, y = _ar1_timings(3_000, seed=4)  # 9e6 differences
    first = hodges_lehmann(x, y)
    after_first = passes["passes"]
    assert hodges_lehmann(x, y) == first and passes["passes"] == after_first
    x[0] += 1e6  # the same array object, one value changed: not the same pair
    changed = hodges_lehmann(x, y)
    assert passes["passes"] > after_first
    diffs_rank = changed.rank_high
    assert changed.ci_high == np.partition(np.subtract.outer(x, y).ravel(),
                                           diffs_rank - 1)[diffs_rank - 1]


def test_the_rank_test_counts_pairs_without_ranking_the_pooled_sample(monkeypatch):
    """Mann-Whitney's W is counted from the sorted samples (two binary searches per value of
    x): no argsort of the pooled sample, whose ranking cost ~5x more at 10M. W equals the rank
    sum of x with scipy's average ranks, minus n_x (n_x + 1) / 2, to the last bit."""
    from scipy.stats import rankdata

    from benchlab.stats import rank
    from benchlab.stats.rank import mann_whitney_u, rank_sum_statistic

    def no_ranking(a):
        raise AssertionError("the pooled sample was ranked")

    monkeypatch.setattr(rank, "average_ranks", no_ranking)
    rng = np.random.default_rng(5)
    x, y = _ar1_timings(10_000, seed=5)
    for a, b in ((x, y), (x[:7], y[:5]), (np.round(x / 1000), np.round(y[:3000] / 1000)),
                 (rng.integers(0, 3, 60).astype(float), rng.integers(1, 4, 45).astype(float))):
        w = mann_whitney_u(a, b).statistic
        expected = rankdata(np.concatenate([a, b]))[:a.size].sum() - a.size * (a.size + 1) / 2
        assert w == rank_sum_statistic(a, b) == expected
