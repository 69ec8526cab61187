"""What the OS-features scripts (bench/seed002_thp.py, bench/seed002_test3.py) share: modes run
interleaved in rounds, ratios with bootstrap intervals, and a verdict on each of the report's
orderings.

A ratio of seconds measured on another machine does not carry over to this one (other CPUs,
another kernel, 2 shared vCPUs here); what can carry over is an **ordering** — "zero-copy is
faster than the pipe". Each ordering is judged by the 95% interval of the ratio of medians
(percentile bootstrap, each mode resampled on its own): it **holds** when the interval lies
on the report's side of 1, is **reversed** when it lies on the other side, and is
**undecided** when it contains 1 (more rounds may decide it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from benchlab.stats.bootstrap import bootstrap_ci, bootstrap_ci_2samp  # noqa: E402

RESAMPLES = 4000


def interleaved(modes: list[str], rounds: int, run_one: Callable[[str], list[float]],
                seed: int = 1) -> dict[str, list[float]]:
    """Every mode once per round, in a new seeded random order each round (a burst of load
    or a drift then falls on every mode alike, not on one block); ``run_one(mode)`` returns
    that mode's values for the round. Returns each mode's values in round order."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(rounds):
        for k in rng.permutation(len(modes)):
            out[modes[int(k)]].extend(run_one(modes[int(k)]))
    return out


def median_interval(x: list[float], seed: int = 1) -> tuple[float, float, float]:
    """(median, low, high): 95% percentile-bootstrap interval of the median (x's unit)."""
    a = np.asarray(x, dtype=float)
    if a.size < 3 or np.ptp(a) == 0:
        return float(np.median(a)), float(np.median(a)), float(np.median(a))
    ci = bootstrap_ci(a, "median", kind="percentile", n_resamples=RESAMPLES, seed=seed)
    return float(np.median(a)), float(ci.low), float(ci.high)


def ratio_interval(base: list[float], other: list[float],
                   seed: int = 1) -> tuple[float, float, float]:
    """(median(other) / median(base), low, high): 95% percentile-bootstrap interval."""
    ci = bootstrap_ci_2samp(np.asarray(base, float), np.asarray(other, float), "median_ratio",
                            kind="percentile", n_resamples=RESAMPLES, seed=seed)
    return float(ci.estimate), float(ci.low), float(ci.high)


def ordering(low: float, high: float, report_ratio: float) -> str:
    """The report's ordering (its ratio below or above 1) against this interval."""
    if low <= 1.0 <= high:
        return "undecided (interval contains 1)"
    here_below = high < 1.0
    return "holds" if here_below == (report_ratio < 1.0) else "reversed"


def ratio_line(label: str, base: list[float], other: list[float], report_ratio: float,
               seed: int = 1, claim: str | None = None) -> str:
    """One printed line: the report's ratio (or ``claim``, the expectation where the report
    published none), this machine's with its interval, the verdict."""
    est, lo, hi = ratio_interval(base, other, seed)
    shown = claim or f"report {report_ratio:6.2f}"
    return (f"  {label:34s} {shown:13s}   here {est:6.2f} [{lo:.2f}, {hi:.2f}]"
            f"   {ordering(lo, hi, report_ratio)}")
