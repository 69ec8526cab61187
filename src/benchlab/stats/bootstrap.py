"""Bootstrap confidence intervals: percentile, basic, normal and BCa.

One sample (``bootstrap_ci``) or two independent samples
(``bootstrap_ci_2samp``: each sample is resampled independently, as R's
``boot(..., strata = group)``), for a named statistic or any vectorised
callable. Seeded with a numpy ``Generator``; memory-bounded (resamples are
drawn and reduced in batches), so it works at 1M measurements per sample.

Interval definitions (``B`` replicates ``t*``, estimate ``t0``, level
``c = confidence``, ``z = Phi^-1((1 + c) / 2)``), exactly as R's
``boot.ci`` [2]_:

* ``"percentile"``: ``(q(alpha/2), q(1 - alpha/2))`` of ``t*``.
* ``"basic"``:  ``(2 t0 - q(1 - alpha/2), 2 t0 - q(alpha/2))``.
* ``"normal"``: ``(2 t0 - mean(t*)) -/+ z sd(t*)`` (bias-corrected; sd with
  denominator B - 1).
* ``"bca"``: percentile interval at adjusted levels
  ``Phi(z0 + (z0 + z_a) / (1 - a (z0 + z_a)))``, with
  ``z0 = Phi^-1(#{t* < t0} / B)`` (strict ``<``, as R) and acceleration
  ``a = sum(d^3) / (6 (sum(d^2))^(3/2))`` where ``d_j = t0 - t_(-j)`` are
  jackknife differences (Davison & Hinkley eq. 5.25 with jackknife influence
  values, = R's ``boot.ci(..., L = empinf(b, type = "jack"))``). R's default
  ``L`` is a *regression* estimate from the bootstrap array; it estimates the
  same ``a`` with Monte-Carlo noise, so defaults agree within that noise.

Quantiles ``q(p)`` of ``t*`` default to ``quantile_rule="r"``: R boot's
``norm.inter`` — order statistic ``k = floor((B + 1) p)``; if ``(B+1)p`` is an
integer, ``t*_(k)``; otherwise interpolate between ``t*_(k)`` and
``t*_(k+1)`` linearly on the normal-quantile scale; ``k = 0`` or ``B`` use the
extreme order statistic. Given the same replicates this reproduces R's
endpoints exactly (tested to 1e-12 on replicates exported from R).
``quantile_rule="linear"`` uses numpy's linear (R type 7) quantile instead.

Jackknife for BCa (the O(n^2) part done naively):

* ``"mean"``, ``"var"``, ``"sd"``, ``"median"``: exact leave-one-out values in
  O(n) (O(n log n) for the median's sort) from closed forms
  (``jackknife_diffs``).
* callables with ``n <= max_exact_jackknife`` (default 5,000): exact
  leave-one-out, evaluated in batches.
* callables with larger n: grouped (delete-a-block) jackknife. The sample is
  randomly partitioned (seeded) into ``n_jackknife_groups`` blocks (default
  1,000) and ``d_g = t0 - t_(-block g)``. For a smooth statistic ``d_g`` is
  approximately the sum of the per-observation differences in the block, so
  ``sum d^3`` and ``sum d^2`` estimate the same sums as the full jackknife and
  ``a`` is consistent; the approximation adds sampling noise of relative
  order ``1/sqrt(groups)`` to ``a`` (a is itself O(1/sqrt(n)), so its effect
  on the interval is small). Reported as ``jackknife_method="grouped(G)"``.

Median replicates use an exact shortcut by default (``median_sampler="order"``):
the median of a resample of sorted data ``s`` is ``s[ceil(n U_(k)) - 1]``
where ``U_(k)`` is the k-th order statistic of n uniforms,
``U_(k) ~ Beta(k, n - k + 1)`` (and for even n, ``U_(k+1) = U_(k) + (1 -
U_(k)) Beta(1, n - k)``). This has exactly the distribution of resampling, at
O(1) per replicate instead of O(n). ``median_sampler="resample"`` resamples.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall. Ch. 13-14 (percentile, BCa).
.. [2] Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press. Sec. 5.2-5.3 (normal, basic,
       BCa); R package ``boot`` (``boot.ci``, ``norm.inter``).
.. [3] Shao, J. and Wu, C. F. J. (1989). A general theory for jackknife
       variance estimation. Ann. Statist. 17(3), 1176-1197 (delete-d / grouped
       jackknife).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from benchlab.stats.descriptive import InvalidSampleError, as_sample

KINDS = ("percentile", "basic", "normal", "bca")
_KIND_ALIASES = {"perc": "percentile", "norm": "normal", "percentile": "percentile",
                 "basic": "basic", "normal": "normal", "bca": "bca"}

ONE_SAMPLE_STATISTICS = ("mean", "median", "sd", "var")
#: Two-sample statistics, always "y relative to x" (x = baseline, y = candidate).
TWO_SAMPLE_STATISTICS = ("mean_diff", "median_diff", "mean_ratio", "median_ratio", "sd_ratio")

DEFAULT_N_RESAMPLES = 10_000
#: Bytes of resample data (indices + values) held at once by the batched sampler.
DEFAULT_MEMORY_BUDGET = 96 * 2**20
DEFAULT_MAX_EXACT_JACKKNIFE = 5_000
DEFAULT_JACKKNIFE_GROUPS = 1_000

SeedLike = int | np.random.Generator | None
OneSampleStatistic = str | Callable[..., Any]


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class BootstrapDistribution:
    """Bootstrap replicates of a statistic plus what BCa needs.

    Attributes
    ----------
    estimate : float
        ``t0``, the statistic on the original data (unit of the statistic).
    replicates : ndarray
        ``t*``, shape ``(n_resamples,)``.
    jackknife_diffs : ndarray or None
        ``t0 - t_(-j)`` for every left-out observation (or block); None if not
        computed.
    jackknife_method : str or None
        ``"exact"``, ``"grouped(G)"`` or None.
    statistic : str
        Name of the statistic (callable's ``__name__`` for callables).
    seed : int or None
        Integer seed used (None when a Generator was passed in).
    sampler : str
        ``"resample"`` or ``"order"`` (exact median shortcut).
    """

    estimate: float
    replicates: np.ndarray
    jackknife_diffs: np.ndarray | None
    jackknife_method: str | None
    statistic: str
    seed: int | None
    sampler: str


@dataclass(frozen=True)
class BootstrapCI:
    """One bootstrap confidence interval.

    ``low``/``high``/``estimate``/``standard_error``/``bias`` are in the
    statistic's unit (e.g. ns for the mean of ns; dimensionless for ratios).
    ``standard_error`` = sd(t*), ``bias`` = mean(t*) - t0. ``z0`` and
    ``acceleration`` are set for BCa only.
    """

    low: float
    high: float
    kind: str
    confidence: float
    estimate: float
    standard_error: float
    bias: float
    n_resamples: int
    statistic: str
    seed: int | None
    quantile_rule: str
    z0: float | None = None
    acceleration: float | None = None
    jackknife_method: str | None = None
    sampler: str = "resample"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


# ----------------------------------------------------------------------------- helpers


def _rng_and_seed(seed: SeedLike) -> tuple[np.random.Generator, int | None]:
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        # Record fresh entropy so that any result can be reproduced from its report.
        seed = int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, (bool, float)) or not isinstance(seed, (int, np.integer)):
        raise InvalidSampleError(f"seed={seed!r} must be an int or a numpy Generator")
    return np.random.default_rng(int(seed)), int(seed)


def _check_confidence(confidence: float) -> float:
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise InvalidSampleError(f"confidence={confidence} must be in (0, 1), e.g. 0.95")
    return c


def _check_kind(kind: str) -> str:
    try:
        return _KIND_ALIASES[kind]
    except KeyError:
        raise InvalidSampleError(
            f"unknown interval kind {kind!r}; use one of {', '.join(KINDS)}"
        ) from None


def _accepts_axis(func: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "axis" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _name_of(statistic: OneSampleStatistic) -> str:
    return statistic if isinstance(statistic, str) else getattr(statistic, "__name__", "callable")


def _apply(func: Callable[..., Any], vectorised: bool, *batches: np.ndarray) -> np.ndarray:
    """Evaluate a statistic row-wise on 2-D batches."""
    if vectorised:
        out = np.asarray(func(*batches, axis=-1), dtype=np.float64)
    else:
        out = np.array([func(*rows) for rows in zip(*batches)], dtype=np.float64)
    if out.shape != (batches[0].shape[0],):
        raise InvalidSampleError(
            f"statistic returned shape {out.shape} for {batches[0].shape[0]} resamples;"
            " it must reduce along axis=-1 to one number per resample"
        )
    return out


def _batch_size(total_values: int, batch: int | None, n_resamples: int) -> int:
    if batch is not None:
        if batch < 1:
            raise InvalidSampleError(f"batch={batch} must be >= 1")
        return min(int(batch), n_resamples)
    per_resample = max(1, total_values) * 16  # int32/64 index + float64 value, plus slack
    return int(max(1, min(n_resamples, DEFAULT_MEMORY_BUDGET // per_resample)))


def _named_one_sample(name: str) -> Callable[..., np.ndarray]:
    if name == "mean":
        return lambda a, axis=-1: np.mean(a, axis=axis)
    if name == "median":
        return lambda a, axis=-1: np.median(a, axis=axis)
    if name in ("sd", "std"):
        return lambda a, axis=-1: np.std(a, axis=axis, ddof=1)
    if name == "var":
        return lambda a, axis=-1: np.var(a, axis=axis, ddof=1)
    raise InvalidSampleError(
        f"unknown statistic {name!r}; use one of {', '.join(ONE_SAMPLE_STATISTICS)} or a callable"
    )


_TWO_SAMPLE_PARTS: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "mean_diff": ("mean", lambda a, b: b - a),
    "median_diff": ("median", lambda a, b: b - a),
    "mean_ratio": ("mean", lambda a, b: b / a),
    "median_ratio": ("median", lambda a, b: b / a),
    "sd_ratio": ("sd", lambda a, b: b / a),
}


# ----------------------------------------------------------------------------- jackknife


def jackknife_diffs(x: ArrayLike, statistic: str) -> np.ndarray:
    """Exact jackknife differences ``t0 - t_(-i)`` for a named statistic, in O(n).

    Parameters
    ----------
    x : array_like
        Sample (at least 3 values).
    statistic : {"mean", "var", "sd", "median"}

    Returns
    -------
    ndarray
        ``d[i] = t(x) - t(x without x[i])`` in the order of `x`, unit of the
        statistic.

    Notes
    -----
    Closed forms with ``m`` = mean, ``v`` = variance (n - 1), ``c_i = n/(n-1)
    (x_i - m)^2``: mean ``d_i = (x_i - m)/(n - 1)``; variance
    ``d_i = (c_i - v)/(n - 2)`` (from the downdate ``SS_(-i) = SS - c_i``,
    written so no large numbers cancel); sd ``d_i = dv_i / (s + sqrt(v - dv_i))``.
    Median: with ``s`` sorted, removing ``s[j]`` leaves ``r(p) = s[p]`` for
    ``p < j`` else ``s[p+1]``, and the median of n - 1 values is
    ``(r((n-2)//2) + r((n-1)//2)) / 2``.
    """
    arr = as_sample(x, min_n=3)
    n = arr.size
    if statistic == "mean":
        return (arr - arr.mean()) / (n - 1)
    if statistic in ("var", "sd", "std"):
        m = arr.mean()
        v = float(np.sum((arr - m) ** 2)) / (n - 1)
        c = n / (n - 1) * (arr - m) ** 2
        dv = (c - v) / (n - 2)
        if statistic == "var":
            return dv
        s = np.sqrt(v)
        return dv / (s + np.sqrt(np.maximum(v - dv, 0.0)))
    if statistic == "median":
        order = np.argsort(arr, kind="stable")
        s = arr[order]
        t0 = float(np.median(s))
        j = np.arange(n)
        lo, hi = (n - 2) // 2, (n - 1) // 2
        r_lo = np.where(lo < j, s[lo], s[min(lo + 1, n - 1)])
        r_hi = np.where(hi < j, s[hi], s[min(hi + 1, n - 1)])
        d_sorted = t0 - 0.5 * (r_lo + r_hi)
        d = np.empty(n)
        d[order] = d_sorted
        return d
    raise InvalidSampleError(
        f"no closed-form jackknife for {statistic!r}; use mean, var, sd or median"
    )


def _jackknife_callable(
    arr: np.ndarray,
    t_of: Callable[[np.ndarray], np.ndarray],
    t0: float,
    rng: np.random.Generator,
    max_exact: int,
    n_groups: int,
) -> tuple[np.ndarray, str]:
    """Jackknife differences for a statistic given as ``t_of(batch_2d) -> (rows,)``."""
    n = arr.size
    if n <= max_exact:
        cols = np.arange(n - 1)
        rows_per_batch = max(1, DEFAULT_MEMORY_BUDGET // (16 * n))
        out = np.empty(n)
        for start in range(0, n, rows_per_batch):
            left_out = np.arange(start, min(n, start + rows_per_batch))
            idx = cols[None, :] + (cols[None, :] >= left_out[:, None])
            out[left_out] = t0 - t_of(arr[idx])
        return out, "exact"
    groups = min(n_groups, n)
    labels = rng.permutation(n) % groups
    out = np.empty(groups)
    for g in range(groups):
        out[g] = t0 - t_of(arr[labels != g][None, :])[0]
    return out, f"grouped({groups})"


def bca_acceleration(jackknife_diffs: ArrayLike) -> float:
    """BCa acceleration ``a = sum(d^3) / (6 sum(d^2)^(3/2))`` (dimensionless).

    `jackknife_diffs` are ``t0 - t_(-j)`` (any positive multiple gives the
    same ``a``), pooled over both samples in the two-sample case. Pooling the
    *unscaled* differences weights each sample as Davison & Hinkley's
    stratified formula; R's ``usual.jack`` multiplies each stratum by
    ``n_s - 1``, which differs from this only when sample sizes differ.
    """
    d = np.asarray(jackknife_diffs, dtype=np.float64)
    ss = float(np.sum(d * d))
    if not ss > 0:
        raise InvalidSampleError(
            "BCa acceleration undefined: every jackknife value equals the estimate;"
            " use kind='percentile'"
        )
    return float(np.sum(d**3) / (6.0 * ss**1.5))


# ----------------------------------------------------------------------------- samplers


def _median_order_sampler(
    sorted_x: np.ndarray, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    n = sorted_x.size
    k = (n + 1) // 2  # 1-based rank of the (lower) median
    u_k = rng.beta(k, n - k + 1, size=n_resamples)
    i_k = np.clip(np.ceil(n * u_k).astype(np.int64), 1, n) - 1
    if n % 2 == 1:
        return sorted_x[i_k]
    u_k1 = u_k + (1.0 - u_k) * rng.beta(1, n - k, size=n_resamples)
    i_k1 = np.clip(np.ceil(n * u_k1).astype(np.int64), 1, n) - 1
    return 0.5 * (sorted_x[i_k] + sorted_x[i_k1])


def _resample_replicates(
    samples: Sequence[np.ndarray],
    t_of: Callable[..., np.ndarray],
    n_resamples: int,
    rng: np.random.Generator,
    batch: int | None,
) -> np.ndarray:
    size = _batch_size(sum(s.size for s in samples), batch, n_resamples)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, size):
        b = min(size, n_resamples - start)
        drawn = []
        for s in samples:
            dtype = np.int32 if s.size < 2**31 - 1 else np.int64
            drawn.append(s[rng.integers(0, s.size, size=(b, s.size), dtype=dtype)])
        out[start : start + b] = t_of(*drawn)
        del drawn
    return out


def _one_sample_parts(
    arr: np.ndarray,
    statistic: OneSampleStatistic,
    *,
    n_resamples: int,
    rng: np.random.Generator,
    batch: int | None,
    want_jackknife: bool,
    median_sampler: str,
    max_exact_jackknife: int,
    n_jackknife_groups: int,
) -> tuple[float, np.ndarray, np.ndarray | None, str | None, str]:
    if isinstance(statistic, str):
        func = _named_one_sample(statistic)
        t0 = float(func(arr[None, :])[0])
        if statistic == "median" and median_sampler == "order":
            reps, sampler = _median_order_sampler(np.sort(arr), n_resamples, rng), "order"
        elif median_sampler not in ("order", "resample"):
            raise InvalidSampleError(
                f"median_sampler={median_sampler!r} is unknown; use 'order' or 'resample'"
            )
        elif statistic in ("sd", "std", "var"):
            # Shift-invariant: resample the centred data and take the variance from the first
            # two sums (one fused pass, no temporaries); same indices, so same replicates as
            # np.std up to rounding, about twice as fast at 100k values.
            centred = arr - arr.mean()
            n = arr.size
            root = statistic != "var"

            def moments(a: np.ndarray, axis: int = -1) -> np.ndarray:
                s1 = a.sum(axis=axis)
                v = (np.einsum("ij,ij->i", a, a) - s1 * s1 / n) / (n - 1)
                np.maximum(v, 0.0, out=v)
                return np.sqrt(v) if root else v

            reps = _resample_replicates([centred], moments, n_resamples, rng, batch)
            sampler = "resample"
        else:
            reps = _resample_replicates([arr], func, n_resamples, rng, batch)
            sampler = "resample"
        if want_jackknife:
            return t0, reps, jackknife_diffs(arr, statistic), "exact", sampler
        return t0, reps, None, None, sampler
    vectorised = _accepts_axis(statistic)

    def t_of(batch_2d: np.ndarray) -> np.ndarray:
        return _apply(statistic, vectorised, batch_2d)

    t0 = float(t_of(arr[None, :])[0])
    reps = _resample_replicates([arr], t_of, n_resamples, rng, batch)
    if not want_jackknife:
        return t0, reps, None, None, "resample"
    d, method = _jackknife_callable(arr, t_of, t0, rng, max_exact_jackknife, n_jackknife_groups)
    return t0, reps, d, method, "resample"


def bootstrap_distribution(
    x: ArrayLike,
    statistic: OneSampleStatistic = "mean",
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: SeedLike = None,
    batch: int | None = None,
    jackknife: bool = True,
    median_sampler: str = "order",
    max_exact_jackknife: int = DEFAULT_MAX_EXACT_JACKKNIFE,
    n_jackknife_groups: int = DEFAULT_JACKKNIFE_GROUPS,
) -> BootstrapDistribution:
    """Bootstrap replicates of a one-sample statistic (see ``bootstrap_ci``)."""
    arr = as_sample(x, name="sample", min_n=3, allow_constant=False)
    n_resamples = _check_n_resamples(n_resamples)
    rng, used_seed = _rng_and_seed(seed)
    t0, reps, d, method, sampler = _one_sample_parts(
        arr, statistic, n_resamples=n_resamples, rng=rng, batch=batch,
        want_jackknife=jackknife, median_sampler=median_sampler,
        max_exact_jackknife=max_exact_jackknife, n_jackknife_groups=n_jackknife_groups,
    )
    return BootstrapDistribution(t0, reps, d, method, _name_of(statistic), used_seed, sampler)


def bootstrap_distribution_2samp(
    x: ArrayLike,
    y: ArrayLike,
    statistic: str | Callable[..., Any] = "median_ratio",
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: SeedLike = None,
    batch: int | None = None,
    jackknife: bool = True,
    median_sampler: str = "order",
    max_exact_jackknife: int = DEFAULT_MAX_EXACT_JACKKNIFE,
    n_jackknife_groups: int = DEFAULT_JACKKNIFE_GROUPS,
) -> BootstrapDistribution:
    """Bootstrap replicates of a two-sample statistic (see ``bootstrap_ci_2samp``)."""
    xa = as_sample(x, name="first sample (x)", min_n=3, allow_constant=False)
    ya = as_sample(y, name="second sample (y)", min_n=3, allow_constant=False)
    n_resamples = _check_n_resamples(n_resamples)
    rng, used_seed = _rng_and_seed(seed)
    if isinstance(statistic, str):
        if statistic not in _TWO_SAMPLE_PARTS:
            raise InvalidSampleError(
                f"unknown two-sample statistic {statistic!r};"
                f" use one of {', '.join(TWO_SAMPLE_STATISTICS)} or a callable f(x, y, axis)"
            )
        part, combine = _TWO_SAMPLE_PARTS[statistic]
        kw = dict(n_resamples=n_resamples, rng=rng, batch=batch, want_jackknife=jackknife,
                  median_sampler=median_sampler, max_exact_jackknife=max_exact_jackknife,
                  n_jackknife_groups=n_jackknife_groups)
        a0, a_reps, a_d, _, sampler = _one_sample_parts(xa, part, **kw)
        b0, b_reps, b_d, _, _ = _one_sample_parts(ya, part, **kw)
        with np.errstate(divide="ignore", invalid="ignore"):
            t0 = float(combine(a0, b0))
            reps = np.asarray(combine(a_reps, b_reps), dtype=np.float64)
            d = None
            if jackknife:
                d = np.concatenate([t0 - combine(a0 - a_d, b0), t0 - combine(a0, b0 - b_d)])
        if not np.isfinite(t0):
            raise InvalidSampleError(
                f"{statistic} is undefined on these samples (division by zero); check x"
            )
        _check_finite_replicates(reps, statistic)
        return BootstrapDistribution(
            t0, reps, d, "exact" if jackknife else None, statistic, used_seed, sampler
        )
    vectorised = _accepts_axis(statistic)

    def t_of(xb: np.ndarray, yb: np.ndarray) -> np.ndarray:
        return _apply(statistic, vectorised, xb, yb)

    t0 = float(t_of(xa[None, :], ya[None, :])[0])
    reps = _resample_replicates([xa, ya], t_of, n_resamples, rng, batch)
    _check_finite_replicates(reps, _name_of(statistic))
    d = None
    method = None
    if jackknife:
        dx, mx = _jackknife_callable(
            xa, lambda xb: t_of(xb, np.broadcast_to(ya, (xb.shape[0], ya.size))), t0, rng,
            max_exact_jackknife, n_jackknife_groups)
        dy, my = _jackknife_callable(
            ya, lambda yb: t_of(np.broadcast_to(xa, (yb.shape[0], xa.size)), yb), t0, rng,
            max_exact_jackknife, n_jackknife_groups)
        d = np.concatenate([dx, dy])
        method = mx if mx == my else f"{mx}+{my}"
    return BootstrapDistribution(t0, reps, d, method, _name_of(statistic), used_seed, "resample")


def _check_n_resamples(n_resamples: int) -> int:
    if int(n_resamples) != n_resamples or n_resamples < 2:
        raise InvalidSampleError(f"n_resamples={n_resamples} must be an integer >= 2")
    return int(n_resamples)


def _check_finite_replicates(reps: np.ndarray, name: str) -> None:
    bad = int((~np.isfinite(reps)).sum())
    if bad:
        raise InvalidSampleError(
            f"{name} is undefined (NaN/inf) on {bad} of {reps.size} resamples;"
            " the statistic divides by a value that can be zero — choose another statistic"
        )


# ----------------------------------------------------------------------------- intervals


def norm_inter(replicates: ArrayLike, probabilities: ArrayLike) -> np.ndarray:
    """Quantiles of bootstrap replicates by R boot's ``norm.inter`` rule.

    Parameters
    ----------
    replicates : array_like
        ``t*`` (any order).
    probabilities : array_like
        Levels in (0, 1).

    Returns
    -------
    ndarray
        For each level ``p``: ``rk = (B + 1) p``, ``k = trunc(rk)``; if ``rk`` is
        an integer, ``t*_(k)``; ``k = 0`` gives ``t*_(1)`` and ``k = B`` gives
        ``t*_(B)``; otherwise ``t*_(k) + (Phi^-1(p) - Phi^-1(k/(B+1))) /
        (Phi^-1((k+1)/(B+1)) - Phi^-1(k/(B+1))) (t*_(k+1) - t*_(k))``.
    """
    t = np.sort(np.asarray(replicates, dtype=np.float64))
    B = t.size
    alpha = np.atleast_1d(np.asarray(probabilities, dtype=np.float64))
    rk = (B + 1) * alpha
    k = np.trunc(rk).astype(np.int64)
    out = np.empty(alpha.size)
    for i in range(alpha.size):
        ki = int(k[i])
        if ki <= 0:
            out[i] = t[0]
        elif ki >= B:
            out[i] = t[B - 1]
        elif ki == rk[i]:
            out[i] = t[ki - 1]
        else:
            z = special.ndtri(alpha[i])
            z_k = special.ndtri(ki / (B + 1))
            z_k1 = special.ndtri((ki + 1) / (B + 1))
            out[i] = t[ki - 1] + (z - z_k) / (z_k1 - z_k) * (t[ki] - t[ki - 1])
    return out


def _quantiles(reps: np.ndarray, probs: np.ndarray, rule: str) -> np.ndarray:
    if rule == "r":
        return norm_inter(reps, probs)
    if rule == "linear":
        return np.quantile(reps, probs, method="linear")
    raise InvalidSampleError(f"quantile_rule={rule!r} is unknown; use 'r' or 'linear'")


def interval_from_distribution(
    dist: BootstrapDistribution,
    kind: str = "bca",
    confidence: float = 0.95,
    *,
    quantile_rule: str = "r",
) -> BootstrapCI:
    """Turn bootstrap replicates into an interval of the given kind.

    Parameters
    ----------
    dist : BootstrapDistribution
        From ``bootstrap_distribution`` / ``bootstrap_distribution_2samp``, or
        built by hand from external replicates (e.g. R's ``boot``'s ``t``).
    kind : {"percentile", "basic", "normal", "bca"}
    confidence : float
        Two-sided coverage, e.g. 0.95.
    quantile_rule : {"r", "linear"}
        How quantiles of ``t*`` are taken (module docstring).
    """
    kind = _check_kind(kind)
    conf = _check_confidence(confidence)
    reps = np.asarray(dist.replicates, dtype=np.float64)
    _check_finite_replicates(reps, dist.statistic)
    t0 = dist.estimate
    B = reps.size
    se = float(np.std(reps, ddof=1))
    bias = float(np.mean(reps) - t0)
    tails = np.array([(1 - conf) / 2, (1 + conf) / 2])
    adjusted = tails
    z0 = acc = None
    extra: dict[str, Any] = {}
    if kind == "percentile":
        low, high = _quantiles(reps, tails, quantile_rule)
    elif kind == "basic":
        q = _quantiles(reps, tails[::-1], quantile_rule)
        low, high = 2 * t0 - q[0], 2 * t0 - q[1]
    elif kind == "normal":
        half = se * float(special.ndtri((1 + conf) / 2))
        low, high = t0 - bias - half, t0 - bias + half
    else:
        if dist.jackknife_diffs is None:
            raise InvalidSampleError("BCa needs jackknife values; compute with jackknife=True")
        frac = float(np.sum(reps < t0)) / B
        if not 0.0 < frac < 1.0:
            raise InvalidSampleError(
                f"BCa undefined: {'no' if frac == 0 else 'every'} bootstrap replicate is below"
                " the estimate (bias correction z0 is infinite); use kind='percentile'"
            )
        z0 = float(special.ndtri(frac))
        acc = bca_acceleration(dist.jackknife_diffs)
        z_tails = special.ndtri(tails)
        adjusted = special.ndtr(z0 + (z0 + z_tails) / (1 - acc * (z0 + z_tails)))
        extra["adjusted_levels"] = adjusted.tolist()
        low, high = _quantiles(reps, adjusted, quantile_rule)
    if kind != "normal":
        used = adjusted if kind == "bca" else tails
        ranks = (B + 1) * np.asarray(used)
        # R warns "extreme order statistics used as endpoints" in this case: the interval
        # then rests on the most extreme replicate(s) and needs more resamples.
        extra["extreme_order_statistics"] = bool(np.any((ranks <= 1) | (ranks >= B)))
    return BootstrapCI(
        low=float(low), high=float(high), kind=kind, confidence=conf, estimate=float(t0),
        standard_error=se, bias=bias, n_resamples=B, statistic=dist.statistic,
        seed=dist.seed, quantile_rule=quantile_rule, z0=z0, acceleration=acc,
        jackknife_method=dist.jackknife_method if kind == "bca" else None,
        sampler=dist.sampler, extra=extra,
    )


def interval_with_fallback(
    dist: BootstrapDistribution,
    kind: str = "bca",
    confidence: float = 0.95,
    *,
    quantile_rule: str = "r",
) -> BootstrapCI:
    """``interval_from_distribution``, or the percentile interval where BCa is undefined.

    Timings on a clock grid (every value a multiple of 1 µs, say) make the median's
    jackknife values all equal or put most replicates exactly on the estimate; BCa's bias
    correction or acceleration is then undefined. The percentile interval needs neither,
    and it is what BCa reduces to when z0 = a = 0. When this happens the result has
    ``kind="percentile"`` and ``extra["fallback"] = {"from": "bca", "reason": ...}`` so
    callers can say so.
    """
    try:
        return interval_from_distribution(dist, kind, confidence, quantile_rule=quantile_rule)
    except InvalidSampleError as exc:
        if _check_kind(kind) != "bca":
            raise
        ci = interval_from_distribution(dist, "percentile", confidence,
                                        quantile_rule=quantile_rule)
        ci.extra["fallback"] = {"from": "bca", "reason": str(exc).split(";")[0]}
        return ci


# ----------------------------------------------------------------------------- public API


def bootstrap_ci(
    x: ArrayLike,
    statistic: OneSampleStatistic = "mean",
    *,
    kind: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: SeedLike = None,
    batch: int | None = None,
    quantile_rule: str = "r",
    median_sampler: str = "order",
    max_exact_jackknife: int = DEFAULT_MAX_EXACT_JACKKNIFE,
    n_jackknife_groups: int = DEFAULT_JACKKNIFE_GROUPS,
) -> BootstrapCI:
    """Bootstrap confidence interval of a one-sample statistic.

    Parameters
    ----------
    x : array_like
        At least 3 finite, not-all-equal measurements (any unit).
    statistic : {"mean", "median", "sd", "var"} or callable
        A callable must reduce a 1-D sample to a float; if it accepts an
        ``axis`` keyword it is called on 2-D batches (rows = resamples,
        ``axis=-1``), otherwise row by row (slower).
    kind : {"bca", "percentile", "basic", "normal"}
        See the module docstring ("perc" and "norm" are accepted too).
    confidence : float
        Two-sided coverage in (0, 1).
    n_resamples : int
        Number of bootstrap resamples B (default 10,000).
    seed : int, numpy.random.Generator or None
        Random source. None draws fresh entropy and records the integer in
        the result's ``seed`` so the interval can be reproduced.
    batch : int or None
        Resamples drawn at once; None picks the largest batch whose indices
        and values fit ~96 MiB (e.g. 6 resamples at n = 1M).
    quantile_rule : {"r", "linear"}
        Quantile of ``t*``: R boot's ``norm.inter`` (default) or type 7.
    median_sampler : {"order", "resample"}
        Exact order-statistic shortcut for the median (default) or plain
        resampling.
    max_exact_jackknife, n_jackknife_groups : int
        BCa jackknife for callables: exact up to this n, else grouped.

    Returns
    -------
    BootstrapCI
        ``low``, ``high`` and ``estimate`` in the statistic's unit.

    Raises
    ------
    InvalidSampleError
        Bad sample, unknown option, or an interval that is undefined
        (e.g. BCa when every replicate equals the estimate).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(1).lognormal(size=200)
    >>> ci = bootstrap_ci(x, "median", kind="bca", seed=42)
    >>> ci.low < ci.estimate < ci.high
    True
    """
    dist = bootstrap_distribution(
        x, statistic, n_resamples=n_resamples, seed=seed, batch=batch,
        jackknife=_check_kind(kind) == "bca", median_sampler=median_sampler,
        max_exact_jackknife=max_exact_jackknife, n_jackknife_groups=n_jackknife_groups,
    )
    return interval_from_distribution(dist, kind, confidence, quantile_rule=quantile_rule)


def bootstrap_ci_2samp(
    x: ArrayLike,
    y: ArrayLike,
    statistic: str | Callable[..., Any] = "median_ratio",
    *,
    kind: str = "bca",
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: SeedLike = None,
    batch: int | None = None,
    quantile_rule: str = "r",
    median_sampler: str = "order",
    max_exact_jackknife: int = DEFAULT_MAX_EXACT_JACKKNIFE,
    n_jackknife_groups: int = DEFAULT_JACKKNIFE_GROUPS,
) -> BootstrapCI:
    """Bootstrap confidence interval of a statistic of two independent samples.

    Each sample is resampled independently with replacement (its own size),
    as R's ``boot(..., strata = group)``.

    Parameters
    ----------
    x : array_like
        Baseline sample (at least 3 finite, not-all-equal values).
    y : array_like
        Candidate sample (same requirements; any size).
    statistic : str or callable
        Named statistics are "y relative to x":
        ``"median_ratio"`` = median(y) / median(x) (default, dimensionless),
        ``"mean_ratio"`` = mean(y) / mean(x), ``"sd_ratio"`` = sd(y) / sd(x),
        ``"mean_diff"`` = mean(y) - mean(x), ``"median_diff"`` = median(y) -
        median(x) (unit of the data). A callable is called as
        ``f(x_batch, y_batch, axis=-1)`` on 2-D batches if it accepts ``axis``,
        else ``f(x_resample, y_resample)`` per resample.
    kind, confidence, n_resamples, seed, batch, quantile_rule, median_sampler,
    max_exact_jackknife, n_jackknife_groups
        As in ``bootstrap_ci``. For BCa the jackknife leaves out each value of
        x and of y in turn; the pooled differences give the acceleration.

    Returns
    -------
    BootstrapCI

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> base, cand = rng.normal(100, 5, 500), rng.normal(110, 5, 500)
    >>> ci = bootstrap_ci_2samp(base, cand, "median_ratio", seed=1)
    >>> 1.05 < ci.low < ci.high < 1.15
    True
    """
    dist = bootstrap_distribution_2samp(
        x, y, statistic, n_resamples=n_resamples, seed=seed, batch=batch,
        jackknife=_check_kind(kind) == "bca", median_sampler=median_sampler,
        max_exact_jackknife=max_exact_jackknife, n_jackknife_groups=n_jackknife_groups,
    )
    return interval_from_distribution(dist, kind, confidence, quantile_rule=quantile_rule)


def bootstrap_cis(
    x: ArrayLike,
    statistic: OneSampleStatistic = "mean",
    *,
    kinds: Sequence[str] = KINDS,
    confidence: float = 0.95,
    y: ArrayLike | None = None,
    **options: Any,
) -> dict[str, BootstrapCI]:
    """Several interval kinds from ONE set of replicates (one- or two-sample).

    Pass `y` for the two-sample form (then `statistic` is a two-sample
    statistic). `options` are those of ``bootstrap_ci`` except `kind`.
    Returns ``{kind: BootstrapCI}``.
    """
    canonical = [_check_kind(k) for k in kinds]
    quantile_rule = options.pop("quantile_rule", "r")
    want_jk = "bca" in canonical
    if y is None:
        dist = bootstrap_distribution(x, statistic, jackknife=want_jk, **options)
    else:
        dist = bootstrap_distribution_2samp(x, y, statistic, jackknife=want_jk, **options)
    return {
        k: interval_from_distribution(dist, k, confidence, quantile_rule=quantile_rule)
        for k in canonical
    }


def ci_mean(x: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of the mean (unit of x); options as ``bootstrap_ci``."""
    return bootstrap_ci(x, "mean", **options)


def ci_median(x: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of the median (unit of x); options as ``bootstrap_ci``."""
    return bootstrap_ci(x, "median", **options)


def ci_sd(x: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of the standard deviation (n - 1; unit of x)."""
    return bootstrap_ci(x, "sd", **options)


def ci_median_ratio(
    a: ArrayLike, b: ArrayLike, *, confidence_level: float = 0.95, **options: Any
) -> BootstrapCI:
    """Bootstrap CI of median(a) / median(b) (dimensionless; b = baseline).

    Same direction and argument names as :func:`benchlab.stats.ratio.median_ratio`
    (first over second; 0.9 = A's median 10 % below B's); other options as
    ``bootstrap_ci_2samp``, whose own argument order is (baseline, candidate).
    """
    return bootstrap_ci_2samp(b, a, "median_ratio", confidence=confidence_level, **options)


def ci_mean_diff(x: ArrayLike, y: ArrayLike, **options: Any) -> BootstrapCI:
    """Bootstrap CI of mean(y) - mean(x) (unit of the data; x = baseline)."""
    return bootstrap_ci_2samp(x, y, "mean_diff", **options)
