"""``benchlab compare A B``: the JayBeams flow as PASSED/WARNING/FAILED lines and a verdict.

The check lines are :mod:`benchlab.stats.verdict`'s flow; the verdict line is the structured
verdict every command prints (:mod:`benchlab.stats.verdict_model`, words in
:mod:`benchlab.report.verdict_text`), so ``compare`` says what ``run`` and ``show`` say.
``benchlab compare SESSION`` gives a stored session's own verdict (its baseline rule), exactly
as ``show``. ``--jaybeams-compatible`` keeps the JayBeams decision rules for the verdict line.
"""

from __future__ import annotations

import click
import numpy as np
from rich.console import Console
from rich.markup import escape

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.json_output import echo_json
from benchlab.cli.output_path import OUTPUT_FILE
from benchlab.environment import diff_environments
from benchlab.errors import UserError
from benchlab.report.verdict_text import (
    align_dependence,
    candidate_line,
    check_lines,
    notes_text,
    verdict_header,
    verdict_note_lines,
    verdict_text,
)
from benchlab.stats.verdict import CompareOptions, compare, compare_many
from benchlab.stats.verdict_model import verdict_model
from benchlab.units import parse_effect

_STYLE = {"PASSED": "green", "WARNING": "yellow", "FAILED": "red", "INFO": "dim"}


def _environment(store, series) -> dict | None:
    sess = store.get_session(series.session_uid)
    return sess.get("environment") if isinstance(sess.get("environment"), dict) else None


def _effect_of(min_effect: str | None, iterations: int | None,
               clock_ghz: float | None) -> tuple[str, float]:
    """(kind, value) of the smallest effect worth detecting: ``--min-effect`` (a duration, ns,
    or a fraction), else 1 % relative; UserError for a contradictory combination."""
    if (iterations is None) != (clock_ghz is None):
        raise UserError("--iterations and --clock-ghz go together (min effect = iterations / "
                        "GHz ns); give both or neither")
    if min_effect is not None and iterations is not None:
        raise UserError("give --min-effect or --iterations/--clock-ghz, not both")
    return (parse_effect(min_effect, what="--min-effect")
            if min_effect is not None else ("relative", 0.01))


def _series_to_compare(store, names: list[str], baseline: str, metric: str | None):
    """(baseline series, candidate series, instruction-count series, metric). Series counted
    with ``--count instructions`` alone are judged on wall time with the exact counts beside,
    as ``run`` does; UserError when the series are in different units."""
    base = store.resolve_series(baseline, metric)
    counted = []
    if metric is None and base.metric == "instructions" and not any(
            n.endswith("/instructions") for n in [*names, baseline]):
        counted = [store.resolve_series(n, "instructions") for n in [*names, baseline]]
        metric = "wall"
        base = store.resolve_series(baseline, metric)
    cands = [store.resolve_series(n, metric) for n in names]
    for c in cands:
        if c.unit != base.unit:
            raise UserError(f"{c.label} is in {c.unit or 'no unit'} but {base.label} in "
                            f"{base.unit or 'no unit'}; compare series of one unit (--metric)")
    return base, cands, counted, metric


@click.command("compare")
@click.argument("series", nargs=-1, required=True)
@click.option("--baseline", default=None, metavar="SERIES",
              help="Compare every SERIES against this one (Holm-corrected). Without it: "
                   "the last SERIES is the baseline.")
@click.option("--metric", "--verdict-metric", "metric", default=None, help="Metric of every "
              "series (default: the program's only metric, else wall; a SESSION: the one its "
              "run judged).")
@click.option("--conf-level", type=params.PROBABILITY,
              default=None, help="Level of the intervals; the test uses alpha = 1 - level "
              "[default: 0.95; --jaybeams-compatible: 0.95 with alpha 0.01, as the JayBeams analysis].")
@click.option("--power", type=params.PROBABILITY,
              default=0.95, show_default=True, help="Power of the sample-size plan.")
@click.option("--min-effect", default=None, metavar="EFFECT",
              help="Smallest interesting difference: a duration (1ms, 500us) or a percentage "
                   "of the baseline median (2%) [default: 1%].")
@click.option("--iterations", type=click.IntRange(min=1), default=None,
              help="Work per measurement: with --clock-ghz, min effect = one cycle per iteration.")
