"""hyperfine's closing lines ("A ran 1.18 times faster than B") made honest.

:func:`speed_verdict` compares every benchmark with a baseline by a test and an interval
(:func:`benchlab.stats.verdict.compare_many`) and words the outcome: a decided speed factor
with its interval and p-value, or how many more runs would decide. ``benchlab run`` and
``benchlab show`` print it after the tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchlab.report.verdict_text import percent_text, verdict_text
from benchlab.stats.verdict import CompareOptions, compare_many


def speed_verdict(series: list[tuple[str, Any]], *, sort: str = "auto",
                  reference_index: int | None = None, confidence_level: float = 0.95) -> list[str]:
    """hyperfine's "X ran N times faster than Y" made honest: lines of text (no markup).

    Parameters
    ----------
    series : list of (name, array of wall times in ns)
        Every benchmark's measured wall times, in command order.
    sort : {'auto', 'command', 'mean-time'}
        hyperfine's ``--sort``: the baseline is the fastest median unless ``command`` (the first
        command); lines follow the candidates' medians unless ``command``.
    reference_index : int, optional
        ``--reference``: the baseline, whatever the sort.
    confidence_level : float
        Level of the intervals; the tests run at alpha = 1 - level.

    Each candidate is compared with the baseline by :func:`benchlab.stats.verdict.compare_many`
    (Mann-Whitney, Holm-adjusted over the candidates; bootstrap interval of the ratio of
    medians): decided -> "A ran 1.18× faster than B, 95% CI [1.15, 1.21]"; undecided -> how
    many more runs each would likely decide the observed difference.
    """
    usable = [(name, np.asarray(v, dtype=float)) for name, v in series]
    short = [name for name, v in usable if len(v) < 3]
    if len(usable) < 2:
        return []
    if short:
        return [f"no verdict: {', '.join(short)} has fewer than 3 measured runs; "
                f"run more (-r 3 or more) to compare"]
    if reference_index is not None:
        base = reference_index
    elif sort == "command":
        base = 0
    else:
        base = min(range(len(usable)), key=lambda i: float(np.median(usable[i][1])))
    base_name, base_values = usable[base]
    candidates = {name: v for i, (name, v) in enumerate(usable) if i != base}
    multi = compare_many(base_values, candidates, baseline_name=base_name,
                         options=CompareOptions(confidence_level=confidence_level))
    comparisons = list(multi.comparisons)
    if sort != "command":
        comparisons.sort(key=lambda c: c.summary_a.median)
    level = f"{100 * confidence_level:g}%"
    holm = f", Holm-adjusted over {len(comparisons)} candidates" if len(comparisons) > 1 else ""
    lines = [f"verdict (baseline: {base_name}; Mann-Whitney test{holm}, {level} bootstrap "
             f"interval of the ratio of medians):"]
    for c in comparisons:
        r = c.median_ratio
        has_ratio = r is not None and r.estimate > 0 and r.low > 0
        if c.outcome in ("faster", "slower") and has_ratio:
            p = f"p = {c.p_decision:.2g}"
            if r.estimate >= 1:  # the candidate is slower: the baseline ran faster
                lines.append(f"  {base_name} ran {r.estimate:.2f}× faster than {c.name_a}, "
                             f"{level} CI [{r.low:.2f}, {r.high:.2f}] ({p})")
            else:
                lines.append(f"  {c.name_a} ran {1 / r.estimate:.2f}× faster than {base_name}, "
                             f"{level} CI [{1 / r.high:.2f}, {1 / r.low:.2f}] ({p})")
        elif c.outcome == "undecided" and c.additional_runs is not None and has_ratio:
            lines.append(f"  cannot tell {c.name_a} and {base_name} apart yet: about "
                         f"{c.additional_runs} more runs each would decide a difference of "
                         f"{percent_text(100 * abs(r.estimate - 1))}%")
        else:
            lines.append(f"  {c.name_a} vs {base_name}: {verdict_text(c)}")
    return lines
