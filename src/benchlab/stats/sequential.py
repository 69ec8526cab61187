"""Group-sequential comparison of two benchmarks: stop as soon as the data decide.

``benchlab run --until-decided A B`` measures A and B in interleaved rounds and, after each
round (a *look*), asks :meth:`SequentialDesign.look` whether to go on. Looking at a p-value after
every round and stopping when it drops below alpha ("peeking") inflates the false-positive rate
far above alpha; this module instead spends the error probability over the looks.

Method
------
* Statistic: the standardised Mann-Whitney statistic Z_k = (W_k - n m / 2) / sigma_k (tie
  corrected, no continuity correction) of all data so far; when the runs so far show evidence
  of dependence (the fixed-n verdict's rule), Z_k divided by sqrt(inflation), or where the two
  series do not overlap the widened Wald statistic of the Hodges-Lehmann shift with its
  Student t p carried to the normal scale (:func:`_widened`). Under H0 the sequence of
  rank-sum statistics at increasing sample sizes has asymptotically the joint distribution of
  Brownian motion observed at the information times t_k (independent increments), the
  "canonical joint distribution" of group-sequential theory (Jennison & Turnbull 2000, sec.
  3.1 and 11.3).
* Information fraction: t_k = n_k / n_max, n_k = the smaller sample size at look k, n_max = the
  budget per group.
* Error spending (Lan & DeMets 1983): the cumulative two-sided type-I error allowed by time t
  is alpha*(t). Default O'Brien-Fleming type, alpha/2 per side spent as
  2 - 2 Phi(z_{1-alpha/4} / sqrt(t)) (as gsDesign's ``sfLDOF`` and R's ``ldbounds``),
  which spends almost nothing early (so a decision at the first looks needs overwhelming
  evidence) and keeps the final critical value close to the fixed-sample one; Pocock type,
  alpha*(t) = alpha ln(1 + (e - 1) t), is available. Because the spending is a function of
  t, looks may come at any, unplanned, times; only their number and order matter.
* Boundaries: at look k the critical value c_k solves
  P(|Z_1| < c_1, ..., |Z_{k-1}| < c_{k-1}, |Z_k| >= c_k) = alpha*(t_k) - alpha*(t_{k-1}),
  computed by numerical integration of the Brownian-motion sub-density over the continuation
  region (Armitage, McPherson & Rowe 1969; Jennison & Turnbull ch. 19), on a 1,201-point
  Simpson grid. The overall type-I error is alpha*(1) = alpha whatever the look times.
* Equivalence / futility: a repeated confidence interval (RCI) for the Hodges-Lehmann shift at
  look k uses the same critical value c_k; RCIs cover the true shift simultaneously at all
  looks with probability >= 1 - alpha (Jennison & Turnbull ch. 9), so stopping when the RCI
  lies inside +-margin (declared equivalent) keeps that claim's error <= alpha and never
  inflates the error of the "different" decision (the stop is non-binding for it).
* Budget: when n_k reaches n_max the last look spends what is left; if it does not reject, the
  result is "budget exhausted" (undecided).

References
----------
Lan, K. K. G. and DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
*Biometrika* 70, 659-663.
Lan, K. K. G. and DeMets, D. L. (1989). Group sequential procedures: calendar versus
information time. *Statistics in Medicine* 8, 1191-1198 (spending on a clock while the
correlation of the looks follows the information: ``look_critical_value(..., information)``).
O'Brien, P. C. and Fleming, T. R. (1979). A multiple testing procedure for clinical trials.
*Biometrics* 35, 549-556.
Jennison, C. and Turnbull, B. W. (2000). *Group Sequential Methods with Applications to
Clinical Trials*. Chapman & Hall/CRC.
Armitage, P., McPherson, C. K. and Rowe, B. C. (1969). Repeated significance tests on
accumulating data. *J. R. Statist. Soc. A* 132, 235-244.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.stats import distributions as special
from benchlab.stats.rank import hodges_lehmann, mann_whitney_u
from benchlab.stats.sequential_boundaries import (  # noqa: F401  (public here since the start)
    BoundaryTracker,
    Spending,
    boundary_at_look,
    critical_values,
    max_sample_inflation,
    rejection_probability,
    spent_alpha,
)


def look_critical_value(alpha: float, spending: Spending, fractions: tuple[float, ...],
                        information: tuple[float, ...] | None = None) -> float:
    """Critical value (a z bound) of the last of a history of looks.

    ``fractions``: each look's share of the budget (increasing, in (0, 1]: of the maximum
    information, or of a time budget); ``information``: each look's information when the
    fractions are not it (values per group, increasing; None: the fractions are the
    information); ``alpha``: the total two-sided error spent by ``spending`` over them.
    Cached per history, so a runner that adds one look at a time integrates one step per look.
    """
    return float(boundary_at_look(alpha, spending, tuple(fractions),
                           None if information is None else tuple(information))[0])


@dataclass(frozen=True)
class Decision:
    """Outcome of one look of a :class:`SequentialDesign`.

    Attributes
    ----------
    action : {"continue", "different", "equivalent", "budget_exhausted"}
        What the runner should do: keep measuring, or stop with this conclusion.
    look : int
        1-based index of this look (0 if it was too early to count as a look).
    n_a, n_b : int
        Sample sizes used.
    information : float
        Information fraction t = min(n_a, n_b) / max_samples.
    z : float
        Standardised Mann-Whitney statistic (negative: A tends to be smaller/faster).
    critical_value : float
        |z| at or above which this look decides "different".
    alpha_spent : float
        Cumulative type-I error spent up to this look.
    shift, rci_low, rci_high : float
        Hodges-Lehmann shift A - B and its repeated confidence interval (data unit, ns); NaN on
        "continue" looks of a design without equivalence margin (not needed, not computed).
    relative_margin : float or None
        Equivalence margin as a fraction of B's median.
    rci_level : float
        Confidence level of the repeated interval at this look, 1 - 2 Phi(-critical_value):
        valid whenever the design stops (Jennison and Turnbull 2000, ch. 9), unlike a
        fixed-sample interval computed after early stopping.
    b_median : float
        B's median at this look (ns), to express the shift relative to B.
    inflation : float
        Variance inflation of autocorrelated runs the look's test was widened by (1: none):
        ``z`` is then the rank statistic divided by sqrt(inflation) (or, for series that do
        not overlap, the widened Wald statistic of the shift on the normal scale), and the
        repeated interval is that test's.

    The words for a decision are :func:`benchlab.report.verdict_text.sequential_lines`'s.
    """

    action: str
    look: int
    n_a: int
    n_b: int
    information: float
    z: float
    critical_value: float
    alpha_spent: float
    shift: float
    rci_low: float
    rci_high: float
    relative_margin: float | None
    rci_level: float = math.nan
    b_median: float = math.nan
    inflation: float = 1.0

    @property
    def stop(self) -> bool:
        """True when the runner should stop measuring."""
        return self.action != "continue"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields (NaN and inf become None)."""
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in asdict(self).items()}


