"""Group-sequential design: boundaries against published values, error control by simulation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, norm

from benchlab.errors import UserError
from benchlab.stats.sequential import (
    SequentialDesign,
    critical_values,
    max_sample_inflation,
    rejection_probability,
    spent_alpha,
)


def test_boundaries_match_published_lan_demets_values() -> None:
    """Five equal looks, two-sided alpha 0.05 (R package ldbounds / gsDesign, 4 decimals)."""
    looks = np.arange(1, 6) / 5
    obf = critical_values(looks, alpha=0.05, spending="obrien-fleming")
    pocock = critical_values(looks, alpha=0.05, spending="pocock")
    assert obf == pytest.approx([4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-4)
    assert pocock == pytest.approx([2.4380, 2.4268, 2.4101, 2.3966, 2.3859], abs=2e-4)


def test_one_look_is_the_fixed_sample_test() -> None:
    assert critical_values([1.0], alpha=0.01)[0] == pytest.approx(norm.isf(0.005), rel=1e-9)


def test_irregular_looks_spend_exactly_alpha() -> None:
    looks = [0.07, 0.2, 0.21, 0.5, 0.93, 1.0]
    bounds = critical_values(looks, alpha=0.01)
    reject, _ = rejection_probability(looks, bounds, drift=0.0)
    assert reject == pytest.approx(0.01, rel=1e-5)
    assert spent_alpha(1.0, 0.01) == pytest.approx(0.01, rel=1e-12)
    assert spent_alpha(0.5, 0.01, "pocock") < 0.01


def test_inflation_keeps_the_power_and_lowers_the_expected_size() -> None:
    factor = max_sample_inflation(alpha=0.05, power=0.9, looks=5)
    assert 1.0 < factor < 1.06
    looks = np.arange(1, 6) / 5
    bounds = critical_values(looks, alpha=0.05)
    drift = (norm.isf(0.025) + norm.isf(0.1)) * np.sqrt(factor)
    power, expected_t = rejection_probability(looks, bounds, drift)
    assert power == pytest.approx(0.9, abs=1e-6)
    assert expected_t * factor < 0.85  # expected sample size below the fixed design's


def test_planned_budget_inflates_the_fixed_sample_size() -> None:
    design = SequentialDesign.planned(10_000, alpha=0.01, power=0.95, looks=10)
    factor = max_sample_inflation(alpha=0.01, power=0.95, looks=10)
    assert design.max_samples == int(np.ceil(10_000 * factor))
    assert 10_000 < design.max_samples < 10_600
    with pytest.raises(UserError):
        SequentialDesign.planned(10_000, looks=0)


def _aa_streams(rng: np.random.Generator, n_max: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.lognormal(10, 0.4, n_max), rng.lognormal(10, 0.4, n_max)


def test_aa_false_positive_rate_is_held_while_naive_peeking_is_not() -> None:
    """Same simulated A/A data, 10 looks: the design stays at alpha, peeking does not."""
    rng = np.random.default_rng(2026)
    alpha, n_max, looks, sims = 0.05, 200, 10, 200
    sequential_hits = peeking_hits = 0
    for _ in range(sims):
        a, b = _aa_streams(rng, n_max)
        design = SequentialDesign(max_samples=n_max, alpha=alpha)
        peeked = False
        for k in range(1, looks + 1):
            n = k * n_max // looks
            decision = design.look(a[:n], b[:n])
            peeked = peeked or mannwhitneyu(a[:n], b[:n]).pvalue < alpha
            if decision.stop:
                sequential_hits += decision.action == "different"
                break
        peeking_hits += peeked
    se = np.sqrt(alpha * (1 - alpha) / sims)
    assert sequential_hits / sims <= alpha + 3 * se
    assert peeking_hits / sims > alpha + 3 * se  # why naive peeking is forbidden


def test_real_shift_is_decided_early_with_the_right_direction() -> None:
    rng = np.random.default_rng(7)
    a = rng.lognormal(np.log(90), 0.1, 5000)  # A is 10 % faster
    b = rng.lognormal(np.log(100), 0.1, 5000)
    design = SequentialDesign(max_samples=5000, alpha=0.01)
    for n in range(100, 5001, 100):
        decision = design.look(a[:n], b[:n])
        if decision.stop:
            break
    assert decision.action == "different"
    assert decision.z < 0 and decision.action == "different"
    assert decision.rci_high < 0 and 0.9 < decision.rci_level < 1  # the repeated interval
    assert decision.n_a < 1000
    assert decision.rci_high < 0
    assert design.to_dict()["looks"][-1]["action"] == "different"
    # every look carries its repeated interval: a session stopped by --max-time reports it
    first = json.loads(json.dumps(design.to_dict(), allow_nan=False))["looks"][0]
    assert first["rci_low"] < first["shift"] < first["rci_high"]


def test_equivalence_stop_and_budget_exhaustion() -> None:
    rng = np.random.default_rng(8)
    a, b = _aa_streams(rng, 4000)
    design = SequentialDesign(max_samples=4000, alpha=0.05, equivalence_margin=0.05)
    for n in range(200, 4001, 200):
        decision = design.look(a[:n], b[:n])
        if decision.stop:
            break
    assert decision.action == "equivalent"
    median_b = np.median(b[: decision.n_b])
    assert -0.05 * median_b < decision.rci_low < decision.rci_high < 0.05 * median_b

    tight = SequentialDesign(max_samples=300, alpha=0.05)
    decisions = [tight.look(a[:n], b[:n]) for n in (100, 200, 300)]
    assert [d.action for d in decisions] == ["continue", "continue", "budget_exhausted"]
    assert decisions[-1].alpha_spent == pytest.approx(0.05)


def test_misuse_is_a_user_error() -> None:
    rng = np.random.default_rng(9)
    a, b = _aa_streams(rng, 200)
    design = SequentialDesign(max_samples=200)
    early = design.look(a[:5], b[:5])
    assert early.action == "continue" and early.look == 0  # below min_samples: not a look
    design.look(a[:100], b[:100])
    with pytest.raises(UserError):
        design.look(a[:100], b[:100])
    with pytest.raises(UserError):
        SequentialDesign(max_samples=2)
    with pytest.raises(UserError):
        SequentialDesign(max_samples=100, spending="linear")  # type: ignore[arg-type]
    with pytest.raises(UserError):
        design.look(a[:150], np.append(b[:149], np.nan))
