"""Outlier flagging: MAD rule and Tukey fences, and the TCP-latency report's robust summary.

Outliers are *flagged*, never silently dropped: every function returns a
boolean mask over the input (True = outlier) and the name of the rule that
produced it; callers decide what to do with them.

References
----------
.. [1] Leys, C., Ley, C., Klein, O., Bernard, P. and Licata, L. (2013).
       Detecting outliers: Do not use standard deviation around the mean, use
       absolute deviation around the median. J. Exp. Soc. Psychol. 49, 764-766.
.. [2] Tukey, J. W. (1977). Exploratory Data Analysis. Addison-Wesley.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from benchlab.stats.descriptive import (
    DEFAULT_QUANTILE_METHOD,
    MAD_NORMAL_SCALE,
    InvalidSampleError,
    as_sample,
)


@dataclass(frozen=True)
class OutlierFlags:
    """Which values a rule flags.

    Attributes
    ----------
    rule : str
        ``"mad"`` (|x - median| > k * MAD) or ``"tukey"`` (outside Q1 - k IQR,
        Q3 + k IQR), with `k` and, for MAD, which MAD (``mad_kind``).
    k : float
        Multiplier of the rule (dimensionless).
    lower, upper : float
        Values strictly outside ``[lower, upper]`` are outliers (unit of x).
    is_outlier : ndarray of bool
        Same shape and order as the input; True = flagged.
    mad_kind : str or None
        ``"raw"`` or ``"scaled"`` for the MAD rule, None for Tukey.
    """

    rule: str
    k: float
    lower: float
    upper: float
    is_outlier: np.ndarray
    mad_kind: str | None = None

    @property
    def n_outliers(self) -> int:
        return int(self.is_outlier.sum())

    @property
    def n_kept(self) -> int:
        return int(self.is_outlier.size - self.is_outlier.sum())

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (mask as list of indices of the outliers)."""
        return {
            "rule": self.rule,
            "k": self.k,
            "mad_kind": self.mad_kind,
            "lower": self.lower,
            "upper": self.upper,
            "n_outliers": self.n_outliers,
            "n_kept": self.n_kept,
            "outlier_indices": np.flatnonzero(self.is_outlier).tolist(),
        }


def mad_outliers(x: ArrayLike, k: float = 3.0, *, mad_kind: str = "raw") -> OutlierFlags:
    """Flag values farther than ``k`` MADs from the median.

    A value is kept when ``|x - median(x)| <= k * MAD``; others are flagged.

    Parameters
    ----------
    x : array_like
        At least 3 finite measurements (any unit).
    k : float
        Number of MADs (default 3, as the TCP-latency report).
    mad_kind : {"raw", "scaled"}
        ``"raw"``: MAD = median(|x - median|) (the TCP-latency report's rule, the default).
        ``"scaled"``: 1.4826 * raw MAD, so k is in normal-sigma units ([1]_
        recommends k = 2.5 or 3 with this one).

    Notes
    -----
    If more than half of the values are equal, MAD = 0 and every value that
    differs from the median is flagged; that is what the rule says, so it is
    reported rather than patched.
    """
    if mad_kind not in ("raw", "scaled"):
        raise InvalidSampleError(f"mad_kind={mad_kind!r} is unknown; use 'raw' or 'scaled'")
    if not k > 0:
        raise InvalidSampleError(f"k={k} must be positive")
    arr = as_sample(x, min_n=3)
    center = float(np.median(arr))
    mad = float(np.median(np.abs(arr - center)))
    if mad_kind == "scaled":
        mad *= MAD_NORMAL_SCALE
    half = k * mad
    return OutlierFlags(
        rule="mad",
        k=float(k),
        lower=center - half,
        upper=center + half,
        is_outlier=np.abs(arr - center) > half,
        mad_kind=mad_kind,
    )


