"""The steps of :func:`benchlab.stats.verdict.compare`: the numbers, then the decision.

Every step that real timings can break (ties on a clock grid, constant samples, a zero median,
one enormous outlier) degrades to a note in ``Comparison.notes`` instead of raising: the
decision always comes out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from benchlab.errors import UserError
from benchlab.stats.comparison import (
    FAILED,
    INFO,
    MAX_RUNS_STATED,
    PASSED,
    WARNING,
    Check,
    CompareOptions,
    Comparison,
)
from benchlab.stats.descriptive import InvalidSampleError, as_sample, summarize
from benchlab.stats.independence import check_independence
from benchlab.stats.power import minimum_interesting_effect
from benchlab.stats.rank import HodgesLehmannResult, hodges_lehmann, mann_whitney_u
from benchlab.stats.ratio import median_ratio
from benchlab.stats.spread import estimate_sd, plan_runs, robust_spread


def _min_effect(o: CompareOptions, baseline_median: float) -> tuple[float | None, str]:
    """Minimum interesting effect (ns) and where it came from; None when 0 by construction."""
    if o.min_effect is not None:
        if not (math.isfinite(o.min_effect) and o.min_effect > 0):
            raise UserError(f"min_effect={o.min_effect} ns must be positive; e.g. 1000 (1 µs)")
        return float(o.min_effect), "given"
    if o.iterations is not None or o.clock_ghz is not None:
        if o.iterations is None or o.clock_ghz is None:
            raise UserError("give both iterations and clock_ghz (or min_effect in ns)")
        value = minimum_interesting_effect(o.iterations, o.clock_ghz)
        return value, f"cycle:{o.iterations}:{o.clock_ghz:g}"
    if not (math.isfinite(o.min_effect_relative) and o.min_effect_relative > 0):
        raise UserError("min_effect_relative must be positive, e.g. 0.01 for 1 %")
    if baseline_median == 0:
        return None, "relative:zero_median"
    return o.min_effect_relative * abs(baseline_median), f"relative:{o.min_effect_relative:g}"


def _independence(x: np.ndarray, threshold: float) -> Any:
    try:
        return check_independence(x, threshold=threshold)
    except InvalidSampleError:  # constant: autocorrelation is undefined (and irrelevant)
        return None


def analyse(a: Any, b: Any, name_a: str, name_b: str, o: CompareOptions) -> Comparison:
    """Every number of the comparison (``o`` resolved); the decision is :func:`conclude`'s."""
    xa = as_sample(a, name=f"sample {name_a!r}", min_n=3)
    xb = as_sample(b, name=f"sample {name_b!r}", min_n=3)
    notes: list[str] = []
    summary_a, summary_b = summarize(xa), summarize(xb)
    ind_a = _independence(xa, o.max_autocorrelation)
    ind_b = _independence(xb, o.max_autocorrelation)
    if ind_a is None or ind_b is None:
        notes.append("independence_constant")
    spread, spread_method = max(robust_spread(xa), robust_spread(xb), key=lambda s: s[0])
    sd = None
    if o.jaybeams_compatible and xa.min() < xa.max() and xb.min() < xb.max():
        sd = estimate_sd({name_a: xa, name_b: xb}, jaybeams_compatible=True,
                         n_resamples=o.bootstrap_resamples, seed=o.seed)
    min_effect, source = _min_effect(o, summary_b.median)
    if min_effect is None:
        notes.append("no_min_effect")
    plan_10x = plan_1x = None
    if min_effect is not None:
        plan_spread = sd.value if sd is not None else spread
        kw = dict(alpha=o.alpha, power=o.power, nonparametric_factor=o.nonparametric_factor,
                  round_to=o.round_to, minimum=o.min_samples)
        plan_10x = plan_runs(10 * min_effect, plan_spread, **kw)
        plan_1x = plan_runs(min_effect, plan_spread, **kw)
        if plan_1x.n_required is None:
            notes.append("plan_unavailable")
    if xa.min() == xa.max() == xb.min() == xb.max():
        mw = None  # identical constants: no test needed, and a rank test has nothing to rank
        hl = HodgesLehmannResult(0.0, 0.0, 0.0, o.confidence_level, 1.0, "constant", 1, 1)
        notes.append("hl_constant")
    else:
        mw = mann_whitney_u(xa, xb)
        hl = hodges_lehmann(xa, xb, conf_level=o.confidence_level)
    ratio, ratio_problem = None, ""
    try:
        ratio = median_ratio(xa, xb, confidence_level=o.confidence_level,
                             n_resamples=o.bootstrap_resamples, seed=o.seed)
        if "fallback" in ratio.extra:
            notes.append("ratio_fallback")
    except InvalidSampleError as exc:
        ratio_problem = str(exc)
        notes.append("ratio_unavailable")
    from benchlab.stats.verdict_pair import series_dependence

    deps = [None if x.min() == x.max() else
            series_dependence(x, jaybeams_compatible=o.jaybeams_compatible, family=2)
            for x in (xa, xb)]  # the two series' bands as the verdict of two commands sets them
    return Comparison(name_a, name_b, o, summary_a, summary_b, ind_a, ind_b, spread,
                      spread_method, sd, min_effect, source, plan_10x, plan_1x, mw, hl, ratio,
                      ratio_problem, notes=notes, dependence_a=deps[0], dependence_b=deps[1])


