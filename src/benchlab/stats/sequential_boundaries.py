"""Group-sequential boundaries: Lan-DeMets alpha spending (O'Brien-Fleming or Pocock type),
critical values by numerical integration of the look-to-look recursion, rejection
probabilities and the maximum-sample inflation. The design that uses them is
:class:`benchlab.stats.sequential.SequentialDesign` (method and references there)."""

from __future__ import annotations

import copy
import math
from functools import lru_cache
from typing import Literal

import numpy as np

from benchlab.errors import UserError
from benchlab.stats import distributions as special
from benchlab.stats.distributions import brentq

Spending = Literal["obrien-fleming", "pocock"]

_GRID_POINTS = 401  # odd, for Simpson's rule; boundaries agree with 1601 points to 1e-7
_MAX_CRITICAL = 40.0
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def spent_alpha(t: float, alpha: float, spending: Spending = "obrien-fleming") -> float:
    """Cumulative two-sided type-I error allowed at information fraction ``t`` (0..1).

    O'Brien-Fleming type: 4 - 4 Phi(z_{1-alpha/4} / sqrt(t)) (alpha/2 per side, each spent as
    Lan & DeMets' 2 - 2 Phi(z_{1-a/2} / sqrt(t)) with a = alpha/2); Pocock type:
    alpha ln(1 + (e - 1) t). Both are 0 at t = 0 and alpha at t = 1.
    """
    t = min(max(float(t), 0.0), 1.0)
    if t == 0.0:
        return 0.0
    if spending == "obrien-fleming":
        # Per side alpha/2 spent as 2 - 2 Phi(z_{1-alpha/4} / sqrt(t)) (the form of gsDesign's
        # sfLDOF and R's ldbounds), so the total is 4 - 4 Phi(z_{1-alpha/4} / sqrt(t)).
        return float(4.0 * special.ndtr(-special.ndtri(1.0 - alpha / 4.0) / math.sqrt(t)))
    if spending == "pocock":
        return float(alpha * math.log(1.0 + (math.e - 1.0) * t))
    raise UserError(f"unknown spending function {spending!r}; use obrien-fleming or pocock")


class BoundaryTracker:
    """Sub-density of the score S(t) = Z sqrt(t) on the continuation region, look by look.

    ``drift`` is the mean of S per unit information (0 under H0): S(t) ~ N(drift t, t).
    """

    def __init__(self, drift: float = 0.0):
        self.drift = drift
        self.t_prev = 0.0
        self.grid: np.ndarray | None = None  # points s_i
        self.weights: np.ndarray | None = None  # Simpson weight * density at s_i

    def crossing_probability(self, t: float, c: float) -> tuple[float, float]:
        """P(continue so far and S(t) >= c sqrt(t)), P(... and S(t) <= -c sqrt(t))."""
        b = c * math.sqrt(t)
        if self.grid is None:
            sd = math.sqrt(t)
            mean = self.drift * t
            return float(special.ndtr((mean - b) / sd)), float(special.ndtr((-b - mean) / sd))
        dt = t - self.t_prev
        sd = math.sqrt(dt)
        mean = self.grid + self.drift * dt
        upper = float(np.dot(self.weights, special.ndtr((mean - b) / sd)))
        lower = float(np.dot(self.weights, special.ndtr((-b - mean) / sd)))
        return upper, lower

    def advance(self, t: float, c: float) -> None:
        """Move to time ``t`` keeping only paths with |S(t)| < c sqrt(t)."""
        b = min(c, _MAX_CRITICAL) * math.sqrt(t)
        new_grid = np.linspace(-b, b, _GRID_POINTS)
        h = new_grid[1] - new_grid[0]
        simpson = np.ones(_GRID_POINTS)
        simpson[1:-1:2] = 4.0
        simpson[2:-1:2] = 2.0
        simpson *= h / 3.0
        if self.grid is None:
            sd = math.sqrt(t)
            density = np.exp(-0.5 * ((new_grid - self.drift * t) / sd) ** 2) / (sd * _SQRT_2PI)
        else:
            dt = t - self.t_prev
            sd = math.sqrt(dt)
            u = (new_grid[:, None] - self.grid[None, :] - self.drift * dt) / sd
            kernel = np.exp(-0.5 * u * u) / (sd * _SQRT_2PI)
            density = kernel @ self.weights
        self.grid = new_grid
        self.weights = simpson * density
        self.t_prev = t


def _critical_value(tracker: BoundaryTracker, t: float, to_spend: float) -> float:
    """c with P(continue so far, |Z(t)| >= c) = to_spend (two-sided, H0 tracker)."""
    if to_spend <= 0.0:
        return _MAX_CRITICAL

    def excess(c: float) -> float:
        up, low = tracker.crossing_probability(t, c)
        return up + low - to_spend

    if excess(0.0) <= 0.0:
        return 0.0
    if excess(_MAX_CRITICAL) >= 0.0:
        return _MAX_CRITICAL
    return float(brentq(excess, 0.0, _MAX_CRITICAL, xtol=1e-10))


