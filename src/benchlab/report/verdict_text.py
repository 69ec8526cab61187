"""The words of a comparison: check lines and the verdict of :mod:`benchlab.stats.verdict`.

``check_lines(c)`` gives (status, sentence) pairs in the order of the JayBeams report;
``verdict_text(c)`` the one-line verdict, which always says what to do next when undecided.
``verdict_lines(v)`` words the structured verdict (:mod:`benchlab.stats.verdict_model`) that
``run``, ``show``, ``compare``, ``report`` and the exports all print.

Long because: both verdicts' words live here, next to the number formats they share, so a
sentence is written once (the JayBeams analysis flow of ``compare``, and the verdict every command prints).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from benchlab.stats.comparison import Check, Comparison
from benchlab.units import format_duration, format_value, plural

#: Significant digits of the Hodges-Lehmann shift and interval: enough for the JayBeams
#: printed values (-771.55 µs, [-773.77, -769.32]).
HL_DIGITS = 5
#: Counts whose coefficient of variation is below this on both sides are compared by their
#: observed range, not by a test: 1e-4 is 100 instructions in a million, far below what a
#: code change moves and far above valgrind's zero run-to-run spread.
COUNT_CV_STABLE = 1e-4


def _fmt(value: float, unit: str, digits: int = 4) -> str:
    """``value`` in its metric's unit: a readable duration only when ``unit`` is ns.

    A series imported without a unit ('') is read as ns, as ``compare`` always has: the JayBeams
    files carry none and are nanoseconds."""
    unit = unit or "ns"
    if unit == "ns":
        return format_duration(value, digits)
    return format_value(value, unit, digits)


def format_interval(low: float, high: float, digits: int = 4, unit: str = "ns") -> str:
    """An interval with one unit for both ends: durations in ns as '[769.3, 773.8] µs', any
    other unit (count, KiB, ...) as its own values."""
    unit = unit or "ns"  # unitless series are read as ns (see _fmt)
    if unit == "KiB":  # sizes pick their own unit per end (KiB, MiB)
        return f"[{_fmt(low, unit, digits)}, {_fmt(high, unit, digits)}]"
    if unit != "ns":
        return f"[{format_value(low, '', digits)}, {format_value(high, '', digits)}] {unit}"
    mag = max(abs(low), abs(high))
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")):
        if mag >= scale or unit == "ns":
            return f"[{low / scale:.{digits}g}, {high / scale:.{digits}g}] {unit}"
    raise AssertionError("unreachable")


def _p(p: float, alpha: float) -> str:
    return f"p < {alpha:g}" if p < alpha else f"p = {p:.3g}"


def _source(c: Comparison) -> str:
    kind, _, rest = c.min_effect_source.partition(":")
    if kind == "cycle":
        iterations, ghz = rest.split(":")
        return f"1 cycle x {iterations} iterations at {ghz} GHz"
    if kind == "relative":
        return f"{100 * float(rest):g}% of the baseline median"
    return "given"


def _summary(name: str, c: Comparison, group: str, unit: str) -> str:
    s = c.summary_a if group == "a" else c.summary_b
    return (f"{name}: n={s.n}, min {_fmt(s.min, unit)}, median {_fmt(s.median, unit)}, "
            f"mean {_fmt(s.mean, unit)}, max {_fmt(s.max, unit)}, "
            f"sd {_fmt(s.sd, unit)}")


def _plan(c: Comparison, check: Check, factor: int, unit: str) -> str:
    plan = c.plan_10x if factor == 10 else c.plan_1x
    what = "10x the minimum effect" if factor == 10 else "the minimum interesting effect"
    if plan is None:
        return ("no power analysis: the baseline's median is 0, so a relative minimum effect "
                "is 0; give the minimum effect in units (--min-effect 1us)")
    spread = ("sd " if c.sd_estimate is not None else f"robust spread ({c.spread_method}) ")
    ctx = (f"(alpha={plan.alpha:g}, power={plan.power:g}, {spread}"
           f"{_fmt(plan.spread, unit)})")
    delta = _fmt(plan.delta, unit)
    if plan.n_required is None:
        return (f"power analysis for {what} ({delta}) unavailable: {plan.reason} {ctx}; the "
                "verdict does not depend on it")
    if check.status == "PASSED":
        return (f"{plan.n_required} samples detect {what} ({delta}) {ctx}; have "
                f"{check.data['have']}")
    if check.status == "INFO" and c.outcome != "undecided":
        # quieted because the comparison decided: "not enough samples" beside a 9.96x result
        # at p < 1e-4 read as a contradiction
        return (f"a power analysis would want {plan.n_required} samples to detect {what} "
                f"({delta}) {ctx}; the decision does not need them (a rejection holds "
                "whatever the power)")
    verb = "need >=" if factor == 10 else "should be >="
    return (f"not enough samples to detect {what} ({delta}): {verb} {plan.n_required}"
            f"{_mc_range(c, plan)}, have {c.name_a}={c.n_a} {c.name_b}={c.n_b} {ctx}")


def _mc_range(c: Comparison, plan: Any) -> str:
    """The sample count over the SD bound's Monte-Carlo 95% range (bound +- 1.96 x its
    Monte-Carlo SD, rounded as the bound is): the bootstrap's own noise moves the count when
    the bound sits near a rounding boundary (the JayBeams VM file: 145,000 or 146,000)."""
    sd = c.sd_estimate
    if sd is None or not sd.monte_carlo_error:
        return ""
    from benchlab.stats.spread import plan_runs

    def count(bound: float) -> int | None:
        value = math.ceil(bound / 1000.0) * 1000.0 if sd.rule == "jaybeams" else bound
        return plan_runs(plan.delta, max(value, 0.0), alpha=plan.alpha, power=plan.power,
                         nonparametric_factor=plan.nonparametric_factor,
                         round_to=plan.round_to, minimum=plan.minimum).n_required

    low = count(sd.bound - 1.96 * sd.monte_carlo_error)
    high = count(sd.bound + 1.96 * sd.monte_carlo_error)
    if low is None or high is None or low == high:
        return ""
    return f" ({low}-{high} over the SD bound's Monte-Carlo 95% range)"


def _spread_line(c: Comparison, unit: str) -> str:
    sd = c.sd_estimate
    if sd is None:
        return (f"spread for the power analysis: {_fmt(c.spread, unit)} (robust: "
                f"{c.spread_method}, the larger of the two samples)")
    return (f"standard deviation for the power analysis: {_fmt(sd.value, unit)} (ceiling "
            f"(µs) of max(percentile low, basic low, normal high) over both samples, as the "
            f"JayBeams analysis; the bound {_fmt(sd.bound, unit, 6)} ({sd.bound_source}) has a "
            f"Monte-Carlo error of ±{_fmt(sd.monte_carlo_error, unit, 3)} at "
            f"{sd.n_resamples} resamples, seed {sd.seed}: the rounded value can change with "
            "the seed)")


def _ratio_line(c: Comparison, level: str) -> str:
    r = c.median_ratio
    if r is None:
        return f"median ratio {c.name_a}/{c.name_b} unavailable: {c.ratio_problem}"
    how = f"{r.kind} bootstrap" if r.kind != "constant" else "both samples constant"
    if "fallback" in r.extra:
        how += (" (BCa is undefined on these tied values: "
                f"{r.extra['fallback']['reason']}; the percentile interval is used instead)")
    return (f"median ratio {c.name_a}/{c.name_b}: {r.estimate:.4g}, {level} CI "
            f"[{r.low:.4g}, {r.high:.4g}] ({how})")


def dependence_evidence(lag1: float | None, ljung_box_p: float) -> str:
    """What a series' dependence check rests on: its lag-1 autocorrelation (either it or
    Ljung-Box flags a series; a warning citing "Ljung-Box p = 0.47" alone read as no evidence)
    and the Ljung-Box p (None lag1: a verdict stored before it was kept)."""
    lb = f"Ljung-Box p = {ljung_box_p:.2g}"
    return lb if lag1 is None else f"lag-1 autocorrelation {lag1:.2f}, {lb}"


def align_dependence(results: list[Comparison], verdict: Any) -> None:
    """Attach ``verdict`` to each pair's analysis and make the pair's autocorrelation check
    flag exactly the series the verdict flagged. The pair's check weighs its two series as a
    family of 2 and the verdict weighs all k (1 %/k): a series of a three-command compare
    between the two read "the verdict's interval and p are widened for it" beside a verdict
    that was not widened. The check's numbers (lag-1, Ljung-Box p, effective n) are the same
    either way; under --jaybeams-compatible that analysis's own check stays."""
    flagged = {n.data["series"] for n in verdict.notes if n.code == "autocorrelated"}
    for r in results:
        r.verdict = verdict
        if r.options.jaybeams_compatible:
            continue
        for side, name in (("dependence_a", r.name_a), ("dependence_b", r.name_b)):
            d = getattr(r, side)
            if d is not None and d.ljung_box_p is not None:
                setattr(r, side, replace(d, flagged=name in flagged, adjusted=name in flagged))
        status = "WARNING" if flagged & {r.name_a, r.name_b} else "PASSED"
        r.checks = [replace(ch, status=status) if ch.name == "independence"
                    and ch.data.get("scaled") else ch for ch in r.checks]