def _runs_to_decide(c: Comparison) -> tuple[int | None, str]:
    """Runs per group likely to decide: the interval's half-width shrinks as 1/sqrt(n)."""
    hl, n = c.hodges_lehmann, min(c.n_a, c.n_b)
    half = (hl.ci_high - hl.ci_low) / 2
    d = abs(hl.estimate)
    targets = {}
    if half > 0 and d > 0:
        targets["exclude_zero"] = n * (half / d) ** 2
    if half > 0 and c.min_effect is not None and d < c.min_effect:
        targets["inside_margin"] = n * (half / (c.min_effect - d)) ** 2
    if not targets:
        return None, "none"
    method, target = min(targets.items(), key=lambda kv: kv[1])
    if not target < MAX_RUNS_STATED:
        return None, method
    return max(math.ceil(target), n + 1), method


def _checks(c: Comparison) -> list[Check]:
    o, n_have = c.options, min(c.n_a, c.n_b)
    checks = [Check("summary", INFO, {"group": "a"}), Check("summary", INFO, {"group": "b"})]
    ind = (c.independence_a, c.independence_b)
    if None in ind:
        checks.append(Check("independence", INFO, {"constant": True}))
    elif o.jaybeams_compatible:  # the JayBeams fixed max |ACF| >= 0.05
        checks.append(Check("independence", PASSED if all(i.passed for i in ind) else WARNING))
    else:  # a threshold that scales with n (verdict_pair.series_dependence)
        flagged = any(d is not None and d.flagged for d in (c.dependence_a, c.dependence_b))
        checks.append(Check("independence", WARNING if flagged else PASSED, {"scaled": True}))
    checks.append(Check("sd_estimate" if c.sd_estimate is not None else "spread", INFO))
    for name, plan, short in (("power_10x", c.plan_10x, FAILED if o.jaybeams_compatible
                               else WARNING), ("power_1x", c.plan_1x, WARNING)):
        if plan is None:
            checks.append(Check(name, INFO, {"unavailable": "no_min_effect"}))
        elif plan.n_required is None:
            checks.append(Check(name, short, {"unavailable": plan.reason}))
        else:
            checks.append(Check(name, PASSED if n_have >= plan.n_required else short,
                                {"have": n_have}))
    checks.append(Check("mann_whitney", INFO if c.mann_whitney is None else
                        PASSED if c.significant else WARNING,
                        {"p": c.p_decision, "adjusted": c.p_adjusted is not None}))
    checks.append(Check("hodges_lehmann", INFO))
    checks.append(Check("median_ratio", INFO if c.median_ratio is not None else WARNING))
    if c.min_effect is not None and c.mann_whitney is not None:
        big = abs(c.hodges_lehmann.estimate) >= c.min_effect
        checks.append(Check("effect_size", PASSED if big else (
            FAILED if o.jaybeams_compatible else WARNING), {"large_enough": big}))
    return checks


def conclude(c: Comparison, p_decision: float) -> None:
    """Fill ``significant``, ``checks``, ``outcome``, ``reason`` and the runs that would decide."""
    o, hl = c.options, c.hodges_lehmann
    c.significant = p_decision < o.alpha
    c.checks = _checks(c)
    excludes_zero = hl.ci_high < 0 or hl.ci_low > 0
    direction = "faster" if hl.estimate < 0 else "slower"
    margin = c.min_effect
    c.samples_needed = c.additional_runs = None
    if o.jaybeams_compatible:
        large = margin is not None and abs(hl.estimate) >= margin
        enough_10x = (c.plan_10x is not None and c.plan_10x.n_required is not None
                      and min(c.n_a, c.n_b) >= c.plan_10x.n_required)
        if not enough_10x:
            c.outcome, c.reason = "undecided", "power_10x"
            c.samples_needed = c.plan_10x.n_required if c.plan_10x is not None else None
        elif not large:
            c.outcome, c.reason = "undecided", "effect_too_small"
        elif not c.significant:
            c.outcome, c.reason = "undecided", "not_significant"
            c.samples_needed = c.plan_1x.n_required if c.plan_1x is not None else None
        else:
            c.outcome, c.reason = direction, "significant"
        c.samples_needed_method = "JayBeams power plan" if c.samples_needed else ""
    elif hl.method == "constant":
        c.outcome, c.reason = "equivalent", "identical"
    elif margin is not None and -margin < hl.ci_low and hl.ci_high < margin:
        c.outcome, c.reason = "equivalent", "inside_margin"
    elif c.significant and excludes_zero:
        c.outcome, c.reason = direction, "significant"
    else:
        c.outcome, c.reason = "undecided", "not_significant"
        c.samples_needed, c.samples_needed_method = _runs_to_decide(c)
    if c.samples_needed is not None:
        c.additional_runs = max(c.samples_needed - min(c.n_a, c.n_b), 0)
    if not o.jaybeams_compatible:
        c.checks = _quiet_plans(c.checks, decided=c.outcome != "undecided")


#: Checks about planning more runs: warnings only while a comparison is undecided.
_PLAN_CHECKS = ("power_10x", "power_1x", "effect_size")


def _quiet_plans(checks: list[Check], *, decided: bool) -> list[Check]:
    """A decided comparison gets no power or plan WARNING (a rejection is valid whatever a
    power analysis says); an undecided one at most one: the minimum effect's (power_1x) when
    it warns, else the first."""
    warnings = [c.name for c in checks if c.name in _PLAN_CHECKS and c.status == WARNING]
    keep = None if decided or not warnings else (
        "power_1x" if "power_1x" in warnings else warnings[0])
    return [Check(c.name, INFO, c.data) if c.name in warnings and c.name != keep else c
            for c in checks]
