"""Steady state of a run sequence: warm-up and level shifts by change-point detection.

Method
------
1. Robust noise scale: ``sigma = 1.4826 MAD(diff(x)) / sqrt(2)``. First
   differences remove level shifts, the MAD ignores spikes.
2. Spikes are winsorised to ``local median ± 3 sigma`` (running median over
   ``2 max(5, min_size) + 1`` values) *for detection only*, so isolated slow
   iterations cannot open a segment of their own, while a real level shift
   moves the local median and survives (outliers are the job of
   ``benchlab.stats.outliers``).
3. PELT [1]_ (own vectorised implementation, ``pelt_l2``; checked against
   ``ruptures`` [2]_ in the tests) with the L2 cost (change in mean) and a
   BIC-like penalty ``pen = 2 sigma^2 ln(n)`` per change (each change adds a
   location and a level, ``ln n`` each in -2 log-likelihood units, times
   sigma^2 because the L2 cost is an unscaled sum of squares) [3]_.
   ``min_size`` (default ``max(5, n // 100)``) is the shortest segment. Runs
   longer than 2000 are first reduced to the medians of consecutive blocks of
   ``jump = ceil(n / 2000)`` values (sigma is then that of the block
   medians), which bounds PELT's cost; change points are then multiples of
   ``jump``.
4. Classification after Barrett et al. [4]_: no change point → ``"flat"``
   (steady from 0); a change point within the last ``tail_fraction`` of the
   run → ``"no steady state"``; otherwise steady from the start of the last
   segment, ``"warmup"`` if that segment's median is lower (faster) than the
   previous segment's, ``"slowdown"`` if higher.

References
----------
.. [1] Killick, R., Fearnhead, P. and Eckley, I. A. (2012). Optimal detection
       of changepoints with a linear computational cost. JASA 107, 1590-1598.
.. [2] Truong, C., Oudre, L. and Vayatis, N. (2020). Selective review of
       offline change point detection methods. Signal Processing 167.
.. [3] Yao, Y.-C. (1988). Estimating the number of change-points via
       Schwarz' criterion. Statistics & Probability Letters 6, 181-189.
.. [4] Barrett, E., Bolz-Tereick, C. F., Killick, R., Mount, S. and Tratt, L.
       (2017). Virtual machine warmup blows hot and cold. OOPSLA, Proc. ACM
       Program. Lang. 1, 52:1-52:27.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats.descriptive import MAD_NORMAL_SCALE, InvalidSampleError, as_sample

MAX_POSITIONS = 2000


@dataclass(frozen=True)
class Segment:
    """A stretch ``x[start:stop]`` with one level; median/mean in the unit of x."""

    start: int
    stop: int
    n: int
    median: float
    mean: float


@dataclass(frozen=True)
class SteadyState:
    """Result of ``detect_steady_state``.

    Attributes
    ----------
    change_points : list of int
        Indices where a new segment starts (ascending; 0 and n excluded).
    segments : list of Segment
        Consecutive segments covering the run.
    steady_from : int or None
        First index of the steady state, or None when there is none.
    classification : {"flat", "warmup", "slowdown", "no steady state"}
    warmup_end : int
        Start of the first segment after the initial run of segments with
        falling medians (0 when the first segment is not slower than the next).
    level_shifts : list of int
        Change points after the warm-up.
    sigma : float
        Robust noise scale used (unit of x).
    penalty : float
        PELT penalty (unit of x squared).
    """

    change_points: list[int]
    segments: list[Segment]
    steady_from: int | None
    classification: str
    warmup_end: int
    level_shifts: list[int]
    sigma: float
    penalty: float
    min_size: int
    jump: int
    method: str = field(default="PELT, L2 cost, pen = 2 sigma^2 ln n")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pelt_l2(signal: ArrayLike, penalty: float, min_size: int) -> list[int]:
    """Optimal partition of `signal` into mean-shift segments by PELT [1]_.

    Minimises ``sum over segments of sum (x - segment mean)^2 + penalty * changes``
    with every segment at least `min_size` long; returns the change points
    (start indices of segments 2..k). Same optimum as ``ruptures.Pelt(model="l2",
    min_size=min_size, jump=1)``; written with prefix sums and vectorised
    candidate evaluation because the generic ruptures loop costs ~1 s for n = 300.
    """
    x = np.asarray(signal, dtype=np.float64)
    x = x - x.mean()  # centring keeps the prefix-sum cost free of cancellation
    n = x.size
    c1 = np.concatenate([[0.0], np.cumsum(x)])
    c2 = np.concatenate([[0.0], np.cumsum(x * x)])

    def cost(starts: np.ndarray, end: int) -> np.ndarray:
        length = end - starts
        seg_sum = c1[end] - c1[starts]
        return (c2[end] - c2[starts]) - seg_sum * seg_sum / length

    best = np.full(n + 1, np.inf)
    best[0] = -penalty
    last = np.zeros(n + 1, dtype=np.int64)
    candidates = np.array([0], dtype=np.int64)
    for end in range(min_size, n + 1):
        newest = end - min_size
        if newest >= min_size:
            candidates = np.append(candidates, newest)
        totals = best[candidates] + cost(candidates, end) + penalty
        i = int(np.argmin(totals))
        best[end] = totals[i]
        last[end] = candidates[i]
        # PELT pruning: a start that cannot beat the optimum now never will (K = 0 for L2).
        candidates = candidates[totals - penalty <= best[end]]
    changes = []
    end = n
    while end > 0:
        end = int(last[end])
        if end > 0:
            changes.append(end)
    return sorted(changes)


def _block_medians(arr: np.ndarray, block: int) -> np.ndarray:
    full = arr.size // block
    heads = np.median(arr[: full * block].reshape(full, block), axis=1)
    if arr.size % block:
        heads = np.append(heads, np.median(arr[full * block :]))
    return heads


def robust_noise_sigma(x: ArrayLike) -> float:
    """``1.4826 * MAD(diff(x)) / sqrt(2)``: noise sd robust to shifts and spikes (unit of x)."""
    arr = as_sample(x, name="series", min_n=3)
    d = np.diff(arr)
    return float(MAD_NORMAL_SCALE * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))


def detect_steady_state(
    x: ArrayLike,
    *,
    penalty_factor: float = 2.0,
    min_size: int | None = None,
    tail_fraction: float = 0.25,
) -> SteadyState:
    """Find warm-up and level shifts in a run sequence and where it is steady.

    Parameters
    ----------
    x : array_like
        Measurements in run order (at least 10, not constant; any unit).
    penalty_factor : float
        ``pen = penalty_factor * sigma^2 * ln(n)``; 2 is the BIC-like default.
        Larger finds fewer changes.
    min_size : int or None
        Shortest segment, default ``max(5, n // 100)``.
    tail_fraction : float
        A change point in the last ``tail_fraction`` of the run means "no
        steady state" (Barrett et al. use the last 500 of 2000 iterations).

    Returns
    -------
    SteadyState
    """
    arr = as_sample(x, name="series", min_n=10, allow_constant=False)
    n = arr.size
    if not 0 < tail_fraction < 1:
        raise InvalidSampleError(f"tail_fraction={tail_fraction} must be in (0, 1)")
    size = max(5, n // 100) if min_size is None else int(min_size)
    if size < 1 or 2 * size > n:
        raise InvalidSampleError(f"min_size={size} does not fit two segments in n={n}")
    # Long runs are reduced to medians of consecutive blocks: PELT's cost grows
    # quadratically in the number of candidate positions when changes are rare,
    # and block medians are robust to spikes anyway.
    jump = max(1, math.ceil(n / MAX_POSITIONS))
    series = arr if jump == 1 else _block_medians(arr, jump)
    m = series.size
    block_size = max(2, math.ceil(size / jump))
    sigma = robust_noise_sigma(series)
    if sigma == 0:
        # More than half of the successive differences are zero (quantised timer):
        # fall back to the overall MAD, then the sd, so the penalty is not zero.
        sigma = MAD_NORMAL_SCALE * float(np.median(np.abs(series - np.median(series))))
    if sigma == 0:
        sigma = float(np.std(series, ddof=1))
    # Winsorise each value to its local median +- 3 sigma so that a lone spike cannot
    # open a segment but a genuine level shift (which moves the local median) survives.
    half = max(5, block_size)
    padded = np.pad(series, half, mode="reflect")  # "edge" copied a last spike half times
    local = np.median(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)
    signal = np.clip(series, local - 3 * sigma, local + 3 * sigma)
    # In units of sigma about the median: the L2 cost and the penalty (sigma^2 ln m) both
    # scale with sigma^2, so the change points are the same, and values near 1e300 (or 1e-300)
    # no longer overflow (underflow) sigma^2.
    signal = (signal - float(np.median(series))) / sigma
    pen = float(penalty_factor * math.log(m))
    change_points = [c * jump for c in pelt_l2(signal, pen, block_size)]
    # A level shift moves the median: a change whose two sides' medians differ by less than
    # three standard errors is a spike or a slow last run, not a shift (one slow last run was
    # reported as a level shift in 200 of 200 series).
    kept: list[int] = []
    for i, c in enumerate(change_points):
        before = arr[(kept[-1] if kept else 0):c]
        after = arr[c:(change_points[i + 1] if i + 1 < len(change_points) else n)]
        # 3 standard errors of a difference of medians (1.2533 sigma / sqrt(n) each)
        se = 1.2533 * sigma * math.sqrt(1 / before.size + 1 / after.size)
        if abs(float(np.median(after)) - float(np.median(before))) >= 3 * se:
            kept.append(c)
    change_points = kept
    bounds = [0, *change_points, n]
    segments = [
        Segment(a, b, b - a, float(np.median(arr[a:b])), float(np.mean(arr[a:b])))
        for a, b in zip(bounds[:-1], bounds[1:])
    ]
    if not change_points:
        classification, steady_from = "flat", 0
    elif change_points[-1] > (1 - tail_fraction) * n:
        classification, steady_from = "no steady state", None
    else:
        steady_from = change_points[-1]
        classification = "warmup" if segments[-1].median < segments[-2].median else "slowdown"
    # Warm-up: the initial run of segments whose medians keep falling (a ramp is cut
    # into a staircase); it ends where the descent stops.
    warmup_end = 0
    i = 0
    while i + 1 < len(segments) and segments[i + 1].median < segments[i].median:
        i += 1
    if i > 0:
        warmup_end = segments[i].start
    level_shifts = [c for c in change_points if c > warmup_end]
    return SteadyState(
        change_points=change_points, segments=segments, steady_from=steady_from,
        classification=classification, warmup_end=warmup_end, level_shifts=level_shifts,
        sigma=float(sigma), penalty=pen, min_size=size, jump=jump,
    )
