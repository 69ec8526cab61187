"""The data of a comparison: options, checks, the result (see :mod:`benchlab.stats.verdict`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from benchlab.errors import UserError
from benchlab.jsonable import jsonable
from benchlab.stats.descriptive import Summary
from benchlab.stats.spread import RunsPlan, SdEstimate

PASSED, WARNING, FAILED, INFO = "PASSED", "WARNING", "FAILED", "INFO"
#: Mann-Whitney against the t test under normality: n_W = n_t x pi / 3 (ARE 3/pi).
RANK_TEST_FACTOR = math.pi / 3
#: Beyond this many runs per group a "runs needed" estimate is not worth stating.
MAX_RUNS_STATED = 10**9


@dataclass(frozen=True)
class CompareOptions:
    """Options of :func:`compare`; ``None`` fields take the mode's default (see ``resolved``).

    Attributes
    ----------
    confidence_level : float or None
        Level of the intervals; alpha = 1 - confidence_level unless ``alpha`` is given.
        Default 0.95 (the JayBeams analysis: 0.95 too, with alpha 0.01).
    alpha : float or None
        Significance level; default 1 - confidence_level (``jaybeams_compatible``: 0.01).
        Outside ``jaybeams_compatible`` an alpha that disagrees with the level is an error.
    power : float
        Power the sample-size plan aims at (seed: 0.95).
    min_effect : float or None
        Smallest interesting difference in ns. If None: ``iterations / clock_ghz`` ns when
        both are given (one cycle per iteration), else ``min_effect_relative`` times B's median.
    min_effect_relative : float
        Minimum effect as a fraction of the baseline's median (default 0.01 = 1 %).
    iterations, clock_ghz : int, float or None
        Work per measurement and nominal clock (seed: 20,000 and 3 GHz).
    max_autocorrelation : float
        Independence threshold on max |ACF| (seed: 0.05).
    bootstrap_resamples : int or None
        Resamples of the bootstraps; None: 10,000 if ``jaybeams_compatible``, else 2,000.
    seed : int
        Seed of the bootstraps (results are reproducible).
    nonparametric_factor, round_to, min_samples : float, int, int or None
        Sample-size rule; None: the JayBeams 1.15, 1000, 5000 with ``jaybeams_compatible``,
        else pi/3, 1, 0.
    jaybeams_compatible : bool
        Reproduce the JayBeams rules exactly (module docstring).
    """

    confidence_level: float | None = None
    alpha: float | None = None
    power: float = 0.95
    min_effect: float | None = None
    min_effect_relative: float = 0.01
    iterations: int | None = None
    clock_ghz: float | None = None
    max_autocorrelation: float = 0.05
    bootstrap_resamples: int | None = None
    seed: int = 1
    nonparametric_factor: float | None = None
    round_to: int | None = None
    min_samples: int | None = None
    jaybeams_compatible: bool = False

    def resolved(self) -> CompareOptions:
        """A copy with every ``None`` default filled in and the values checked (UserError)."""
        jb = self.jaybeams_compatible
        level, alpha = self.confidence_level, self.alpha
        if level is None:
            level = 0.95 if (jb or alpha is None) else 1 - alpha
        if alpha is None:
            alpha = 0.01 if jb else 1 - level
        for name, v in (("confidence_level", level), ("alpha", alpha), ("power", self.power)):
            if not (isinstance(v, (int, float)) and 0 < v < 1):
                raise UserError(f"{name}={v} must lie strictly between 0 and 1; e.g. 0.95")
        if not jb and not math.isclose(alpha, 1 - level, rel_tol=1e-9):
            raise UserError(f"alpha={alpha:g} disagrees with the {100 * level:g}% interval; "
                            "give one of them (alpha = 1 - confidence level)")
        return dataclasses.replace(
            self, confidence_level=float(level), alpha=float(alpha),
            bootstrap_resamples=self.bootstrap_resamples or (10_000 if jb else 2_000),
            nonparametric_factor=self.nonparametric_factor or (1.15 if jb else RANK_TEST_FACTOR),
            round_to=self.round_to or (1000 if jb else 1),
            min_samples=self.min_samples if self.min_samples is not None else (5000 if jb else 0))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the options."""
        return jsonable(dataclasses.asdict(self))