@click.option("--clock-ghz", type=params.POSITIVE, default=None)
@click.option("--jaybeams-compatible", is_flag=True,
              help="Reproduce the JayBeams rules exactly (docs/analysis.md).")
@click.option("--resamples", type=click.IntRange(min=100), default=None,
              help="Bootstrap resamples of the SD estimate (default 2000; 10000 when "
                   "--jaybeams-compatible).")
@click.option("--seed", type=params.SEED, default=1, show_default=True, help="Bootstrap seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--report", "report_file", type=OUTPUT_FILE, default=None, metavar="FILE",
              help="Also write the self-contained HTML report of these series to FILE.")
@click.option("--alpha", "removed_alpha", default=None, hidden=True, expose_value=False,
              callback=lambda ctx, param, value: _removed(value, "--alpha",
                                                         "--conf-level (alpha = 1 - level)"))
@click.option("--min-effect-percent", "removed_percent", default=None, hidden=True,
              expose_value=False, callback=lambda ctx, param, value: _removed(
                  value, "--min-effect-percent", "--min-effect 2%"))
@db_option
def compare_cmd(series, baseline, metric, conf_level, power, min_effect, iterations,
                clock_ghz, jaybeams_compatible, resamples, seed, as_json, db, report_file=None):
    """Compare A against baseline B: is A faster, slower, equivalent, or undecided?

    Each SERIES is [SESSION:]BENCHMARK[/METRIC]. Several candidates against one baseline
    get Holm's correction. A single SESSION compares its benchmarks as run and show do.
    """
    effect_kind, effect = _effect_of(min_effect, iterations, clock_ghz)
    names = list(series)
    if len(names) == 1 and baseline is None:
        store = open_store(db)
        session = _session_only(store, names[0])
        if session is not None:
            return _compare_session(store, session, metric, conf_level, as_json)
    if baseline is None:
        if len(names) < 2:
            raise UserError("compare needs two series (A B) or --baseline; e.g. "
                            "benchlab compare array map")
        baseline = names.pop()
    store = open_store(db)
    base, cands, counted, metric = _series_to_compare(store, names, baseline, metric)
    if effect_kind == "absolute" and base.unit not in (None, "", "ns"):  # no unit: read as ns
        raise UserError(f"--min-effect {min_effect} is a duration but {base.label} is in "
                        f"{base.unit or 'no unit'}; give a percentage, e.g. --min-effect 2%")
    options = CompareOptions(confidence_level=conf_level, power=power,
                             min_effect=effect if effect_kind == "absolute" else None,
                             iterations=iterations, clock_ghz=clock_ghz,
                             min_effect_relative=effect if effect_kind == "relative" else 0.01,
                             jaybeams_compatible=jaybeams_compatible,
                             bootstrap_resamples=resamples, seed=seed)
    # Values are printed in the metric's own unit: a series without one was stored as ns.
    unit = base.unit or "ns"
    labels = _labels([*cands, base])
    results = _analyses(cands, base, labels, options)
    verdict = verdict_model([(label, s.values[np.isfinite(s.values)])
                             for label, s in zip(labels, [*cands, base])],
                            baseline=labels[-1], metric=base.metric, unit=unit,
                            confidence_level=options.resolved().confidence_level,
                            equivalence_margin=(_margin(results[0]) if results else
                                                _margin_of(effect_kind, effect, base.values)),
                            equivalence_margin_abs=(options.min_effect if effect_kind == "absolute"
                                                    else None),
                            jaybeams_compatible=jaybeams_compatible)

    align_dependence(results, verdict)

    def jaybeams_rules(r) -> bool:  # the JayBeams analysis decides (or exact counts do)
        return jaybeams_compatible or (unit == "count" and _exact_counts(r))

    def line(r) -> str:  # the verdict of one candidate: the structured one, unless the JayBeams rules
        if jaybeams_rules(r):
            return verdict_text(r, unit, base.metric)
        return candidate_line(verdict, verdict.candidate(r.name_a))
    if report_file is not None:
        from benchlab.report.output import write_report
        write_report(store, [*names, baseline], report_file, metric=metric, reference=baseline,
                     options=options)
    diffs = _environment_diffs(store, base, labels, cands)
    if as_json:
        echo_json({
            "baseline": {"label": labels[-1], "session": base.session_uid, "metric": base.metric,
                         "unit": base.unit},
            "candidates": [{"label": l, "session": c.session_uid, "metric": c.metric}
                           for l, c in zip(labels, cands)],
            "adjustment": "holm" if len(cands) > 1 else None,
            "verdict": verdict.to_dict(),
            "instructions": _count_lines(labels, counted),
            "comparisons": [dict(r.to_dict(), verdict=line(r),
                                 notes_text=notes_text(r, unit)) for r in results],
            "environment_differences": {k: [list(map(_plain, d)) for d in v]
                                        for k, v in diffs.items()}}, indent=2)
        return
    _print_text(results, unit, base.metric, line, jaybeams_rules, verdict, labels, counted,
                diffs)