def critical_values(
    fractions: list[float] | np.ndarray,
    *,
    alpha: float = 0.05,
    spending: Spending = "obrien-fleming",
) -> np.ndarray:
    """Two-sided critical values |Z| >= c_k for looks at information fractions ``fractions``.

    Parameters
    ----------
    fractions : sequence of float
        Strictly increasing information fractions in (0, 1].
    alpha : float
        Overall two-sided significance level.
    spending : {"obrien-fleming", "pocock"}
        Lan-DeMets spending function.

    Returns
    -------
    numpy.ndarray
        c_k for each look (dimensionless z values).

    Examples
    --------
    Five equally spaced looks, alpha = 0.05: O'Brien-Fleming type
    [4.877, 3.357, 2.680, 2.290, 2.031] and Pocock type [2.438, 2.427, 2.410, 2.397, 2.386],
    the values of R's ``ldbounds`` / gsDesign.
    """
    tracker = BoundaryTracker()
    out = []
    spent_before = 0.0
    prev = 0.0
    for t in fractions:
        t = float(t)
        if not prev < t <= 1.0:
            raise UserError("information fractions must increase strictly within (0, 1]")
        spent_now = spent_alpha(t, alpha, spending)
        c = _critical_value(tracker, t, spent_now - spent_before)
        out.append(c)
        tracker.advance(t, c)
        spent_before, prev = spent_now, t
    return np.array(out)


def rejection_probability(
    fractions: list[float] | np.ndarray,
    boundaries: list[float] | np.ndarray,
    drift: float,
) -> tuple[float, float]:
    """Probability of crossing the boundaries, and expected information fraction at stopping.

    ``drift`` is the standardised effect at full information: Z(1) ~ N(drift, 1) (for a fixed
    design with power 1 - beta at two-sided alpha, drift = z_{1-alpha/2} + z_{1-beta}). Only
    efficacy stops are counted (no equivalence stops).
    """
    tracker = BoundaryTracker(drift)
    reject = 0.0
    expected_t = 0.0
    alive = 1.0
    for t, c in zip(fractions, boundaries):
        up, low = tracker.crossing_probability(float(t), float(c))
        reject += up + low
        expected_t += (up + low) * float(t)
        alive -= up + low
        tracker.advance(float(t), float(c))
    expected_t += alive * float(fractions[-1])
    return reject, expected_t


def max_sample_inflation(
    *,
    alpha: float = 0.05,
    power: float = 0.95,
    looks: int = 10,
    spending: Spending = "obrien-fleming",
) -> float:
    """n_max / n_fixed so that ``looks`` equally spaced looks keep the fixed design's power.

    Multiply the fixed-sample size (e.g. from :func:`benchlab.stats.power.required_sample_size`)
    by this factor to get the sequential budget; the expected sample size under the alternative
    is then smaller than n_fixed. About 1.03 for O'Brien-Fleming with 5-10 looks.
    """
    fractions = np.arange(1, looks + 1) / looks
    bounds = critical_values(fractions, alpha=alpha, spending=spending)
    fixed_drift = -special.ndtri(alpha / 2) - special.ndtri(1 - power)

    def gap(drift: float) -> float:
        return rejection_probability(fractions, bounds, drift)[0] - power

    drift = brentq(gap, fixed_drift * 0.5, fixed_drift * 2.0, xtol=1e-9)
    return float((drift / fixed_drift) ** 2)


@lru_cache(maxsize=4096)
def boundary_at_look(alpha: float, spending: Spending, fractions: tuple[float, ...],
              information: tuple[float, ...] | None = None) -> tuple[float, BoundaryTracker]:
    """Critical value of the last look and the tracker after it, for a history of looks.

    ``fractions`` are the spending times (the share of the budget used at each look);
    ``information`` the statistic's information at each look in any unit (values per group:
    the correlation of two looks' Z is sqrt(I_j / I_k), whatever the unit), strictly
    increasing; None: the fractions themselves (the budget is in values). Spending on a clock
    while the information is counted (Lan & DeMets 1989, "calendar time") keeps the overall
    error at alpha when the last look spends at fraction 1, however the pace varies, as long
    as the fractions do not depend on the measured differences.

    Cached: a runner (or a simulation) with the same look schedule reuses the integration.
    Trackers in the cache are never mutated.
    """
    if information is not None and len(information) != len(fractions):
        raise UserError("one information value per look is needed")
    if len(fractions) == 1:
        tracker = BoundaryTracker()
        spent_before = 0.0
    else:
        _, previous = boundary_at_look(alpha, spending, fractions[:-1],
                                None if information is None else information[:-1])
        tracker = copy.copy(previous)
        spent_before = spent_alpha(fractions[-2], alpha, spending)
    t = fractions[-1] if information is None else information[-1]
    if information is not None and len(information) > 1 and not information[-2] < t:
        raise UserError("the information of the looks must increase strictly")
    c = _critical_value(tracker, t, spent_alpha(fractions[-1], alpha, spending) - spent_before)
    tracker.advance(t, c)
    return c, tracker
