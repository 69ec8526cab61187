"""How spread out one measurement is, for sample-size plans: the JayBeams bootstrap SD bound
and the robust spread benchlab uses by default; and the runs a plan asks for.

The JayBeams analysis plans its sample size from a bootstrap bound on the SD (:func:`estimate_sd`). One
outlier (1e9 ns among values near 1000 ns) makes that SD, and the plan, absurd: "needs more than
1e15 samples". A rank test does not care about the outlier's size, so the default plan uses a
robust spread instead (:func:`robust_spread`: the normal-consistent MAD, which ignores up to
half the values being wild; the IQR or the SD where the MAD is 0 because most values tie on a
clock grid).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np

from benchlab.errors import UserError
from benchlab.stats.descriptive import MAD_NORMAL_SCALE

SD_INTERVAL_KINDS = ("percentile", "basic", "normal")
#: IQR of the standard normal distribution: IQR / 1.349 estimates the SD.
NORMAL_IQR = 1.3489795


@dataclass(frozen=True)
class SdEstimate:
    """Standard deviation assumed by the power analysis (ns) and where it came from.

    Attributes
    ----------
    value : float
        The SD used (ns); for rule "jaybeams" rounded up to whole microseconds.
    rule : {"jaybeams", "upper"}
        "jaybeams": ceiling (µs) of max(percentile low, basic low, normal high) over samples
        (the JayBeams analysis); "upper": the largest upper bound of the three intervals.
    bound : float
        The winning bound before rounding (ns).
    bound_source : str
        "group/kind/end" of the winning bound, e.g. "map/normal/high".
    monte_carlo_error : float
        Monte-Carlo standard deviation of ``bound`` (ns) at ``n_resamples``: the bootstrap's
        own noise; the JayBeams VM file sits on an integer-µs boundary, so its rounded value
        depends on the seed.
    intervals : dict
        ``intervals[group][kind]``: bootstrap intervals of each sample's SD (ns).
    """

    value: float
    rule: str
    bound: float
    bound_source: str
    monte_carlo_error: float
    intervals: dict[str, dict[str, Any]]
    n_resamples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields (intervals as dicts)."""
        out = asdict(self)
        out["intervals"] = {g: {k: ci.to_dict() for k, ci in kinds.items()}
                            for g, kinds in self.intervals.items()}
        return out


def _bound_mc_error(ci: Any, kind: str, end: str, confidence: float) -> float:
    """Monte-Carlo SD of one interval end (unit of the statistic).

    Normal interval: t0 - bias +- z se; bias and se carry noise se/sqrt(B) and
    se/sqrt(2B), so the end has se * sqrt((1 + z^2/2) / B). A quantile end at level p has
    sqrt(p (1 - p) / B) / f(q), with f the (normal-approximated) replicate density.
    """
    from benchlab.stats import distributions as special

    b, se = ci.n_resamples, ci.standard_error
    z = float(special.ndtri((1 + confidence) / 2))
    if kind == "normal":
        return se * math.sqrt((1 + z * z / 2) / b)
    p = (1 - confidence) / 2
    density = math.exp(-z * z / 2) / math.sqrt(2 * math.pi) / se if se > 0 else math.inf
    return math.sqrt(p * (1 - p) / b) / density if density > 0 else math.inf


