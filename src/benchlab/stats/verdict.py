"""Seed 001's comparison flow as a structured result: checks, numbers and a verdict in words.

Seed 001 (JayBeams ``bm_order_book_analyze.R``, "On Benchmarking, Part 6") compares two
benchmarks A and B like this; :func:`compare` does the same steps on samples in ns:

1. summaries of each sample;
2. independence: max |ACF| over lags 1..10 log10(n) per sample, warning at >= 0.05;
3. the standard deviation for the power analysis, from bootstrap intervals of each sample's SD;
4. the minimum interesting effect (one clock cycle per iteration: iterations / GHz ns);
   enough samples to detect 10x that effect, else abort; enough for 1x, else warn (two-sample
   t power at alpha = 0.01, power = 0.95, x 1.15 for a rank test, rounded up to 1000, >= 5000);
5. Mann-Whitney U test; Hodges-Lehmann shift with its 95 % interval; the estimated effect must
   be at least the minimum effect; reject "same performance" when p < alpha.

``jaybeams_compatible=True`` reproduces the post exactly, including two questionable choices:

* SD estimate = ceiling, in microseconds, of the maximum over both samples of the *lower*
  bounds of the percentile and basic intervals and the *upper* bound of the normal interval.
  Mixing lower and upper bounds has no statistical meaning (in practice the normal upper bound
  always wins, as lower bounds lie below the estimate).
* An estimated effect smaller than the minimum effect stops the analysis even when the
  interval shows the benchmarks are equivalent, and a failed 10x power check stops it even
  when the test rejects clearly.

The default (corrected) flow instead:

* takes the maximum *upper* bound of the three intervals over both samples: a ~97.5 % upper
  confidence bound of the larger SD. Overestimating the SD only asks for more samples, which
  keeps the promised power; underestimating it (a lower bound) would break the promise.
  No rounding to whole microseconds (which is unit-dependent).
* uses the power checks to interpret a *non-rejection* (a rejection at alpha is valid whatever
  the power), and concludes "equivalent within +-x %" when the Hodges-Lehmann interval lies
  inside +-(minimum effect): an interval at level 1 - 2 gamma inside the margin is a two
  one-sided tests (TOST) equivalence test at level gamma (Schuirmann 1987), here gamma = 2.5 %.
* uses 2,000 bootstrap resamples instead of 10,000: the SD bound's Monte-Carlo error is then
  about 0.05 standard errors of the SD (1 - 3 % of the SD's own uncertainty), irrelevant for a
  sample-size plan, and the bootstrap is the slow step at 100k samples.

Several candidates against one baseline: :func:`compare_many` runs the flow for each and
decides with Holm-adjusted p-values (family-wise error <= alpha).

Everything returned has ``to_dict()`` giving JSON-serialisable data (NaN/inf become None).

References
----------
Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power
approach for assessing the equivalence of average bioavailability. *J. Pharmacokinet.
Biopharm.* 15, 657-680.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scand. J. Statist.*
6, 65-70.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from benchlab.errors import UserError
from benchlab.units import format_duration
from benchlab.stats.bootstrap import BootstrapCI, bootstrap_cis
from benchlab.stats.descriptive import Summary, as_sample, summarize
from benchlab.stats.independence import IndependenceReport, check_independence
from benchlab.stats.multiple import holm
from benchlab.stats.power import SampleSizePlan, minimum_interesting_effect, required_sample_size
from benchlab.stats.rank import (
    HodgesLehmannResult,
    MannWhitneyResult,
    hodges_lehmann,
    mann_whitney_u,
    median_ratio,
)

PASSED, WARNING, FAILED, INFO = "PASSED", "WARNING", "FAILED", "INFO"
SD_INTERVAL_KINDS = ("percentile", "basic", "normal")


def _jsonable(value: Any) -> Any:
    """Plain JSON types: numpy scalars to Python, NaN/inf to None, dataclasses to dicts."""
    if hasattr(value, "to_dict") and not isinstance(value, type):
        value = value.to_dict()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


#: Significant digits of the Hodges-Lehmann shift and interval: enough for seed 001's
#: printed values (-771.55 µs, [-773.77, -769.32]).
HL_DIGITS = 5


def _format_interval(low: float, high: float, digits: int = 4) -> str:
    mag = max(abs(low), abs(high))
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")):
        if mag >= scale or unit == "ns":
            return f"[{low / scale:.{digits}g}, {high / scale:.{digits}g}] {unit}"
    raise AssertionError("unreachable")


def _format_p(p: float, alpha: float) -> str:
    return f"p < {alpha:g}" if p < alpha else f"p = {p:.3g}"


@dataclass(frozen=True)
class CompareOptions:
    """Options of :func:`compare` (defaults: seed 001's choices, corrected where noted).

    Attributes
    ----------
    alpha : float
        Significance level of the test (seed: 0.01).
    power : float
        Power the sample-size plan aims at (seed: 0.95).
    conf_level : float
        Level of the Hodges-Lehmann interval (seed: 0.95, R's default).
    min_effect : float or None
        Smallest interesting difference in ns. If None: ``iterations / clock_ghz`` ns when
        both are given (one cycle per iteration), else ``min_effect_relative`` times B's median.
    iterations, clock_ghz : int, float or None
        Work per measurement and nominal clock (seed: 20,000 and 3 GHz).
    min_effect_relative : float
        Fallback minimum effect as a fraction of the baseline's median.
    max_autocorrelation : float
        Independence threshold on max |ACF| (seed: 0.05).
    bootstrap_resamples : int or None
        Resamples of the SD bootstrap; None: 10,000 if ``jaybeams_compatible`` (as the seed),
        else 2,000 (see the module docstring).
    seed : int
        Seed of the bootstraps (results are reproducible).
    nonparametric_factor, round_to, min_samples
        Sample-size rule (seed: 1.15, 1000, 5000).
    jaybeams_compatible : bool
        Reproduce seed 001's rules exactly (module docstring).
    """

    alpha: float = 0.01
    power: float = 0.95
    conf_level: float = 0.95
    min_effect: float | None = None
    iterations: int | None = None
    clock_ghz: float | None = None
    min_effect_relative: float = 0.01
    max_autocorrelation: float = 0.05
    bootstrap_resamples: int | None = None
    seed: int = 1
    nonparametric_factor: float = 1.15
    round_to: int = 1000
    min_samples: int = 5000
    jaybeams_compatible: bool = False

    def resamples(self) -> int:
        """Bootstrap resamples actually used."""
        if self.bootstrap_resamples is not None:
            return int(self.bootstrap_resamples)
        return 10_000 if self.jaybeams_compatible else 2_000

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the options."""
        return _jsonable(dataclasses.asdict(self))


@dataclass(frozen=True)
class Check:
    """One line of the analysis: ``status`` is PASSED, WARNING, FAILED or INFO."""

    name: str
    status: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return f"{self.status}: {self.text}"


@dataclass(frozen=True)
class SdEstimate:
    """Standard deviation assumed by the power analysis (ns) and where it came from.

    ``intervals[group][kind]`` are the bootstrap intervals of each sample's SD (ns);
    ``rule`` is "jaybeams" (seed's mix of bounds, ceiling in µs) or "upper" (max upper bound).
    """

    value: float
    rule: str
    intervals: dict[str, dict[str, BootstrapCI]]
    n_resamples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields."""
        return _jsonable({
            "value": self.value, "rule": self.rule, "n_resamples": self.n_resamples,
            "seed": self.seed,
            "intervals": {g: {k: ci.to_dict() for k, ci in kinds.items()}
                          for g, kinds in self.intervals.items()},
        })


def estimate_sd(
    samples: Mapping[str, np.ndarray],
    *,
    jaybeams_compatible: bool = False,
    n_resamples: int = 2_000,
    seed: int = 1,
    confidence: float = 0.95,
) -> SdEstimate:
    """SD for a power analysis from bootstrap intervals of each sample's SD (ns in, ns out).

    Parameters
    ----------
    samples : mapping of name -> array
        The samples (ns).
    jaybeams_compatible : bool
        Seed 001's rule: ceil_us(max(percentile low, basic low, normal high)) over samples.
        Otherwise: max(percentile high, basic high, normal high) over samples, unrounded.
    n_resamples, seed, confidence
        Bootstrap settings (:func:`benchlab.stats.bootstrap.bootstrap_cis`).
    """
    intervals: dict[str, dict[str, BootstrapCI]] = {}
    candidates: list[float] = []
    for offset, (name, values) in enumerate(samples.items()):
        cis = bootstrap_cis(values, "sd", kinds=SD_INTERVAL_KINDS, confidence=confidence,
                            n_resamples=n_resamples, seed=seed + offset)
        intervals[name] = cis
        if jaybeams_compatible:
            candidates += [cis["percentile"].low, cis["basic"].low, cis["normal"].high]
        else:
            candidates += [cis[k].high for k in SD_INTERVAL_KINDS]
    value = max(candidates)
    if jaybeams_compatible:
        value = math.ceil(value / 1000.0) * 1000.0  # the post rounds up to whole microseconds
    return SdEstimate(float(value), "jaybeams" if jaybeams_compatible else "upper", intervals,
                      int(n_resamples), int(seed))


@dataclass
class Comparison:
    """Result of :func:`compare`: every number of the flow, the check lines and the verdict.

    Durations (``min_effect``, summaries, SD, Hodges-Lehmann) are in ns. ``outcome`` is
    "faster" / "slower" (A relative to B), "equivalent" or "undecided"; ``verdict`` says it
    in words; ``samples_needed`` (per group) is set when more data would help.
    """

    name_a: str
    name_b: str
    options: CompareOptions
    summary_a: Summary
    summary_b: Summary
    independence_a: IndependenceReport
    independence_b: IndependenceReport
    sd_estimate: SdEstimate
    min_effect: float
    min_effect_source: str
    plan_10x: SampleSizePlan
    plan_1x: SampleSizePlan
    mann_whitney: MannWhitneyResult
    hodges_lehmann: HodgesLehmannResult
    median_ratio: BootstrapCI
    p_adjusted: float | None = None
    checks: list[Check] = field(default_factory=list)
    outcome: str = "undecided"
    verdict: str = ""
    samples_needed: int | None = None

    @property
    def p_value(self) -> float:
        """Mann-Whitney p-value (unadjusted)."""
        return self.mann_whitney.p_value

    @property
    def n_a(self) -> int:
        return self.summary_a.n

    @property
    def n_b(self) -> int:
        return self.summary_b.n

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable nested dict of the whole comparison."""
        return _jsonable({
            "name_a": self.name_a, "name_b": self.name_b, "n_a": self.n_a, "n_b": self.n_b,
            "options": self.options.to_dict(),
            "summary_a": self.summary_a, "summary_b": self.summary_b,
            "independence_a": self.independence_a, "independence_b": self.independence_b,
            "sd_estimate": self.sd_estimate.to_dict(),
            "min_effect": self.min_effect, "min_effect_source": self.min_effect_source,
            "plan_10x": self.plan_10x, "plan_1x": self.plan_1x,
            "mann_whitney": self.mann_whitney, "hodges_lehmann": self.hodges_lehmann,
            "median_ratio": self.median_ratio.to_dict(),
            "p_value": self.p_value, "p_adjusted": self.p_adjusted,
            "checks": [c.to_dict() for c in self.checks],
            "outcome": self.outcome, "verdict": self.verdict,
            "samples_needed": self.samples_needed,
        })


def _min_effect(options: CompareOptions, baseline_median: float) -> tuple[float, str]:
    if options.min_effect is not None:
        if not (math.isfinite(options.min_effect) and options.min_effect > 0):
            raise UserError(f"min_effect={options.min_effect} ns must be positive; e.g. 1000")
        return float(options.min_effect), "given"
    if options.iterations is not None or options.clock_ghz is not None:
        if options.iterations is None or options.clock_ghz is None:
            raise UserError("give both iterations and clock_ghz (or min_effect in ns)")
        value = minimum_interesting_effect(options.iterations, options.clock_ghz)
        return value, f"1 cycle x {options.iterations} iterations at {options.clock_ghz:g} GHz"
    if not options.min_effect_relative > 0:
        raise UserError("min_effect_relative must be positive, e.g. 0.01 for 1 %")
    return (options.min_effect_relative * abs(baseline_median),
            f"{100 * options.min_effect_relative:g}% of the baseline median")


def _summary_text(name: str, s: Summary) -> str:
    return (f"{name}: n={s.n}, min {format_duration(s.min)}, median {format_duration(s.median)}, "
            f"mean {format_duration(s.mean)}, max {format_duration(s.max)}, "
            f"sd {format_duration(s.sd)}")


def _analyse(a: Any, b: Any, name_a: str, name_b: str, options: CompareOptions) -> Comparison:
    if not 0 < options.alpha < 1 or not 0 < options.power < 1 or not 0 < options.conf_level < 1:
        raise UserError("alpha, power and conf_level must lie strictly between 0 and 1")
    xa = as_sample(a, name=f"sample {name_a!r}", min_n=3, allow_constant=False)
    xb = as_sample(b, name=f"sample {name_b!r}", min_n=3, allow_constant=False)
    summary_a, summary_b = summarize(xa), summarize(xb)
    ind_a = check_independence(xa, threshold=options.max_autocorrelation)
    ind_b = check_independence(xb, threshold=options.max_autocorrelation)
    sd = estimate_sd({name_a: xa, name_b: xb}, jaybeams_compatible=options.jaybeams_compatible,
                     n_resamples=options.resamples(), seed=options.seed)
    min_effect, source = _min_effect(options, summary_b.median)
    plan_kw = dict(alpha=options.alpha, power=options.power,
                   nonparametric_factor=options.nonparametric_factor,
                   round_to=options.round_to, minimum=options.min_samples)
    plan_10x = required_sample_size(10 * min_effect, sd.value, **plan_kw)
    plan_1x = required_sample_size(min_effect, sd.value, **plan_kw)
    mw = mann_whitney_u(xa, xb)
    hl = hodges_lehmann(xa, xb, conf_level=options.conf_level)
    ratio = median_ratio(xa, xb, conf_level=options.conf_level, seed=options.seed)
    return Comparison(name_a, name_b, options, summary_a, summary_b, ind_a, ind_b, sd,
                      min_effect, source, plan_10x, plan_1x, mw, hl, ratio)


def _conclude(c: Comparison, p_decision: float) -> None:
    """Fill ``checks``, ``outcome``, ``verdict`` and ``samples_needed`` from the numbers."""
    o = c.options
    alpha, level = o.alpha, f"{100 * o.conf_level:g}%"
    n_have = min(c.n_a, c.n_b)
    hl = c.hodges_lehmann
    checks = [Check("summary", INFO, _summary_text(c.name_a, c.summary_a)),
              Check("summary", INFO, _summary_text(c.name_b, c.summary_b))]

    acf_a, acf_b = c.independence_a.max_abs_acf, c.independence_b.max_abs_acf
    if c.independence_a.passed and c.independence_b.passed:
        checks.append(Check("independence", PASSED,
                            f"the samples do not exhibit high auto-correlation (max |ACF| "
                            f"{c.name_a}={acf_a:.4f}, {c.name_b}={acf_b:.4f} < "
                            f"{o.max_autocorrelation:g})"))
    else:
        checks.append(Check("independence", WARNING,
                            f"some evidence of auto-correlation in the samples: max |ACF| "
                            f"{c.name_a}={acf_a:.4f}, {c.name_b}={acf_b:.4f} (threshold "
                            f"{o.max_autocorrelation:g}); p-values and intervals assume "
                            "independent measurements"))

    rule = ("ceiling (µs) of max(percentile low, basic low, normal high) over both samples, "
            "as seed 001" if c.sd_estimate.rule == "jaybeams"
            else "largest upper bound of the percentile, basic and normal intervals")
    checks.append(Check("sd_estimate", INFO,
                        f"standard deviation for the power analysis: "
                        f"{format_duration(c.sd_estimate.value)} ({rule}; bootstrap "
                        f"{c.sd_estimate.n_resamples} resamples, seed {c.sd_estimate.seed})"))

    big = c.plan_10x
    power_text = f"(alpha={alpha:g}, power={o.power:g}, sd {format_duration(c.sd_estimate.value)})"
    enough_10x = n_have >= big.n_required
    if enough_10x:
        checks.append(Check("power_10x", PASSED,
                            f"{big.n_required} samples detect 10x the minimum effect "
                            f"({format_duration(big.delta)}) {power_text}; have {n_have}"))
    else:
        checks.append(Check("power_10x", FAILED,
                            f"not enough samples to detect 10x the minimum effect "
                            f"({format_duration(big.delta)}): need >= {big.n_required}, have "
                            f"{c.n_a} and {c.n_b} {power_text}"))
    small = c.plan_1x
    enough_1x = n_have >= small.n_required
    if enough_1x:
        checks.append(Check("power_1x", PASSED,
                            f"the samples have the power to detect the minimum interesting "
                            f"effect ({format_duration(small.delta)}; need {small.n_required}, "
                            f"have {n_have})"))
    else:
        checks.append(Check("power_1x", WARNING,
                            f"not enough samples to detect the minimum interesting effect "
                            f"({format_duration(small.delta)}): should be >= {small.n_required}, "
                            f"have {c.name_a}={c.n_a} {c.name_b}={c.n_b}"))

    p_text = _format_p(p_decision, alpha)
    adj = " (Holm-adjusted)" if c.p_adjusted is not None else ""
    significant = p_decision < alpha
    checks.append(Check("mann_whitney", PASSED if significant else WARNING,
                        f"Mann-Whitney U: W={c.mann_whitney.statistic:.6g}, p-value{adj} "
                        f"{p_decision:.4g} {'<' if significant else '>='} alpha={alpha:g} "
                        f"({c.mann_whitney.method}): "
                        + ("reject" if significant else "cannot reject")
                        + " the hypothesis of equal performance"))
    checks.append(Check("hodges_lehmann", INFO,
                        f"Hodges-Lehmann shift {c.name_a} - {c.name_b}: "
                        f"{format_duration(hl.estimate, HL_DIGITS)}, {level} CI "
                        f"{_format_interval(hl.ci_low, hl.ci_high, HL_DIGITS)}"))
    r = c.median_ratio
    checks.append(Check("median_ratio", INFO,
                        f"median ratio {c.name_a}/{c.name_b}: {r.estimate:.4g}, {level} CI "
                        f"[{r.low:.4g}, {r.high:.4g}] ({r.kind} bootstrap)"))
    large_enough = abs(hl.estimate) >= c.min_effect
    checks.append(Check("effect_size", PASSED if large_enough else (
        FAILED if o.jaybeams_compatible else WARNING),
        f"the estimated effect ({format_duration(hl.estimate)}) is "
        + ("large enough: |effect| >= " if large_enough else "too small: |effect| < ")
        + f"the minimum effect ({format_duration(c.min_effect)}, {c.min_effect_source})"))

    margin = c.min_effect
    inside = -margin < hl.ci_low and hl.ci_high < margin
    rel = 100 * margin / abs(c.summary_b.median)
    direction = "faster" if hl.estimate < 0 else "slower"
    by = f"by {format_duration(abs(hl.estimate))}"
    ci_mag = (_format_interval(-hl.ci_high, -hl.ci_low) if hl.estimate < 0
              else _format_interval(hl.ci_low, hl.ci_high))
    decided = (f"{c.name_a} is {direction} than {c.name_b} {by}, {level} CI {ci_mag}, {p_text}"
               + adj)
    need = f"need about {small.n_required} samples per group"
    if o.jaybeams_compatible:
        if not enough_10x:
            c.outcome, c.samples_needed = "undecided", big.n_required
            c.verdict = (f"cannot tell them apart with this data: need about {big.n_required} "
                         "samples per group (seed 001 aborts)")
        elif not large_enough:
            c.outcome, c.samples_needed = "undecided", None
            c.verdict = ("the estimated effect is too small to draw any conclusions "
                         f"({format_duration(hl.estimate)} < {format_duration(margin)})")
        elif not significant:
            c.outcome, c.samples_needed = "undecided", small.n_required
            c.verdict = f"cannot tell them apart with this data ({p_text}): {need}"
        else:
            c.outcome, c.verdict = direction, decided
    elif inside:
        c.outcome = "equivalent"
        c.verdict = (f"equivalent within ±{rel:.3g}% (±{format_duration(margin)}): the {level} "
                     f"CI of the shift, {_format_interval(hl.ci_low, hl.ci_high)}, lies inside"
                     + (f" although the difference is statistically significant ({p_text})"
                        if significant else ""))
    elif significant and (hl.ci_high < 0 or hl.ci_low > 0):
        c.outcome, c.verdict = direction, decided
        if not large_enough:
            c.verdict += f" (below the minimum interesting effect of {format_duration(margin)})"
    else:
        c.outcome, c.samples_needed = "undecided", max(small.n_required, n_have + o.round_to)
        c.verdict = (f"cannot tell them apart with this data ({p_text}): need about "
                     f"{c.samples_needed} samples per group")
    c.checks = checks


def compare(
    a: Any,
    b: Any,
    *,
    name_a: str = "A",
    name_b: str = "B",
    options: CompareOptions | None = None,
) -> Comparison:
    """Compare benchmark A against baseline B with seed 001's flow.

    Parameters
    ----------
    a, b : array_like
        Measurements of A and B in ns, in measurement order (the order matters for the
        independence check). At least 3 finite, non-constant values each.
    name_a, name_b : str
        Names used in the check lines and the verdict.
    options : CompareOptions or None
        Defaults: alpha 0.01, power 0.95, corrected rules (see the module docstring).

    Returns
    -------
    Comparison
        Checks, numbers, ``outcome`` and ``verdict`` (``to_dict()`` for JSON).

    Raises
    ------
    UserError
        Bad samples (empty, too short, NaN/inf, constant) or options, in one line.
    """
    options = options or CompareOptions()
    result = _analyse(a, b, name_a, name_b, options)
    _conclude(result, result.p_value)
    return result


@dataclass
class MultiComparison:
    """Several candidates against one baseline, decided with Holm-adjusted p-values."""

    baseline: str
    comparisons: list[Comparison]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"baseline": self.baseline, "adjustment": "holm",
                "comparisons": [c.to_dict() for c in self.comparisons]}


def compare_many(
    baseline: Any,
    candidates: Mapping[str, Any],
    *,
    baseline_name: str = "baseline",
    options: CompareOptions | None = None,
) -> MultiComparison:
    """Run :func:`compare` for each candidate against ``baseline``; Holm-adjust the p-values.

    Each candidate's verdict uses its Holm-adjusted p-value, so the probability of declaring
    any candidate different when none is stays <= alpha. Intervals are not adjusted.

    Parameters
    ----------
    baseline : array_like
        Baseline measurements (ns).
    candidates : mapping of name -> array_like
        Candidate measurements (ns); at least one.
    baseline_name : str
        Name of the baseline in texts.
    options : CompareOptions or None
        As :func:`compare`.
    """
    if not candidates:
        raise UserError("no candidates to compare against the baseline; pass at least one")
    options = options or CompareOptions()
    results = [_analyse(values, baseline, name, baseline_name, options)
               for name, values in candidates.items()]
    adjusted = holm([r.p_value for r in results])
    for result, p_adj in zip(results, adjusted):
        result.p_adjusted = float(p_adj)
        _conclude(result, float(p_adj))
    return MultiComparison(baseline_name, results)
