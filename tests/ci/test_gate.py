"""The gate's decision rule, its exit status, the paired interval and the CI outputs, on
numbers (no process: the statistics are the point)."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from benchlab.ci.gate import (
    EQUIVALENT,
    FASTER,
    SLOWER,
    UNDECIDED,
    Looks,
    check_threshold,
    decide,
    exit_status,
)
from benchlab.ci.report_model import GateReport
from benchlab.errors import UserError
from benchlab.report import ci_outputs
from benchlab.stats.paired import paired_shift

REPO = Path(__file__).resolve().parents[2]


def _pair(rng, n, ratio, noise=0.01, common=0.2):
    """Pairs sharing a large common factor per pair (the machine's load during the pair)."""
    load = np.exp(rng.normal(0, common, n))
    base = 1e7 * load * np.exp(rng.normal(0, noise, n))
    head = 1e7 * ratio * load * np.exp(rng.normal(0, noise, n))
    return base, head


@pytest.mark.parametrize("ratio, threshold, outcome", [
    (1.05, 0.02, SLOWER), (0.95, 0.02, FASTER), (1.0, 0.02, EQUIVALENT), (1.02, 0.02, UNDECIDED)])
def test_outcome_is_a_decision_on_the_interval_against_the_threshold(ratio, threshold, outcome):
    base, head = _pair(np.random.default_rng(1), 400, ratio)
    d = decide(base, head, benchmark="b", metric="wall", threshold=threshold, paired=True)
    assert d.outcome == outcome, d
    assert d.low <= d.ratio <= d.high
    assert abs(d.ratio - ratio) < 0.01


def test_pairing_cancels_what_the_machine_did_during_the_pair():
    base, head = _pair(np.random.default_rng(2), 300, 1.03)
    paired = decide(base, head, benchmark="b", metric="wall", threshold=0.01, paired=True)
    unpaired = decide(base, head, benchmark="b", metric="wall", threshold=0.01)
    assert paired.outcome == SLOWER
    assert unpaired.outcome == UNDECIDED  # the shared load swamps 3 % without the pairs
    assert (paired.high - paired.low) * 5 < unpaired.high - unpaired.low


def test_exact_counts_give_the_exact_ratio():
    d = decide([1000] * 3, [1001] * 3, benchmark="b", metric="instructions", threshold=0.0005)
    assert d.ratio == d.low == d.high == pytest.approx(1.001)
    assert d.outcome == SLOWER and d.confidence == 1.0
    same = decide([1000] * 3, [1000] * 3, benchmark="b", metric="instructions", threshold=0.0005)
    assert same.outcome == EQUIVALENT


def test_too_few_values_are_undecided_not_an_error():
    d = decide([1.0, 2.0], [1.0], benchmark="b", metric="wall", threshold=0.02)
    assert d.outcome == UNDECIDED and math.isnan(d.ratio)


@pytest.mark.parametrize("paired", [True, False])
def test_one_pair_never_decides_it_shows_no_spread(paired):
    """One value a side is constant trivially: it must not pass for an exact count."""
    for metric in ("wall", "instructions"):
        d = decide([1e6], [2e6], benchmark="b", metric=metric, threshold=0.02, paired=paired)
        assert d.outcome == UNDECIDED and math.isnan(d.low) and math.isnan(d.high), d
        assert "one value" in d.reason
    two = decide([1000] * 2, [1100] * 2, benchmark="b", metric="instructions", threshold=0.01)
    assert two.outcome == SLOWER and two.low == two.high == pytest.approx(1.1)


def test_exit_status():
    rng = np.random.default_rng(3)
    slow = decide(*_pair(rng, 300, 1.1), benchmark="s", metric="wall", threshold=0.02, paired=True)
    fast = decide(*_pair(rng, 300, 0.9), benchmark="f", metric="wall", threshold=0.02, paired=True)
    open_ = decide(*_pair(rng, 30, 1.02, common=0.0, noise=0.05), benchmark="u", metric="wall",
                   threshold=0.02, paired=True)
    assert open_.outcome == UNDECIDED and not open_.no_regression
    assert exit_status([slow, fast]) == 1
    assert exit_status([fast]) == 0  # improvements never fail
    assert exit_status([open_]) == 0  # undecided never fails by default
    assert exit_status([open_], fail_undecided=True) == 1
    assert exit_status([fast], failed=True) == 3


def test_thresholds_parse_as_percent_or_fraction_and_refuse_nonsense():
    assert check_threshold("2%", "x") == pytest.approx(0.02)
    assert check_threshold("0.5 %", "x") == pytest.approx(0.005)
    assert check_threshold(0.03, "x") == pytest.approx(0.03)
    for bad in ("two", "0%", "150%", "nan", True):
        with pytest.raises(UserError, match="threshold"):
            check_threshold(bad, "x")


def test_sequential_looks_are_strict_early_and_near_fixed_at_the_end():
    looks = Looks(1000, alpha=0.01)
    values = [looks.critical(n) for n in (50, 200, 500, 1000)]
    assert values == sorted(values, reverse=True)
    assert values[0] > 8 and 2.5 < values[-1] < 2.8
    assert looks.critical(900) is None  # not after the last look


def test_paired_interval_covers_at_its_level():
    """Coverage of the signed-rank interval on symmetric heavy-tailed differences."""
    rng = np.random.default_rng(4)
    misses = sum(not (lo <= 0.0 <= hi) for lo, hi in (
        (s.ci_low, s.ci_high) for s in (paired_shift(rng.standard_t(3, 60), conf_level=0.9)
                                        for _ in range(400))))
    assert 0.04 < misses / 400 < 0.17
    big = paired_shift(rng.normal(0.01, 0.05, 4000), conf_level=0.99)
    assert big.method == "sign" and big.ci_low < 0.01 < big.ci_high


def test_a_a_false_alarms_stay_below_alpha_over_sequential_looks():
    """A/A pairs looked at every 20 pairs up to 400: a regression decided at most alpha/2."""
    rng = np.random.default_rng(5)
    alarms = 0
    for _ in range(200):
        base, head = _pair(rng, 400, 1.0, noise=0.03)
        looks = Looks(400, alpha=0.01)
        for n in range(20, 401, 20):
            d = decide(base[:n], head[:n], benchmark="b", metric="wall", threshold=0.001,
                       critical=looks.critical(n), paired=True)
            if d.decided:
                alarms += d.regression
                break
    assert alarms <= 3  # expected <= 0.5 % of 200 = 1


def _report():
    rng = np.random.default_rng(6)
    decisions = [decide(*_pair(rng, 300, 1.1), benchmark="sort", metric="wall", threshold=0.02,
                        paired=True),
                 decide(*_pair(rng, 300, 0.9), benchmark="scan <&>", metric="cpu",
                        threshold=0.02, paired=True),
                 decide([1000] * 3, [1000] * 3, benchmark="sort", metric="instructions",
                        threshold=0.005)]
    return GateReport(
        "ab", "abc123", {"base": {"commit": "a" * 40, "subject": "s", "dirty": False},
                         "head": {"commit": "b" * 40, "subject": "t", "dirty": True}},
        decisions, exit_status(decisions), pairs={"sort": 300, "scan <&>": 300},
        seconds={"sort": 1.5, "scan <&>": 2.0})


def test_junit_parses_and_has_the_shape_ci_systems_read():
    root = ET.fromstring(ci_outputs.junit(_report()))
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) == 3
    assert all(c.get("name") and c.get("classname") and float(c.get("time")) >= 0 for c in cases)
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["sort"] and suite.get("failures") == "1"
    assert "1.1" in failed[0].find("failure").get("message")