def tukey_outliers(
    x: ArrayLike, k: float = 1.5, *, method: str = DEFAULT_QUANTILE_METHOD
) -> OutlierFlags:
    """Flag values outside Tukey's fences ``[Q1 - k IQR, Q3 + k IQR]`` [2]_.

    ``k = 1.5`` gives the inner fences ("outside"), ``k = 3`` the outer fences
    ("far out"). Quartiles use `method` (default R type 7). Unit of x.
    """
    if not k > 0:
        raise InvalidSampleError(f"k={k} must be positive")
    arr = as_sample(x, min_n=3)
    q1, q3 = np.percentile(arr, [25.0, 75.0], method=method)
    spread = q3 - q1
    lower, upper = float(q1 - k * spread), float(q3 + k * spread)
    return OutlierFlags(
        rule="tukey",
        k=float(k),
        lower=lower,
        upper=upper,
        is_outlier=(arr < lower) | (arr > upper),
    )


@dataclass(frozen=True)
class MadFilteredSummary:
    """The TCP-latency report's summary: MAD rejection, then statistics of the kept values.

    Units are those of the input except counts. Both medians are given because
    the TCP-latency report reports the median of *all* values (taken before filtering) while
    other statistics describe the kept values.

    Attributes
    ----------
    n_total, n_kept : int
    median_all : float
        Median of all values (the TCP-latency report's printed "Median").
    median_kept : float
        Median of the kept values.
    mean_kept, min_kept, max_kept : float
    p95_kept, p99_kept : float
        Percentiles of the kept values (quantile method ``quantile_method``).
    mad_raw_all : float
        Raw MAD of all values; the filter's scale.
    uncertainty : float
        ``mad_raw_all / sqrt(n_kept)`` (the TCP-latency report's "uncertainty").
    flags : OutlierFlags
        The MAD rule's mask over the input.
    """

    n_total: int
    n_kept: int
    median_all: float
    median_kept: float
    mean_kept: float
    min_kept: float
    max_kept: float
    p95_kept: float
    p99_kept: float
    mad_raw_all: float
    uncertainty: float
    quantile_method: str
    flags: OutlierFlags

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "flags"}
        out["flags"] = self.flags.to_dict()
        return out


def mad_filtered_summary(
    x: ArrayLike, k: float = 3.0, *, method: str = DEFAULT_QUANTILE_METHOD
) -> MadFilteredSummary:
    """Reproduce the TCP-latency report's latency summary.

    Definitions (the combination that reproduces every number the TCP-latency report
    prints for its 100 TCP-handshake latencies; see
    ``tests/stats/test_outliers.py``):

    * median and raw MAD of **all** values;
    * keep ``|x - median_all| <= k * raw MAD`` (k = 3);
    * mean, min, max, p95 and p99 of the **kept** values, percentiles with
      R type 7 / numpy ``"linear"``;
    * uncertainty = raw MAD of **all** values / sqrt(number kept).

    Parameters
    ----------
    x : array_like
        Measurements (any unit; the TCP-latency report uses ns).
    k : float
        MAD multiplier.
    method : str
        Quantile method for the percentiles.
    """
    arr = as_sample(x, min_n=3)
    flags = mad_outliers(arr, k, mad_kind="raw")
    kept = arr[~flags.is_outlier]
    if kept.size == 0:  # impossible (the median's neighbourhood is always kept) but be explicit
        raise InvalidSampleError("MAD filter kept no values; check the data")
    mad_all = float(np.median(np.abs(arr - np.median(arr))))
    p95, p99 = np.percentile(kept, [95.0, 99.0], method=method)
    return MadFilteredSummary(
        n_total=int(arr.size),
        n_kept=int(kept.size),
        median_all=float(np.median(arr)),
        median_kept=float(np.median(kept)),
        mean_kept=float(kept.mean()),
        min_kept=float(kept.min()),
        max_kept=float(kept.max()),
        p95_kept=float(p95),
        p99_kept=float(p99),
        mad_raw_all=mad_all,
        uncertainty=mad_all / float(np.sqrt(kept.size)),
        quantile_method=method,
        flags=flags,
    )
