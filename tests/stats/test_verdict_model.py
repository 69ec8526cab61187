"""The structured verdict: one comparison, its rules, its JSON.

Each test names the rule of :mod:`benchlab.stats.verdict_model` it checks.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchlab.errors import UserError
from benchlab.report.verdict_text import candidate_line, verdict_lines
from benchlab.stats.verdict_model import Verdict, choose_baseline, verdict_model
from benchlab.stats.verdict_pair import attainable_min_runs, attainable_p, series_dependence


def _ln(rng, n, median=1e6, sigma=0.05):
    return median * rng.lognormal(0.0, sigma, n)


def test_rule1_baseline_reference_first_fastest_and_family_sizes():
    rng = np.random.default_rng(1)
    s = {"a": _ln(rng, 10, 2e6), "b": _ln(rng, 10, 1e6), "c": _ln(rng, 10, 3e6)}
    assert choose_baseline({k: float(np.median(v)) for k, v in s.items()}) == ("b", "fastest")
    v = verdict_model(s)
    assert (v.baseline, v.baseline_rule, v.family) == ("b", "fastest", 3)  # all pairs
    v = verdict_model(s, sort="command")
    assert (v.baseline, v.baseline_rule, v.family) == ("a", "first", 2)
    v = verdict_model(s, reference="c", sort="command")
    assert (v.baseline, v.baseline_rule, v.family) == ("c", "reference", 2)
    assert [c.name for c in v.candidates] == ["a", "b"]
    with pytest.raises(UserError, match="not one of"):
        verdict_model(s, reference="zz")


def test_rule3_small_n_says_the_attainable_minimum_and_decides_at_5():
    """-r 3 'sleep 0.01' 'sleep 0.1': 3 vs 3 can never reach p < 0.05 (smallest p 0.1); with
    5 runs each, every run of one below every run of the other gives p = 2/252 and decides."""
    assert attainable_p(3, 3) == pytest.approx(0.1)
    assert attainable_p(4, 4) == pytest.approx(2 / 70)
    assert attainable_min_runs(0.05, 1) == 4 and attainable_min_runs(0.05, 2) == 5
    fast, slow = [1.0e7, 1.02e7, 1.01e7], [1.0e8, 1.01e8, 1.02e8]
    v = verdict_model({"sleep 0.01": fast, "sleep 0.1": slow})
    c = v.candidates[0]
    assert (c.outcome, c.reason, c.runs_to_decide) == ("undecided", "too_few_runs", 4)
    text = candidate_line(v, c)
    assert "with 3 runs each no result can reach p < 0.05" in text and "-r 4 or more" in text
    assert "CI [" in text  # always an interval
    # two comparisons against a fixed reference: 4 runs are not enough either (0.057 > 0.05)
    four = verdict_model({"r": [1.0, 1.1, 1.2, 1.3], "x": [5.0, 5.1, 5.2, 5.3],
                          "y": [9.0, 9.1, 9.2, 9.3]}, reference="r")
    assert all(c.reason == "too_few_runs" for c in four.candidates)
    assert "across two comparisons; use -r 5 or more" in candidate_line(four, four.candidates[0])
    five = verdict_model({"sleep 0.01": [1e7, 1.02e7, 1.01e7, 1.03e7, 1.0e7 + 1],
                          "sleep 0.1": [1e8, 1.01e8, 1.02e8, 1.0e8 + 5, 1.03e8]})
    c = five.candidates[0]
    assert c.outcome == "slower" and c.p_value == pytest.approx(2 / 252)
    assert c.ratio_low > 1 and "ran" in candidate_line(five, c)


def test_rule2_word_interval_and_direction_agree():
    rng = np.random.default_rng(7)
    seen = set()
    for i in range(200):
        shift = rng.choice([0.97, 1.0, 1.03])
        a = _ln(rng, 20) if i % 2 else np.where(rng.random(20) < 0.3, 1.1, 1.0) * _ln(rng, 20)
        b = _ln(rng, 20) * shift
        v = verdict_model({"a": a, "b": b}, reference="a")
        c = v.candidates[0]
        seen.add(c.outcome)
        if c.outcome == "faster":
            assert c.ratio_high < 1 or (c.ratio_high == 1 and c.high_open)
            assert c.ratio < 1 and c.p_adjusted < 0.05
        elif c.outcome == "slower":
            assert c.ratio_low > 1 or (c.ratio_low == 1 and c.low_open)
            assert c.ratio > 1 and c.p_adjusted < 0.05
        else:
            assert c.ratio_low is not None and c.ratio_low <= c.ratio <= c.ratio_high
    assert {"faster", "slower", "undecided"} <= seen


def test_rule2_clock_grid_ties_do_not_turn_a_rejection_into_cannot_tell():
    """On a 1 µs grid the interval's end is a pairwise ratio of exactly 1; the test rejects,
    so that end is open and the verdict is decided (the old HL rule said 'cannot tell')."""
    rng = np.random.default_rng(3)
    opened = 0
    for _ in range(300):
        a = np.round(rng.normal(20, 1.0, 30)) * 1000
        b = np.round(rng.normal(20.8, 1.0, 30)) * 1000
        v = verdict_model({"a": a, "b": b}, reference="a")
        c = v.candidates[0]
        if c.p_adjusted < 0.05:
            assert c.decided, c
        if c.decided and (c.low_open or c.high_open):
            opened += 1
            assert c.has_note("open_end") and "(1.000," in " ".join(verdict_lines(v))
    assert opened > 0


def test_rule4_equivalence_and_identical_and_plan_floor():
    rng = np.random.default_rng(5)
    a, b = _ln(rng, 400, sigma=0.01), _ln(rng, 400, sigma=0.01)
    v = verdict_model({"a": a, "b": b}, reference="a")
    c = v.candidates[0]
    assert c.outcome == "equivalent" and 1 / 1.01 < c.equivalence_low < c.equivalence_high < 1.01
    assert "equivalent within ±1%" in candidate_line(v, c)
    same = verdict_model({"a": [5.0] * 6, "b": [5.0] * 6}).candidates[0]
    assert same.reason == "identical" and same.outcome == "equivalent"
    und = verdict_model({"a": _ln(rng, 8), "b": _ln(rng, 8)}, reference="a")
    c = und.candidates[0]
    assert c.outcome == "undecided" and c.runs_to_decide >= und.attainable_min_n
    text = candidate_line(und, c)
    assert text.startswith("cannot tell b and a apart yet: ratio ") and "95" in text
    # A/A: what more runs would show if there is no difference is always said
    assert "would show equivalence within ±1% if there is" in text, text


def test_independence_threshold_scales_with_n():
    """The lag-1 band 1.645 / sqrt(n) or Ljung-Box at 1 %: independent runs are flagged about
    6 % of the time at any n (the fixed max |ACF| >= 0.05 flags almost all of them), AR(1)
    with phi 0.5 almost always; jaybeams keeps 0.05."""
    rng = np.random.default_rng(11)
    iid = [series_dependence(rng.normal(100, 1, 500)) for _ in range(100)]
    assert sum(d.flagged for d in iid) <= 12  # binomial(100, 0.06): 12 is its 99.5 % point
    old = [series_dependence(rng.normal(100, 1, 500), jaybeams_compatible=True)
           for _ in range(20)]
    assert sum(d.flagged for d in old) >= 15
    e = rng.normal(0, 1, 300)
    ar = np.empty(300)
    ar[0] = e[0]
    for t in range(1, 300):
        ar[t] = 0.5 * ar[t - 1] + e[t]
    d = series_dependence(100 + ar)
    assert d.flagged and 1.5 < d.inflation < 6
    v = verdict_model({"a": 100 + ar, "b": 100 + rng.normal(0, 1.15, 300)}, reference="b")
    assert v.notes and v.notes[0].code == "autocorrelated"
    assert "count as about" in " ".join(verdict_lines(v))


def test_json_round_trip_and_plain_values():
    rng = np.random.default_rng(2)
    v = verdict_model({"a": _ln(rng, 20), "b": _ln(rng, 20, 1.1e6), "c": [1.0, 2.0]})
    d = json.loads(json.dumps(v.to_dict()))
    assert d["schema"] == "benchlab.verdict/1" and Verdict.from_dict(d) == v
    assert {c["outcome"] for c in d["candidates"]} <= {"faster", "slower", "equivalent",
                                                      "undecided"}


def test_docs_schema_lists_every_field():
    """docs/verdict.schema.json names exactly the fields Verdict.to_dict writes."""
    from pathlib import Path

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" /
                         "verdict.schema.json").read_text())
    v = verdict_model({"a": [1.0, 2.0, 3.0, 4.0], "b": [2.0, 3.0, 4.0, 5.0]}).to_dict()
    assert set(schema["required"]) == set(v)
    cand = schema["properties"]["candidates"]["items"]
    assert set(cand["required"]) == set(v["candidates"][0])
    for key, value in v["candidates"][0].items():
        allowed = cand["properties"][key].get("enum")
        assert allowed is None or value in allowed, key


def test_compare_flow_independence_check_scales_with_n_and_says_effective_n():
    """compare's check line: independent runs pass (the JayBeams 0.05 warned on almost all of
    them); AR(1) runs warn and say how many independent runs they count as."""
    from benchlab.report.verdict_text import check_lines
    from benchlab.stats.verdict import CompareOptions, compare

    rng = np.random.default_rng(8)
    a, b = rng.normal(100, 1, 400), rng.normal(100, 1, 400)
    lines = dict((t.split(" ")[0], s) for s, t in check_lines(compare(a, b)))
    assert lines["no"] == "PASSED"
    old = check_lines(compare(a, b, options=CompareOptions(jaybeams_compatible=True,
                                                           bootstrap_resamples=200)))
    assert any(s == "WARNING" and "auto-correlation" in t for s, t in old)
    e = rng.normal(0, 1, 400)
    ar = np.empty(400)
    ar[0] = e[0]
    for t in range(1, 400):
        ar[t] = 0.6 * ar[t - 1] + e[t]
    warn = [t for s, t in check_lines(compare(100 + ar, b)) if t.startswith("autocorrelated")]
    assert warn and "count as about" in warn[0]


def test_decided_comparison_has_no_power_warning_and_undecided_at_most_one():
    from benchlab.stats.verdict import compare

    rng = np.random.default_rng(9)
    decided = compare(_ln(rng, 8, 1e6), _ln(rng, 8, 1.5e6))
    assert decided.outcome == "faster"
    plans = [c for c in decided.checks if c.name in ("power_10x", "power_1x", "effect_size")]
    assert plans and all(c.status != "WARNING" for c in plans)
    undecided = compare(_ln(rng, 6), _ln(rng, 6))
    assert undecided.outcome == "undecided"
    assert sum(c.status == "WARNING" and c.name in ("power_10x", "power_1x", "effect_size")
               for c in undecided.checks) <= 1


def test_autocorrelated_interval_inverts_the_inflated_test():
    """12 runs that count as about 1 independent run: the inflated test is the Wald test of the
    Hodges-Lehmann estimate with its standard error widened, so a 9x difference still decides
    (the deflated rank test printed "cannot tell ... (p = 0.44)": ranks saturate), while a 2 %
    one does not and its interval then holds no-change; word, interval and p agree."""
    from benchlab.stats.verdict_pair import pair_statistic

    rng = np.random.default_rng(3)
    base = 5e6 * (1 + 0.05 * np.cumsum(rng.standard_normal(12)) ** 2 / 10)
    cand = 9 * base[::-1] * rng.lognormal(0, 0.01, 12)
    stat = pair_statistic(cand, base, level=0.983, scale="ratio", inflation=12.0)
    assert stat.method == "inflated" and stat.p_value < 1 - 0.983 and stat.low > 0
    independent = pair_statistic(cand, base, level=0.983, scale="ratio", inflation=1.0)
    assert independent.high - independent.low < stat.high - stat.low  # widened
    close = pair_statistic(1.02 * base[::-1], base, level=0.983, scale="ratio", inflation=12.0)
    assert close.p_value >= 1 - 0.983 and close.low <= 0.0 <= close.high
