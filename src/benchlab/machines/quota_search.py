"""The quota search of a CPU-quota calibration (the algorithm is described in
:mod:`benchlab.machines.calibrate`): a measured :class:`Trial` per quota, the aggregate ratio
and its interval, and :func:`search_quota`, a safeguarded, noise-aware bracketing search that
only needs a ``measure(quota_us, repeat, purpose) -> Trial`` function (so it is tested with a
simulated machine as well as with stress-ng).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from benchlab.errors import UserError
from benchlab.stats.distributions import t as student_t

MIN_QUOTA_US = 1000  # the kernel's smallest CFS quota


@dataclass
class Trial:
    """One measured quota.

    Attributes:
        quota_us: CPU quota, us per ``period_us`` (== period for the unthrottled first trial).
        ratio: aggregate speedup over the base (geometric mean over methods), dimensionless.
        ci: 95% interval of ``ratio`` (from the per-round aggregates).
        per_method: method -> speedup over the base.
        repeat: rounds measured.
        elapsed_s: time the trial took, s.
        purpose: why it was measured (unthrottled, model, secant, repeat, confirm).
        throttled_fraction: share of CFS periods in which the quota stopped the runs.
        cpu_share: CPU time / wall time of the runs (median), fraction of one CPU: what the
            runs actually got, which other processes can push below the quota.
    """

    quota_us: int
    ratio: float
    ci: tuple[float, float]
    per_method: dict[str, float]
    repeat: int
    elapsed_s: float
    purpose: str
    throttled_fraction: float | None = None
    cpu_share: float | None = None

    @property
    def contains_one(self) -> bool:
        return self.ci[0] <= 1.0 <= self.ci[1]

    @property
    def rel_halfwidth(self) -> float:
        """Half-width of the interval relative to the ratio (log scale), dimensionless."""
        lo, hi = self.ci
        return (math.log(hi) - math.log(lo)) / 2 if lo > 0 and hi > 0 else math.inf

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ci"] = list(self.ci)
        return d


def aggregate(speedups: Sequence[float]) -> float:
    """Geometric mean of speedups (dimensionless)."""
    arr = np.asarray(speedups, dtype=float)
    return float(np.exp(np.mean(np.log(arr))))


def ratio_interval(log_speedups: Sequence[Sequence[float]], level: float = 0.95) -> tuple[float, float]:
    """Interval of the aggregate ratio from per-method, per-round log speedups.

    The noise is the within-method spread across rounds, pooled over methods (so it includes
    the machine's drift between rounds); the aggregate's standard error is
    ``sqrt(sum_m s^2 / n_m) / M`` with a t quantile on ``sum(n_m - 1)`` degrees of freedom. Correlation between methods within a round is not modelled: rounds are
    shuffled so drift mostly shows up as within-method spread.
    """
    groups = [np.asarray(g, dtype=float) for g in log_speedups if len(g)]
    center = float(np.mean([g.mean() for g in groups]))
    df = sum(g.size - 1 for g in groups)
    if df < 1:
        return (math.exp(center), math.exp(center))
    s2 = sum(float(((g - g.mean()) ** 2).sum()) for g in groups) / df
    se = math.sqrt(sum(s2 / g.size for g in groups)) / len(groups)
    half = float(student_t.ppf(0.5 + level / 2, df)) * se
    return (math.exp(center - half), math.exp(center + half))


Measure = Callable[[int, int, str], Trial]


def _loglog_root(points: Sequence[tuple[int, float]]) -> float | None:
    """Quota where a least-squares line log r = a + b log q crosses r = 1 (None if b <= 0)."""
    if len(points) < 2:
        return None
    q = np.log([p[0] for p in points])
    r = np.log([p[1] for p in points])
    if np.ptp(q) == 0:
        return None
    b, a = np.polyfit(q, r, 1)
    if b <= 0:
        return None
    return float(math.exp(-a / b))


def _pooled_root(trials: Sequence[Trial], period_us: int, spread: float = 1.5) -> float | None:
    """The quota where r = 1 under the proportional model, pooled over trials, us.

    Where the quota binds, the rate is proportional to it, so each such trial estimates the
    answer as q / r(q). The estimates are combined as a geometric mean weighted by the trial's
    rounds, over the binding throttled trials within a factor ``spread`` of the first pooled
    value (far-away trials are where the model bends). Pooling averages the machine's drift
    between trials, which on a shared machine is larger than the noise within one trial.
    """
    pts = [t for t in trials if t.quota_us < period_us and _binding(t, period_us) and t.ratio > 0]
    if not pts:
        return None

    def pool(items: Sequence[Trial]) -> float:
        w = np.array([t.repeat for t in items], dtype=float)
        logs = np.array([math.log(t.quota_us / t.ratio) for t in items])
        return float(math.exp(np.sum(w * logs) / np.sum(w)))

    first = pool(pts)
    near = [t for t in pts if first / spread <= t.quota_us <= first * spread] or pts
    return pool(near)


def _binding(trial: Trial, period_us: int) -> bool:
    """Whether the quota, not other processes, limited the trial's CPU share."""
    return trial.cpu_share is None or trial.cpu_share * period_us >= 0.8 * trial.quota_us


def _effective_quota(trial: Trial, period_us: int) -> float:
    """The quota the trial effectively ran at, us: its quota when that bound it, else the CPU
    share it got (other processes took the rest) times the period."""
    if _binding(trial, period_us):
        return float(trial.quota_us)
    return trial.cpu_share * period_us


def _next_quota(lo: Trial | None, hi: Trial | None, trials: list[Trial], period_us: int,
                min_quota_us: int) -> tuple[float, str, str | None]:
    """The next quota to try (us) and why ("model" or "secant"), or why the search ends (the
    third item, then the first two mean nothing). ``lo``/``hi``: the bracket's trials below and
    above the target ratio (None: not found yet)."""
    if lo is None:
        # Proportional model from the lowest quota measured above the target ratio. Its
        # speed is proportional to the CPU share it actually got, which on a busy machine
        # is less than the quota (other processes take the rest): scale that share.
        q_next = _effective_quota(hi, period_us) / hi.ratio
        if q_next <= min_quota_us and hi.quota_us <= min_quota_us:
            return q_next, "model", "minimum quota still faster than the base"
        return q_next, "model", None
    if hi is None:
        return _effective_quota(lo, period_us) / lo.ratio, "model", None
    width = hi.quota_us - lo.quota_us
    if width <= max(1, 2 * 0.001 * hi.quota_us):
        return 0.0, "secant", "bracket closed"
    # Pooled proportional estimate over all binding trials; a log-log secant between
    # the bracket ends when no trial has bound yet.
    q_model = _pooled_root(trials, period_us) or _loglog_root(
        [(_effective_quota(lo, period_us), lo.ratio), (_effective_quota(hi, period_us), hi.ratio)])
    q_next = q_model if q_model is not None else (lo.quota_us + hi.quota_us) / 2
    guard = 0.1 * width
    q_next = min(max(q_next, lo.quota_us + guard), hi.quota_us - guard)
    # Stop when the bracket is within the quota uncertainty implied by the noise.
    if width <= max(lo.rel_halfwidth, hi.rel_halfwidth) * q_next:
        return q_next, "secant", "bracket within noise"
    return q_next, "secant", None


def search_quota(measure: Measure, *, period_us: int, repeat: int = 3, max_trials: int = 15,
                 min_quota_us: int = MIN_QUOTA_US, observer: Callable[[Trial, dict], None] | None = None
                 ) -> tuple[int, list[Trial], str]:
    """Find the quota whose aggregate ratio is 1 (see the module docstring).

    Args:
        measure: ``measure(quota_us, repeat, purpose) -> Trial``.
        period_us: CFS period, us; the first trial uses quota = period (one full CPU).
        repeat: rounds per trial (>= 2 for an interval).
        max_trials: most trials, the first included.
        min_quota_us: lowest quota to try, us.
        observer: called with each trial and the bracket {"lo": us|None, "hi": us|None}.

    Returns:
        (quota in us, trials in order, how the search ended).

    Raises:
        UserError: this machine is slower than the base even with a full CPU.
    """
    notify = observer or (lambda t, b: None)
    trials: list[Trial] = []
    lo: Trial | None = None
    hi: Trial | None = None

    def run(q: float, reps: int, purpose: str) -> Trial:
        nonlocal lo, hi
        q = int(round(min(max(q, min_quota_us), period_us)))
        t = measure(q, reps, purpose)
        trials.append(t)
        if t.ratio >= 1.0:
            if hi is None or q <= hi.quota_us:
                hi = t
        else:
            if lo is None or q >= lo.quota_us:
                lo = t
        notify(t, {"lo": lo.quota_us if lo else None, "hi": hi.quota_us if hi else None})
        return t

    first = run(period_us, repeat, "unthrottled")
    if first.ci[1] < 1.0:
        raise UserError(f"this machine is slower than the base even with a full CPU (aggregate ratio "
                        f"{first.ratio:.3f}); no quota can match it: profile the base under a quota "
                        f"instead (benchlab profile --cpu-quota) and calibrate against that")
    if first.contains_one:
        return period_us, trials, "unthrottled already matches the base within noise"

    matched = 0
    last = first
    ended = "max trials"
    while len(trials) < max_trials:
        q_next, purpose, stop = _next_quota(lo, hi, trials, period_us, min_quota_us)
        if stop is not None:
            ended = stop
            break
        if last.contains_one and last.purpose != "repeat":
            t = run(last.quota_us, 2 * repeat, "repeat")
        else:
            t = run(q_next, repeat, purpose)
        if t.contains_one:
            matched += 1
            if matched >= 2:
                ended = "matched within noise twice"
                break
        last = t
    # Final estimate: pool every trial where the quota bound, near the answer.
    root = _pooled_root(trials, period_us)
    if root is None:
        best = min(trials, key=lambda t: abs(math.log(t.ratio)))
        root = best.quota_us
    return int(round(min(max(root, min_quota_us), period_us))), trials, ended
