"""A comparison's decision, checks and power plan as sentences for the reports.

The verdict and the check lines come from :mod:`benchlab.report.verdict_text` (the words of
``benchlab compare``), so a verdict reads the same in the terminal and in a report; only the
one-sentence summary of the power plan is composed here, from the plan's own numbers.
"""

from __future__ import annotations

from typing import Any

from benchlab.report import verdict_text as words
from benchlab.units import format_value


def verdict_sentence(result: Any, unit: str = "ns") -> str:
    """The verdict of ``result`` (a ``stats.verdict.Comparison``) with its notes, as
    ``benchlab compare`` prints them, with values in ``unit`` (ns: durations). When the
    comparison carries the structured verdict (``result.verdict``), its candidate's sentence:
    the words run, show and compare print."""
    verdict = getattr(result, "verdict", None)
    if verdict is not None and not result.options.jaybeams_compatible:
        try:
            candidate = verdict.candidate(result.name_a)
        except KeyError:
            candidate = None
        if candidate is not None:
            return words.candidate_line(verdict, candidate)
    return " ".join([words.verdict_text(result, unit), *words.notes_text(result, unit)])


def check_line(result: Any, check: Any) -> str:
    """One step of the analysis (the JayBeams report line) as a sentence."""
    return words.check_line(result, check)


def power_note(result: Any, unit: str = "ns") -> str:
    """What the power analysis says: runs per command needed to detect 1x and 10x the minimum
    effect, against the runs measured (``unit``: the samples' unit, e.g. ns)."""
    notes = []
    for label, plan in (("the minimum effect", getattr(result, "plan_1x", None)),
                        ("10x the minimum effect", getattr(result, "plan_10x", None))):
        if plan is None:
            continue
        if plan.n_required is None:
            notes.append(f"no plan for {label} ({plan.reason or 'unavailable'})")
        else:
            notes.append(f"{plan.n_required} runs per command detect {label} "
                         f"({format_value(plan.delta, unit, 4)}) with power {plan.power:g}")
    notes.append(f"measured: {min(result.n_a, result.n_b)} runs (the fewer of the two)")
    if result.samples_needed:
        notes.append(f"about {result.samples_needed} runs per command would decide")
    return "; ".join(notes)
