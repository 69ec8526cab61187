"""The stability study's interval comparison: labels and the two-group comparison of mean and sd."""

from __future__ import annotations

import numpy as np
import pytest

from benchlab.stats import InvalidSampleError, compare_groups, compare_intervals


@pytest.mark.parametrize(
    ("x", "y", "label"),
    [
        ((0, 1), (2, 3), "higher"),
        ((2, 3), (0, 1), "lower"),
        ((0, 10), (2, 3), "same"),
        ((2, 3), (0, 10), "same"),
        ((0, 1), (0, 1), "same"),
        ((0, 2), (1, 3), "overlap"),
        ((1, 3), (0, 2), "overlap"),
        ((0, 1), (1, 2), "overlap"),  # touching is not disjoint
    ],
)
def test_labels(x, y, label):
    assert compare_intervals(x, y) == label


def test_inverted_interval_is_rejected():
    with pytest.raises(InvalidSampleError):
        compare_intervals((2, 1), (0, 1))


def test_group_comparison_finds_shift_and_spread():
    rng = np.random.default_rng(0)
    base = rng.normal(100, 2, 400)
    slower_noisier = rng.normal(110, 6, 400)
    res = compare_groups(base, slower_noisier, n_resamples=2000, seed=1)
    assert (res.mean, res.sd) == ("higher", "higher")
    back = compare_groups(slower_noisier, base, n_resamples=2000, seed=1)
    assert (back.mean, back.sd) == ("lower", "lower")
    assert res.x_mean_ci.kind == "percentile"


def test_same_distribution_is_never_declared_different():
    rng = np.random.default_rng(1)
    a, b = rng.normal(100, 2, 400), rng.normal(100, 2, 400)
    res = compare_groups(a, b, n_resamples=2000, seed=2)
    assert res.mean in ("same", "overlap") and res.sd in ("same", "overlap")