def _dependence_line(c: Comparison, status: str) -> str:
    """The autocorrelation check whose threshold scales with n, and what it means for the
    verdict: how many independent runs the autocorrelated ones count as."""
    parts, flagged = [], []
    for name, d in ((c.name_a, c.dependence_a), (c.name_b, c.dependence_b)):
        if d is None or d.ljung_box_p is None:
            parts.append(f"{name}: not checked (fewer than 10 runs)")
            continue
        parts.append(f"{name}: {dependence_evidence(d.lag1, d.ljung_box_p)}")
        if d.flagged:
            flagged.append(f"{name}'s {d.n} runs count as about {d.effective_n:.0f} independent "
                           "ones")
    if status == "PASSED":
        # "on its own": the verdict also pools the lag-1 estimate over the series, and a
        # WARNING below says when that pooled estimate widened it
        return ("no series shows autocorrelation beyond chance on its own (one-sided lag-1 "
                "test at 1%/k, 20%/k below 20 runs, and Ljung-Box at 1%/k, k the commands "
                f"judged together; {'; '.join(parts)})")
    return (f"autocorrelated runs ({'; '.join(parts)}): {', '.join(flagged)}; the verdict's "
            "interval and p are widened for it, the check lines' test is not")


def check_line(c: Comparison, check: Check, unit: str = "ns") -> str:
    """The sentence of one check of ``c``, whose values are in ``unit`` (ns: durations)."""
    o, hl = c.options, c.hodges_lehmann
    level = f"{100 * o.confidence_level:g}%"
    name = check.name
    if name == "summary":
        group = check.data["group"]
        return _summary(c.name_a if group == "a" else c.name_b, c, group, unit)
    if name == "independence":
        if check.data.get("constant"):
            return "a constant sample has no autocorrelation to check"
        if check.data.get("scaled"):
            return _dependence_line(c, check.status)
        acf_a, acf_b = c.independence_a.max_abs_acf, c.independence_b.max_abs_acf
        values = f"{c.name_a}={acf_a:.4f}, {c.name_b}={acf_b:.4f}"
        if check.status == "PASSED":
            return (f"the samples do not exhibit high auto-correlation (max |ACF| {values} < "
                    f"{o.max_autocorrelation:g})")
        return (f"some evidence of auto-correlation in the samples: max |ACF| {values} "
                f"(threshold {o.max_autocorrelation:g}); p-values and intervals assume "
                "independent measurements")
    if name in ("sd_estimate", "spread"):
        return _spread_line(c, unit)
    if name in ("power_10x", "power_1x"):
        return _plan(c, check, 10 if name == "power_10x" else 1, unit)
    if name == "mann_whitney":
        if c.mann_whitney is None:
            return "Mann-Whitney U: not needed, both samples are the same constant"
        adj = " (Holm-adjusted)" if check.data["adjusted"] else ""
        sig = c.significant
        return (f"Mann-Whitney U: W={c.mann_whitney.statistic:.6g}, p-value{adj} "
                f"{check.data['p']:.4g} {'<' if sig else '>='} alpha={o.alpha:g} "
                f"({c.mann_whitney.method}): " + ("reject" if sig else "cannot reject")
                + " the hypothesis of equal performance")
    if name == "hodges_lehmann":
        return (f"Hodges-Lehmann shift {c.name_a} - {c.name_b}: "
                f"{_fmt(hl.estimate, unit, HL_DIGITS)}, {level} CI "
                f"{format_interval(hl.ci_low, hl.ci_high, HL_DIGITS, unit)}")
    if name == "median_ratio":
        return _ratio_line(c, level)
    if name == "effect_size":
        big = check.data["large_enough"]
        return (f"the estimated effect ({_fmt(hl.estimate, unit)}) is "
                + ("large enough: |effect| >= " if big else "too small: |effect| < ")
                + f"the minimum effect ({_fmt(c.min_effect, unit)}, {_source(c)})")
    raise ValueError(f"no sentence for check {name!r}")


