"""How much faster or slower each command ran than a reference: the statistics behind
``benchlab run A B C``'s closing lines (hyperfine's summary, with a test and an interval).

Statistic: the **ratio of medians**, candidate / reference (< 1: the candidate is faster).
Medians, not means: one run disturbed by the machine (a page-cache miss, a preemption) moves
the mean of 20 runs by percents and leaves the median where it was, and the median ratio's
bootstrap interval does not depend on the tail's variance. The interval is the bootstrap of
:func:`benchlab.stats.ratio.median_ratio` (BCa; percentile where ties on a clock grid make BCa
undefined; exact for constant samples). The test behind the decision is Mann-Whitney U (as R's
``wilcox.test``); with several candidates the p-values are Holm-adjusted, so the chance of
calling any candidate different when none is stays <= alpha = 1 - ``confidence_level``.

A candidate is **decided** (faster or slower) when its adjusted p-value is below alpha and its
interval excludes 1. Otherwise it is **undecided**, with the runs per command that would
detect a difference of ``x`` = max(the observed difference, ``min_effect_relative``) with
``power``: the two-sample t test's n (R's ``power.t.test``) for a shift of x times the
reference's median at the larger robust spread of the two samples
(:func:`benchlab.stats.spread.robust_spread`), times pi/3 (Mann-Whitney's efficiency against
the t test under normality), at the Bonferroni level alpha / (number of candidates), which
Holm's procedure never needs more than.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np

from benchlab.errors import UserError
from benchlab.jsonable import jsonable
from benchlab.stats.descriptive import InvalidSampleError, as_sample

#: Mann-Whitney against the t test under normality (asymptotic relative efficiency 3/pi).
_RANK_FACTOR = math.pi / 3


@dataclass(frozen=True)
class CandidateResult:
    """One command against the reference (times in the samples' unit, e.g. ns).

    Attributes
    ----------
    ratio, ratio_low, ratio_high : float or None
        median(candidate) / median(reference) and its interval (None where undefined: fewer
        than 3 runs, or a reference median of 0).
    interval_method : str
        "bca", "percentile" (with ``note`` saying BCa was undefined), "constant" or "none".
    p_value, p_adjusted : float
        Mann-Whitney p-value and its Holm adjustment (1.0 where no test was possible).
    outcome : {"faster", "slower", "undecided"}
        The candidate relative to the reference.
    reason : str
        "significant", "not_significant", "too_few_runs", "zero_median" or "identical".
    detect_relative : float
        x of "would decide a difference of x" (a fraction: 0.05 = 5 %).
    runs_needed, additional_runs : int or None
        Runs per command that would likely decide, and how many more that is (undecided only;
        None when no finite plan exists, e.g. spread 0 with equal medians).
    """

    name: str
    reference: str
    n: int
    n_reference: int
    median: float
    median_reference: float
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None
    interval_method: str
    p_value: float
    p_adjusted: float
    outcome: str
    reason: str
    detect_relative: float
    runs_needed: int | None
    additional_runs: int | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict (NaN/inf become None)."""
        return jsonable(asdict(self))


@dataclass(frozen=True)
class RelativeResult:
    """Every candidate against the reference; see :func:`relative_speed`."""

    reference: str
    confidence_level: float
    alpha: float
    statistic: str
    adjustment: str
    candidates: list[CandidateResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return jsonable(asdict(self))


def _ratio_interval(x: np.ndarray, ref: np.ndarray, level: float, n_resamples: int,
                    seed: int) -> tuple[float | None, float | None, float | None, str, str]:
    from benchlab.stats.ratio import median_ratio

    med_ref = float(np.median(ref))
    if med_ref == 0:
        return None, None, None, "none", "the reference's median is 0: no ratio"
    estimate = float(np.median(x)) / med_ref
    if x.size < 3 or ref.size < 3:
        return estimate, None, None, "none", "fewer than 3 runs: no interval"
    try:
        ci = median_ratio(x, ref, confidence_level=level, n_resamples=n_resamples, seed=seed)
    except InvalidSampleError as exc:  # e.g. a constant sample against a median CI around 0
        return estimate, None, None, "none", str(exc)
    note = ("BCa undefined on tied values; percentile interval" if "fallback" in ci.extra
            else "")
    return ci.estimate, ci.low, ci.high, ci.kind, note


def _p_value(x: np.ndarray, ref: np.ndarray) -> float:
    from benchlab.stats.rank import mann_whitney_u

    if x.size < 3 or ref.size < 3:
        return 1.0
    if x.min() == x.max() == ref.min() == ref.max():
        return 1.0
    return mann_whitney_u(x, ref).p_value


def _runs_needed(x: np.ndarray, ref: np.ndarray, relative: float, alpha: float,
                 power: float) -> int | None:
    from benchlab.stats.spread import plan_runs, robust_spread

    spread = max(robust_spread(x)[0], robust_spread(ref)[0]) if min(x.size, ref.size) > 1 \
        else 0.0
    plan = plan_runs(relative * abs(float(np.median(ref))), spread, alpha=alpha, power=power,
                     nonparametric_factor=_RANK_FACTOR)
    return plan.n_required


def relative_speed(
    samples: Mapping[str, Any],
    *,
    reference: str | None = None,
    confidence_level: float = 0.95,
    min_effect_relative: float = 0.01,
    power: float = 0.8,
    n_resamples: int = 2000,
    seed: int = 1,
) -> RelativeResult:
    """Each command's median time relative to a reference, decided with Holm-adjusted tests.

    Parameters
    ----------
    samples : mapping of name -> array_like
        Two or more commands' measurements (e.g. wall times in ns), at least 1 finite value
        each. Ties, constant samples, n = 1 or 2 and outliers are legal: the result then says
        what it could not compute instead of raising.
    reference : str or None
        Name of the baseline; None: the command with the smallest median (as hyperfine).
    confidence_level : float
        Level of the ratio intervals; the tests use alpha = 1 - confidence_level.
    min_effect_relative : float
        Smallest difference (a fraction of the reference's median) a "runs needed" estimate
        is stated for, when the observed difference is smaller.
    power : float
        Power of the "runs needed" estimate.
    n_resamples, seed : int
        Bootstrap replicates and seed of the intervals (reproducible).

    Returns
    -------
    RelativeResult
        ``candidates`` in the order given (the reference left out).

    Raises
    ------
    UserError
        Fewer than two commands, an unknown reference, a level outside (0, 1), or a sample
        that is empty or holds NaN/inf.
    """
    from benchlab.stats.multiple import holm

    if len(samples) < 2:
        raise UserError("relative speed needs two or more commands; pass at least two")
    if not 0 < confidence_level < 1 or not 0 < power < 1 or not min_effect_relative > 0:
        raise UserError("confidence_level and power lie in (0, 1) and min_effect_relative "
                        "is > 0; e.g. 0.95, 0.8, 0.01")
    data = {name: as_sample(values, name=f"sample {name!r}", min_n=1)
            for name, values in samples.items()}
    if reference is None:
        reference = min(data, key=lambda k: float(np.median(data[k])))
    if reference not in data:
        raise UserError(f"reference {reference!r} is not one of the commands "
                        f"({', '.join(map(repr, data))}); pick one of them")
    alpha = 1 - confidence_level
    ref = data[reference]
    names = [k for k in data if k != reference]
    p_values = [_p_value(data[k], ref) for k in names]
    adjusted = holm(p_values)
    out = []
    for name, p, p_adj in zip(names, p_values, adjusted):
        x = data[name]
        ratio, low, high, method, note = _ratio_interval(x, ref, confidence_level,
                                                         n_resamples, seed)
        excludes_one = low is not None and (high < 1 or low > 1)
        if ratio is None:
            reason = "zero_median"
        elif min(x.size, ref.size) < 3:
            reason = "too_few_runs"
        elif method == "constant" and ratio == 1:
            reason = "identical"
        elif p_adj < alpha and excludes_one:
            reason = "significant"
        else:
            reason = "not_significant"
        outcome = (("faster" if ratio < 1 else "slower") if reason == "significant"
                   else "undecided")
        detect = max(abs(ratio - 1) if ratio is not None else 0.0, min_effect_relative)
        needed = additional = None
        if outcome == "undecided" and reason not in ("zero_median", "identical"):
            needed = _runs_needed(x, ref, detect, alpha / len(names), power)
            if needed is not None:
                needed = max(needed, 3, min(x.size, ref.size) + 1)
                additional = needed - min(x.size, ref.size)
        out.append(CandidateResult(
            name, reference, int(x.size), int(ref.size), float(np.median(x)),
            float(np.median(ref)), ratio, low, high, method, float(p), float(p_adj), outcome,
            reason, float(detect), needed, additional, note))
    return RelativeResult(reference, float(confidence_level), float(alpha), "median",
                          "holm" if len(names) > 1 else "none", out)
