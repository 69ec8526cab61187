"""The point-by-point judgement on real bundled data, reshaped the way another machine would
change it (slower, swapped, differently counted), without measuring again."""

from __future__ import annotations

import copy
import json

import pytest

from benchlab.report.reproduce.verdict import (
    DIRECTION_ONLY,
    NOT_REPRODUCED,
    REPRODUCED,
    judge,
    size_band,
)
from tests.bundle.test_archive import members_of


@pytest.fixture(scope="module")
def original(bundled):
    return json.loads(members_of(bundled)["data/sessions.json"])["sessions"][0]


def scaled(doc, factor):
    out = copy.deepcopy(doc)
    for bench in out["benchmarks"]:
        for run in bench["runs"]:
            run["wall_ns"] = int(run["wall_ns"] * factor)
    return out


def with_instructions(doc, counts):
    out = copy.deepcopy(doc)
    for bench in out["benchmarks"]:
        for run in bench["runs"]:
            if not run["warmup"]:
                run["samples"]["instructions"] = [counts[bench["name"]]]
    return out


def test_same_data_is_reproduced(original):
    j = judge([(original, copy.deepcopy(original))], speedup_range=(0.95, 1.05))
    assert j.verdict == REPRODUCED
    assert {p["kind"] for p in j.points} == {"comparison", "size"}
    assert all(p["ok"] for p in j.points)


def test_slower_times_on_a_matched_machine_are_direction_only(original):
    j = judge([(original, scaled(original, 3.0))], speedup_range=(0.95, 1.05))
    assert j.verdict == DIRECTION_ONLY
    assert any(r.startswith("size: array: median time x3") for r in j.reasons)


def test_a_faster_machine_reproduces_direction_not_size_even_as_predicted(original):
    j = judge([(original, scaled(original, 1 / 3.2))], speedup_range=(3.0, 3.5))
    sizes = [p for p in j.points if p["kind"] == "size"]
    assert all(p["inside"] and not p["machines_match"] for p in sizes)
    assert j.verdict == DIRECTION_ONLY
    assert any("--calibrate" in r for r in j.reasons)


def test_a_reversed_comparison_is_not_reproduced(original):
    swapped = copy.deepcopy(original)
    a, b = swapped["benchmarks"]
    a["runs"], b["runs"] = b["runs"], a["runs"]
    j = judge([(original, swapped)], speedup_range=None, tolerance=10.0)
    assert j.verdict == NOT_REPRODUCED
    assert j.reasons[0] == "outcome changed: array vs map: faster there, slower here"


def test_instruction_counts_must_be_equal(original):
    there = with_instructions(original, {"array": 1_841_069.0, "map": 8_317_560.0})
    same = judge([(there, with_instructions(original, {"array": 1_841_069.0,
                                                       "map": 8_317_560.0}))],
                 speedup_range=(1.0, 1.0))
    assert same.verdict == REPRODUCED
    assert [p["ok"] for p in same.points if p["kind"] == "instructions"] == [True, True]
    other = judge([(there, with_instructions(original, {"array": 1_841_069.0,
                                                        "map": 9_000_000.0}))],
                  speedup_range=(1.0, 1.0))
    assert other.verdict == NOT_REPRODUCED
    assert "instruction count differs: map: 8317560 instructions per run there, 9000000 here" \
        in other.reasons


def test_size_band_follows_the_variability_range():
    lo, hi = size_band((2.0, 2.5), 0.2)
    assert lo == pytest.approx(1 / (2.5 * 1.2)) and hi == pytest.approx(1.2 / 2.0)
    assert size_band(None, 0.2) == pytest.approx((1 / 1.2, 1.2))
