"""Shared pieces of the bootstrap modules: constants, the replicates' container, checks.

See :mod:`benchlab.stats.bootstrap` for the methods."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchlab.stats.descriptive import InvalidSampleError

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



# ----------------------------------------------------------------------------- helpers


def rng_and_seed(seed: SeedLike) -> tuple[np.random.Generator, int | None]:
    """A generator for ``seed`` and the int seed to report (fresh entropy for None; None for
    a Generator)."""
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        # Record fresh entropy so that any result can be reproduced from its report.
        seed = int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, (bool, float)) or not isinstance(seed, (int, np.integer)):
        raise InvalidSampleError(f"seed={seed!r} must be an int or a numpy Generator")
    return np.random.default_rng(int(seed)), int(seed)


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float in (0, 1); InvalidSampleError otherwise."""
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise InvalidSampleError(f"confidence={confidence} must be in (0, 1), e.g. 0.95")
    return c


def check_kind(kind: str) -> str:
    """The canonical name of interval kind ``kind`` (an alias allowed); InvalidSampleError
    otherwise."""
    try:
        return _KIND_ALIASES[kind]
    except KeyError:
        raise InvalidSampleError(
            f"unknown interval kind {kind!r}; use one of {', '.join(KINDS)}"
        ) from None


def accepts_axis(func: Callable[..., Any]) -> bool:
    """Whether ``func`` takes an ``axis`` argument (so it can reduce a 2-D batch at once)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "axis" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def name_of(statistic: OneSampleStatistic) -> str:
    """The name a report gives ``statistic`` (its string, or the callable's __name__)."""
    return statistic if isinstance(statistic, str) else getattr(statistic, "__name__", "callable")


def apply_statistic(func: Callable[..., Any], vectorised: bool, *batches: np.ndarray) -> np.ndarray:
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


def batch_size_of(total_values: int, batch: int | None, n_resamples: int) -> int:
    """Resamples per batch: ``batch``, or as many as DEFAULT_MEMORY_BUDGET (bytes) holds for
    ``total_values`` values each."""
    if batch is not None:
        if batch < 1:
            raise InvalidSampleError(f"batch={batch} must be >= 1")
        return min(int(batch), n_resamples)
    per_resample = max(1, total_values) * 16  # int32/64 index + float64 value, plus slack
    return int(max(1, min(n_resamples, DEFAULT_MEMORY_BUDGET // per_resample)))


def named_one_sample(name: str) -> Callable[..., np.ndarray]:
    """The vectorised statistic called ``name`` (mean, median, sd, var), reducing along
    ``axis``."""
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


TWO_SAMPLE_PARTS: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "mean_diff": ("mean", lambda a, b: b - a),
    "median_diff": ("median", lambda a, b: b - a),
    "mean_ratio": ("mean", lambda a, b: b / a),
    "median_ratio": ("median", lambda a, b: b / a),
    "sd_ratio": ("sd", lambda a, b: b / a),
}



def check_n_resamples(n_resamples: int) -> int:
    """``n_resamples`` as an int >= 2; InvalidSampleError otherwise."""
    if int(n_resamples) != n_resamples or n_resamples < 2:
        raise InvalidSampleError(f"n_resamples={n_resamples} must be an integer >= 2")
    return int(n_resamples)


def check_finite_replicates(reps: np.ndarray, name: str) -> None:
    """InvalidSampleError when a bootstrap replicate of statistic ``name`` is NaN or infinite."""
    bad = int((~np.isfinite(reps)).sum())
    if bad:
        raise InvalidSampleError(
            f"{name} is undefined (NaN/inf) on {bad} of {reps.size} resamples;"
            " the statistic divides by a value that can be zero — choose another statistic"
        )
