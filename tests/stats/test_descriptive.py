"""Descriptive statistics against R (quantile type 7, mad, IQR) and bad-input errors."""

from __future__ import annotations

import numpy as np
import pytest
from _core_vectors import datasets, vectors  # noqa: F401  (fixtures)

from benchlab.errors import UserError
from benchlab.stats import (
    InvalidSampleError,
    cdf_points,
    iqr,
    mad_raw,
    mad_scaled,
    percentile,
    summarize,
)

REL = 1e-9


def test_summary_matches_r_on_every_dataset(vectors, datasets):
    """n, mean, sd, min, max, median, type-7 quartiles/percentiles, both MADs and IQR equal R."""
    for name, ref in vectors["descriptive"].items():
        x = datasets[name]
        s = summarize(x)
        assert s.n == ref["n"]
        for field in ("mean", "sd", "min", "max", "median", "mad_raw", "mad_scaled", "iqr"):
            assert getattr(s, field) == pytest.approx(ref[field], rel=REL), (name, field)
        q = dict(zip(ref["quantile_probs"], ref["quantile_type7"]))
        assert s.q1 == pytest.approx(q[0.25], rel=REL)
        assert s.q3 == pytest.approx(q[0.75], rel=REL)
        assert s.p90 == pytest.approx(q[0.9], rel=REL)
        assert s.p95 == pytest.approx(q[0.95], rel=REL)
        assert s.p99 == pytest.approx(q[0.99], rel=REL)
        assert s.p99_9 == pytest.approx(q[0.999], rel=REL)
        assert percentile(x, 99.9) == pytest.approx(q[0.999], rel=REL)
        assert mad_raw(x) == pytest.approx(ref["mad_raw"], rel=REL)
        assert mad_scaled(x) == pytest.approx(ref["mad_scaled"], rel=REL)
        assert iqr(x) == pytest.approx(ref["iqr"], rel=REL)


def test_summary_to_dict_and_cv():
    s = summarize([10.0, 20.0, 30.0, 40.0])
    d = s.to_dict()
    assert d["cv"] == pytest.approx(d["sd"] / d["mean"])
    assert d["quantile_method"] == "linear"
    assert d["mad_scaled"] == pytest.approx(1.4826 * d["mad_raw"])
    assert set(d) >= {"n", "p99_9", "iqr", "q1", "q3"}


def test_other_quantile_method_changes_percentiles():
    """The method is honoured: type 1 (inverted_cdf) returns an order statistic."""
    x = np.arange(1.0, 11.0)
    assert summarize(x).p90 == pytest.approx(9.1)
    assert summarize(x, method="inverted_cdf").p90 == 9.0


def _tied_samples():
    """Samples whose order statistics fall on ties, both parities, of either sign, with zeros."""
    rng = np.random.default_rng(11)
    for n in (3, 4, 5, 8, 9, 1000, 1001):
        yield np.round(rng.lognormal(13.0, 0.3, n), -3)  # ns on a 1 us grid: ties
        yield rng.integers(1, 4, n).astype(float)  # three values
        yield -rng.integers(1, 40, n) / 10.0  # all negative
        yield rng.choice([0.0, -0.0, 1.0, -2.0], n)  # signed zeros
    yield np.array([1.0, 1.0, 1.0, 9.0])  # MAD 0 beside an outlier


def test_summary_is_numpys_order_statistics_bit_for_bit():
    """Median, percentiles, min, max and the raw MAD equal numpy's, to the last bit and sign:
    ``summarize`` takes them from one sort (the MAD by bisection over the sorted values)."""
    for x in _tied_samples():
        s = summarize(x)
        med = np.median(x)
        pct = np.percentile(x, [25.0, 75.0, 90.0, 95.0, 99.0, 99.9], method="linear")
        want = [med, *pct, x.min(), x.max(), np.median(np.abs(x - med))]
        got = [s.median, s.q1, s.q3, s.p90, s.p95, s.p99, s.p99_9, s.min, s.max, s.mad_raw]
        assert [(v, np.signbit(v)) for v in got] == [(float(v), np.signbit(v)) for v in want], x


def test_cdf_points_are_sorted_with_right_continuous_probabilities():
    values, probs = cdf_points([3.0, 1.0, 2.0, 2.0])
    assert values.tolist() == [1.0, 2.0, 2.0, 3.0]
    assert probs.tolist() == [0.25, 0.5, 0.75, 1.0]


def test_constant_sample_is_summarised_not_rejected():
    s = summarize([5.0, 5.0, 5.0])
    assert s.sd == 0.0 and s.mad_raw == 0.0 and s.iqr == 0.0


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ([], "empty"),
        ([1.0, float("nan"), 2.0, 3.0], "NaN"),
        ([1.0, float("inf"), 2.0, 3.0], "infinite"),
        ([1.0, 2.0], "at least 3"),
        ([[1.0, 2.0], [3.0, 4.0]], "1-D"),
        (["a", "b", "c"], "not numeric"),
    ],
)
def test_bad_input_is_a_one_line_user_error(bad, words):
    with pytest.raises(InvalidSampleError) as err:
        summarize(bad)
    assert isinstance(err.value, UserError) and isinstance(err.value, ValueError)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_percentile_outside_range_is_rejected():
    with pytest.raises(InvalidSampleError, match="outside"):
        percentile([1.0, 2.0, 3.0], 150)
