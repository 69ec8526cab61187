"""Reference vectors of the structured verdict's statistics, computed with scipy by brute force.

For each dataset (seeded, written into the file): scipy.stats.mannwhitneyu's two-sided p-value
(exact below 50 values without ties, else asymptotic with continuity correction, as R), the
Hodges-Lehmann ratio as the median of all pairwise log ratios, and its interval by brute-force
inversion of scipy's test: the smallest and largest pairwise log difference d such that the
test of log(a) - d' against log(b) does not reject at 1 - level for d' just inside (d' = the
midpoint to the next pairwise difference). Also the attainable minimum p 2 / C(n_a + n_b, n_a).

Regenerate (a few seconds)::

    .venv/bin/python tests/vectors/make_vectors_verdict.py > tests/vectors/verdict_vectors.json
"""

from __future__ import annotations

import json
import math

import numpy as np
import scipy
from scipy import stats


def inverted_interval(x: np.ndarray, y: np.ndarray, level: float, method: str) -> list[float]:
    d = np.unique(np.subtract.outer(x, y).ravel())
    probes = np.r_[d[0] - 1.0, (d[:-1] + d[1:]) / 2, d[-1] + 1.0]  # between the jumps
    accepted = []
    for i, t in enumerate(probes):
        p = stats.mannwhitneyu(x - t, y, alternative="two-sided", method=method,
                               use_continuity=True).pvalue
        if p >= 1 - level:
            accepted.append(i)
    lo, hi = min(accepted), max(accepted)
    # probe i lies between d[i-1] and d[i]: the accepted set runs from d[lo-1] to d[hi]
    return [float(d[lo - 1]), float(d[hi])]


def main() -> None:
    rng = np.random.default_rng(20261126)
    cases = []
    for name, n_a, n_b, shift, level in (("small", 5, 5, 1.5, 0.95), ("mid", 20, 25, 1.03, 0.95),
                                         ("holm", 12, 12, 1.1, 0.975), ("large", 60, 60, 1.02,
                                                                         0.95)):
        a = np.round(1e6 * rng.lognormal(0, 0.05, n_a) * shift, 3)
        b = np.round(1e6 * rng.lognormal(0, 0.05, n_b), 3)
        x, y = np.log(a), np.log(b)
        method = "exact" if max(n_a, n_b) < 50 else "asymptotic"
        p = stats.mannwhitneyu(a, b, alternative="two-sided", method=method,
                               use_continuity=True).pvalue
        est = float(np.median(np.subtract.outer(x, y)))
        low, high = inverted_interval(x, y, level, method)
        cases.append({"name": name, "a": a.tolist(), "b": b.tolist(), "level": level,
                      "method": method, "p_value": float(p), "log_ratio": est,
                      "log_low": low, "log_high": high,
                      "attainable_p": 2 / math.comb(n_a + n_b, n_a)})
    print(json.dumps({"generator": "tests/vectors/make_vectors_verdict.py",
                      "scipy": scipy.__version__, "numpy": np.__version__, "cases": cases},
                     indent=1))


if __name__ == "__main__":
    main()
