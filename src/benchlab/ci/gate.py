"""The regression gate: one decision per benchmark, and the job's exit status from all of them.

Every decision goes through :func:`decide` (the one adapter between the gate and the statistics
underneath), so the gate says what the comparison says. On the head/base ratio r of a metric
(wall time in ns, or instruction counts) with threshold t (a fraction, 0.02 for 2 %):

* **slower** (a regression, fails the job): the interval's lower end exceeds 1 + t. The interval
  is a repeated confidence interval (see below), so when the true ratio is at most 1 + t this
  is claimed with probability <= alpha / 2 however many looks were taken;
* **faster** (an improvement, reported, never failed): the interval's upper end is below 1 - t;
* **equivalent**: the whole interval lies inside [1 - t, 1 + t];
* **undecided** otherwise; it passes the job unless ``--fail-undecided``. An undecided result
  whose upper end is below 1 + t is still "no regression beyond the threshold".

Deciding on the interval against the threshold, rather than on "p < alpha and the estimate
beyond the threshold" (asv's p < 0.002 and x1.1), is what keeps false alarms rare on a noisy
machine: a difference smaller than the threshold (order effects, a 0.3 % layout shift) can be
highly significant and still never fail a 2 % gate, while a true 2 x threshold change is caught
as soon as the interval is narrow enough.

The interval: for pairs measured together (``ab``, ``bisect``), the Hodges-Lehmann estimate
of the within-pair log ratio with its signed-rank interval (:mod:`benchlab.stats.paired`); for
two independent samples (a fresh run against a stored baseline), the Hodges-Lehmann ratio with
its Mann-Whitney interval of the structured verdict (:func:`benchlab.stats.verdict_model.
verdict_model`: the same numbers ``compare`` shows, autocorrelation included; the
Verdict has no paired form, hence :mod:`benchlab.stats.paired` for pairs). Either interval is
taken at the level of the group-sequential critical value of this look (:class:`Looks`,
O'Brien-Fleming spending, as ``run --until-decided``): a look that has spent the fraction
tau_k of the budget (of the time budget in ``ab``; n_k / n_max for a budget in values) uses
|z| < c_k, where c_k spends alpha(tau_k) - alpha(tau_{k-1}) given the correlation
sqrt(n_j / n_k) of the looks' statistics, and these repeated intervals cover the true shift at
all looks together with probability >= 1 - alpha (Jennison & Turnbull 2000, ch. 9; spending on
the clock: Lan & DeMets 1989). Counts that do not vary (instruction counts of a deterministic
program, seen constant over at least 2 values a side) give the exact ratio as a zero-width
interval; one value a side never decides.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Sequence

import numpy as np

from benchlab.ci.exits import EXIT_FAILED, EXIT_PASS, EXIT_REGRESSION
from benchlab.errors import UserError

#: Default thresholds (fractions) by metric: wall time is noisy, instruction counts are not.
DEFAULT_THRESHOLDS = {"wall": 0.02, "cpu": 0.02, "instructions": 0.005}
#: The threshold of a metric the program reports itself (``--metric NAME=REGEX``): as time.
DEFAULT_REPORTED_THRESHOLD = 0.02
#: A metric's direction: a lower value is better (time, counts) or a higher one (throughput).
LOWER, HIGHER = "lower", "higher"


def default_threshold(metric: str) -> float:
    """The default threshold (fraction) of ``metric``: its own, else that of a reported one."""
    return DEFAULT_THRESHOLDS.get(metric, DEFAULT_REPORTED_THRESHOLD)
#: Overall two-sided error of the repeated intervals (one-sided false regression: alpha / 2).
DEFAULT_ALPHA = 0.01

SLOWER, FASTER, EQUIVALENT, UNDECIDED = "slower", "faster", "equivalent", "undecided"



@dataclass(frozen=True)
class GateDecision:
    """The gate's decision on one benchmark and metric.

    Attributes
    ----------
    benchmark, metric : str
        Benchmark name; ``wall`` (ns) or ``instructions`` (count).
    threshold : float
        Fraction (0.02 = 2 %) a ratio must exceed, with its whole interval, to be a regression.
    ratio, low, high : float
        head/base ratio of typical values and its interval (NaN when not computable).
    confidence : float
        Coverage of this look's interval (e.g. 0.999 early, ~0.99 at the last look).
    outcome : {"slower", "faster", "equivalent", "undecided"}
    n_base, n_head : int
        Values used.
    base_median, head_median : float
        Medians in the metric's unit (ns or count).
    reason : str
        Why, in a few words (data, not prose for the user).
    direction : {"lower", "higher"}
        Which values are better. ``ratio``, ``low``, ``high`` and the medians are always of the
        metric's own values (head/base); for "higher" (a throughput) a regression is a ratio
        whose interval lies below 1 / (1 + threshold).
    unit : str
        The metric's unit ('' when not known).
    alpha : float
        The two-sided error this decision is held to over all its looks (a false regression:
        alpha / 2): ``--alpha``, split over a benchmark's metrics or, at ``--alpha-scope
        suite``, over the job's decisions (NaN when not known).
    """

    benchmark: str
    metric: str
    threshold: float
    ratio: float
    low: float
    high: float
    confidence: float
    outcome: str
    n_base: int
    n_head: int
    base_median: float
    head_median: float
    reason: str
    direction: str = LOWER
    unit: str = ""
    alpha: float = math.nan

    @property
    def regression(self) -> bool:
        """True when a slowdown beyond the threshold was decided."""
        return self.outcome == SLOWER

    @property
    def improvement(self) -> bool:
        """True when a speed-up beyond the threshold was decided."""
        return self.outcome == FASTER

    @property
    def no_regression(self) -> bool:
        """True when the interval rules out a slowdown beyond the threshold."""
        if self.direction == HIGHER:
            return self.low > 1.0 / (1.0 + self.threshold)
        return self.high < 1.0 + self.threshold

    @property
    def decided(self) -> bool:
        """True for slower, faster and equivalent."""
        return self.outcome != UNDECIDED

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN as None) with the derived flags."""
        data = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in asdict(self).items()}
        data.update(regression=self.regression, improvement=self.improvement)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "GateDecision":
        """Rebuild from :meth:`to_dict`."""
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        for k in ("ratio", "low", "high", "base_median", "head_median", "alpha"):
            if k in fields:
                fields[k] = math.nan if fields[k] is None else float(fields[k])
        return cls(**fields)