#: The checks of the data itself, printed beside the structured verdict. The JayBeams
#: analysis's own estimates, test and power plan (its Mann-Whitney p, Hodges-Lehmann shift,
#: median ratio with a bootstrap interval, effect size, sample counts) are printed only when
#: they are the decision (``--jaybeams-compatible``): beside the verdict they were a second
#: ratio, interval, p and run count for one comparison ("median ratio 0.8333, CI [0.8333,
#: 1.2]" beside "ratio 1.000"; a 95 % median ratio beside a 97.5 % Holm interval).
DATA_CHECKS = ("summary", "independence")


def check_lines(c: Comparison, unit: str = "ns", *, every_step: bool = True
                ) -> list[tuple[str, str]]:
    """(status, sentence) for every check of ``c``, in order; values in ``unit``.
    ``every_step`` False: only :data:`DATA_CHECKS`, the lines shown beside the structured
    verdict, whose numbers are then the only estimate, interval, p and plan printed."""
    return [(check.status, check_line(c, check, unit)) for check in c.checks
            if every_step or check.name in DATA_CHECKS]


def _decided(c: Comparison, unit: str) -> str:
    hl, o = c.hodges_lehmann, c.options
    level = f"{100 * o.confidence_level:g}%"
    ci = (format_interval(-hl.ci_high, -hl.ci_low, unit=unit) if hl.estimate < 0
          else format_interval(hl.ci_low, hl.ci_high, unit=unit))
    adj = " (Holm-adjusted)" if c.p_adjusted is not None else ""
    text = (f"{c.name_a} is {c.outcome} than {c.name_b} by "
            f"{_fmt(abs(hl.estimate), unit)}, {level} CI {ci}, "
            f"{_p(c.p_decision, o.alpha)}{adj}")
    r = c.median_ratio
    if r is not None and r.estimate > 0 and r.low > 0:
        text += f"; median ratio {r.estimate:.3g} ({level} CI [{r.low:.3g}, {r.high:.3g}])"
    if c.min_effect is not None and abs(hl.estimate) < c.min_effect:
        text += f" (below the minimum interesting effect of {_fmt(c.min_effect, unit)})"
    return text


