"""Reference vectors of the inflated Wald test's Student t reference, computed with scipy by a
route independent of benchlab's algebra (tests/stats/test_verdict_warmup.py reads them).

For each case (n_a, n_b, inflation): each series' AR(1) coefficient rho is found by root
finding (scipy.optimize.brentq) on inflation = v (n - 1) / (n - v), v = (1 + rho) / (1 - rho)
(the variance inflation with the sample variance's bias, Bayley and Hammersley 1946);
Bartlett's (1946) information of the spread, n (1 - rho^2) / (1 + rho^2), summed over both
series minus 2 (at least 1) is the degrees of freedom; scipy.stats.t gives the quantiles of
the interval and the two-sided p of a Wald statistic at those degrees of freedom.

Regenerate (a second)::

    .venv/bin/python tests/vectors/make_vectors_verdict_df.py > tests/vectors/verdict_df_vectors.json
"""

from __future__ import annotations

import json

import scipy
from scipy import optimize, stats


def ar1_rho(n: int, inflation: float) -> float:
    """rho whose AR(1) factor, corrected for the sample variance's bias at n runs, is
    ``inflation`` (0 at inflation 1)."""
    if inflation <= 1.0:
        return 0.0

    def excess(rho: float) -> float:
        v = (1 + rho) / (1 - rho)
        return v * (n - 1) / (n - v) - inflation

    # v < n keeps the correction finite: rho below (n - 1) / (n + 1)
    return optimize.brentq(excess, 0.0, (n - 1) / (n + 1) - 1e-15, xtol=1e-15)


def main() -> None:
    cases = []
    for n_a, n_b, inflation in ((20, 20, 1.0), (20, 20, 3 * 19 / 17), (10, 10, 10.0),
                                (10, 10, 2.0), (12, 12, 12.0), (10, 20, 15.0), (30, 30, 4.5),
                                (3, 3, 1.7), (5, 40, 5.0), (200, 200, 9.0)):
        info = [n * (1 - r * r) / (1 + r * r)
                for n, r in ((n_a, ar1_rho(n_a, inflation)), (n_b, ar1_rho(n_b, inflation)))]
        df = max(sum(info) - 2, 1.0)
        cases.append({"n_a": n_a, "n_b": n_b, "inflation": inflation, "df": df,
                      "t_975": float(stats.t.ppf(0.975, df)),
                      "t_9875": float(stats.t.ppf(0.9875, df)),
                      "p_at_2_5": float(2 * stats.t.sf(2.5, df))})
    print(json.dumps({"generator": "tests/vectors/make_vectors_verdict_df.py",
                      "scipy": scipy.__version__, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