@dataclass(frozen=True)
class Check:
    """One step of the analysis: ``name`` says which, ``status`` is PASSED/WARNING/FAILED/INFO.

    The numbers are in the :class:`Comparison`; ``data`` holds what only this step knows.
    """

    name: str
    status: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return jsonable(dataclasses.asdict(self))


@dataclass
class Comparison:
    """Result of :func:`compare`: every number of the flow, the checks and the decision.

    Durations (``min_effect``, summaries, spread, Hodges-Lehmann) are in ns.

    Attributes
    ----------
    outcome : {"faster", "slower", "equivalent", "undecided"}
        A relative to B.
    reason : str
        Why: "significant", "inside_margin", "identical", "not_significant",
        "power_10x" or "effect_too_small" (the last two: the JayBeams stops).
    samples_needed : int or None
        Runs per group that would likely decide an undecided comparison
        (``samples_needed_method`` says how it was estimated); ``additional_runs`` = that
        minus the runs each group has.
    notes : list of str
        Codes of degraded steps: "ratio_fallback", "ratio_unavailable", "hl_constant",
        "no_min_effect", "plan_unavailable", "independence_constant".
    dependence_a, dependence_b : Dependence or None
        The autocorrelation check whose threshold scales with n
        (:func:`benchlab.stats.verdict_pair.series_dependence`), with the effective n the
        structured verdict counts; None for constant samples.
    verdict : Verdict or None
        The structured verdict (:class:`benchlab.stats.verdict_model.Verdict`) that this
        comparison's candidate belongs to, when a report renders the one verdict every
        command prints; its words then replace this flow's own (``to_dict`` leaves it out).
    """

    name_a: str
    name_b: str
    options: CompareOptions
    summary_a: Summary
    summary_b: Summary
    independence_a: Any
    independence_b: Any
    spread: float
    spread_method: str
    sd_estimate: SdEstimate | None
    min_effect: float | None
    min_effect_source: str
    plan_10x: RunsPlan | None
    plan_1x: RunsPlan | None
    mann_whitney: Any
    hodges_lehmann: Any
    median_ratio: Any
    ratio_problem: str = ""
    p_adjusted: float | None = None
    checks: list[Check] = field(default_factory=list)
    outcome: str = "undecided"
    reason: str = ""
    significant: bool = False
    samples_needed: int | None = None
    additional_runs: int | None = None
    samples_needed_method: str = ""
    notes: list[str] = field(default_factory=list)
    verdict: Any = None
    dependence_a: Any = None
    dependence_b: Any = None

    @property
    def p_value(self) -> float:
        """Mann-Whitney p-value (unadjusted; 1 for two identical constant samples)."""
        return self.mann_whitney.p_value if self.mann_whitney is not None else 1.0

    @property
    def p_decision(self) -> float:
        """The p-value the decision used: Holm-adjusted when several candidates, else raw."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def n_a(self) -> int:
        """Runs of A."""
        return self.summary_a.n

    @property
    def n_b(self) -> int:
        """Runs of B."""
        return self.summary_b.n

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable nested dict of the whole comparison (NaN/inf become None)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name != "verdict"}
        out.update(n_a=self.n_a, n_b=self.n_b, p_value=self.p_value,
                   p_decision=self.p_decision)
        return jsonable(out)


@dataclass
class MultiComparison:
    """Several candidates against one baseline, decided with Holm-adjusted p-values."""

    baseline: str
    comparisons: list[Comparison]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"baseline": self.baseline, "adjustment": "holm",
                "comparisons": [c.to_dict() for c in self.comparisons]}