def _more_runs(c: Comparison, unit: str) -> str:
    if c.samples_needed is None:
        if c.min_effect is None:
            return (f"give a minimum effect {_units_hint(unit)} to decide equivalence; "
                    "more runs may show a difference")
        return "no number of runs in reach would decide it at this spread"
    how = ("the interval's half-width shrinks as 1/sqrt(n), the estimate held where it is: "
           + ("until it excludes 0" if c.samples_needed_method == "exclude_zero"
              else "until it fits inside the margin"))
    return (f"about {c.additional_runs} more runs each ({c.samples_needed} per command) would "
            f"likely decide it ({how})")


def _units_hint(unit: str) -> str:
    return "in units (--min-effect 1us)" if unit == "ns" else "as a percentage (--min-effect 2%)"


def _percent(x: float) -> str:
    """A relative difference in % with two decimals (2.31), small ones with 2 significant
    digits so that 0.0042% does not read as 0.00%."""
    return f"{x:.2f}" if abs(x) >= 0.01 or x == 0 else f"{x:.2g}"


def _differs(a: str, b: str, metric: str | None, pct: float) -> str:
    """'a executes 2.31% more instructions than b' (``pct``: a's relative difference, %)."""
    more, amount = ("more" if pct > 0 else "fewer"), _percent(abs(pct))
    if metric == "instructions":
        return f"{a} executes {amount}% {more} instructions than {b}"
    if metric:
        return f"{a} counts {amount}% {more} {metric} than {b}"
    return f"{a}'s count is {amount}% {'higher' if pct > 0 else 'lower'} than {b}'s"


def _same(a: str, b: str, metric: str | None, exactly: str = "") -> str:
    """'a and b execute [exactly] the same number of instructions'."""
    if metric == "instructions":
        return f"{a} and {b} execute {exactly}the same number of instructions"
    if metric:
        return f"{a} and {b} count {exactly}the same number of {metric}"
    return f"{a} and {b} have {exactly}the same count"


def _count_verdict(c: Comparison, metric: str | None) -> str | None:
    """The verdict of two count series with (almost) no run-to-run spread, or None.

    Counted instructions under valgrind are deterministic: a rank test on 3 equal counts per
    side can never be significant, while the counts themselves already state the difference
    exactly. Counts that vary a little (CV < 1e-4 on both sides: a program reading the clock
    or its environment) get the difference with its observed range instead of a test."""
    sa, sb = c.summary_a, c.summary_b
    a, b = c.name_a, c.name_b
    both = f"{sa.median:,.0f} vs {sb.median:,.0f}"
    if sa.min == sa.max and sb.min == sb.max:
        if sa.median == sb.median:
            return (f"{_same(a, b, metric, 'exactly ')} ({sa.median:,.0f}; exact: counts are "
                    "deterministic)")
        if sb.median == 0:
            return f"{a} counts {sa.median:,.0f}, {b} 0 (exact: counts are deterministic)"
        return (f"{_differs(a, b, metric, 100 * (sa.median / sb.median - 1))} ({both}; "
                "exact: counts are deterministic)")
    cvs = [s.sd / abs(s.mean) if s.mean != 0 else math.inf for s in (sa, sb)]
    if max(cvs) >= COUNT_CV_STABLE or sb.min <= 0:
        return None
    # Every pairing of an A run with a B run lies inside [low, high].
    rel = 100 * (sa.median / sb.median - 1)
    low, high = 100 * (sa.min / sb.max - 1), 100 * (sa.max / sb.min - 1)
    span = (f"observed range [{'+' if low >= 0 else '-'}{_percent(abs(low))}%, "
            f"{'+' if high >= 0 else '-'}{_percent(abs(high))}%] over {sa.n} and {sb.n} runs")
    if low > 0 or high < 0:
        return (f"{_differs(a, b, metric, rel)} ({both}, {span}; counts vary by less than "
                f"{100 * COUNT_CV_STABLE:g}% between runs)")
    return (f"{_same(a, b, metric)} up to run-to-run variation (difference of medians "
            f"{'+' if rel >= 0 else '-'}{_percent(abs(rel))}%, {span} includes 0)")


