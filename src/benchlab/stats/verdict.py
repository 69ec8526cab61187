"""Is A faster than B, slower, equivalent, or not yet decided? The decision as data.

The JayBeams analysis (JayBeams ``bm_order_book_analyze.R``, "On Benchmarking, Part 6") compares two
benchmarks A and B like this; :func:`compare` does the same steps on samples in ns:

1. summaries of each sample; independence: max |ACF| over lags 1..10 log10(n) (warn >= 0.05);
2. the spread for a power analysis and the minimum interesting effect (one clock cycle per
   iteration, iterations / GHz ns; else a fraction of the baseline's median);
3. Mann-Whitney U; the Hodges-Lehmann shift A - B with its interval; the median ratio A/B;
4. a decision: ``outcome`` is "faster" / "slower" (A relative to B), "equivalent" or
   "undecided", with ``reason`` and, when undecided, how many runs would decide it.

The words for all this live in :mod:`benchlab.report.verdict_text`; nothing here is prose.

Default rules (for commands of milliseconds with 20-200 runs as much as for 35,000-sample
files):

* One confidence level drives everything: alpha = 1 - ``confidence_level`` (0.95 -> 0.05)
  for the test, the interval and the plan.
* **decided** when the test rejects at alpha and the shift's interval excludes 0 (a rejection
  is valid whatever a power analysis says);
* **equivalent within +-margin** when the interval lies inside +-(minimum effect): an interval
  at level 1 - 2 gamma inside the margin is a TOST equivalence test at level gamma
  (Schuirmann 1987); identical constant samples are equivalent too;
* otherwise **undecided**, with the runs per group that would decide it, estimated from the
  observed spread: the interval's half-width h shrinks as 1/sqrt(n), so with the estimate d
  held where it is, n (h / |d|)^2 runs exclude 0 and n (h / (margin - |d|))^2 runs fit inside
  the margin; the smaller of the two is ``samples_needed``.
* The power plan (runs to detect the minimum effect at alpha with ``power``) uses a robust
  spread (:func:`benchlab.stats.spread.robust_spread`), so one wild outlier cannot make it
  absurd, and Mann-Whitney's asymptotic relative efficiency against the t test under
  normality (3/pi), i.e. n_t x pi/3. It is a note after the decision, never a gate; if it
  cannot be computed, the note says why.

``jaybeams_compatible=True`` reproduces the post exactly: alpha 0.01 for the test and a 95 %
interval, the SD from bootstrap intervals (ceiling in µs of a mix of lower and upper bounds;
:func:`benchlab.stats.spread.estimate_sd`, with its Monte-Carlo error), the sample-size rule
x 1.15 rounded up to 1000 with a floor of 5000, the 10x power check that aborts and the
effect-size check that stops the analysis.

References
----------
Schuirmann, D. J. (1987). *J. Pharmacokinet. Biopharm.* 15, 657-680 (TOST).
Holm, S. (1979). *Scand. J. Statist.* 6, 65-70.
Hollander, M., Wolfe, D. A. and Chicken, E. (2014). *Nonparametric Statistical Methods*,
3rd ed., section 4.1 (ARE of the rank-sum test: 3/pi under normality).
"""

from __future__ import annotations

from typing import Any, Mapping

from benchlab.errors import UserError
from benchlab.stats._compare_steps import analyse, conclude
from benchlab.stats.comparison import (  # noqa: F401  (public names of the verdict)
    FAILED,
    INFO,
    PASSED,
    WARNING,
    Check,
    CompareOptions,
    Comparison,
    MultiComparison,
)
from benchlab.stats.spread import SdEstimate, estimate_sd, robust_spread  # noqa: F401


def compare(
    a: Any,
    b: Any,
    *,
    name_a: str = "A",
    name_b: str = "B",
    options: CompareOptions | None = None,
) -> Comparison:
    """Compare benchmark A against baseline B: faster, slower, equivalent or undecided.

    Parameters
    ----------
    a, b : array_like
        Measurements of A and B in ns, in measurement order (the order matters for the
        independence check). At least 3 finite values each; ties, constant samples, zero
        medians and outliers are legal and never make it raise.
    name_a, name_b : str
        Names carried into the result (the report's sentences use them).
    options : CompareOptions or None
        Defaults: 95 % intervals, alpha 0.05, the rules in the module docstring.

    Returns
    -------
    Comparison
        Numbers, checks, ``outcome``, ``reason`` and the runs that would decide.

    Raises
    ------
    UserError
        Bad samples (empty, fewer than 3 values, NaN/inf) or options, in one line.
    """
    options = (options or CompareOptions()).resolved()
    result = analyse(a, b, name_a, name_b, options)
    conclude(result, result.p_value)
    return result


def compare_many(
    baseline: Any,
    candidates: Mapping[str, Any],
    *,
    baseline_name: str = "baseline",
    options: CompareOptions | None = None,
) -> MultiComparison:
    """Run :func:`compare` for each candidate against ``baseline``; Holm-adjust the p-values.

    Each candidate's decision uses its Holm-adjusted p-value, so the probability of declaring
    any candidate different when none is stays <= alpha. Intervals are not adjusted.

    Parameters
    ----------
    baseline : array_like
        Baseline measurements (ns).
    candidates : mapping of name -> array_like
        Candidate measurements (ns); at least one.
    baseline_name : str
        Name of the baseline.
    options : CompareOptions or None
        As :func:`compare`.
    """
    from benchlab.stats.multiple import holm

    if not candidates:
        raise UserError("no candidates to compare against the baseline; pass at least one")
    options = (options or CompareOptions()).resolved()
    results = [analyse(values, baseline, name, baseline_name, options)
               for name, values in candidates.items()]
    adjusted = holm([r.p_value for r in results])
    for result, p_adj in zip(results, adjusted):
        result.p_adjusted = float(p_adj)
        conclude(result, float(p_adj))
    return MultiComparison(baseline_name, results)
