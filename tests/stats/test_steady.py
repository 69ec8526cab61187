"""Steady-state detection on synthetic runs with known warm-up and shift, and on pure noise."""

from __future__ import annotations

import numpy as np
import pytest

from benchlab.stats import InvalidSampleError, detect_steady_state


def test_known_warmup_and_level_shift_are_located():
    """Warm-up ramp 1.3 -> 1.1 over the first 60 iterations, steady 1.0, then a shift to 1.1
    at 300 (noise sd 0.02): the ramp is cut into a staircase ending at 60 (+-3), the shift is
    found at 300 (+-3), steady from 300 and the run is a 'slowdown' (the last level is higher)."""
    rng = np.random.default_rng(0)
    n = 500
    level = np.ones(n)
    level[:60] = np.linspace(1.3, 1.1, 60)
    level[300:] = 1.1
    res = detect_steady_state(level + rng.normal(0, 0.02, n))
    assert abs(res.warmup_end - 60) <= 3
    assert len(res.level_shifts) == 1 and abs(res.level_shifts[0] - 300) <= 3
    assert res.steady_from == res.level_shifts[0]
    assert res.classification == "slowdown"
    assert res.segments[-1].median == pytest.approx(1.1, abs=0.01)
    assert sum(s.n for s in res.segments) == n


def test_warmup_only_is_classified_warmup():
    rng = np.random.default_rng(1)
    x = np.r_[rng.normal(2.0, 0.05, 40), rng.normal(1.0, 0.05, 360)]
    res = detect_steady_state(x)
    assert res.change_points == [40]
    assert res.steady_from == 40 and res.classification == "warmup" and res.warmup_end == 40


def test_pure_noise_is_flat_nearly_always():
    """20 fixed seeds of Gaussian noise and of spiky noise (3% exponential spikes): at least
    18 of 20 report no change point (BIC-like penalty, spikes winsorised for detection)."""
    flat_normal = flat_spiky = 0
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        flat_normal += detect_steady_state(rng.normal(1, 0.02, 300)).classification == "flat"
        spiky = rng.normal(1, 0.02, 300) + (rng.random(300) < 0.03) * rng.exponential(0.3, 300)
        flat_spiky += detect_steady_state(spiky).classification == "flat"
    assert flat_normal >= 18 and flat_spiky >= 18
    res = detect_steady_state(np.random.default_rng(7).normal(1, 0.02, 300))
    assert res.steady_from == 0 and res.change_points == []


def test_late_change_means_no_steady_state():
    rng = np.random.default_rng(2)
    x = np.r_[rng.normal(1.0, 0.02, 450), rng.normal(1.5, 0.02, 50)]
    res = detect_steady_state(x)
    assert res.classification == "no steady state" and res.steady_from is None


def test_long_run_uses_block_medians_and_finds_shift():
    rng = np.random.default_rng(3)
    n = 200_000
    x = rng.normal(1.0, 0.05, n)
    x[120_000:] += 0.02
    res = detect_steady_state(x)
    assert res.jump == 100
    assert len(res.change_points) == 1 and abs(res.change_points[0] - 120_000) <= 500


def test_short_or_constant_run_is_rejected():
    with pytest.raises(InvalidSampleError, match="at least 10"):
        detect_steady_state([1.0, 2.0, 3.0])
    with pytest.raises(InvalidSampleError, match="constant"):
        detect_steady_state([1.0] * 50)


def test_own_pelt_finds_the_same_optimum_as_ruptures():
    """pelt_l2 (prefix sums, vectorised) against ruptures.Pelt(model="l2", jump=1)."""
    import ruptures as rpt

    from benchlab.stats.steady import pelt_l2

    rng = np.random.default_rng(4)
    for trial in range(4):
        n = 300
        level = np.ones(n)
        level[:50] = 1.3
        level[180:] = 1.1
        x = level + rng.normal(0, 0.05, n)
        for min_size in (2, 5, 12):
            pen = 2 * 0.05**2 * np.log(n) * (1 + trial)
            expected = rpt.Pelt(model="l2", min_size=min_size, jump=1).fit(x[:, None]).predict(pen=pen)
            assert pelt_l2(x, pen, min_size) == expected[:-1]