def verdict_text(c: Comparison, unit: str = "ns", metric: str | None = None) -> str:
    """The verdict of ``c`` in one line, with what to do next when undecided.

    ``unit`` is the unit of the compared values (ns: durations, printed as µs/ms/s; any other
    unit as plain numbers); ``metric`` names a count metric (``instructions``) for its words.
    Counts (unit ``count``) with (almost) no spread get their exact relative difference."""
    o, hl = c.options, c.hodges_lehmann
    p_text = _p(c.p_decision, o.alpha)
    if unit == "count":
        exact = _count_verdict(c, metric)
        if exact is not None:
            return exact
    if o.jaybeams_compatible:
        if c.reason == "power_10x":
            if c.samples_needed is None:
                return ("cannot tell them apart with this data: the power analysis failed "
                        "(the JayBeams analysis stops here)")
            return (f"cannot tell them apart with this data: need about {c.samples_needed} "
                    "samples per group (the JayBeams analysis stops here)")
        if c.reason == "effect_too_small":
            return ("the estimated effect is too small to draw any conclusions "
                    f"({_fmt(hl.estimate, unit)} < {_fmt(c.min_effect, unit)})")
        if c.reason == "not_significant":
            return (f"cannot tell them apart with this data ({p_text}): need about "
                    f"{c.samples_needed} samples per group")
        return _decided(c, unit)
    if c.reason == "identical":
        return f"equivalent: {c.name_a} and {c.name_b} are the same constant ({hl.estimate:g})"
    if c.outcome == "equivalent":
        median = abs(c.summary_b.median)
        within = (f"±{100 * c.min_effect / median:.3g}% (±{_fmt(c.min_effect, unit)})"
                  if median > 0 else f"±{_fmt(c.min_effect, unit)}")
        return (f"equivalent within {within}: the "
                f"{100 * o.confidence_level:g}% CI of the shift, "
                f"{format_interval(hl.ci_low, hl.ci_high, unit=unit)}, lies inside"
                + (f" although the difference is statistically significant ({p_text})"
                   if c.significant else ""))
    if c.outcome in ("faster", "slower"):
        return _decided(c, unit)
    return f"not yet: cannot tell them apart with this data ({p_text}); {_more_runs(c, unit)}"


def notes_text(c: Comparison, unit: str = "ns") -> list[str]:
    """Sentences for the degraded steps of ``c`` (after the verdict); values in ``unit``."""
    out = []
    if "no_min_effect" in c.notes:
        out.append("the baseline's median is 0, so a minimum effect relative to it is 0: give "
                   f"the minimum effect {_units_hint(unit)} for equivalence and power")
    if "plan_unavailable" in c.notes and c.plan_1x is not None:
        out.append(f"power analysis unavailable ({c.plan_1x.reason}); the verdict above does "
                   "not depend on it")
    if "ratio_fallback" in c.notes:
        out.append("the median ratio's BCa interval is undefined on these tied values (a clock "
                   "grid); its percentile interval is shown instead")
    return out




def plain_number(x: float, digits: int) -> str:
    """``x`` with ``digits`` significant digits and never an exponent from 1 up: ``:.3g``
    writes 2345 as '2.35e+03' and ``:.2g`` a 120 % difference as '1.2e+02' (99.7 rounds
    to '1e+02' too); those are written as whole numbers instead."""
    text = f"{x:.{digits}g}"
    return f"{x:.0f}" if "e" in text and math.isfinite(x) and abs(x) >= 1 else text


def _factor(x: float) -> str:
    """A speed factor or ratio: 3 decimals near 1 ('1.002', '0.987'), where 3 significant
    digits would print 1.002 as '1'; else 3 significant digits ('1.18', '2345')."""
    if math.isfinite(x) and 0.9 < x < 1.1:
        return f"{x:.3f}"
    return plain_number(x, 3)


def percent_text(x: float) -> str:
    """A percentage (x in percent) with 2 significant digits ('1.2', '45', '120')."""
    return plain_number(x, 2)


# ----------------------------------------------------------------- the structured verdict
# The words of :class:`benchlab.stats.verdict_model.Verdict`: every command that shows a
# verdict (run, show, compare, report, exports, bundles, history) prints these lines, so the
# same session reads the same everywhere.

#: Metrics whose smaller values mean "ran faster".
TIME_METRICS = ("wall", "user", "sys", "cpu", "user+sys")
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 10: "ten"}


def _level(level: float | None) -> str:
    return f"{plain_number(100 * level, 3)}%" if level is not None else ""


def _bracket(low: float, high: float, low_open: bool, high_open: bool) -> str:
    return (f"{'(' if low_open else '['}{_factor(low)}, {_factor(high)}"
            f"{')' if high_open else ']'}")


def _p_words(c: Any, v: Any) -> str:
    adj = "" if v.correction == "none" else ", Holm-adjusted"
    return f"{p_equals(c.p_adjusted)}{adj}"


def p_equals(p: float) -> str:
    """``p = 0.0023``; a p-value that underflowed to 0 reads ``p < 1e-300``, never ``p = 0``."""
    return "p < 1e-300" if p < 1e-300 else f"p = {p:.2g}"


def _is_time(v: Any) -> bool:
    return v.metric in TIME_METRICS or (v.unit or "ns") == "ns"


def _within(v: Any) -> str:
    """'±1%', or '±5 ns' for a margin given in the series' unit."""
    if v.equivalence_margin_abs is not None:
        return f"±{_fmt(v.equivalence_margin_abs, v.unit)}"
    return f"±{percent_text(100 * v.equivalence_margin)}%"


def _ratio_words(c: Any, v: Any) -> str:
    """'ratio 1.00, 95% CI [0.97, 1.03]' (candidate / baseline)."""
    if c.ratio is None and c.shift is not None:
        return (f"difference {_fmt(c.shift, v.unit)}, {_level(c.interval_level)} CI "
                f"{format_interval(c.shift_low, c.shift_high, unit=v.unit)} (no ratio: the "
                "baseline's median is 0)")
    if c.ratio is None:
        return "no ratio (the baseline's median is 0)"
    if c.ratio_low is None:
        return f"ratio {_factor(c.ratio)}, no interval with fewer than 3 runs"
    return (f"ratio {_factor(c.ratio)}, {_level(c.interval_level)} CI "
            f"{_bracket(c.ratio_low, c.ratio_high, c.low_open, c.high_open)}")


