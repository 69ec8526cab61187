"""Mann-Whitney U and Hodges-Lehmann against R's wilcox.test and against brute force."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import benchlab.stats.rank_selection as rank_selection
from benchlab.errors import UserError
from benchlab.stats.rank import (
    hodges_lehmann,
    mann_whitney_u,
    median_ratio,
    pairwise_difference_quantiles,
    wilcox_cdf,
    wilcox_quantile,
    wilcox_sf,
)

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "compare_vectors.json"
R_ALTERNATIVE = {"two.sided": "two-sided", "less": "less", "greater": "greater"}
# R's uniroot(tol = 1e-4) locates the normal-branch estimate and bounds only to about 1e-4
# data units (reference-facts.md); allow twice that.
R_ROOT_TOL = 2e-4


def _vectors() -> dict:
    return json.loads(VECTORS.read_text())


WILCOX_CASES = _vectors()["wilcox"]


def _case_id(case: dict) -> str:
    return f"{case['name']}-{case['alternative']}-{case['conf_level']}"


@pytest.mark.parametrize("case", WILCOX_CASES, ids=_case_id)
def test_mann_whitney_matches_r(case: dict) -> None:
    x, y = np.array(case["x"]), np.array(case["y"])
    result = mann_whitney_u(x, y, alternative=R_ALTERNATIVE[case["alternative"]])
    assert result.statistic == case["statistic"]
    assert result.method == ("exact" if "exact" in case["method"] else "normal")
    assert result.p_value == pytest.approx(case["p_value"], rel=1e-6, abs=1e-300)


@pytest.mark.parametrize(
    "case", [c for c in WILCOX_CASES if c["alternative"] == "two.sided"], ids=_case_id
)
def test_hodges_lehmann_matches_r(case: dict) -> None:
    x, y = np.array(case["x"]), np.array(case["y"])
    result = hodges_lehmann(x, y, conf_level=case["conf_level"])
    diffs = np.sort(np.subtract.outer(x, y).ravel())
    nm = diffs.size
    if "exact" in case["method"]:
        # R's exact branch takes order statistics too: identical values.
        assert result.method == "exact"
        assert result.estimate == pytest.approx(case["estimate"], rel=1e-12)
        assert [result.ci_low, result.ci_high] == pytest.approx(case["conf_int"], rel=1e-12)
        # R keeps the requested level unless the discrete W distribution misses it by more
        # than alpha/2, then reports the achieved one; we always report the achieved coverage.
        alpha, achieved_alpha = 1 - result.conf_level, 1 - result.achieved_conf_level
        r_level = result.achieved_conf_level if achieved_alpha - alpha > alpha / 2 else result.conf_level
        assert r_level == pytest.approx(case["achieved_conf_level"], rel=1e-9)
        return
    assert result.method == "normal"
    assert result.ci_low == pytest.approx(case["conf_int"][0], abs=R_ROOT_TOL)
    assert result.ci_high == pytest.approx(case["conf_int"][1], abs=R_ROOT_TOL)
    # W(d) = 0 on the whole gap between the two middle differences when n*m is even: R's root
    # is some point of that gap, ours its midpoint (the median).
    lo, hi = diffs[(nm - 1) // 2], diffs[nm // 2]
    assert lo - R_ROOT_TOL <= case["estimate"] <= hi + R_ROOT_TOL
    assert result.estimate == (lo + hi) / 2


def test_wilcox_distribution_matches_r() -> None:
    for case in _vectors()["wilcox_distribution"]:
        m, n = int(case["m"]), int(case["n"])
        for q, lower, upper in zip(case["q"], case["pwilcox"], case["pwilcox_upper"]):
            assert wilcox_cdf(q, m, n) == pytest.approx(lower, rel=1e-10)
            assert wilcox_sf(q, m, n) == pytest.approx(upper, rel=1e-10)
        for p, q_r in zip(case["p"], case["qwilcox"]):
            q = wilcox_quantile(p, m, n)
            if q != q_r:
                # Knife-edge: P(W <= q) equals p exactly (49 x 49 at p = 0.5, a symmetric
                # distribution with an odd support size). We use exact integer counts; R sums
                # rounded doubles and lands one step higher.
                assert q_r == q + 1 and wilcox_cdf(q, m, n) == pytest.approx(p, abs=1e-12)


def _brute_force(x: np.ndarray, y: np.ndarray, ranks: list[int]) -> np.ndarray:
    diffs = np.sort(np.subtract.outer(x, y).ravel())
    return diffs[np.asarray(ranks) - 1]


def _samples(rng: np.random.Generator, kind: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    if kind == 0:  # continuous, non-integer: exercises the floating-point boundary repair
        return rng.normal(size=n) * 1e-3, rng.normal(0.3, 1, size=m) * 1e-3
    if kind == 1:  # few distinct integers: huge blocks of equal differences
        return rng.integers(0, 5, n).astype(float), rng.integers(0, 5, m).astype(float)
    if kind == 2:  # skewed timings in ns, integer
        return np.round(rng.lognormal(10, 0.5, n)), np.round(rng.lognormal(10.1, 0.5, m))
    # one constant sample against a two-valued one
    return np.full(n, 3.0), rng.integers(0, 2, m).astype(float)


def test_selection_equals_brute_force_small() -> None:
    rng = np.random.default_rng(11)
    for trial in range(200):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        x, y = _samples(rng, trial % 4, n, m)
        ranks = sorted({1, n * m, (n * m + 1) // 2, *rng.integers(1, n * m + 1, 4).tolist()})
        assert np.array_equal(pairwise_difference_quantiles(x, y, ranks), _brute_force(x, y, ranks))


def test_selection_equals_brute_force_through_every_branch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny materialisation limit and sample: many sampling rounds, tie resolution, splits."""
    monkeypatch.setattr(rank_selection, "_MATERIALISE_LIMIT", 500)
    monkeypatch.setattr(rank_selection, "_ROUND_SAMPLE", 300)
    rng = np.random.default_rng(12)
    for trial in range(80):
        n, m = int(rng.integers(40, 300)), int(rng.integers(40, 300))
        x, y = _samples(rng, trial % 4, n, m)
        nm = n * m
        ranks = [1, 2, nm // 2, nm // 2 + 1, nm - 1, nm, *rng.integers(1, nm + 1, 3).tolist()]
        assert np.array_equal(pairwise_difference_quantiles(x, y, ranks), _brute_force(x, y, ranks))


def test_hodges_lehmann_equals_brute_force_with_ties_and_even_counts() -> None:
    rng = np.random.default_rng(13)
    for trial in range(60):
        n, m = int(rng.integers(50, 120)), int(rng.integers(50, 120))
        if trial % 3 == 0:
            m = n  # n*m even or odd both occur over the trials
        x, y = _samples(rng, trial % 3, n, m)
        result = hodges_lehmann(x, y)
        diffs = np.sort(np.subtract.outer(x, y).ravel())
        assert result.estimate == np.median(diffs)
        assert result.ci_low == diffs[result.rank_low - 1]
        assert result.ci_high == diffs[result.rank_high - 1]
        assert result.ci_low <= result.estimate <= result.ci_high


def test_interval_ranks_follow_the_normal_approximation_formula() -> None:
    x = np.arange(100.0)
    y = np.arange(80.0) + 0.5
    result = hodges_lehmann(x, y, conf_level=0.95)
    nm, n = 8000, 180
    sigma = math.sqrt(nm / 12 * (n + 1))  # no ties within x or within y
    z = 1.959963984540054
    assert result.rank_low == math.floor(nm / 2 - 0.5 - z * sigma) + 1
    assert result.rank_high == math.floor(nm / 2 + 0.5 + z * sigma) + 1


def test_large_samples_never_form_the_pairs() -> None:
    """200k x 200k = 4e10 differences (320 GB as doubles): only a selection can finish."""
    rng = np.random.default_rng(14)
    x = np.round(rng.lognormal(13, 0.3, 200_000))
    y = np.round(rng.lognormal(13, 0.3, 200_000)) + 500
    result = hodges_lehmann(x, y)
    assert result.ci_low < -500 < result.ci_high  # the true shift (seeded data)
    assert result.ci_low <= result.estimate <= result.ci_high
    # Same data shifted by a constant: the estimate moves by exactly that constant.
    shifted = hodges_lehmann(x + 1000, y)
    assert shifted.estimate == result.estimate + 1000


def test_huge_statistic_gives_zero_p_value_like_r() -> None:
    rng = np.random.default_rng(15)
    result = mann_whitney_u(rng.normal(0, 1, 100_000), rng.normal(5, 1, 100_000))
    assert result.p_value == 0.0
    assert result.method == "normal"


def test_median_ratio_uses_the_bootstrap_and_covers_the_truth() -> None:
    rng = np.random.default_rng(16)
    a = rng.lognormal(np.log(110), 0.2, 2000)
    b = rng.lognormal(np.log(100), 0.2, 2000)
    result = median_ratio(a, b, seed=3)
    assert result.estimate == pytest.approx(np.median(a) / np.median(b))
    assert result.low < 1.10 < result.high
    assert result.high - result.low < 0.05
    again = median_ratio(a, b, seed=3)
    assert (again.low, again.high) == (result.low, result.high)


@pytest.mark.parametrize(
    "x, y, needle",
    [
        ([], [1.0, 2.0, 3.0], "empty"),
        ([1.0, 2.0], [1.0, 2.0, 3.0], "2 value"),
        ([1.0, float("nan"), 3.0], [1.0, 2.0, 3.0], "nan"),
        ([1.0, 2.0, 3.0], [1.0, float("inf"), 3.0], "infinite"),
        ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0, 5.0], "constant"),
    ],
)
def test_bad_input_is_a_one_line_user_error(x: list, y: list, needle: str) -> None:
    for func in (mann_whitney_u, hodges_lehmann):
        with pytest.raises(UserError) as info:
            func(x, y)
        message = str(info.value)
        assert "\n" not in message
        assert needle.lower() in message.lower()


def test_forced_exact_branch_agrees_with_scipy_and_refuses_huge_sizes() -> None:
    rng = np.random.default_rng(17)
    x, y = rng.normal(size=60), rng.normal(0.4, 1, size=70)
    from scipy.stats import mannwhitneyu

    ours = mann_whitney_u(x, y, exact=True)
    assert ours.method == "exact"
    assert ours.p_value == pytest.approx(mannwhitneyu(x, y, method="exact").pvalue, rel=1e-9)
    with pytest.raises(UserError):
        mann_whitney_u(rng.normal(size=200), rng.normal(size=200), exact=True)