def _widened(a: np.ndarray, b: np.ndarray, z: float) -> tuple[float, float, tuple | None] | None:
    """(z, inflation, Wald) of the fixed-n verdict's widened test of a against b on the raw
    scale when the runs show dependence (None: they do not, or too few to check): the rank
    statistic ``z`` divided by sqrt(inflation), or where the series do not overlap
    (:func:`benchlab.stats.verdict_pair.separated`) the Wald statistic of the Hodges-Lehmann
    shift, ``Wald`` = (shift, se, df), its Student t p carried to the normal scale so the
    spending's boundaries apply as they do to z.

    The sequential look used the plain Mann-Whitney z: A/A sessions whose commands carry state
    from run to run (AR(1) phi 0.5, budget 200) were called different in 37 % of sessions at
    alpha 5 %."""
    from benchlab.stats.verdict_model import pair_inflation
    from benchlab.stats.verdict_pair import MIN_RUNS_DEPENDENCE, inflated_wald, separated, wald_df

    if min(a.size, b.size) < MIN_RUNS_DEPENDENCE or (a.min() == a.max() and b.min() == b.max()):
        return None
    inflation = pair_inflation(a, b)
    if inflation <= 1.0:
        return None
    wald = inflated_wald(a, b, "shift", inflation) if separated(a, b, inflation) else None
    if wald is None:
        return z / math.sqrt(inflation), inflation, None
    shift, se, _ = wald
    df = wald_df(int(a.size), int(b.size), inflation)
    tail = float(special.stdtr(df, -abs(shift) / se))  # one-sided p of |t|
    z = -float(special.ndtri(tail)) if tail > 0 else 37.0
    return math.copysign(z, shift), inflation, (shift, se, df)