def estimate_sd(
    samples: Mapping[str, np.ndarray],
    *,
    jaybeams_compatible: bool = False,
    n_resamples: int = 2_000,
    seed: int = 1,
    confidence: float = 0.95,
) -> SdEstimate:
    """SD for a power analysis from bootstrap intervals of each sample's SD (ns in, ns out).

    Parameters
    ----------
    samples : mapping of name -> array
        The samples (ns), each with at least 3 values that are not all equal.
    jaybeams_compatible : bool
        The JayBeams rule: ceil_us(max(percentile low, basic low, normal high)) over samples.
        Otherwise: max(percentile high, basic high, normal high) over samples, unrounded.
    n_resamples, seed, confidence
        Bootstrap settings (:func:`benchlab.stats.bootstrap.bootstrap_cis`).
    """
    from benchlab.stats.bootstrap import bootstrap_cis

    intervals: dict[str, dict[str, Any]] = {}
    candidates: list[tuple[float, str, Any, str, str]] = []
    for offset, (name, values) in enumerate(samples.items()):
        cis = bootstrap_cis(values, "sd", kinds=SD_INTERVAL_KINDS, confidence=confidence,
                            n_resamples=n_resamples, seed=seed + offset)
        intervals[name] = cis
        ends = ((("percentile", "low"), ("basic", "low"), ("normal", "high"))
                if jaybeams_compatible else tuple((k, "high") for k in SD_INTERVAL_KINDS))
        for kind, end in ends:
            candidates.append((getattr(cis[kind], end), name, cis[kind], kind, end))
    bound, name, ci, kind, end = max(candidates, key=lambda c: c[0])
    value = bound
    if jaybeams_compatible:
        value = math.ceil(bound / 1000.0) * 1000.0  # the post rounds up to whole microseconds
    return SdEstimate(float(value), "jaybeams" if jaybeams_compatible else "upper", float(bound),
                      f"{name}/{kind}/{end}", _bound_mc_error(ci, kind, end, confidence),
                      intervals, int(n_resamples), int(seed))


def robust_spread(x: Any) -> tuple[float, str]:
    """Robust standard deviation of one sample (unit of x) and the estimator used.

    1.4826 x MAD (consistent for the SD of normal data, immune to up to 50 % outliers); where
    the MAD is 0 (more than half the values tie, as on a coarse clock), IQR / 1.349; where that
    is 0 too, the ordinary SD (0 for a constant sample). Never raises on finite input.
    """
    arr = np.asarray(x, dtype=np.float64)
    med = np.median(arr)
    mad = float(np.median(np.abs(arr - med))) * MAD_NORMAL_SCALE
    if mad > 0:
        return mad, "mad"
    q1, q3 = np.percentile(arr, [25, 75])
    if q3 > q1:
        return float(q3 - q1) / NORMAL_IQR, "iqr"
    return float(np.std(arr, ddof=1)) if arr.size > 1 else 0.0, "sd"


@dataclass(frozen=True)
class RunsPlan:
    """Runs per group a two-sample test needs to detect ``delta`` (``None``: not computable).

    ``n_required`` is the plan (runs per group) or None with ``reason`` saying why (e.g. more
    than 1e15 runs); ``delta`` and ``spread`` are in the data unit (ns).
    """

    delta: float
    spread: float
    alpha: float
    power: float
    n_t_test: float | None
    n_required: int | None
    nonparametric_factor: float
    round_to: int
    minimum: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return asdict(self)


def plan_runs(delta: float, spread: float, *, alpha: float, power: float,
              nonparametric_factor: float = 1.0, round_to: int = 1,
              minimum: int = 0) -> RunsPlan:
    """Runs per group to detect a shift ``delta`` at ``alpha`` with ``power``; never raises.

    The JayBeams rule (:func:`benchlab.stats.power.required_sample_size`): the two-sample t
    test's n (R's ``power.t.test``) times ``nonparametric_factor``, rounded up to
    ``round_to``, at least ``minimum``. A spread of 0 needs the smallest sample a rank test
    can decide with (3 per group). A plan that cannot be computed (delta 0, more than 1e15
    runs) comes back with ``n_required=None`` and the reason.
    """
    from benchlab.stats.power import required_sample_size

    common = dict(delta=float(delta), spread=float(spread), alpha=alpha, power=power,
                  nonparametric_factor=nonparametric_factor, round_to=round_to, minimum=minimum)
    if not (math.isfinite(delta) and delta > 0):
        return RunsPlan(**common, n_t_test=None, n_required=None,
                        reason="the difference to detect is 0")
    if spread == 0:
        return RunsPlan(**common, n_t_test=None, n_required=max(3, minimum))
    try:
        plan = required_sample_size(delta, spread, alpha=alpha, power=power,
                                    nonparametric_factor=nonparametric_factor,
                                    round_to=round_to, minimum=minimum)
    except UserError as exc:
        return RunsPlan(**common, n_t_test=None, n_required=None, reason=str(exc).split(";")[0])
    return RunsPlan(**common, n_t_test=plan.n_t_test, n_required=max(plan.n_required, 3))
