"""The one MetricSpec: one class for --metric and import --format metric, plain data."""

from __future__ import annotations

import dataclasses
import json

import pytest

from benchlab.errors import UserError
from benchlab.store.formats import MetricSpec, parse_metric_spec


def test_one_class_everywhere_and_serialisable():
    from benchlab.measure import metrics

    assert metrics.MetricSpec is MetricSpec and metrics.parse_metric_spec is parse_metric_spec
    spec = parse_metric_spec(r"lat:ns=took (\d+) ns")
    data = dataclasses.asdict(spec)
    assert data == {"name": "lat", "regex": r"took (\d+) ns", "unit": "ns"}
    assert MetricSpec(**json.loads(json.dumps(data))) == spec
    assert MetricSpec("lat", r"took (\d+) ns", "ns") == spec
    assert MetricSpec.parse(spec.spec) == spec
    assert spec.extract("took 3 ns\ntook 45 ns\n") == [3.0, 45.0]
    assert MetricSpec("x", r"(\d+)", None).unit == ""


@pytest.mark.parametrize("regex", [r"\d+", r"(\d+) (\d+)", r"(\d+"])
def test_construction_validates_the_regex(regex):
    with pytest.raises(UserError) as err:
        MetricSpec("x", regex)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text", ["v nan", "v inf", "v -inf", "v 1e999", "v abc"])
def test_values_must_be_finite_numbers(text):
    with pytest.raises(UserError, match="not a finite number"):
        MetricSpec("x", r"^v (\S+)$").extract(text, where="out.txt")
