"""The verdict selects the order statistics of one pair's differences once per need: the
Hodges-Lehmann estimate that names the baseline (its middle alone, no interval nobody reads),
then both intervals a comparison prints (its own and the equivalence test's) in one selection.
It selected three times before, each a set of passes over the n*m differences."""

from __future__ import annotations

import numpy as np
import pytest

from benchlab.stats import rank_selection
from benchlab.stats.rank import hodges_lehmann, hodges_lehmann_estimate
from benchlab.stats.verdict_model import verdict_model


@pytest.fixture
def counted(monkeypatch):
    calls: list[list[int]] = []
    original = rank_selection._selected

    def selected(xs, ys, ks, **fences):
        calls.append(list(ks))
        return original(xs, ys, ks, **fences)

    monkeypatch.setattr(rank_selection, "_selected", selected)
    rank_selection._KNOWN.clear()
    yield calls
    rank_selection._KNOWN.clear()


def _pair(n: int = 1400) -> tuple[np.ndarray, np.ndarray]:
    """n*m = 1.96M differences: above the count that is partitioned whole at each call."""
    rng = np.random.default_rng(3)
    return np.round(rng.lognormal(13.0, 0.3, n)), np.round(rng.lognormal(13.02, 0.3, n))


def test_a_two_command_verdict_selects_twice_with_the_same_numbers(counted):
    a, b = _pair()
    v = verdict_model([("b", b), ("a", a)])
    assert len(counted) == 2, counted
    assert len(counted[0]) == 2 and len(counted[1]) == 4  # the middle; both intervals' ends
    # the numbers are those of separate selections, bit for bit
    rank_selection._KNOWN.clear()
    c = v.candidate("b") if v.baseline == "a" else v.candidate("a")
    x, y = (np.log(b), np.log(a)) if v.baseline == "a" else (np.log(a), np.log(b))
    alone = hodges_lehmann(x, y, conf_level=c.interval_level)
    assert np.exp(alone.ci_low) == c.ratio_low and np.exp(alone.ci_high) == c.ratio_high


def test_the_estimate_alone_equals_hodges_lehmanns(counted):
    a, b = _pair()
    assert hodges_lehmann_estimate(a, b) == hodges_lehmann(a, b, conf_level=0.5).estimate
