"""ACF, Ljung-Box and effective sample size against R, and the JayBeams 0.05 rule on its data."""

from __future__ import annotations

import numpy as np
import pytest
from _core_vectors import datasets, read_jaybeams, shared_path, vectors  # noqa: F401

from benchlab.stats import (
    InvalidSampleError,
    acf,
    check_independence,
    default_max_lag,
    effective_sample_size,
    ljung_box,
)


def test_acf_matches_r_with_default_lag_max(vectors, datasets):
    for name, ref in vectors["descriptive"].items():
        x = datasets[name]
        assert default_max_lag(x.size) == ref["acf_lag_max"]
        r = acf(x)
        assert r.size == ref["acf_lag_max"] + 1
        assert r == pytest.approx(ref["acf"], rel=1e-9, abs=1e-12), name


def test_ljung_box_matches_r(vectors, datasets):
    for name, ref in vectors["descriptive"].items():
        for box in ref["ljung_box"]:
            res = ljung_box(datasets[name], box["lag"])
            assert res.statistic == pytest.approx(box["statistic"], rel=1e-9), (name, box["lag"])
            # R computes 1 - pchisq(Q, df): absolute precision ~1e-16, so it prints 0 where
            # the chi-square upper tail (scipy's sf, used here) is e.g. 1.6e-19.
            assert res.p_value == pytest.approx(box["p_value"], rel=1e-6, abs=1e-15)
            assert res.df == box["lag"]


def test_seed001_rule_on_its_published_data():
    """The JayBeams analysis prints PASSED for the workstation file and, for the VM file,
    max.acf.array=0.0964, max.acf.map=0.256 (R's acf with default lags, rule >= 0.05)."""
    ws = read_jaybeams(shared_path("data", "jaybeams", "workstation-results.csv"))
    vm = read_jaybeams(shared_path("data", "jaybeams", "vm-results.csv"))
    assert all(check_independence(ws[g]).passed for g in ("array", "map"))
    arr, mp = check_independence(vm["array"]), check_independence(vm["map"])
    assert round(arr.max_abs_acf, 4) == 0.0964 and round(mp.max_abs_acf, 4) == 0.256
    assert not arr.passed and not mp.passed
    assert arr.max_lag == 50  # floor(10 log10(100000))


def test_effective_sample_size_of_ar1_and_white_noise():
    """AR(1) with phi = 0.5: n_eff -> n (1 - phi)/(1 + phi) = n/3; white noise: about n."""
    rng = np.random.default_rng(0)
    n, phi = 50_000, 0.5
    e = rng.normal(size=n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    assert effective_sample_size(x) == pytest.approx(n / 3, rel=0.08)
    white = effective_sample_size(rng.normal(size=n))
    assert 0.9 * n <= white <= n


def test_independence_report_fields():
    x = np.random.default_rng(1).normal(size=1000)
    rep = check_independence(x)
    assert rep.max_lag == 30 and 1 <= rep.max_abs_acf_lag <= 30
    assert rep.passed == (rep.max_abs_acf < 0.05)
    assert rep.ljung_box.lag == 30
    assert rep.to_dict()["ljung_box"]["df"] == 30


def test_constant_or_short_series_is_rejected():
    with pytest.raises(InvalidSampleError, match="constant"):
        acf([2.0] * 10)
    with pytest.raises(InvalidSampleError, match="at least 3"):
        ljung_box([1.0, 2.0])
    with pytest.raises(InvalidSampleError, match="max_lag"):
        acf([1.0, 2.0, 4.0], 5)
