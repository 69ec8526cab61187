"""Reference vectors of the verdict's evidence of dependence and of its widened rank test,
computed with scipy by a route independent of benchlab's (tests/stats/test_verdict_widened.py
reads them).

* ``thresholds``: the lag-1 autocorrelation above which a series of n runs counts as evidence
  at a one-sided level: under independence the lag-1 estimate has mean -1/n and standard
  deviation (n - 2) / (n sqrt(n - 1)) (Moran 1948), so the threshold is
  scipy.stats.norm.isf(level) times that, minus 1/n.
* ``widened``: pairs of series (drawn here, seeded, stored with the vectors) whose values
  overlap; Mann-Whitney's two-sided p from scipy.stats.mannwhitneyu as R's wilcox.test computes
  it (exact below 50 runs each without ties, else normal with tie and continuity corrections),
  and the widened p at each inflation: the p's normal z divided by sqrt(inflation),
  2 norm.sf(norm.isf(p / 2) / sqrt(inflation)).

Regenerate (a second)::

    .venv/bin/python tests/vectors/make_vectors_widened.py > tests/vectors/widened_vectors.json
"""

from __future__ import annotations

import json
import math

import numpy as np
import scipy
from scipy import stats


def wilcox_p(a: np.ndarray, b: np.ndarray) -> float:
    """R's wilcox.test(a, b)$p.value through scipy."""
    ties = np.unique(np.r_[a, b]).size < a.size + b.size
    method = "exact" if a.size < 50 and b.size < 50 and not ties else "asymptotic"
    return float(stats.mannwhitneyu(a, b, alternative="two-sided", method=method,
                                    use_continuity=True).pvalue)


def main() -> None:
    thresholds = [{"n": n, "level": level,
                   "r1": float(stats.norm.isf(level) * (n - 2) / (n * math.sqrt(n - 1)) - 1 / n)}
                  for n in (10, 12, 20, 50, 200) for level in (0.2, 0.1, 0.05, 0.005)]
    rng = np.random.default_rng(20261207)
    widened = []
    for n_a, n_b, shift, grid in ((12, 12, 1.03, False), (20, 20, 1.02, False),
                                  (20, 30, 0.97, False), (50, 50, 1.01, True),
                                  (60, 60, 1.03, False)):
        a = 1e6 * rng.lognormal(0.0, 0.05, n_a) * shift
        b = 1e6 * rng.lognormal(0.0, 0.05, n_b)
        if grid:  # 50 µs-like values on a 1 µs grid: ties
            a, b = np.round(a / 20, -3), np.round(b / 20, -3)
        p = wilcox_p(a, b)
        widened.append({"a": a.tolist(), "b": b.tolist(), "p": p,
                        "widened": {str(f): float(2 * stats.norm.sf(stats.norm.isf(p / 2)
                                                                    / math.sqrt(f)))
                                    for f in (1.5, 3.0, 7.2)}})
    print(json.dumps({"generator": "tests/vectors/make_vectors_widened.py",
                      "scipy": scipy.__version__, "thresholds": thresholds,
                      "widened": widened}, indent=1))


if __name__ == "__main__":
    main()