def _analyses(cands: list, base, labels: list[str], options: CompareOptions) -> list:
    """The JayBeams analysis of each candidate against ``base`` (Holm over several); [] when
    a series has fewer than 3 values outside ``--jaybeams-compatible``: the verdict alone
    then says how many runs could decide (``too_few_runs``), as run and show say it."""
    if len(set(labels)) != len(labels):
        raise UserError("two series have the same name; select them as SESSION:NAME")
    if not options.jaybeams_compatible and min(
            int(np.isfinite(s.values).sum()) for s in [*cands, base]) < 3:
        return []
    if len(cands) == 1:
        return [compare(cands[0].values, base.values, name_a=labels[0], name_b=labels[-1],
                        options=options)]
    return compare_many(base.values, {labels[i]: c.values for i, c in enumerate(cands)},
                        baseline_name=labels[-1], options=options).comparisons


def _margin_of(effect_kind: str, effect: float, base_values) -> float:
    """The equivalence margin without an analysis to read it from (:func:`_margin`)."""
    if effect_kind == "relative":
        return effect
    median = abs(float(np.median(base_values[np.isfinite(base_values)])))
    return effect / median if median > 0 else 0.01


def _print_text(results, unit: str, metric: str, line, jaybeams_rules, verdict,
                labels: list[str], counted: list, diffs: dict) -> None:
    """compare's terminal output: each comparison's checks, verdict and notes, the verdict's
    notes, exact counts and environment differences (``unit`` of the values, ``line`` words
    one comparison's verdict; ``jaybeams_rules(r)``: the JayBeams steps decide ``r``, so all
    of them are printed, else only the checks of the data beside the verdict's numbers)."""
    console = Console(soft_wrap=True)  # one line per sentence: a pipe or CI log cuts nothing
    structured = not results or not all(jaybeams_rules(r) for r in results)
    if structured:  # the test, and why the levels differ
        console.print(escape(verdict_header(verdict)), highlight=False)
    for c in verdict.candidates if not results else []:  # too few values for the checks
        console.print(f"[bold]{escape(c.name)}[/bold] vs baseline [bold]{escape(verdict.baseline)}"
                      f"[/bold] ({metric}, n = {c.n} and {c.n_baseline})")
        console.print(f"  [bold]verdict:[/bold] {escape(candidate_line(verdict, c))}",
                      highlight=False)
        console.print()
    for r in results:
        every_step = jaybeams_rules(r)
        console.print(f"[bold]{r.name_a}[/bold] vs baseline [bold]{r.name_b}[/bold] "
                      f"({metric}, n = {r.n_a} and {r.n_b})")
        for status, text in check_lines(r, unit, every_step=every_step):
            style = _STYLE.get(status, "")
            console.print(f"  [{style}]{status}[/{style}]: {text}", highlight=False)
        console.print(f"  [bold]verdict:[/bold] {escape(line(r))}", highlight=False)
        for note in notes_text(r, unit) if every_step else []:
            console.print(f"  note: {note}", highlight=False)
        console.print()
    # the structured verdict's notes (widened for autocorrelation ...) only beside its lines:
    # the JayBeams steps' own test is not widened
    for note in verdict_note_lines(verdict) if structured else []:
        console.print(escape(note), highlight=False)
    for text in _count_lines(labels, counted):
        console.print(escape(text), highlight=False, soft_wrap=True)
    for label, d in diffs.items():
        if not d:
            console.print(f"environment: {label} and {labels[-1]} were measured in the same "
                          f"environment")
            continue
        console.print(f"[bold]environment differences[/bold] ({label} | {labels[-1]}):")
        for key, va, vb in d[:40]:
            console.print(f"  {key}: {_plain(va)} | {_plain(vb)}")
        if len(d) > 40:
            console.print(f"  ... and {len(d) - 40} more (--json lists all)")



