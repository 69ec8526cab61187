"""relative_speed: the statistics of `run A B ...`'s closing lines (issue 9, item 2).

Checked against scipy (Mann-Whitney p-values, Holm by hand) and by simulation (the stated
number of runs does decide the stated difference about as often as the power promises).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from benchlab.errors import UserError
from benchlab.report.verdict_text import relative_sentence
from benchlab.stats.relative import relative_speed


def _draw(rng: np.random.Generator, median: float, n: int, sigma: float = 0.03) -> np.ndarray:
    return rng.lognormal(math.log(median), sigma, n)


def test_decided_candidates_read_like_hyperfine_with_an_interval_and_a_test() -> None:
    rng = np.random.default_rng(1)
    samples = {"base": _draw(rng, 1e6, 30), "slow": _draw(rng, 1.18e6, 30),
               "quick": _draw(rng, 0.8e6, 30)}
    result = relative_speed(samples, reference="base")
    by = {c.name: c for c in result.candidates}
    assert by["slow"].outcome == "slower" and by["quick"].outcome == "faster"
    slow = by["slow"]
    assert slow.ratio == pytest.approx(np.median(samples["slow"]) / np.median(samples["base"]))
    assert slow.ratio_low < slow.ratio < slow.ratio_high
    text = relative_sentence(by["quick"], result.confidence_level)
    assert text.startswith("quick ran 1.2") and "× faster than base, 95% CI [" in text
    assert "Mann-Whitney" in text and "Holm-adjusted" in text
    # p-values: scipy's Mann-Whitney (asymptotic, continuity-corrected) and Holm by hand
    raw = [sps.mannwhitneyu(samples[k], samples["base"], method="exact").pvalue
           for k in ("slow", "quick")]
    assert [by[k].p_value for k in ("slow", "quick")] == pytest.approx(raw, rel=1e-6)
    order = np.argsort(raw)
    holm = np.minimum(1, np.maximum.accumulate(np.array(raw)[order] * np.array([2, 1])))
    assert [by[k].p_adjusted for k in np.array(["slow", "quick"])[order]] == \
        pytest.approx(holm.tolist(), rel=1e-6)


def test_default_reference_is_the_fastest_and_a_bad_one_is_a_user_error() -> None:
    rng = np.random.default_rng(2)
    samples = {"a": _draw(rng, 2e6, 10), "b": _draw(rng, 1e6, 10)}
    assert relative_speed(samples).reference == "b"
    with pytest.raises(UserError, match="not one of the commands"):
        relative_speed(samples, reference="c")
    with pytest.raises(UserError, match="two or more"):
        relative_speed({"a": [1.0, 2.0, 3.0]})


@pytest.mark.parametrize("a, b", [
    (np.round(np.random.default_rng(3).lognormal(math.log(1e6), 0.003, 20), -3),
     np.round(np.random.default_rng(4).lognormal(math.log(1e6), 0.003, 20), -3)),  # 1 µs grid
    ([5.0] * 10, [7.0] * 10),  # constants that differ
    ([5.0] * 10, [5.0] * 10),  # equal constants
    ([1e6, 1.1e6], [1e6, 1.05e6]),  # n = 2
    (np.r_[np.full(19, 1e6), 1e15], np.full(20, 1.02e6)),  # one huge outlier
    ([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]),  # zero median
])
def test_never_raises_on_legal_data(a, b) -> None:
    result = relative_speed({"a": a, "b": b}, reference="a")
    (c,) = result.candidates
    assert c.outcome in ("faster", "slower", "undecided")
    assert relative_sentence(c, 0.95)
    c.to_dict()


def test_outcomes_of_the_awkward_cases() -> None:
    assert relative_speed({"a": [5.0] * 10, "b": [7.0] * 10}, reference="a").candidates[0] \
        .outcome == "slower"
    same = relative_speed({"a": [5.0] * 10, "b": [5.0] * 10}).candidates[0]
    assert same.reason == "identical"
    two = relative_speed({"a": [1e6, 1.1e6], "b": [1e6, 1.05e6]}, reference="a").candidates[0]
    assert two.reason == "too_few_runs" and two.additional_runs >= 1
    outlier = relative_speed({"a": np.r_[np.full(19, 1e6), 1e15] + np.arange(20),
                              "b": np.full(20, 1.02e6) + np.arange(20)}, reference="a")
    assert outlier.candidates[0].outcome == "slower"  # the median ignores the 1e15 run


def test_runs_needed_decide_the_stated_difference_about_as_often_as_promised() -> None:
    rng = np.random.default_rng(5)
    pilot = relative_speed({"a": _draw(rng, 1e6, 10, 0.05), "b": _draw(rng, 1.03e6, 10, 0.05)},
                           reference="a", min_effect_relative=0.03)
    (c,) = pilot.candidates
    assert c.outcome == "undecided" and c.runs_needed is not None
    n = c.runs_needed
    assert c.additional_runs == n - 10
    decided = sum(relative_speed({"a": _draw(rng, 1e6, n, 0.05),
                                  "b": _draw(rng, 1e6 * (1 + c.detect_relative), n, 0.05)},
                                 reference="a", n_resamples=500).candidates[0].outcome == "slower"
                  for _ in range(40))
    assert decided / 40 >= 0.8 - 0.2  # power 0.8, generous for 40 trials and a pilot spread


def test_a_stated_difference_of_100_percent_or_more_has_no_exponent() -> None:
    """Spread as a loaded machine gives it: the undecided sentence states a 100 % difference,
    which ``:.2g`` wrote as '1e+02%' (the run verdict's line did the same with 120 %)."""
    from benchlab.report.verdict_text import percent_text

    c = relative_speed({"a": [1e6, 9e6, 5e6, 2e6], "b": [2e6, 18e6, 11e6, 3e6]},
                       reference="a").candidates[0]
    assert c.outcome == "undecided" and c.detect_relative == pytest.approx(1.0)
    assert relative_sentence(c, 0.95).endswith(
        f"about {c.additional_runs} more runs each would decide a difference of 100% "
        "(estimated from the observed spread)")
    assert [percent_text(x) for x in (1.234, 45.6, 99.7, 120.4, 2345.6, -150.2)] == \
        ["1.2", "46", "100", "120", "2346", "-150"]