def _validate(instance, schema, root, path="$"):
    """The JSON Schema keywords docs/ci.schema.json uses (jsonschema is not a dependency)."""
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return _validate(instance, target, root, path)
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
             "integer": int, "number": (int, float)}
    if "type" in schema:
        allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        assert any(isinstance(instance, types[t]) and not (
            t in ("integer", "number") and isinstance(instance, bool)) for t in allowed), path
    if "const" in schema:
        assert instance == schema["const"], path
    if "enum" in schema:
        assert instance in schema["enum"], f"{path}: {instance!r}"
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            assert key in instance, f"{path}: missing {key}"
        props = schema.get("properties", {})
        for key, value in instance.items():
            if key in props:
                _validate(value, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                raise AssertionError(f"{path}: unexpected key {key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                _validate(value, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            _validate(item, schema["items"], root, f"{path}[{i}]")


def validate_gate_json(doc: dict) -> None:
    """Assert ``doc`` follows docs/ci.schema.json."""
    schema = json.loads((REPO / "docs" / "ci.schema.json").read_text())
    _validate(doc, schema, schema)


def test_json_follows_the_documented_schema_and_markdown_names_the_regression():
    report = _report()
    doc = json.loads(json.dumps(ci_outputs.to_json(report), allow_nan=False))
    validate_gate_json(doc)
    assert doc["verdict"] == "regression" and doc["exit_status"] == 1
    md = ci_outputs.markdown(report)
    assert "REGRESSION: sort (wall)" in md and "improvement" in md
    assert "+ uncommitted changes" in md
    table = ci_outputs.terminal_table(report)
    assert len(table.splitlines()) <= 24


def test_session_offsets_widen_the_interval_of_two_sessions():
    """Two sessions 1 % apart by their offsets alone: with the runs' noise only, a 0.5 %
    gate calls it a regression; with a between-session SD of 1 % it stays undecided."""
    rng = np.random.default_rng(7)
    base = 1e7 * np.exp(rng.normal(0, 0.002, 200))
    head = 1.01e7 * np.exp(rng.normal(0, 0.002, 200))
    naive = decide(base, head, benchmark="b", metric="wall", threshold=0.005)
    modelled = decide(base, head, benchmark="b", metric="wall", threshold=0.005,
                      session_sd=0.01)
    assert naive.outcome == SLOWER and modelled.outcome == UNDECIDED
    assert modelled.ratio == pytest.approx(naive.ratio)


def test_a_long_budget_s_first_look_has_a_critical_value():
    """A quiet machine's budget of 2351 pairs put the first look at 0.85 % of it, where the
    pure-Python brentq divided by zero (C's gives inf and bisects): ab crashed there."""
    looks = Looks(2351, alpha=0.005)
    first = looks.critical(20)
    assert first is not None and 25 < first < 40
    assert looks.critical(30) < first


def test_looks_on_a_clock_spend_by_the_clock_and_correlate_by_the_pairs():
    """A look that says its share of the budget (the time ``ab`` has used) gets the critical
    value of a look at that information fraction when the pairs keep pace; a pace that changes
    changes only the correlation of the looks; nothing is looked at after the budget."""
    by_pairs, on_clock = Looks(1000, alpha=0.01), Looks(alpha=0.01)
    for n in (100, 300, 600, 1000):
        assert on_clock.critical(n, n / 1000) == pytest.approx(by_pairs.critical(n), rel=1e-6)
    assert on_clock.critical(1200, 1.0) is None and on_clock.final
    slow_start = Looks(alpha=0.01)  # the first tenth of the time gave 5 % of the pairs
    first, last = slow_start.critical(50, 0.1), slow_start.critical(1000, 1.0)
    assert first == pytest.approx(Looks(1000, alpha=0.01).critical(100), rel=1e-6)
    assert 2.4 < last < 2.8
    with pytest.raises(UserError, match="share of the budget"):
        Looks(alpha=0.01).critical(10)


def _sign_rule_alarms(gates: int, fractions: np.ndarray, pairs: np.ndarray, seed: int) -> int:
    """Gates whose sign-test interval's lower end passed the threshold at some look, when
    every difference falls at or below the threshold with probability 1/2 (the true shift IS
    the threshold: the worst case of "no regression beyond it")."""
    looks = Looks(alpha=0.01)
    lows = []
    for t, n in zip(fractions, pairs):
        z = looks.critical(int(n), float(t))
        lows.append(math.floor(n / 2.0 - z * math.sqrt(n) / 2.0))
    rng = np.random.default_rng(seed)
    below = np.cumsum(rng.binomial(np.diff(pairs, prepend=0), 0.5, size=(gates, len(pairs))),
                      axis=1)
    # the lower end (order statistic number `low`, 0-based) is above the threshold exactly
    # when at most `low` differences are at or below it
    return int(np.any(below <= np.array(lows), axis=1).sum())


def test_the_worst_case_false_regression_rate_is_alpha_over_two_on_any_pace():
    """20,000 gates on the sign-test rule of a long look (above 3,000 pairs) with the true
    ratio exactly 1 + threshold: alarms at most alpha / 2 = 0.5 % (+3 SE), whether the pairs
    keep pace with the clock, start slow or start fast (the clock decides the spending, the
    pairs the correlation). More than 0.25 %: the rule spends its error, it is not idle."""
    times = np.linspace(0.02, 1.0, 40)
    for pace in (lambda t: t, lambda t: t ** 2, np.sqrt):
        pairs = np.maximum.accumulate(np.round(3000 + 9000 * pace(times)).astype(int))
        keep = np.concatenate([[True], np.diff(pairs) > 0])
        alarms = _sign_rule_alarms(20_000, times[keep], pairs[keep], seed=len(pairs))
        assert 0.0025 < alarms / 20_000 < 0.005 + 3 * math.sqrt(0.005 * 0.995 / 20_000), alarms
