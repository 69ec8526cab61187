"""The shift within pairs: Hodges-Lehmann one-sample estimate with its signed-rank interval.

Two programs measured as interleaved pairs (one run of each, in random order, back to back)
share whatever the machine did during the pair: a burst of load, a frequency change, another
tenant. The difference within a pair, d_i = log(head_i) - log(base_i), cancels it, so the
interval of the typical d is far narrower than a two-sample interval on a shared, noisy
machine (on this 2-vCPU machine under load: robust SD of single runs 0.64, of pair differences
0.12). Randomising the order within each pair makes d symmetric about 0 when the programs are
the same, which is the signed-rank test's assumption.

:func:`paired_shift` returns the median of the Walsh averages (d_i + d_j) / 2, i <= j, and the
distribution-free interval between two of their order statistics (Hollander, Wolfe & Chicken
2014, sec. 3.2; normal approximation of the signed-rank distribution, no tie correction).
With more than ``max_walsh`` pairs (the Walsh averages take n(n+1)/2 values), the median of d
and the sign test's order-statistic interval are used instead (sec. 3.6): still
distribution-free, less efficient under normal noise, as robust under heavy tails.

References
----------
Hollander, M., Wolfe, D. A. and Chicken, E. (2014). *Nonparametric Statistical Methods*,
3rd ed. Wiley.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchlab.errors import UserError

MAX_WALSH = 3000


@dataclass(frozen=True)
class PairedShift:
    """Estimate and interval of the typical within-pair difference (the unit of ``d``).

    ``method`` is ``walsh`` (signed-rank) or ``sign`` (order statistics of d); ``n`` the pairs.
    """

    estimate: float
    ci_low: float
    ci_high: float
    conf_level: float
    n: int
    method: str


def paired_shift(d: Any, *, conf_level: float = 0.95, z: float | None = None,
                 max_walsh: int = MAX_WALSH) -> PairedShift:
    """Hodges-Lehmann estimate of the typical difference ``d`` and its two-sided interval.

    Parameters
    ----------
    d : array_like
        Within-pair differences (any unit; the gate passes log ratios). At least 3, finite.
    conf_level : float
        Coverage in (0, 1).
    z : float or None
        The normal quantile to use instead of ``conf_level``'s (a group-sequential critical
        value such as 12.5 is a coverage that rounds to 1 in floating point).
    max_walsh : int
        Above this many pairs the sign-test interval is used (memory: n(n+1)/2 averages).

    Returns
    -------
    PairedShift
    """
    x = np.sort(np.asarray(d, dtype=np.float64))
    n = int(x.size)
    if n < 3 or not np.all(np.isfinite(x)):
        raise UserError("a paired interval needs at least 3 finite differences")
    if not 0.0 < conf_level < 1.0:
        raise UserError(f"conf_level={conf_level} must be in (0, 1)")
    from benchlab.stats import distributions as special

    if z is None:
        z = float(special.ndtri(1.0 - (1.0 - conf_level) / 2.0))
    else:
        conf_level = 1.0 - 2.0 * float(special.ndtr(-z))
    if n <= max_walsh:
        walsh = np.concatenate([(x[i] + x[i:]) * 0.5 for i in range(n)])
        total = walsh.size
        sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        lo = int(min(max(math.floor(total / 2.0 - z * sigma), 0), total - 1))
        hi = int(min(max(math.ceil(total / 2.0 + z * sigma) - 1, 0), total - 1))
        mids = sorted({(total - 1) // 2, total // 2})
        part = np.partition(walsh, sorted({lo, hi, *mids}))
        estimate = float(np.mean(part[mids]))
        return PairedShift(estimate, float(part[lo]), float(part[hi]), conf_level, n, "walsh")
    lo = int(min(max(math.floor(n / 2.0 - z * math.sqrt(n) / 2.0), 0), n - 1))
    hi = int(min(max(math.ceil(n / 2.0 + z * math.sqrt(n) / 2.0) - 1, 0), n - 1))
    return PairedShift(float(np.median(x)), float(x[lo]), float(x[hi]), conf_level, n, "sign")
