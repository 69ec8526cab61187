"""A comparison's decision, checks and power plan as short sentences for the reports.

The sentences of seed 001's verdict belong to :mod:`benchlab.report.verdict_text` (owned with
the statistics); when that module offers a sentence for a comparison, the reports use it, so a
verdict reads the same in ``compare`` and in a report. Until then (and for any comparison it
does not cover) these functions say the decision plainly from the result's own fields:
outcome, reason, the Hodges-Lehmann shift and the median ratio.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from benchlab.units import format_value

_OUTCOME = {"faster": "is faster than", "slower": "is slower than",
            "equivalent": "is equivalent to", "undecided": "cannot be told apart from"}


def _verdict_text_module() -> Any:
    if importlib.util.find_spec("benchlab.report.verdict_text") is None:
        return None
    from benchlab.report import verdict_text  # the stats engineer's sentences

    return verdict_text


def verdict_sentence(result: Any, unit: str = "ns") -> str:
    """The verdict of ``result`` (a ``stats.verdict.Comparison``) in one sentence."""
    words = _verdict_text_module()
    for name in ("verdict_sentence", "verdict", "describe_verdict"):
        fn = getattr(words, name, None) if words is not None else None
        if callable(fn):
            return str(fn(result))
    if isinstance(getattr(result, "verdict", None), str) and result.verdict:
        return result.verdict
    text = f"{result.name_a} {_OUTCOME.get(result.outcome, result.outcome)} {result.name_b}"
    hl = result.hodges_lehmann
    if hl is not None:
        text += (f": shift {format_value(hl.estimate, unit, 5)} (95 % interval "
                 f"{format_value(hl.ci_low, unit, 5)} .. {format_value(hl.ci_high, unit, 5)})")
    ratio = result.median_ratio
    if ratio is not None:
        text += f", median ratio {ratio.estimate:.4f}"
    p = result.p_adjusted if result.p_adjusted is not None else result.p_value
    text += f", p = {p:.3g}" + (" (Holm)" if result.p_adjusted is not None else "")
    if result.outcome == "undecided" and result.samples_needed:
        text += f"; about {result.samples_needed} runs per command would decide it"
    return text + "."


def check_line(check: Any) -> str:
    """One step of the analysis as text (the check's own text when it has one)."""
    text = getattr(check, "text", None)
    if text:
        return str(text)
    data = getattr(check, "data", None) or {}
    details = ", ".join(f"{k.replace('_', ' ')} {v:.3g}" if isinstance(v, float)
                        else f"{k.replace('_', ' ')} {v}" for k, v in data.items())
    return check.name.replace("_", " ") + (f" ({details})" if details else "")


def power_note(result: Any, unit: str = "ns") -> str:
    """What the power analysis says: runs per command needed to detect 1x and 10x the minimum
    effect, against the runs measured."""
    notes = []
    for label, plan in (("the minimum effect", getattr(result, "plan_1x", None)),
                        ("10x the minimum effect", getattr(result, "plan_10x", None))):
        if plan is None:
            continue
        n_req = getattr(plan, "n_required", None)
        if n_req is None:
            notes.append(f"no plan for {label} ({getattr(plan, 'reason', '') or 'unavailable'})")
        else:
            notes.append(f"{n_req} runs per command detect {label} "
                         f"({format_value(plan.delta, unit, 4)}) with power {plan.power:g}")
    have = min(result.n_a, result.n_b)
    notes.append(f"measured: {have} runs (fewest of the two)")
    if result.samples_needed:
        notes.append(f"about {result.samples_needed} runs per command would decide")
    return "; ".join(notes)