def check_threshold(value: Any, where: str) -> float:
    """A threshold as a fraction from 0.02, "2%" or "2 %"; UserError naming ``where``."""
    text = str(value).strip()
    try:
        number = float(text.rstrip("%").strip()) / (100.0 if text.endswith("%") else 1.0)
    except ValueError:
        raise UserError(f"{where}: threshold {value!r} is not a number; write e.g. 2% or "
                        f"0.02") from None
    if isinstance(value, bool) or not math.isfinite(number) or not 0.0 < number < 1.0:
        raise UserError(f"{where}: threshold {value!r} must be above 0 and below 100 %; write "
                        f"e.g. 2% or 0.02")
    return number


class Looks:
    """The looks of one group-sequential comparison: each look's critical value |z|.

    ``alpha`` is the overall two-sided error of the repeated intervals, spent over the budget
    with O'Brien-Fleming-type spending. A look says how much of the budget is spent, either as
    its values per revision against ``max_values`` (n / n_max) or as its own fraction
    (``spent``: the share of a time budget, as ``ab`` measures until a time is up); the
    correlation of two looks is always that of their values, sqrt(n_j / n_k)
    (:func:`benchlab.stats.sequential.look_critical_value`). A look at fraction 1 (or beyond
    the budget) is the last and spends what is left.
    """

    def __init__(self, max_values: int | None = None, alpha: float = DEFAULT_ALPHA):
        self.max_values = None if max_values is None else max(int(max_values), 3)
        self.alpha = alpha
        self.fractions: list[float] = []
        self.values: list[int] = []

    @property
    def final(self) -> bool:
        """True once a look was taken at the whole budget."""
        return bool(self.fractions) and self.fractions[-1] >= 1.0

    def critical(self, n: int, spent: float | None = None) -> float | None:
        """Critical value of a look with ``n`` values per revision that has spent ``spent`` of
        the budget (a fraction; None: n / max_values). None when it is not after the last
        look (no more values, or no more of the budget spent), so no new look."""
        if spent is None:
            if self.max_values is None:
                raise UserError("a look needs the share of the budget it has spent")
            spent = n / self.max_values
        t = min(max(float(spent), 0.0), 1.0)
        if self.final or (self.fractions and (t <= self.fractions[-1] or n <= self.values[-1])):
            return None
        if t <= 0.0:
            return None
        self.fractions.append(t)
        self.values.append(int(n))
        return self.last()

    def last(self) -> float:
        """The critical value of the last look taken."""
        # the cached boundary of this look history (one integration step per new look, where
        # critical_values would redo every earlier look each time)
        from benchlab.stats.sequential import look_critical_value

        return look_critical_value(self.alpha, "obrien-fleming", tuple(self.fractions),
                                   tuple(float(v) for v in self.values))