def _speed_factor(c: Any) -> tuple[str, str]:
    """A decided candidate's factor and interval as its sentence prints them: baseline /
    candidate when the candidate ran faster, candidate / baseline when slower (both >= 1)."""
    if c.outcome == "faster":
        return _factor(1 / c.ratio), _bracket(1 / c.ratio_high, 1 / c.ratio_low, c.high_open,
                                              c.low_open)
    return _factor(c.ratio), _bracket(c.ratio_low, c.ratio_high, c.low_open, c.high_open)


def _decided_words(c: Any, v: Any) -> str:
    if c.ratio is None or c.ratio_low is None:
        return f"{c.name} is {c.outcome} than {v.baseline} ({_p_words(c, v)})"
    # the faster of the two ran the factor faster than the other
    who, than = (c.name, v.baseline) if c.outcome == "faster" else (v.baseline, c.name)
    factor, interval = _speed_factor(c)
    verb = "ran" if _is_time(v) else "has"
    what = "faster" if _is_time(v) else f"lower {v.metric}"
    return (f"{who} {verb} {factor}× {what} than {than}, {_level(c.interval_level)} CI "
            f"{interval} ({_p_words(c, v)})")


def _equivalence_interval(c: Any, v: Any) -> str:
    """The two one-sided tests' interval an equivalent candidate's sentence prints."""
    m = max(len(v.candidates), 1)
    return (f"{_level(1 - 2 * v.alpha / m)} CI [{_factor(c.equivalence_low)}, "
            f"{_factor(c.equivalence_high)}]")


def table_row(v: Any, name: str) -> dict:
    """Candidate ``name``'s row of a comparison table: the verdict's ratio candidate /
    baseline with its interval (for a figure), outcome, p, and as ``numbers`` the estimate,
    interval and p written as its sentence writes them (:func:`table_numbers`)."""
    c = v.candidate(name)
    known = c.ratio is not None and c.ratio_low is not None and c.ratio_high is not None
    return {"name": name, "estimate": c.ratio if known else None,
            "low": c.ratio_low if known else None, "high": c.ratio_high if known else None,
            "level": c.interval_level if known else None, "outcome": c.outcome,
            "p_adjusted": c.p_adjusted, "numbers": table_numbers(v, c)}


def table_numbers(v: Any, c: Any) -> tuple[str, str, str]:
    """(estimate, interval with its level, p) of candidate ``c`` of verdict ``v`` for a
    table row, each written exactly as :func:`candidate_line` writes it, so a report's table
    and the verdict's sentence read the same numbers: ('1.62× faster', '95% CI [1.53,
    1.73]', 'p = 7.6e-05'); undecided: ('ratio 1.004', '95% CI [0.970, 1.030]', ...)."""
    p = p_equals(c.p_adjusted) if c.p_adjusted is not None else "-"
    if c.ratio is None and c.shift is not None:
        return (f"difference {_fmt(c.shift, v.unit)}", f"{_level(c.interval_level)} CI "
                f"{format_interval(c.shift_low, c.shift_high, unit=v.unit)}", p)
    if c.ratio is None:
        return "no ratio (the baseline's median is 0)", "-", p
    if c.ratio_low is None:
        return f"ratio {_factor(c.ratio)}", "no interval with fewer than 3 runs", p
    if c.decided and c.outcome in ("faster", "slower"):
        factor, interval = _speed_factor(c)
        word = c.outcome if _is_time(v) else f"{'lower' if c.outcome == 'faster' else 'higher'}"
        return f"{factor}× {word}", f"{_level(c.interval_level)} CI {interval}", p
    if c.outcome == "equivalent" and c.equivalence_low is not None:
        return f"ratio {_factor(c.ratio)}", _equivalence_interval(c, v), p
    return (f"ratio {_factor(c.ratio)}", f"{_level(c.interval_level)} CI "
            f"{_bracket(c.ratio_low, c.ratio_high, c.low_open, c.high_open)}", p)


def _too_few_words(c: Any, v: Any, more_runs: str | None = None) -> str:
    note = next(n for n in c.notes if n.code == "too_few_runs")
    n, fam = note.data["n"], note.data["family"]
    across = "" if fam == 1 else f" across {_NUMBER_WORDS.get(fam, str(fam))} comparisons"
    interval = f"{_ratio_words(c, v)}; " if c.ratio_low is not None else ""
    runs = (f"{plural(n, 'run')} each" if c.n == c.n_baseline else  # the counts as they are
            f"{plural(c.n, 'run')} of {c.name} and {c.n_baseline} of {v.baseline}")
    text = (f"cannot tell {c.name} and {v.baseline} apart: {interval}with {runs} "
            f"no result can reach p < {v.alpha:g}{across}")
    if more_runs:  # an import: its tool's own way to get repetitions, not run's -r
        return f"{text} (at least {note.data['attainable_min_n']} values each): {more_runs}"
    return text + f"; use -r {note.data['attainable_min_n']} or more"


