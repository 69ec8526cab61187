"""The numbers of a run's summary (median, MAD, mean, sd, min, max, p95, p99) from a list of
floats, without numpy: bit for bit what :func:`benchlab.stats.descriptive.summarize` computes
with numpy (the same float operations in the same order: numpy's pairwise summation, its
``_lerp`` of R's type 7 quantile, the mean of the one or two middle values).

Why: ``benchlab run`` of one command prints only these numbers, and importing numpy costs more
CPU (~60-150 ms) than a hundred runs of ``/bin/true``. Work is proportional to the data: one
sort, a few passes.
"""

from __future__ import annotations

import math
from typing import Sequence

#: numpy's block of unrolled pairwise summation (``PW_BLOCKSIZE``).
_BLOCK = 128


def pairwise_sum(values: Sequence[float], start: int = 0, stop: int | None = None) -> float:
    """``np.add.reduce`` of a contiguous float64 array, bit for bit: sums of fewer than 8
    values in order, blocks of up to 128 in eight interleaved partial sums, longer runs split
    in two halves (the first a multiple of 8 long)."""
    stop = len(values) if stop is None else stop
    n = stop - start
    if n < 8:
        total = 0.0
        for i in range(start, stop):
            total += values[i]
        return total
    if n <= _BLOCK:
        r = list(values[start:start + 8])
        i = start + 8
        end = stop - (n % 8)
        while i < end:
            for j in range(8):
                r[j] += values[i + j]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < stop:
            total += values[i]
            i += 1
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values, start, start + half) + pairwise_sum(values, start + half, stop)


def middle(ordered: Sequence[float]) -> float:
    """The median of values sorted ascending, as ``np.median``: the mean of the middle one or
    two (NaN for none)."""
    n = len(ordered)
    if n == 0:
        return math.nan
    half = n // 2
    if n % 2:
        return ordered[half] / 1
    return (ordered[half - 1] + ordered[half]) / 2


def linear_percentile(ordered: Sequence[float], percent: float) -> float:
    """R's type 7 percentile of values sorted ascending, as ``np.percentile(method="linear")``
    computes it (virtual index ``(n - 1) * (percent / 100)``, numpy's ``_lerp``)."""
    n = len(ordered)
    virtual = (n - 1) * (percent / 100)
    if virtual >= n - 1:
        return ordered[-1] - (ordered[-1] - ordered[-1]) * (1 - (virtual + 1))
    below = math.floor(virtual)
    gamma = virtual - below
    a, b = ordered[below], ordered[below + 1]
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def summary_numbers(values: Sequence[float]) -> dict[str, float | int | None]:
    """n, median, mad, mean, sd, min, max, p95, p99 of the finite ``values`` (any unit), as the
    run's summary prints them: with fewer than 3 values no percentiles (None), and no sd with
    one; an empty list gives n = 0 only."""
    vals = [float(v) for v in values if math.isfinite(v)]
    n = len(vals)
    if n == 0:
        return {"n": 0}
    ordered = sorted(vals)
    med = middle(ordered)
    mad = middle(sorted(abs(v - med) for v in vals))
    mean = pairwise_sum(vals) / n
    sd = None
    if n > 1:  # on values scaled by a power of two (exact), as numpy's path: near 1e300
        top = max(abs(v) for v in vals)  # the squares would overflow to inf
        e = math.frexp(top)[1] if top > 0 else 0
        scaled = [math.ldexp(v, -e) for v in vals]
        centre = pairwise_sum(scaled) / n
        squares = [(v - centre) * (v - centre) for v in scaled]
        sd = math.ldexp(math.sqrt(pairwise_sum(squares) / (n - 1)), e)
    out: dict[str, float | int | None] = {
        "n": n, "median": med, "mad": mad, "mean": mean, "sd": sd,
        "min": ordered[0], "max": ordered[-1], "p95": None, "p99": None}
    if n >= 3:
        out["p95"] = linear_percentile(ordered, 95.0)
        out["p99"] = linear_percentile(ordered, 99.0)
    return out