@dataclass
class SequentialDesign:
    """A group-sequential two-sample comparison (Lan-DeMets alpha spending on Mann-Whitney).

    Parameters
    ----------
    max_samples : int
        Budget n_max per group; information fraction is n / max_samples.
    alpha : float
        Overall two-sided type-I error for the "different" decision (and for "equivalent").
    equivalence_margin : float or None
        Relative margin (fraction of B's median, e.g. 0.03 for +-3 %): stop as "equivalent" when
        the repeated confidence interval of the shift lies inside it. None: never.
    spending : {"obrien-fleming", "pocock"}
    min_samples : int
        Looks with fewer samples per group are not counted (and spend nothing): the normal
        approximation of the rank statistic needs a few dozen values.

    Usage
    -----
    >>> design = SequentialDesign(max_samples=20000, alpha=0.01, equivalence_margin=0.01)
    >>> # after each interleaved round:  d = design.look(a_so_far, b_so_far); if d.stop: ...

    The object is stateful: every counted look spends alpha, so call :meth:`look` only when the
    runner could really stop, with all data so far (not only the new round). Looks must have
    strictly growing sample sizes.
    """

    max_samples: int
    alpha: float = 0.05
    equivalence_margin: float | None = None
    spending: Spending = "obrien-fleming"
    min_samples: int = 20
    history: list[Decision] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (isinstance(self.max_samples, (int, np.integer)) and self.max_samples >= 3):
            raise UserError(f"max_samples={self.max_samples!r} must be an integer >= 3")
        if not 0.0 < self.alpha < 1.0:
            raise UserError(f"alpha={self.alpha} must be in (0, 1), e.g. 0.05")
        if self.equivalence_margin is not None and not self.equivalence_margin > 0:
            raise UserError("equivalence_margin must be a positive fraction, e.g. 0.01 for 1 %")
        spent_alpha(0.5, self.alpha, self.spending)  # validates the name
        self._tracker: BoundaryTracker | None = None
        self._fractions: tuple[float, ...] = ()
        self._spent = 0.0
        self._t = 0.0

    @classmethod
    def planned(
        cls,
        fixed_samples: int,
        *,
        alpha: float = 0.05,
        power: float = 0.95,
        looks: int = 10,
        equivalence_margin: float | None = None,
        spending: Spending = "obrien-fleming",
        min_samples: int = 20,
    ) -> SequentialDesign:
        """A design whose budget keeps the power of a fixed design of ``fixed_samples``.

        ``max_samples = ceil(fixed_samples * max_sample_inflation(alpha, power, looks))``
        (about +2 % for 10 O'Brien-Fleming looks). Use e.g.
        ``required_sample_size(...).n_required`` as ``fixed_samples``.
        """
        if not (isinstance(fixed_samples, (int, np.integer)) and fixed_samples >= 3):
            raise UserError(f"fixed_samples={fixed_samples!r} must be an integer >= 3")
        if not (isinstance(looks, (int, np.integer)) and looks >= 1):
            raise UserError(f"looks={looks!r} must be a positive integer")
        factor = max_sample_inflation(alpha=alpha, power=power, looks=int(looks),
                                      spending=spending)
        return cls(max_samples=int(math.ceil(fixed_samples * factor)), alpha=alpha,
                   equivalence_margin=equivalence_margin, spending=spending,
                   min_samples=min_samples)

    @property
    def finished(self) -> bool:
        """True once a look returned a stopping decision."""
        return bool(self.history) and self.history[-1].stop

    def look(self, a: Any, b: Any) -> Decision:
        """Analyse all data so far and decide whether to continue.

        Parameters
        ----------
        a, b : array_like
            All measurements of A and of B so far (ns), in measurement order.

        Returns
        -------
        Decision
        """
        if self.finished:
            raise UserError("this sequential comparison has already stopped; start a new design")
        mw = mann_whitney_u(a, b, exact=False, correct=False)
        n_a, n_b = mw.n_x, mw.n_y
        n = min(n_a, n_b)
        t = min(n / self.max_samples, 1.0)
        z = float(mw.z if mw.z is not None else 0.0)
        b_median = float(np.median(np.asarray(b, dtype=np.float64)))
        widened = None
        if n >= self.min_samples or t >= 1.0:
            widened = _widened(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                               z)
            if widened is not None:
                z = widened[0]
        if n < self.min_samples and t < 1.0:
            return Decision("continue", 0, n_a, n_b, t, z, math.inf, self._spent, math.nan,
                            math.nan, math.nan, self.equivalence_margin, math.nan, b_median)
        if t <= self._t:
            raise UserError(
                f"look with {n} samples per group is not after the previous look; "
                "call look() only with more data than last time"
            )
        spent_now = spent_alpha(t, self.alpha, self.spending)
        self._fractions = (*self._fractions, t)
        c, self._tracker = boundary_at_look(self.alpha, self.spending, self._fractions)
        self._spent, self._t = spent_now, t
        k = len(self.history) + 1
        margin = self.equivalence_margin
        rejected = abs(z) >= c
        # The repeated CI at every look: whenever the session stops (a decision, the budget,
        # --max-time) its last look's interval is the one that is valid to report.
        conf = min(max(1.0 - 2.0 * float(special.ndtr(-min(c, 37.0))), 1e-9), 1 - 1e-16)
        inflation = 1.0 if widened is None else widened[1]
        if widened is not None and widened[2] is not None:  # the Wald interval at this level
            shift, se, df = widened[2]
            q = -float(special.stdtrit(df, float(special.ndtr(-min(c, 37.0)))))
            half = se * (q if math.isfinite(q) else c)
            rci_low, rci_high = shift - half, shift + half
        else:  # the rank interval at the level whose z is sqrt(inflation) larger
            wide = min(c * math.sqrt(inflation), 37.0)
            level = min(max(1.0 - 2.0 * float(special.ndtr(-wide)), 1e-9), 1 - 1e-16)
            hl = hodges_lehmann(a, b, conf_level=level, exact=False)
            shift, rci_low, rci_high = hl.estimate, hl.ci_low, hl.ci_high
        if rejected:
            action = "different"
        elif margin is not None and -margin * b_median < rci_low and rci_high < margin * b_median:
            action = "equivalent"
        elif t >= 1.0:
            action = "budget_exhausted"
        else:
            action = "continue"
        decision = Decision(action, k, n_a, n_b, t, z, c, spent_now, shift, rci_low, rci_high,
                            margin, conf, b_median, inflation)
        self.history.append(decision)
        return decision

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description of the design and its looks so far."""
        return {
            "max_samples": int(self.max_samples),
            "alpha": self.alpha,
            "equivalence_margin": self.equivalence_margin,
            "spending": self.spending,
            "min_samples": self.min_samples,
            "looks": [d.to_dict() for d in self.history],
        }
