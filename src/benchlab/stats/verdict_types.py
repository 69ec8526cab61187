"""The structured verdict's types: :class:`Verdict`, :class:`CandidateVerdict`, :class:`Note`.

Made by :func:`benchlab.stats.verdict_model.verdict_model` (the rules are there); the JSON of
:meth:`Verdict.to_dict` is documented in ``docs/verdict.md`` and ``docs/verdict.schema.json``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from benchlab.jsonable import jsonable

SCHEMA = "benchlab.verdict/1"
OUTCOMES = ("faster", "slower", "equivalent", "undecided")
BASELINE_RULES = ("reference", "first", "fastest", "given")


@dataclass(frozen=True)
class Note:
    """Something the reader should know, as a code with its numbers (words: report layer).

    Codes: ``too_few_runs`` {n, attainable_min_n, family, attainable_p}; ``autocorrelated``
    {series, n, effective_n, ljung_box_p, max_abs_acf, lag1}; ``open_end`` {} (an interval end at
    exactly 1 that the test excludes: clock-grid ties); ``shift_scale`` {} (a value <= 0: the
    ratio is 1 + shift / baseline median); ``no_ratio`` {} (baseline median 0);
    ``within_margin`` {margin} (decided, yet inside the equivalence margin);
    ``test_interval_disagree`` {p_adjusted} (rare tie corner: the test rejects, the interval
    holds 1 inside; reported as undecided); ``identical`` {} (both constant and equal);
    ``session_autocorrelated`` {lag1, n, series} (the lag-1 autocorrelation pooled over the
    session's series is beyond its band while no single series is flagged); ``widened``
    {inflation, df} (autocorrelated runs: the standard error was widened by sqrt(inflation),
    and the Student t reference of the inflated test has df degrees of freedom; null for the
    deflated rank test, reached only when the clock-grid floor over- or underflows).
    """

    code: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CandidateVerdict:
    """One command against the baseline. Ratios are candidate / baseline (< 1: faster).

    Attributes
    ----------
    name, n, median : str, int, float
        The candidate, its run count and median (in the verdict's unit).
    n_baseline, median_baseline : int, float
        The same for the baseline.
    scale : {"ratio", "shift"}
        "ratio": Hodges-Lehmann ratio of logs; "shift": on the raw values (a value <= 0).
    ratio, ratio_low, ratio_high : float or None
        Estimate and interval as ratios (None: too few runs, or a baseline median of 0).
    shift, shift_low, shift_high : float or None
        The same on the raw scale (unit of the series) when ``scale`` is "shift", else None.
    low_open, high_open : bool
        Interval end at exactly 1 that the test excludes (clock-grid ties).
    interval_level : float or None
        Achieved confidence of the interval (Holm's level for this comparison).
    p_value, p_adjusted : float
        Mann-Whitney p (two-sided, deflated for autocorrelation) and Holm-adjusted over the
        family.
    test : str
        "exact", "normal" or "constant" (Mann-Whitney), or "inflated" (autocorrelated runs: the
        Wald test of the Hodges-Lehmann estimate with its standard error widened).
    outcome : {"faster", "slower", "equivalent", "undecided"}
        The candidate relative to the baseline.
    reason : str
        "significant", "inside_margin", "identical", "not_significant", "too_few_runs",
        "dependence_unresolved" (a widened test decided, but fewer than 30 runs cannot
        estimate their dependence well enough to stand by it).
    equivalence_low, equivalence_high : float or None
        The (1 - 2 alpha / m) ratio interval of the equivalence test (TOST).
    runs_to_decide, additional_runs : int or None
        Runs per command that would likely decide an undecided comparison, and how many more
        that is than the fewer of the two has.
    plan : {"difference", "equivalence", "dependence", ""}
        What ``runs_to_decide`` aims at: detect the observed difference ``plan_effect``, show
        equivalence within the margin if there is no difference, or enough runs to estimate
        their own dependence.
    plan_effect : float or None
        The relative difference (fraction, 0.03 = 3 %) the plan is for.
    runs_to_equivalence : int or None
        Runs per command that would likely show equivalence within the margin if there is no
        difference (undecided only).
    notes : tuple of Note
    """

    name: str
    n: int
    median: float
    n_baseline: int
    median_baseline: float
    scale: str
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None
    shift: float | None
    shift_low: float | None
    shift_high: float | None
    low_open: bool
    high_open: bool
    interval_level: float | None
    p_value: float
    p_adjusted: float
    test: str
    outcome: str
    reason: str
    equivalence_low: float | None
    equivalence_high: float | None
    runs_to_decide: int | None
    additional_runs: int | None
    plan: str
    plan_effect: float | None
    runs_to_equivalence: int | None = None
    notes: tuple[Note, ...] = ()

    @property
    def decided(self) -> bool:
        """Faster or slower (a difference is claimed)."""
        return self.outcome in ("faster", "slower")

    def has_note(self, code: str) -> bool:
        """Whether a note with ``code`` is attached."""
        return any(n.code == code for n in self.notes)


@dataclass(frozen=True)
class Verdict:
    """Every candidate against one baseline, decided with one family-wise error rate.

    Attributes
    ----------
    baseline : str
        Name of the baseline series.
    baseline_rule : {"reference", "first", "fastest", "given"}
        How it was chosen (:func:`choose_baseline`); "given" for an explicit baseline.
    metric, unit : str
        What was compared (e.g. "wall", "ns").
    confidence_level, alpha : float
        alpha = 1 - confidence_level, the family-wise error rate of "faster"/"slower" claims.
    correction : {"none", "holm"}
    family : int
        Comparisons in Holm's family (k - 1 with a fixed baseline, k (k - 1) / 2 with the
        fastest).
    equivalence_margin : float
        Relative margin of "equivalent within +-x" (0.01 = 1 %).
    attainable_min_n : int
        Fewest runs per command with which any comparison of this family can decide.
    candidates : tuple of CandidateVerdict
        In the order given (the baseline left out).
    notes : tuple of Note
        Verdict-wide notes (autocorrelated series).
    equivalence_margin_abs : float or None
        The margin in the series' unit when it was given so (``--min-effect 5ns``); it then
        replaces ``equivalence_margin`` (which is this over the baseline's median).
    """

    baseline: str
    baseline_rule: str
    metric: str
    unit: str
    confidence_level: float
    alpha: float
    correction: str
    family: int
    equivalence_margin: float
    power: float
    attainable_min_n: int
    candidates: tuple[CandidateVerdict, ...]
    notes: tuple[Note, ...] = ()
    equivalence_margin_abs: float | None = None
    schema: str = SCHEMA

    def candidate(self, name: str) -> CandidateVerdict:
        """The candidate called ``name`` (KeyError if none)."""
        for c in self.candidates:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (NaN/inf become None); schema ``docs/verdict.schema.json``."""
        return jsonable(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """The inverse of :meth:`to_dict` (a bundle or a stored verdict read back)."""
        def notes(items):
            return tuple(Note(n["code"], dict(n.get("data") or {})) for n in items or ())
        cands = tuple(CandidateVerdict(**{**c, "notes": notes(c.get("notes"))})
                      for c in data["candidates"])
        fields = {f.name for f in dataclasses.fields(cls)}
        rest = {k: v for k, v in data.items() if k in fields and k not in ("candidates", "notes")}
        return cls(**rest, candidates=cands, notes=notes(data.get("notes")))