def _plan_words(c: Any, v: Any) -> str:
    if c.runs_to_decide is None:
        return "no number of runs in reach would decide it at this spread"
    more = plural(c.additional_runs, "more run")
    if c.plan == "equivalence":
        if c.plan_effect is None:
            return f"about {more} each would show equivalence, if there is no difference"
        return (f"about {more} each would show equivalence within {_within(v)} if there is "
                "no difference")
    size = (f"{percent_text(100 * c.plan_effect)}%" if c.plan_effect is not None
            else "the observed size")
    text = f"about {more} each would decide a difference of {size}, if it is real"
    if c.runs_to_equivalence is not None:  # and what more runs show when there is none
        more_eq = c.runs_to_equivalence - min(c.n, c.n_baseline)
        text += (f" (about {plural(more_eq, 'more run')} would show equivalence within "
                 f"{_within(v)} if there is none)")
    return text


def candidate_line(v: Any, c: Any, *, more_runs: str | None = None) -> str:
    """One candidate of a :class:`~benchlab.stats.verdict_model.Verdict` in one sentence.
    ``more_runs``: how to get more values when there are too few (an import's tool option,
    e.g. Google Benchmark's --benchmark_repetitions); default run's ``-r N``."""
    if c.reason == "identical":
        same = "took exactly the same time" if _is_time(v) else "had the same value"
        return f"{c.name} and {v.baseline} {same} in every run"
    if c.reason == "too_few_runs":
        return _too_few_words(c, v, more_runs)
    if c.decided:
        return _decided_words(c, v)
    if c.reason == "dependence_unresolved":
        how = (f"{more_runs} (at least {c.runs_to_decide} each)" if more_runs
               else f"use -r {c.runs_to_decide} or more")
        return (f"cannot tell {c.name} and {v.baseline} apart yet: {_ratio_words(c, v)} "
                f"({_p_words(c, v)}), but their runs depend on one another and "
                f"{plural(min(c.n, c.n_baseline), 'run')} each cannot show how much: the "
                f"difference holds only if they depend little; {how} so the runs can "
                "estimate their own dependence")
    if c.outcome == "equivalent":
        m = max(len(v.candidates), 1)
        eq = (f"ratio {_factor(c.ratio)}, {_equivalence_interval(c, v)}"
              if c.equivalence_low is not None else "")
        if c.ratio is None and c.shift is not None:
            eq = (f"difference {_fmt(c.shift, v.unit)}, {_level(1 - 2 * v.alpha / m)} CI of "
                  "the shift inside the margin")
        return (f"{c.name} and {v.baseline} are equivalent within {_within(v)}: {eq} (two "
                f"one-sided tests at {v.alpha:g})")
    return (f"cannot tell {c.name} and {v.baseline} apart yet: {_ratio_words(c, v)} "
            f"({_p_words(c, v)}); {_plan_words(c, v)}")


def verdict_note_lines(v: Any) -> list[str]:
    """The verdict's notes that change how to read it, one sentence each."""
    out = []
    for note in v.notes:
        if note.code == "autocorrelated":
            d = note.data
            out.append(f"WARNING: {d['series']}'s runs are autocorrelated ("
                       f"{dependence_evidence(d.get('lag1'), d['ljung_box_p'])}): they count "
                       "as about "
                       f"{plural(round(d['effective_n']), 'independent run')} of {d['n']}; "
                       "the intervals and p-values above "
                       "are widened for it")
        if note.code == "session_autocorrelated":
            d = note.data
            out.append(f"WARNING: the runs of this session drift together (lag-1 "
                       f"autocorrelation {d['lag1']:.2f} pooled over {d['n']} runs of "
                       f"{d['series']} commands): the intervals and p-values above are widened "
                       "for it")
    said = any(n.code in ("autocorrelated", "session_autocorrelated") for n in v.notes)
    for c in v.candidates:
        if c.has_note("widened") and not said:
            # widened without a series' own evidence: a series that reads one value throughout
            # beside one that varies on the same grid (its drift lies below the clock's tick)
            out.append(f"WARNING: {c.name} against {v.baseline}: one of them reads the same "
                       "value in every run on a clock grid the other crosses, so its drift is "
                       "not resolved; the interval and p-value above are widened for it")
        if c.has_note("open_end"):
            out.append(f"({c.name}: the interval's end at exactly 1 is excluded by the test "
                       "itself: ties on the clock's grid)")
        if c.has_note("within_margin"):
            out.append(f"({c.name}: the difference is real but inside {_within(v)})")
    return out


def verdict_header(v: Any) -> str:
    """'verdict (baseline: b, the fastest; Mann-Whitney test, Holm over 3 pairs; ...)'."""
    why = {"reference": "the reference", "first": "the first command",
           "fastest": "the fastest", "given": "as given"}[v.baseline_rule]
    what = "pairs" if v.baseline_rule == "fastest" else "comparisons"
    holm = f", Holm over {v.family} {what}" if v.correction == "holm" else ""
    metric = "" if v.metric == "wall" else f" on {v.metric}"
    return (f"verdict{metric} (baseline: {v.baseline}, {why}; {_test_words(v)}{holm}; "
            f"Hodges-Lehmann ratio with the interval of that test{holm_levels(v)}):")


