"""Numbers that never crash: bootstrap SD replicates keep their precision
beside one huge value; the noncentral t's lower tail (``t_test_power(strict=True)``) is right at
tiny degrees of freedom; values near 1e±300 are shown, analysed and compared in one line each,
without numpy warnings.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from benchlab.stats.bootstrap_resampling import bootstrap_distribution
from benchlab.stats.power import _nct_cdf, t_test_power
from tests.conftest import run_cli


def _np_std(a, axis=-1):
    return np.std(a, axis=axis, ddof=1)


def test_sd_replicates_are_stable_beside_a_huge_value():
    """One 1e12 among 999 values near 100: every replicate equals np.std of the same resample
    (the one-pass sum of squares gave 0 for each resample without the 1e12)."""
    x = np.random.default_rng(1).normal(100, 10, 1000)
    x[0] = 1e12
    fast = bootstrap_distribution(x, "sd", n_resamples=2000, seed=1).replicates
    plain = bootstrap_distribution(x, _np_std, n_resamples=2000, seed=1).replicates
    assert np.allclose(fast, plain, rtol=1e-9, atol=0)
    low = float(np.quantile(fast, 0.025))
    assert 8 < low < 12, low  # the SD of the 999 ordinary values, not 0
    assert bootstrap_distribution(x, "var", n_resamples=200, seed=2).replicates.min() > 50


@pytest.mark.parametrize("n", [1.1, 1.25, 1.5])
def test_strict_power_lower_tail_at_tiny_df(n):
    """At 0.2 to 1 degrees of freedom scipy's nctdtr is NaN for ncp 8; the lower tail is about
    1e-17 (the old normal approximation said 0.3 to 0.56), so strict power equals plain power."""
    nu = 2 * (n - 1)
    q = float(special.stdtrit(nu, 0.975))
    assert math.isnan(special.nctdtr(nu, 8.0, -q))  # the case the fallback exists for
    lower = _nct_cdf(-q, nu, 8.0)
    assert 0 <= lower < special.ndtr(-8.0)  # P(T' < -q) <= P(Z + ncp < 0) for q > 0
    delta = 8.0 / math.sqrt(n / 2)
    strict = t_test_power(n, delta, 1.0, strict=True)
    assert abs(strict - t_test_power(n, delta, 1.0)) < 1e-12


def test_nct_fallback_agrees_with_scipy_and_simulation():
    """Where nctdtr is defined the integral gives the same value; where it is not, a seeded
    simulation of (Z + ncp) / sqrt(V / nu) agrees within 5 standard errors."""
    import benchlab.stats.power as power

    nu, ncp = 0.5, 2.0
    q = float(special.stdtrit(nu, 0.975))
    from scipy import integrate

    def by_integral(x):
        return integrate.quad(lambda p: special.ndtr(
            x * math.sqrt(special.chdtri(nu, 1.0 - p) / nu) - ncp), 0, 1, epsabs=0,
            epsrel=1e-10, limit=200)[0]

    assert by_integral(-q) == pytest.approx(special.nctdtr(nu, ncp, -q), rel=1e-7)
    for nu_, ncp_, x_ in [(0.5, 2.0, -q), (0.5, 2.0, q), (0.2, 8.0, 3.0), (9240.0, 9.6, -1.96),
                          (3.0, 1.0, 0.5), (40.0, 4.0, 2.0)]:
        nu, ncp = nu_, ncp_  # by_integral reads them
        assert power._chi_square_expectation(x_, nu_, ncp_) == pytest.approx(
            by_integral(x_), rel=1e-9, abs=1e-15)
    rng = np.random.default_rng(0)
    nu8, q8 = 0.5, float(special.stdtrit(0.5, 0.975))
    t = (rng.standard_normal(400_000) + 8.0) / np.sqrt(rng.chisquare(nu8, 400_000) / nu8)
    upper = float((t > q8).mean())
    se = math.sqrt(upper * (1 - upper) / t.size)
    assert abs((1 - power._nct_cdf(q8, nu8, 8.0)) - upper) < 5 * se


@pytest.mark.parametrize("value", ["1.5e300", "1.5e-300"])
def test_extreme_values_answer_in_one_line_without_warnings(db_path, value):
    big = value.replace("1.5", "1.7")
    run_cli("run", "-q", "-N", "-r", "5", "-n", "a", "-n", "b", "--metric", "v=v (\\S+)",
            f"sh -c 'echo v {value}'", f"sh -c 'echo v {big}'", db=db_path, check=True)
    for args in (("show",), ("analyze", "a"), ("compare", "a", "b")):
        proc = run_cli(*args, db=db_path)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Warning" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    shown = run_cli("show", db=db_path, check=True).stdout
    row = next(line for line in shown.splitlines() if line.split()[:2] in (["v", "5"],
                                                                           ["b", "v"])
               or line.strip().startswith("v "))
    assert value.replace("e", "e+") in row or value in row, row  # 1.5e+300, not 301 digits
    assert len(row) < 200, row
