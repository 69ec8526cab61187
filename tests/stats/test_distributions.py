"""benchlab.stats.distributions (the special functions of the base install, written without
scipy) against scipy.special's values, committed in
tests/vectors/distributions_vectors.json by tests/vectors/make_vectors_distributions.py, and
against exact rational arithmetic for the binomial (where scipy.special.bdtr itself loses
digits: 1.4e-12 relative at n = 1000, 2e-10 at n = 1e5) and closed forms for the Student t at
df = 1 and 2 (scipy's stdtr(1, 1e-8) is off by 1.5e-9).

Tolerances: 1e-12 relative for probabilities above 1e-100 (5e-11 below, where the exponent of
a value near 1e-300 alone carries ~700 eps of rounding), and for the noncentral t 1e-12
absolute: its lower tail for t < 0 is 1 minus the upper sum, so values below ~1e-4 there are
good to ~1e-13 absolute only (all benchlab needs: the power of a test)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchlab.stats import distributions as dist

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "vectors" /
                      "distributions_vectors.json").read_text())


def _num(value) -> float:
    return float(value)  # "inf", "-inf", "nan" parse as floats


def _agrees(mine: float, ref: float, rel: float = 1e-12, abs_: float = 0.0) -> bool:
    if math.isnan(ref):
        return math.isnan(mine)
    if math.isinf(ref):
        return mine == ref
    if abs(ref) < 1e-300 and abs(mine) < 1e-300:  # scipy flushes some subnormals to 0
        return True
    if ref == 0.0:
        return abs(mine) <= abs_
    tolerance = rel if abs(ref) > 1e-100 else 5e-11
    return abs(mine - ref) <= tolerance * abs(ref) + abs_


def _check(name: str, function, n_args: int, abs_: float = 0.0, rel: float = 1e-12):
    bad = []
    for row in VECTORS[name]:
        values = [_num(v) for v in row]
        args, ref = values[:n_args], values[n_args]
        mine = function(*args)
        if not _agrees(mine, ref, rel=rel, abs_=abs_):
            bad.append((args, mine, ref))
    assert not bad, f"{len(bad)} of {len(VECTORS[name])} disagree, e.g. {bad[:5]}"


def test_normal_cdf_and_quantile_match_scipy():
    _check("ndtr", dist.ndtr, 1)
    _check("ndtri", dist.ndtri, 1, rel=1e-14)


def test_student_t_cdf_matches_scipy_from_tiny_to_huge_df():
    _check("stdtr", dist.stdtr, 2)


def test_student_t_quantile_matches_scipy():
    _check("stdtrit", dist.stdtrit, 2)


def test_student_t_quantile_inverts_the_cdf_where_scipy_stops_early():
    """Where scipy's stdtrit stops at a bound (the vectors' ``excluded``), ours still inverts."""
    for df, p in ((0.3, 1e-60), (1.0, 1e-300), (3.0, 1e-300), (7.5, 1e-300), (0.05, 1e-10)):
        t = dist.stdtrit(df, p)
        assert math.isfinite(t) and t < 0
        assert dist.stdtr(df, t) == pytest.approx(p, rel=1e-12)
    assert dist.stdtrit(0.3, 1e-100) == -math.inf  # the quantile, ~1e333, overflows a double


def test_chi_square_survival_and_quantile_match_scipy():
    _check("chdtrc", dist.chdtrc, 2)
    _check("chdtri", dist.chdtri, 2)


def test_binomial_cdf_matches_scipy_and_exact_sums():
    _check("bdtr", dist.bdtr, 3)
    _check("bdtr_exact", dist.bdtr, 3, rel=1e-13)


def test_noncentral_t_cdf_matches_scipy():
    _check("nctdtr", dist.nctdtr, 3, abs_=1e-12, rel=1e-11)


def test_incomplete_beta_and_gamma_match_scipy():
    _check("betainc", dist.betainc, 3)
    _check("gammainc", dist.gammainc, 2)
    bad = [row for row in VECTORS["gammainc"]
           if not _agrees(dist.gammaincc(_num(row[0]), _num(row[1])), _num(row[3]))]
    assert not bad


def test_array_arguments_give_arrays_element_by_element():
    x = np.array([-2.0, 0.0, 1.5])
    assert np.array_equal(dist.ndtr(x), [dist.ndtr(v) for v in x])
    p = np.array([[0.01, 0.5], [0.9, 1.0]])
    out = dist.ndtri(p)
    assert out.shape == (2, 2) and out[0, 1] == 0.0 and out[1, 1] == math.inf
    q = dist.chdtri(3.0, np.array([0.05, 0.5]))
    assert q == pytest.approx([dist.chdtri(3.0, 0.05), dist.chdtri(3.0, 0.5)], rel=0)
    assert isinstance(dist.ndtr(0.3), float) and isinstance(dist.ndtri(0.3), float)


def test_t_namespace_is_scipy_stats_t_shaped():
    assert dist.t.sf(2.0, 10) == pytest.approx(1 - dist.t.cdf(2.0, 10), rel=1e-14)
    assert dist.t.ppf(0.975, 10) == pytest.approx(2.228138851986274, rel=1e-14)
    assert dist.t.isf(0.025, 10) == pytest.approx(2.228138851986274, rel=1e-14)


def test_brentq_takes_scipys_steps():
    """Same roots as scipy.optimize.brentq, value for value (its algorithm, step for step)."""
    from scipy import optimize

    for f, a, b in ((lambda x: x ** 3 - 2 * x - 5, 2.0, 3.0), (math.cos, 0.0, 3.0),
                    (lambda x: math.exp(x) - 1e6, 0.0, 30.0)):
        for xtol in (2e-12, 1e-6):
            assert dist.brentq(f, a, b, xtol=xtol) == optimize.brentq(f, a, b, xtol=xtol)
    with pytest.raises(ValueError):
        dist.brentq(lambda x: x * x + 1, -1.0, 1.0)
