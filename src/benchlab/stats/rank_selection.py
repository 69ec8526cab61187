"""Order statistics of the n*m pairwise differences x_i - y_j without materialising them
(Floyd-Rivest selection with per-row binary-search counting), for the Hodges-Lehmann estimate
and interval. The method is described in :mod:`benchlab.stats.rank`'s docstring.

Long because: the rounds of the selection, the implicit matrix of differences whose boundaries
they narrow, and the memory that keeps a pair's first-round boundaries for its next selection
share those boundary arrays and their counts."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from benchlab.errors import UserError

# Few enough remaining candidates to materialise them (values, 8 bytes each, plus indices).
_MATERIALISE_LIMIT = 1_500_000
# Sampled candidates per selection round; the bracket keeps about 2*_MARGIN*sqrt(p(1-p)/s).
_ROUND_SAMPLE = 200_000
_MARGIN = 3.5
# Integer samples are looked up in a count table of 4-byte entries, one per integer of the
# second sample's range, when that range is at most this many times their total size: the table
# then takes at most twice the samples' memory, and building it (~3 ns an entry) costs less than
# the binary searches it saves (~30 ns a row, a dozen passes). Wider ranges are searched.
_TABLE_ENTRIES_PER_VALUE = 8


class _DifferenceMatrix:
    """The implicit n x m matrix D[i, j] = x_i - y_j with x, y sorted ascending.

    Row i is non-increasing in j, so {j : D[i, j] <= t} is a suffix [first_le(t)_i, m).
    """

    def __init__(self, x_sorted: np.ndarray, y_sorted: np.ndarray):
        self.x = x_sorted
        self.y = y_sorted
        self.n = x_sorted.size
        self.m = y_sorted.size
        # When every value is an integer of magnitude < 2**52, x_i - y_j and x_i - t are exact,
        # so the searchsorted boundary is the floating-point boundary and needs no repair.
        both = np.concatenate([x_sorted[[0, -1]], y_sorted[[0, -1]]])
        self.exact_arithmetic = bool(
            np.all(np.abs(both) < 2.0**51)
            and np.all(np.floor(x_sorted) == x_sorted)
            and np.all(np.floor(y_sorted) == y_sorted)
        )
        # Sterbenz: a - b is exact when b/2 <= a <= 2b, so every x_i - y_j is exact when all
        # values lie on one side of 0 within a factor 2 of each other (log-timings, ~10-25).
        # Then a search for fl(x_i - t), nudged by its rounding error, needs no repair.
        lo, hi = float(both.min()), float(both.max())
        self.smallest_magnitude = float(min(abs(x_sorted[0]), abs(x_sorted[-1]))) if (
            x_sorted[0] * x_sorted[-1] > 0) else 0.0
        self.exact_differences = self.exact_arithmetic or (0 < lo and hi <= 2 * lo) or (
            hi < 0 and 2 * hi <= lo)
        self._below: np.ndarray | None = None
        # Boundaries counted in a first round, by count (see :class:`_PairMemory`).
        self.fences: dict[int, np.ndarray] = {}
        self._y_padded: np.ndarray | None = None
        if self.exact_arithmetic:
            self._build_count_table()

    def _build_count_table(self) -> None:
        # Integers (timings in ns): below[v] = #{j : y_j - y_0 < v}, so a row's boundary is one
        # lookup instead of a binary search over y (about 10x less per pass, which dominates
        # the selection), for an affordable table (_TABLE_ENTRIES_PER_VALUE).
        span = int(self.y[-1] - self.y[0])
        if span + 2 > _TABLE_ENTRIES_PER_VALUE * (self.n + self.m) or self.m >= 2**31:
            return
        below = np.zeros(span + 2, dtype=np.int32)
        np.cumsum(np.bincount((self.y - self.y[0]).astype(np.int64), minlength=span + 1),
                  out=below[1:])
        self._below = below
        self._x_from_y0 = (self.x - self.y[0]).astype(np.int64)

    def _looked_up(self, offset: int) -> np.ndarray:
        """Per row, #{j : y_j - y_0 < x_i - y_0 - offset} from the count table."""
        # mode="clip": rows whose key falls before y_0 count 0, after the last value m
        return np.take(self._below, self._x_from_y0 - offset, mode="clip")

    def first_le(self, t: float) -> np.ndarray:
        """Per row, the first column j with fl(x_i - y_j) <= t (m if none)."""
        if self._below is not None:  # integers: #{y_j < x_i - t} = #{y_j < x_i - floor(t)}
            return self._looked_up(math.floor(t))
        if self.exact_differences:  # #{y_j < x_i - t}, the real x_i - t
            return np.searchsorted(self.y, self._exact_keys(t, up=True), side="left")
        idx = np.searchsorted(self.y, self.x - t, side="left")
        self._repair(idx, t, strict=False)
        return idx

    def first_lt(self, t: float) -> np.ndarray:
        """Per row, the first column j with fl(x_i - y_j) < t (m if none)."""
        if self._below is not None:  # integers: #{y_j <= x_i - t} = #{y_j < x_i - ceil(t) + 1}
            return self._looked_up(math.ceil(t) - 1)
        if self.exact_differences:  # #{y_j <= x_i - t}, the real x_i - t
            return np.searchsorted(self.y, self._exact_keys(t, up=False), side="right")
        idx = np.searchsorted(self.y, self.x - t, side="right")
        self._repair(idx, t, strict=True)
        return idx

    def _exact_keys(self, t: float, *, up: bool) -> np.ndarray:
        """fl(x_i - t), moved one float up (``up``) where it fell below the real x_i - t, or
        down where it fell above: no float lies between a rounded value and the real one, so
        a search of y for these keys compares y with the real x_i - t (with the differences
        exact, what brute force sorts). Streaming operations only: no gather from y."""
        x = self.x
        keys = x - t
        if abs(t) <= self.smallest_magnitude:
            # Fast2Sum (|x_i| >= |t|): x_i - keys is exact, so the rounding error
            # (x_i - keys) - t has the sign of x_i - keys against t (one operation fewer).
            exact_part = x - keys
            moved = exact_part > t if up else exact_part < t
        else:  # TwoSum, for any t
            back = keys - x
            error = (-t - back) + (x - (keys - back))
            moved = error > 0 if up else error < 0
        np.nextafter(keys, np.inf if up else -np.inf, out=keys, where=moved)
        return keys

    def _repair(self, idx: np.ndarray, t: float, *, strict: bool) -> None:
        # fl(x_i - y_j) <= t and y_j >= fl(x_i - t) can disagree within an ulp; the computed
        # difference is what brute force sorts, so move each boundary until it agrees with it.
        # The first check is one pass over whole arrays; rows that need a move are rare.
        # y padded with -inf before and +inf after: padded[j] is y[j - 1], and a boundary at
        # either edge never moves past it (x - (-inf) is never inside, x - inf always is).
        if self._y_padded is None:
            self._y_padded = np.concatenate([[-np.inf], self.y, [np.inf]])
        x, padded = self.x, self._y_padded
        inside = np.less if strict else np.less_equal
        rows = np.flatnonzero(inside(x - padded[idx], t))  # column idx - 1 is inside too
        while rows.size:
            idx[rows] -= 1
            rows = rows[inside(x[rows] - padded[idx[rows]], t)]
        rows = np.flatnonzero(~inside(x - padded[idx + 1], t))  # column idx is not inside
        while rows.size:
            idx[rows] += 1
            rows = rows[~inside(x[rows] - padded[idx[rows] + 1], t)]

    def count(self, first: np.ndarray) -> int:
        return int(self.m * self.n - int(first.sum(dtype=np.int64)))

    def values(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """All D[i, j] with start_i <= j < stop_i, in no particular order."""
        widths = (stop - start).astype(np.int64, copy=False)
        # Entry k of row i's run (laid end to end from offset_i) is column start_i + k - offset_i:
        # each run's positions shifted once, and x repeated, not gathered (~25 % less time).
        cols = np.arange(int(widths.sum()), dtype=np.int64)
        cols += np.repeat(start - (np.cumsum(widths) - widths), widths)
        return np.repeat(self.x, widths) - self.y[cols]

    def sample(
        self, start: np.ndarray, stop: np.ndarray, size: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``size`` values drawn uniformly (with replacement) among D[i, j], start_i <= j < stop_i."""
        if int(start.max()) == 0 and int(stop.min()) == self.m:
            # The whole matrix (first round): independent uniform rows and columns.
            return (self.x[rng.integers(0, self.n, size=size)]
                    - self.y[rng.integers(0, self.m, size=size)])
        widths = (stop - start).astype(np.int64, copy=False)
        cum = np.cumsum(widths)
        # Sorted picks make the lookups below cache-friendly (3x faster than random order).
        picks = np.sort(rng.integers(0, int(cum[-1]), size=size))
        rows = np.searchsorted(cum, picks, side="right")
        cols = start[rows] + (picks - (cum[rows] - widths[rows]))
        return self.x[rows] - self.y[cols]


def _select(
    mat: _DifferenceMatrix,
    ranks: Sequence[int],
    lo_first: np.ndarray,
    hi_first: np.ndarray,
    cnt_lo: int,
    cnt_hi: int,
    rng: np.random.Generator,
    sample: np.ndarray | None = None,
) -> dict[int, float]:
    """Values of the given 1-based ranks, all of which lie in (lo, hi].

    ``lo_first``/``hi_first`` are first_le boundaries of lo and hi, ``cnt_lo < min(ranks)`` and
    ``max(ranks) <= cnt_hi`` are the counts of entries <= lo and <= hi. ``sample``: values
    drawn uniformly from that bracket already, for the first round's pivots.
    """
    ranks = sorted(set(ranks))
    while True:
        active = cnt_hi - cnt_lo
        if active <= _MATERIALISE_LIMIT:
            vals = mat.values(hi_first, lo_first)
            local = [r - cnt_lo - 1 for r in ranks]
            part = np.partition(vals, local)
            return {r: float(part[i]) for r, i in zip(ranks, local)}
        # Ranks far apart relative to the bracket (the interval bounds and the median after the
        # first round) are selected separately; neighbours (the two middle ranks) stay together.
        # Split as soon as the gap exceeds the bracket one more joint round would leave
        # (about 2 * _MARGIN / sqrt(_ROUND_SAMPLE) of the entries, 1/64 of them).
        clusters = _clusters(ranks, active // 64)
        if len(clusters) > 1:
            # One sample of the common bracket places every cluster's first pivots: drawn per
            # cluster, the samples would come from the same entries (~17 ms each at 500k rows).
            shared = mat.sample(hi_first, lo_first, _ROUND_SAMPLE, rng)
            out: dict[int, float] = {}
            for cluster in clusters:
                out.update(_select(mat, cluster, lo_first, hi_first, cnt_lo, cnt_hi, rng,
                                   shared))
            return out
        if sample is None:
            # Enough samples for the next bracket to be small enough to materialise, if that is
            # cheaper than a full round (the bracket keeps ~2 * _MARGIN / sqrt(s) of them).
            wanted = int((2.5 * _MARGIN * active / _MATERIALISE_LIMIT) ** 2)
            sample = mat.sample(hi_first, lo_first, max(1000, min(_ROUND_SAMPLE, wanted)), rng)
        s = sample.size
        p_lo = (ranks[0] - cnt_lo) / active
        p_hi = (ranks[-1] - cnt_lo) / active
        i_lo = int(math.floor(p_lo * s - _MARGIN * math.sqrt(s * p_lo * (1 - p_lo)) - 1))
        i_hi = int(math.ceil(p_hi * s + _MARGIN * math.sqrt(s * p_hi * (1 - p_hi)) + 1))
        i_mid = min(max(int(p_lo * s), 0), s - 1)
        # Only three order statistics of the sample are needed: partition, not sort.
        sample = np.partition(sample, sorted({min(max(i, 0), s - 1) for i in (i_lo, i_mid, i_hi)}))
        in_block = sample[min(max(i_lo, 0), s - 1)] == sample[i_mid] or (
            sample[i_mid] == sample[min(max(i_hi, 0), s - 1)])
        if in_block:
            # The target sits in a run of equal sampled values (integer timings): a block of
            # equal differences spanning the margin. Resolve it directly (two counts) instead
            # of bracketing it with pivots that cannot split it.
            return _resolve_block(mat, ranks, float(sample[i_mid]), lo_first, hi_first,
                                  cnt_lo, cnt_hi, rng)
        t_lo = float(sample[i_lo]) if i_lo >= 0 else None
        t_hi = float(sample[i_hi]) if i_hi < s else None
        (new_lo_first, new_hi_first, new_cnt_lo, new_cnt_hi, lo_ok, hi_ok) = _narrowed(
            mat, ranks, t_lo, t_hi, lo_first, hi_first, cnt_lo, cnt_hi)
        if cnt_lo == 0 and cnt_hi == mat.n * mat.m:  # the first round's, worth keeping
            mat.fences.update({new_cnt_lo: new_lo_first, new_cnt_hi: new_hi_first})
        if lo_ok and hi_ok and t_lo == t_hi:
            return {r: t_lo for r in ranks}
        if new_cnt_hi - new_cnt_lo > active // 2:
            # No progress: the wanted ranks sit inside a huge block of equal differences
            # (heavily tied data), or the pivots missed. Resolve the ranks that fall in the block
            # of the sampled value at the target, then select the rest on either side of it;
            # both sides exclude that block, so this terminates.
            return _resolve_block(mat, ranks, float(sample[i_mid]), lo_first, hi_first,
                                  cnt_lo, cnt_hi, rng)
        lo_first, hi_first, cnt_lo, cnt_hi = new_lo_first, new_hi_first, new_cnt_lo, new_cnt_hi
        sample = None


def _clusters(ranks: list[int], gap: int) -> list[list[int]]:
    """The sorted ``ranks`` in runs whose neighbours are at most ``gap`` apart."""
    clusters: list[list[int]] = [[ranks[0]]]
    for r in ranks[1:]:
        if r - clusters[-1][-1] > gap:
            clusters.append([r])
        else:
            clusters[-1].append(r)
    return clusters


def _narrowed(mat: _DifferenceMatrix, ranks: list[int], t_lo: float | None, t_hi: float | None,
              lo_first: np.ndarray, hi_first: np.ndarray, cnt_lo: int, cnt_hi: int) -> tuple:
    """The bracket (lo_first, hi_first, cnt_lo, cnt_hi) narrowed by the pivots ``t_lo`` and
    ``t_hi`` (None: that pivot fell outside the sample), and whether each pivot bounded the
    ranks from its side (lo_ok, hi_ok).

    The lower pivot bounds the entries < t_lo and the upper one the entries <= t_hi, so the
    bracket keeps both pivots' values: with integer timings most differences come in blocks of
    equal values, and a bracket [t, t] resolves every rank in it at once.
    """
    new_lo_first, new_hi_first, new_cnt_lo, new_cnt_hi = lo_first, hi_first, cnt_lo, cnt_hi
    lo_ok = hi_ok = False
    if t_lo is not None:
        first = mat.first_lt(t_lo)
        c = mat.count(first)
        if c < ranks[0]:
            new_lo_first, new_cnt_lo, lo_ok = first, c, True
        elif c >= ranks[-1]:
            new_hi_first, new_cnt_hi = first, c
    if t_hi is not None and new_cnt_hi == cnt_hi:
        first = mat.first_le(t_hi)
        c = mat.count(first)
        if c >= ranks[-1]:
            new_hi_first, new_cnt_hi, hi_ok = first, c, True
        elif new_cnt_lo < c < ranks[0]:
            new_lo_first, new_cnt_lo = first, c
    return new_lo_first, new_hi_first, new_cnt_lo, new_cnt_hi, lo_ok, hi_ok


def _resolve_block(
    mat: _DifferenceMatrix,
    ranks: list[int],
    t: float,
    lo_first: np.ndarray,
    hi_first: np.ndarray,
    cnt_lo: int,
    cnt_hi: int,
    rng: np.random.Generator,
) -> dict[int, float]:
    """Ranks inside the block of differences equal to ``t`` (an active value) get ``t``; the
    others are selected on either side. Both sides exclude the block, so this terminates."""
    le_first = mat.first_le(t)
    lt_first = mat.first_lt(t)
    c_le, c_lt = mat.count(le_first), mat.count(lt_first)
    out = {r: t for r in ranks if c_lt < r <= c_le}
    below = [r for r in ranks if r <= c_lt]
    above = [r for r in ranks if r > c_le]
    if below:
        # lt_first bounds exactly the entries < t, i.e. <= the largest value below t.
        out.update(_select(mat, below, lo_first, lt_first, cnt_lo, c_lt, rng))
    if above:
        out.update(_select(mat, above, le_first, hi_first, c_le, cnt_hi, rng))
    return out


def pairwise_difference_quantiles(x: Any, y: Any, ranks: Sequence[int]) -> np.ndarray:
    """Exact order statistics of the n*m pairwise differences x_i - y_j, without forming them.

    Parameters
    ----------
    x, y : array_like
        Finite samples (same unit; the result is in that unit).
    ranks : sequence of int
        1-based ranks k (1 = smallest difference, n*m = largest).

    Returns
    -------
    numpy.ndarray
        ``values[i]`` is the ranks[i]-th smallest of the floating-point differences
        ``x[i] - y[j]``: exactly what sorting all n*m differences would give.

    Notes
    -----
    Expected O((n + m) log(n + m)) time and O(n + m) memory; 1M x 1M takes 0.3 s of CPU for
    integers (a table lookup per row and pass), 0.8 s otherwise (a binary search).
    The pivots are drawn from a fixed-seed generator: results never depend on it, only the
    running time could.
    """
    xs = np.sort(np.asarray(x, dtype=np.float64).reshape(-1))
    ys = np.sort(np.asarray(y, dtype=np.float64).reshape(-1))
    if xs.size == 0 or ys.size == 0 or not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        raise UserError("pairwise differences need non-empty, finite samples; clean the data")
    return sorted_difference_quantiles(xs, ys, ranks)


class _PairMemory(dict):
    """Order statistics selected for one pair, by rank, and ``fences``: boundaries (first_le
    or first_lt arrays) a first round counted, by their count. A verdict first selects the
    median alone (which names the baseline), then the ends of its intervals, which lie within a
    first round's bracket of the median: starting there saves a round (two passes and a sample,
    ~40 ms at 500k rows)."""

    def __init__(self) -> None:
        super().__init__()
        self.fences: dict[int, np.ndarray] = {}


# Order statistics already selected, per pair of sorted samples (keyed by their bytes' digest):
# one verdict asks for the same Hodges-Lehmann estimate and interval several times (its p-value,
# its interval, the equivalence test), each a full selection over n*m differences. A few pairs
# are kept; a value is exact whichever call selected it.
_KNOWN: dict[bytes, _PairMemory] = {}
_KNOWN_PAIRS = 4
# Fences are kept for samples of at most this many rows (two arrays of 8 bytes a row per pair).
_FENCE_ROWS = 1_000_000


def forget_selections() -> None:
    """Forget every order statistic selected before (each selected anew, as in a new
    process): for timing a selection cold."""
    _KNOWN.clear()


def pair_digest(xs: np.ndarray, ys: np.ndarray) -> bytes:
    """A 16-byte digest of two float samples' sizes and values (~2 ms per 4 MB)."""
    import hashlib

    h = hashlib.sha256()  # with the CPU's SHA instructions, twice as fast as blake2b
    for a in (xs, ys):
        h.update(str(a.size).encode() + b":")
        h.update(np.ascontiguousarray(a, dtype=np.float64))
    return h.digest()[:16]


def selections_are_kept(total: int) -> bool:
    """Whether order statistics selected among ``total`` differences are kept for the calls
    that follow (:func:`sorted_difference_quantiles`); fewer differences are partitioned whole
    at each call instead."""
    return total > _MATERIALISE_LIMIT


def sorted_difference_quantiles(xs: np.ndarray, ys: np.ndarray, ranks: Sequence[int]) -> np.ndarray:
    """The ``ranks``-th (1-based) smallest of the pairwise differences y - x, in the unit of
    x, without forming all of them. Values selected before for the same pair (the last
    :data:`_KNOWN_PAIRS` pairs) are reused."""
    total = xs.size * ys.size
    ks = [int(k) for k in ranks]
    for k in ks:
        if not 1 <= k <= total:
            raise UserError(f"rank {k} is outside 1..{total}; pass ranks of existing differences")
    if total <= _MATERIALISE_LIMIT:
        return _selected(xs, ys, ks)
    key = pair_digest(xs, ys)
    known = _KNOWN.pop(key, None) or _PairMemory()
    missing = sorted({k for k in ks if k not in known})
    if missing:
        known.update(zip(missing, _selected(xs, ys, missing, fences=known.fences).tolist()))
    _KNOWN[key] = known  # the newest pair last; the oldest leaves first
    while len(_KNOWN) > _KNOWN_PAIRS:
        del _KNOWN[next(iter(_KNOWN))]
    return np.array([known[k] for k in ks], dtype=np.float64)


def _selected(xs: np.ndarray, ys: np.ndarray, ks: list[int],
              fences: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """The ranks ``ks`` of the differences of the sorted samples, by selection, starting from
    the tightest of ``fences`` around them (:class:`_PairMemory`), to which the first round's
    boundaries are added."""
    total = xs.size * ys.size
    if total <= _MATERIALISE_LIMIT:
        # What _select's first step does for so few differences, without building the matrix
        # and the pivot generator (~60 us, most of a 20 x 20 Hodges-Lehmann): the same
        # differences, partitioned, so the same values bit for bit.
        local = sorted({k - 1 for k in ks})
        part = np.partition(np.subtract.outer(xs, ys).ravel(), local)
        return np.array([part[k - 1] for k in ks], dtype=np.float64)
    mat = _DifferenceMatrix(xs, ys)
    rng = np.random.default_rng(0x4C)
    fences = {} if fences is None else fences
    cnt_lo = max((c for c in fences if c < min(ks)), default=0)
    cnt_hi = min((c for c in fences if c >= max(ks)), default=total)
    lo_first = fences[cnt_lo] if cnt_lo else np.full(xs.size, ys.size, dtype=np.int64)
    hi_first = fences[cnt_hi] if cnt_hi < total else np.zeros(xs.size, dtype=np.int64)
    found = _select(mat, ks, lo_first, hi_first, cnt_lo, cnt_hi, rng)
    if xs.size <= _FENCE_ROWS:
        fences.update((c, f) for c, f in mat.fences.items() if 0 < c < total)
    return np.array([found[k] for k in ks], dtype=np.float64)