def _environment_diffs(store, base, labels: list[str], cands: list) -> dict:
    """Environment differences of each candidate from another session than the baseline's."""
    env_base = _environment(store, base)
    diffs = {}
    for label, c in zip(labels, cands):
        env_c = _environment(store, c)
        if env_base is not None and env_c is not None and c.session_uid != base.session_uid:
            diffs[label] = diff_environments(env_c, env_base)
    return diffs

def _count_lines(labels: list[str], counted: list) -> list[str]:
    """The exact instruction counts beside the wall verdict (run's words): each candidate's
    median count and its difference against the baseline's (the last)."""
    if not counted:
        return []
    base = float(np.median(counted[-1].values))
    out = [f"instructions (exact counts under valgrind, baseline {labels[-1]}: {base:,.0f}):"]
    for label, c in zip(labels[:-1], counted[:-1]):
        count = float(np.median(c.values))
        rel = f" ({100 * (count - base) / base:+.2f} %)" if base > 0 else ""
        out.append(f"  {label}: {count:,.0f}, {count - base:+,.0f}{rel} against {labels[-1]}")
    return out


def _margin(c) -> float:
    """The equivalence margin of the structured verdict: --min-effect as a fraction of the
    baseline's median (1 % when that median is 0)."""
    median = abs(c.summary_b.median)
    if c.min_effect is None or median == 0:
        return 0.01
    return float(c.min_effect / median)


def _exact_counts(c) -> bool:
    """Counts with (almost) no run-to-run spread: their exact difference is the verdict."""
    from benchlab.report.verdict_text import COUNT_CV_STABLE

    cvs = [s.sd / abs(s.mean) if s.mean != 0 else float("inf") for s in (c.summary_a,
                                                                          c.summary_b)]
    return max(cvs) < COUNT_CV_STABLE


def _session_only(store, key: str) -> dict | None:
    """The session ``key`` names when it is not also a benchmark of some session."""
    try:
        store.resolve_series(key)
        return None
    except UserError:
        pass
    try:
        return store.find_session(key)
    except UserError:
        return None


def _compare_session(store, session: dict, metric, conf_level, as_json) -> None:
    """A stored session's own verdict (its stored baseline rule and settings), as show; an
    ``ab`` session's is the gate's (its pairs), unless another metric is asked for."""
    from benchlab.report import ab_session
    from benchlab.report.speed_verdict import (
        sequential_verdict_lines,
        session_verdict,
        session_verdict_lines,
    )

    gate = ab_session.gate_report_of(session) if metric is None else None
    if gate is not None:
        from benchlab.report.ci_outputs import to_json

        if as_json:
            return echo_json({"session": session["uid"], "gate": to_json(gate),
                              "verdict_lines": ab_session.gate_lines(gate)}, indent=2)
        return click.echo("\n".join(ab_session.gate_lines(gate)))
    overrides = {k: v for k, v in (("metric", metric), ("confidence_level", conf_level))
                 if v is not None}
    verdict = session_verdict(store, session["id"], **overrides)
    if verdict is None:
        raise UserError(f"session {session['uid']} has fewer than two measured benchmarks; "
                        "compare needs two")
    lines = session_verdict_lines(store, session["id"], verdict, **overrides)
    if as_json:  # after --until-decided the design's decision only (its until_decided)
        sequential = (session.get("metadata") or {}).get("until_decided") \
            if sequential_verdict_lines(store, session["id"]) else None
        echo_json({"session": session["uid"],
                   "verdict": None if sequential else verdict.to_dict(),
                   "until_decided": sequential, "verdict_lines": lines}, indent=2)
        return
    for text in lines:
        click.echo(text)


def _removed(value, option: str, replacement: str) -> None:
    """Refuse an option of older versions by name, with the one that replaced it: click's own
    "No such option" suggests an unrelated one (--help)."""
    if value is not None:
        raise UserError(f"{option} was removed; use {replacement}")


def _plain(value):
    if isinstance(value, dict) and "unknown" in value:
        return f"unknown ({value['unknown']})"
    return value


def _labels(series_list) -> list[str]:
    """Benchmark names, qualified by session where two series share a name."""
    names = [s.benchmark for s in series_list]
    out = []
    for s in series_list:
        if names.count(s.benchmark) > 1:
            out.append(f"{s.session_uid}:{s.benchmark}")
        else:
            out.append(s.benchmark)
    return out


commands = [compare_cmd]