def _usable(base: Any, head: Any, paired: bool) -> tuple[np.ndarray, np.ndarray]:
    """The positive finite values of each side; for pairs, the pairs whose both values are."""
    b = np.asarray(base, dtype=np.float64)
    h = np.asarray(head, dtype=np.float64)
    if not paired:
        return b[np.isfinite(b) & (b > 0)], h[np.isfinite(h) & (h > 0)]
    n = min(b.size, h.size)
    b, h = b[:n], h[:n]
    keep = np.isfinite(b) & (b > 0) & np.isfinite(h) & (h > 0)
    return b[keep], h[keep]


def decide(base: Any, head: Any, *, benchmark: str, metric: str, threshold: float,
           critical: float | None = None, alpha: float = DEFAULT_ALPHA,
           paired: bool = False, session_sd: float = 0.0) -> GateDecision:
    """The gate's decision on one benchmark: slower, faster, equivalent or undecided.

    Parameters
    ----------
    base, head : array_like
        Values of the base and head revisions (ns for wall time, counts for instructions), in
        measurement order; positive. Fewer than 3 each gives "undecided", unless both sides
        are constant over at least 2 values each (exact counts); a single value a side (one
        pair) is always "undecided", since one value shows no spread.
    benchmark, metric : str
        Names carried into the decision.
    threshold : float
        Fraction, e.g. 0.02 for 2 %.
    critical : float or None
        |z| critical value of this look of a sequential design (None: a fixed-sample interval
        at 1 - alpha).
    alpha : float
        Two-sided level of the fixed-sample interval (with ``critical``: only kept).
    paired : bool
        True when ``base[i]`` and ``head[i]`` were measured as a pair (interleaved, random
        order within the pair): the interval is then that of the within-pair log ratio
        (:func:`benchlab.stats.paired.paired_shift`), which cancels what the machine did during
        the pair. False: two independent samples (Mann-Whitney/Hodges-Lehmann on logs).
    session_sd : float
        SD (log scale: 0.005 = 0.5 %) of the offset each session gets as a whole, for two
        samples from different sessions (:mod:`benchlab.ci.baseline`): the interval's
        half-width becomes z sqrt(se^2 + 2 session_sd^2), se the runs' own standard error.

    Returns
    -------
    GateDecision
    """
    from benchlab.stats import distributions as special

    b, h = _usable(base, head, paired)
    medians = (float(np.median(b)) if b.size else math.nan,
               float(np.median(h)) if h.size else math.nan)
    common = dict(benchmark=benchmark, metric=metric, threshold=threshold, n_base=int(b.size),
                  n_head=int(h.size), base_median=medians[0], head_median=medians[1],
                  alpha=alpha)
    # Values that do not vary are exact only where their constancy was seen: one value a side
    # (a single pair, one run each) says nothing about the spread, so it never decides.
    exact = b.size >= 2 and h.size >= 2 and np.ptp(b) == 0.0 and np.ptp(h) == 0.0
    if (b.size < 3 or h.size < 3) and not exact:
        why = ("one value per revision cannot show its spread" if min(b.size, h.size) < 2
               else "fewer than 3 values per revision")
        return GateDecision(ratio=math.nan, low=math.nan, high=math.nan, confidence=math.nan,
                            outcome=UNDECIDED, reason=why, **common)
    if critical is None:
        critical = float(special.ndtri(1.0 - alpha / 2.0))
    confidence = 1.0 - 2.0 * float(special.ndtr(-min(critical, 37.0)))
    lb, lh = np.log(b), np.log(h)
    if exact:  # counts that do not vary: the ratio is known exactly, from one run each
        ratio = low = high = math.exp(lh[0] - lb[0])
        confidence = 1.0
    elif paired:
        from benchlab.stats.paired import paired_shift

        ps = paired_shift(lh - lb, z=min(critical, 37.0))
        ratio, low, high = math.exp(ps.estimate), math.exp(ps.ci_low), math.exp(ps.ci_high)
    else:  # two samples: the structured verdict's Hodges-Lehmann ratio, as compare shows it
        from benchlab.stats.verdict_model import verdict_model

        verdict = verdict_model({"base": b, "head": h}, reference="base", metric=metric,
                                unit="count" if metric == "instructions" else "ns",
                                confidence_level=min(confidence, 1.0 - 1e-12))
        c = verdict.candidate("head")
        ratio, low, high = float(c.ratio), float(c.ratio_low), float(c.ratio_high)
    if session_sd > 0.0 and not paired:
        estimate = math.log(ratio)
        se = (math.log(high) - math.log(low)) / (2.0 * critical) if critical > 0 else 0.0
        half = critical * math.sqrt(se ** 2 + 2.0 * session_sd ** 2)
        low, high = math.exp(estimate - half), math.exp(estimate + half)
    if low > 1.0 + threshold:
        outcome, reason = SLOWER, "interval above 1 + threshold"
    elif high < 1.0 - threshold:
        outcome, reason = FASTER, "interval below 1 - threshold"
    elif low >= 1.0 - threshold and high <= 1.0 + threshold:
        outcome, reason = EQUIVALENT, "interval inside +-threshold"
    else:
        outcome, reason = UNDECIDED, "interval crosses the threshold"
    return GateDecision(ratio=ratio, low=low, high=high, confidence=confidence,
                        outcome=outcome, reason=reason, **common)