def _test_words(v: Any) -> str:
    """The tests the p-values come from. The header said 'Mann-Whitney test' above a widened
    Wald test's p = 0.0055 where wilcox.test gives 0.039, and above widened rank tests."""
    widened = [c for c in v.candidates if c.has_note("widened")]
    if not widened:
        return "Mann-Whitney test"
    if all(c.test == "inflated" for c in widened):
        return ("Mann-Whitney test, and for autocorrelated runs a Wald test of the ratio "
                "widened for them")
    wald = any(c.test == "inflated" for c in widened)
    return ("Mann-Whitney test, widened for autocorrelated runs"
            + (" (a widened Wald test of the ratio where they do not overlap)" if wald else ""))


def holm_levels(v: Any) -> str:
    """Why the intervals of one verdict state different levels: each is the interval of its
    own Holm step (97.5 % and 95 % for two comparisons), so that its word, its interval and
    its p agree; '' for a single comparison (every interval at the verdict's level)."""
    if v.correction != "holm":
        return ""
    return (f", each at its Holm step's level 1 - {v.alpha:g}/k, k the comparisons still "
            "open")


def verdict_parts(v: Any, sort: str = "auto") -> list[tuple[str, str]]:
    """(kind, text) of each line of ``v`` in run's words and order (by median unless
    ``sort="command"``): kind ``header``, the candidate's outcome, or ``note`` (a page styles
    each by its kind)."""
    cands = list(v.candidates)
    if sort != "command":
        cands.sort(key=lambda c: c.median)
    return [("header", verdict_header(v)),
            *((c.outcome, candidate_line(v, c)) for c in cands),
            *(("note", line) for line in verdict_note_lines(v))]


def verdict_lines(v: Any, *, sort: str = "auto", more_runs: str | None = None) -> list[str]:
    """The whole verdict: a header, one line per candidate (sorted by median unless
    ``sort="command"``), then the notes. Plain text, no markup. ``more_runs``: see
    :func:`candidate_line`."""
    cands = list(v.candidates)
    if sort != "command":
        cands.sort(key=lambda c: c.median)
    return [verdict_header(v), *(f"  {candidate_line(v, c, more_runs=more_runs)}"
                                 for c in cands),
            *(f"  {line}" for line in verdict_note_lines(v))]


def sequential_lines(summary: dict, names: list[str], unit: str = "ns") -> list[str]:
    """The words of a ``--until-decided`` session: the sequential design's own decision, its
    repeated confidence interval and the look it stopped at (``summary``: the session's
    ``until_decided`` metadata, :meth:`benchlab.core.until_decided.SequentialStopper.summary`;
    ``names``: A and B). A fixed-sample p-value or interval is not valid after a sequential
    stop, so none is printed."""
    a, b = (list(names) + ["A", "B"])[:2]
    d = summary.get("decision")
    options = summary.get("options") or {}
    design = summary.get("design") or {}
    how = (f"group-sequential, O'Brien-Fleming spending of alpha {options.get('alpha', 0):g} "
           f"over looks every {options.get('look_every', '?')} rounds")
    if not d or not d.get("look"):
        n = d["n_a"] if d else 0
        return [f"until decided ({how}): stopped before the first look at "
                f"{options.get('min_samples', '?')} runs each ({plural(n, 'run')} each); no "
                "decision"]
    n = min(d["n_a"], d["n_b"])
    level = d.get("rci_level")
    shift = d.get("shift")
    if shift is not None and d.get("rci_low") is not None:
        said = (f"{_level(level)}" if level is not None and level < 0.9995
                else f"(1 - {1 - level:.1g})" if level is not None else "")
        interval = (f"shift {a} - {b} {_fmt(shift, unit)}, {said} repeated CI "
                    f"{format_interval(d['rci_low'], d['rci_high'], unit=unit)}")
        med = d.get("b_median")
        if med and 1 + d["rci_low"] / med > 0:
            interval += (f" (ratio {_factor(1 + shift / med)}, "
                         f"[{_factor(1 + d['rci_low'] / med)}, {_factor(1 + d['rci_high'] / med)}])")
    else:
        interval = "no interval"
    at = f"look {d['look']}, {plural(n, 'run')} each, |z| = {abs(d['z']):.2f}"
    action = d["action"]
    if action == "different":
        word = "faster" if d["z"] < 0 else "slower"
        return [f"until decided ({how}): {a} is {word} than {b}: {interval}; stopped at {at} "
                f">= {d['critical_value']:.2f}"]
    if action == "equivalent":
        margin = d.get("relative_margin") or 0.0
        return [f"until decided ({how}): {a} and {b} are equivalent within "
                f"±{percent_text(100 * margin)}%: {interval}; stopped at {at}"]
    why = "max-runs" if action == "budget_exhausted" else "max-time"
    budget = design.get("max_samples")
    return [f"until decided ({how}): stopped undecided at {plural(n, 'run')} each ({why}"
            + (f", budget {budget}" if budget and why == "max-time" else "")
            + f"): {interval} at {at} < {d['critical_value']:.2f}"]
