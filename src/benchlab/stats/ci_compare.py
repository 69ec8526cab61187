"""The stability study's comparison of two groups by overlap of bootstrap intervals.

The stability study compares 0.95 percentile-bootstrap intervals of the mean and of the
standard deviation of two groups (R ``boot``, 1000 resamples): disjoint
intervals mean the characteristic differs; if one interval engulfs the other
it is "probably the same"; a partial overlap allows no conclusion.

(The stability study's text says it takes "the 0.05-th and 0.95-th percentile" for a
0.95 interval; that would be a 0.90 interval. benchlab takes the 2.5th and
97.5th, which is what a 0.95 percentile interval is, and exposes
`confidence`.)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from numpy.typing import ArrayLike

from benchlab.stats.bootstrap import BootstrapCI, bootstrap_ci
from benchlab.stats.descriptive import InvalidSampleError, as_sample

Label = Literal["higher", "lower", "same", "overlap"]


def compare_intervals(x_interval: tuple[float, float], y_interval: tuple[float, float]) -> Label:
    """Label y's interval relative to x's.

    Returns
    -------
    {"higher", "lower", "same", "overlap"}
        ``"higher"``: y's interval lies entirely above x's (``y_low > x_high``);
        ``"lower"``: entirely below; ``"same"``: one interval contains the other
        (endpoints may coincide); ``"overlap"``: they share values but neither
        contains the other. Intervals that only touch at one point are
        ``"overlap"`` (they are not disjoint).
    """
    (xl, xh), (yl, yh) = (float(v) for v in x_interval), (float(v) for v in y_interval)
    for lo, hi in ((xl, xh), (yl, yh)):
        if not lo <= hi:
            raise InvalidSampleError(f"interval ({lo}, {hi}) has low > high or NaN")
    if yl > xh:
        return "higher"
    if yh < xl:
        return "lower"
    if (xl <= yl and yh <= xh) or (yl <= xl and xh <= yh):
        return "same"
    return "overlap"


@dataclass(frozen=True)
class GroupComparison:
    """The stability study's labels for y relative to x, with the intervals behind them
    (unit of the data)."""

    mean: Label
    sd: Label
    x_mean_ci: BootstrapCI
    y_mean_ci: BootstrapCI
    x_sd_ci: BootstrapCI
    y_sd_ci: BootstrapCI

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_groups(
    x: ArrayLike,
    y: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    kind: str = "percentile",
) -> GroupComparison:
    """Compare the mean and the sd of group y to group x, the stability study's way.

    Parameters
    ----------
    x, y : array_like
        The two groups (at least 3 non-constant measurements each, same unit).
    confidence : float
        Coverage of each interval.
    n_resamples : int
        Bootstrap resamples per interval (the stability study used 1000; the default
        10,000 makes the labels less dependent on the seed).
    seed : int
        Seeds the four intervals (derived seeds seed..seed+3, so each is
        independently reproducible).
    kind : str
        Interval kind; the stability study uses percentile.

    Returns
    -------
    GroupComparison
        ``mean`` and ``sd`` labels: "higher"/"lower" (y's interval disjoint
        above/below x's), "same" (one engulfs the other), "overlap".
    """
    xa = as_sample(x, name="group x", min_n=3, allow_constant=False)
    ya = as_sample(y, name="group y", min_n=3, allow_constant=False)
    opts = dict(kind=kind, confidence=confidence, n_resamples=n_resamples)
    xm = bootstrap_ci(xa, "mean", seed=seed, **opts)
    ym = bootstrap_ci(ya, "mean", seed=seed + 1, **opts)
    xs = bootstrap_ci(xa, "sd", seed=seed + 2, **opts)
    ys = bootstrap_ci(ya, "sd", seed=seed + 3, **opts)
    return GroupComparison(
        mean=compare_intervals((xm.low, xm.high), (ym.low, ym.high)),
        sd=compare_intervals((xs.low, xs.high), (ys.low, ys.high)),
        x_mean_ci=xm, y_mean_ci=ym, x_sd_ci=xs, y_sd_ci=ys,
    )