def decide_oriented(base: Any, head: Any, *, direction: str = LOWER, unit: str = "",
                    **kwargs: Any) -> GateDecision:
    """:func:`decide` for a metric of either direction (keyword arguments as :func:`decide`).

    A higher-is-better metric (a throughput) is decided on the reciprocals of its values (the
    time per unit of work, lower is better), so "slower" is always the regression and the
    error bounds are :func:`decide`'s; the decision then states the ratio, interval and medians
    of the values themselves (head/base): a regression is a ratio below 1 / (1 + threshold).
    """
    if direction != HIGHER:
        return replace(decide(base, head, **kwargs), unit=unit)
    b, h = np.asarray(base, dtype=np.float64), np.asarray(head, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = decide(1.0 / b, 1.0 / h, **kwargs)
    def inverse(x: float) -> float:  # an interval's open end (0 or inf) stays open
        return math.inf if x == 0.0 else 1.0 / x

    return replace(d, ratio=inverse(d.ratio), low=inverse(d.high), high=inverse(d.low),
                   base_median=inverse(d.base_median), head_median=inverse(d.head_median),
                   direction=HIGHER, unit=unit)


def exit_status(decisions: Sequence[GateDecision], *, failed: bool = False,
                fail_undecided: bool = False) -> int:
    """The job's exit status: 3 when a build or benchmark failed, 1 for a decided regression
    (or an undecided result with ``fail_undecided``), else 0. Improvements never fail."""
    if failed:
        return EXIT_FAILED
    if any(d.regression for d in decisions):
        return EXIT_REGRESSION
    if fail_undecided and any(d.outcome == UNDECIDED and not d.no_regression
                              for d in decisions):
        return EXIT_REGRESSION
    return EXIT_PASS
