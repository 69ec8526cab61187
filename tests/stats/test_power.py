"""Two-sample t power and sample size against R's power.t.test; the JayBeams planning rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.stats.power import (
    minimum_interesting_effect,
    required_sample_size,
    t_test_detectable_difference,
    t_test_power,
    t_test_sample_size,
)

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "compare_vectors.json"
CASES = json.loads(VECTORS.read_text())["power"]


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "n"],
                         ids=lambda c: f"delta={c['delta']:.4g},sd={c['sd']:g},a={c['sig_level']}")
def test_sample_size_matches_r(case: dict) -> None:
    n = t_test_sample_size(case["delta"], case["sd"], alpha=case["sig_level"], power=case["power"])
    # R solved with tol = 1e-12: the exact root.
    assert n == pytest.approx(case["n"], rel=1e-6)
    # What R users see (uniroot's default tol = eps^0.25 ~ 1.2e-4 samples).
    assert n == pytest.approx(case["n_default_tol"], abs=2e-4 * max(1.0, case["n"] / 1000))


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "power"],
                         ids=lambda c: f"n={c['n']:g},strict={c['strict']}")
def test_power_matches_r(case: dict) -> None:
    power = t_test_power(case["n"], case["delta"], case["sd"], alpha=case["sig_level"],
                         strict=case["strict"])
    assert power == pytest.approx(case["power"], rel=1e-6)


def test_detectable_difference_inverts_the_sample_size() -> None:
    n = t_test_sample_size(0.25, 1.0, alpha=0.01, power=0.9)
    assert t_test_detectable_difference(n, 1.0, alpha=0.01, power=0.9) == pytest.approx(0.25, rel=1e-8)


def test_seed_001_planning_numbers() -> None:
    """The four power.t.test results and sample counts printed in the JayBeams analysis."""
    min_delta_ns = minimum_interesting_effect(20_000, 3.0)
    assert min_delta_ns == pytest.approx(6666.667, abs=1e-3)  # "min.delta 6.667" us
    min_delta = min_delta_ns / 1000  # the post works in microseconds
    workstation_10x = required_sample_size(10 * min_delta, 197, alpha=0.01, power=0.95)
    workstation_1x = required_sample_size(min_delta, 197, alpha=0.01, power=0.95)
    vm_10x = required_sample_size(10 * min_delta, 396, alpha=0.01, power=0.95)
    vm_1x = required_sample_size(min_delta, 396, alpha=0.01, power=0.95)
    assert round(workstation_10x.n_t_test, 1) == 312.8
    assert round(workstation_1x.n_t_test) == 31112
    assert round(vm_10x.n_t_test) == 1259
    assert round(vm_1x.n_t_test) == 125711
    assert [p.n_required for p in (workstation_10x, workstation_1x, vm_10x, vm_1x)] == [
        5000, 36000, 5000, 145000]
    assert workstation_1x.to_dict()["n_required"] == 36000


def test_rounding_rule() -> None:
    plan = required_sample_size(1.0, 1.0, alpha=0.05, power=0.8, minimum=0, round_to=10)
    # n = 16.71 -> 1.15 * n = 19.2 -> next multiple of 10
    assert plan.n_required == 20
    assert required_sample_size(1.0, 1.0, alpha=0.05, power=0.8).n_required == 5000


@pytest.mark.parametrize(
    "call",
    [
        lambda: t_test_sample_size(0.0, 1.0),
        lambda: t_test_sample_size(1.0, -1.0),
        lambda: t_test_sample_size(1.0, 1.0, power=1.5),
        lambda: t_test_power(1, 1.0, 1.0),
        lambda: t_test_power(10, 1.0, 1.0, alpha=0),
        lambda: minimum_interesting_effect(0, 3.0),
        lambda: minimum_interesting_effect(1000, float("nan")),
    ],
)
def test_bad_parameters_are_user_errors(call) -> None:
    with pytest.raises(UserError) as info:
        call()
    assert "\n" not in str(info.value)
