"""Reference vectors for ``benchlab.stats.distributions``, computed with scipy.special (an
independent implementation: Cephes and Boost) and, where scipy is known to lose digits, with
exact rational arithmetic.

Every value is scipy's except:

- ``bdtr``: exact sums in rational arithmetic (Python's Fraction of the float p; at n >= 10^4
  and p = 1/2, binomial coefficients over 2^n); scipy.special.bdtr is off by 1.4e-12 relative at
  n = 1000, k = 250 and by ~2e-10 at n = 10^5, k = n/2;
- the Student t at df = 1 and 2: the closed forms 1/2 + atan(t)/pi and
  1/2 + t / (2 sqrt(2 + t^2)) (scipy's stdtr(1, 1e-8) is off by 1.5e-9 absolute);
- outside scipy.special's domain, the distribution's own value:
  ``stdtrit(df, 0) = -inf`` (scipy says +inf), ``chdtrc(df, x < 0) = 1``,
  ``bdtr(k < 0, n, p) = 0`` and ``bdtr(k > n, n, p) = 1`` (scipy says nan);
- quantiles (``stdtrit``, ``chdtri``) whose scipy round trip does not give the probability back
  to 1e-12 (scipy's root search stops at a bound, e.g. stdtrit(0.05, 1e-300) = -1.5e153 where
  the quantile overflows to -inf) are left out, and listed under ``excluded``.

Regenerate (a few seconds)::

    .venv/bin/python tests/vectors/make_vectors_distributions.py > tests/vectors/distributions_vectors.json
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import scipy
from scipy import special

INF, NAN = math.inf, math.nan
DFS = [0.05, 0.3, 1.0, 2.0, 3.0, 7.5, 30.0, 59.0, 60.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e9, 1e15]


def number(value: float) -> float | str:
    """JSON has no inf or nan: write them as strings."""
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def row(*values: float) -> list:
    return [number(v) for v in values]


def exact_binomial_cdfs(n: int, p: float) -> list[float]:
    """P(X <= k) for k = 0..n, X ~ Binomial(n, p), exactly: p = m / 2^e as a float is, so every
    term is C(n, i) m^i (2^e - m)^(n - i) / 2^(e n), summed in integers."""
    m, denominator = Fraction(p).as_integer_ratio()
    rest = denominator - m
    terms, coefficient = [], 1
    for i in range(n + 1):
        terms.append(coefficient * m ** i * rest ** (n - i))
        coefficient = coefficient * (n - i) // (i + 1)
    total, cdfs = 0, []
    scale = denominator ** n
    for term in terms:
        total += term
        cdfs.append(total / scale)  # int / int: correctly rounded
    return cdfs


def exact_half_binomial_cdf(k: int, n: int) -> float:
    total, coefficient = 0, 1
    for i in range(k + 1):
        total += coefficient
        coefficient = coefficient * (n - i) // (i + 1)
    return float(Fraction(total, 2 ** n))


def student_closed_form(df: float, t: float) -> float:
    """P(T <= t) for df = 1 (Cauchy) and df = 2, written to keep the small tail accurate."""
    if df == 1.0:
        if t == 0.0:
            return 0.5
        tail = math.atan(1.0 / abs(t)) / math.pi
        return tail if t < 0 else 1.0 - tail
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    # 1/2 - |t| / (2 s) with s = sqrt(2 + t^2), as 1 / (s (s + |t|)): no cancellation
    tail = 1.0 / (math.sqrt(2.0 + t * t) * (math.sqrt(2.0 + t * t) + abs(t)))
    return tail if t < 0 else 1.0 - tail


def main() -> None:
    excluded = []
    out: dict[str, list] = {}
    xs = [-INF, -40.0, -38.0, -20.0, -8.0, -3.0, -1.0, -1e-10, 0.0, 1e-10, 1.0, 3.0, 8.0, 9.0,
          INF, NAN]
    out["ndtr"] = [row(x, special.ndtr(x)) for x in xs]
    ps = [0.0, 1e-300, 1e-100, 1e-20, 1e-5, 0.025, 0.3, 0.5, 0.7, 0.975, 1 - 1e-10, 1.0, NAN,
          -0.1, 1.1]
    out["ndtri"] = [row(p, special.ndtri(p)) for p in ps]

    ts = [-INF, -1e3, -40.0, -8.0, -3.0, -1.5, -0.3, -1e-8, 0.0, 1e-8, 0.3, 1.5, 3.0, 8.0, 40.0,
          1e3, INF]
    out["stdtr"] = [row(df, t, student_closed_form(df, t) if df in (1.0, 2.0) else
                        special.stdtr(df, t)) for df in DFS + [INF] for t in ts]
    out["stdtr"] += [row(df, t, special.stdtr(df, t)) for df, t in
                     ((0.0, 1.0), (-1.0, 1.0), (NAN, 1.0), (3.0, NAN))]

    out["stdtrit"] = []
    for df in DFS:
        for p in [0.0, 1e-300, 1e-100, 1e-20, 1e-10, 1e-4, 0.025, 0.3, 0.5, 0.7, 0.975,
                  1 - 1e-10, 1.0]:
            q = float(special.stdtrit(df, p)) if p > 0.0 else -INF
            back = float(special.stdtr(df, q))
            if 0.0 < p < 1.0 and not abs(back - p) <= 1e-12 * p:
                excluded.append({"function": "stdtrit", "args": row(df, p), "scipy": number(q),
                                 "why": f"scipy's round trip gives {back!r}"})
                continue
            out["stdtrit"].append(row(df, p, q))
    out["stdtrit"] += [row(df, p, special.stdtrit(df, p)) for df, p in
                       ((0.0, 0.5), (NAN, 0.5), (3.0, NAN), (3.0, -0.5), (3.0, 1.5))]

    out["chdtrc"] = []
    for df in [0.05, 0.5, 1.0, 2.0, 3.0, 7.5, 30.0, 100.0, 1e3, 1e4, 1e5, 1e6]:
        for x in [-1.0, 0.0, 1e-300, 1e-5, 0.1, 1.0, df / 2, df, 1.5 * df, 3 * df + 50, INF]:
            out["chdtrc"].append(row(df, x, special.chdtrc(df, x) if x >= 0 else 1.0))
    out["chdtrc"] += [row(df, x, special.chdtrc(df, x)) for df, x in ((NAN, 1.0), (1.0, NAN))]

    out["chdtri"] = []
    for df in [0.05, 0.5, 1.0, 2.0, 3.0, 7.5, 30.0, 100.0, 1e3, 1e4, 1e5, 1e6]:
        for y in [0.0, 1e-100, 1e-10, 0.05, 0.5, 0.95, 1 - 1e-10, 1.0]:
            x = float(special.chdtri(df, y))
            back = float(special.chdtrc(df, x))
            if 0.0 < y < 1.0 and not (x > 0 and abs(back - y) <= 1e-12 * min(y, 1 - y)):
                excluded.append({"function": "chdtri", "args": row(df, y), "scipy": number(x),
                                 "why": f"scipy's round trip gives {back!r}"})
                continue
            out["chdtri"].append(row(df, y, x))

    out["bdtr"] = []
    for n in [0, 1, 2, 5, 11, 100, 1000]:
        for p in [0.0, 1e-3, 0.3, 0.5, 0.9, 1.0]:
            cdfs = exact_binomial_cdfs(n, p)
            for k in sorted({-1, 0, 1, n // 4, n // 2 - 1, n // 2, n - 1, n, n + 1}):
                value = 0.0 if k < 0 else 1.0 if k > n else cdfs[k]
                out["bdtr"].append(row(k, n, p, value))
    out["bdtr_exact"] = []
    for n in [10_000, 100_000]:
        for k in [n // 10, n // 2 - 300, n // 2 - 1, n // 2, n // 2 + 50]:
            out["bdtr_exact"].append(row(k, n, 0.5, exact_half_binomial_cdf(k, n)))

    out["nctdtr"] = []
    for df in [0.5, 1.0, 3.0, 10.0, 38.0, 200.0, 9240.0, 1e5]:
        for nc in [0.0, 0.5, 2.0, 9.6, 30.0, -2.0]:
            for t in [-3.0, -1.96, 0.0, 0.5, 1.96, 5.0, 20.0, 60.0]:
                value = float(special.nctdtr(df, nc, t))
                if math.isfinite(value):
                    out["nctdtr"].append(row(df, nc, t, value))

    out["betainc"] = [row(a, b, x, special.betainc(a, b, x))
                      for a, b in ((0.5, 0.5), (2.0, 3.0), (0.1, 50.0), (50.0, 0.1), (200.0, 300.0))
                      for x in (0.0, 1e-8, 0.01, 0.3, 0.5, 0.9, 1.0)]
    out["gammainc"] = [row(a, x, special.gammainc(a, x), special.gammaincc(a, x))
                       for a in (0.025, 0.5, 3.75, 15.0, 50.0, 1e4)
                       for x in (0.0, 1e-3, 0.5, a / 2, a, a + 2, 3 * a + 10)]

    print(json.dumps({"generator": "tests/vectors/make_vectors_distributions.py",
                      "scipy": scipy.__version__, "numpy": np.__version__, **out,
                      "excluded": excluded}, indent=None, separators=(",", ":")).replace(
        '],[', '],\n['))


if __name__ == "__main__":
    main()
