"""What ``benchlab run`` decides around the measurements, as hyperfine means it: the run-count
bounds (``-M N`` alone runs N), options that only mean something together (``--alpha`` with
``--until-decided``), a failing command (exit 1 with its stderr tail; bad input exits 2), and
the verdict printed at the end, on the series ``--verdict-metric`` names, and the text or JSON
a run prints when it ends.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # only a type here: `benchlab run -q` never imports rich (~30 ms)
    from rich.console import Console

from benchlab.cli.common import failed_runs
from benchlab.cli.execute_options import print_machine_table
from benchlab.cli.hyperfine_options import HyperfineOptions
from benchlab.core.plan import RunPlan
from benchlab.errors import UserError

#: hyperfine's default --min-runs (lowered to --max-runs when only that is given).
DEFAULT_MIN_RUNS = 10
#: Lines of a failing command's stderr shown under the error (its tail).
STDERR_TAIL_LINES = 10
#: How the core words a failing hook (core.run_one.run_hook): a command failure, not bad input.
_HOOK_FAILED = r"^the (prepare|setup|cleanup|conclude) command .* failed with "


def min_runs_of(min_runs: int | None, max_runs: int | None) -> int:
    """hyperfine's run-count bounds: ``-M N`` alone runs at most N (the default minimum of 10
    gives way); ``-m`` and ``-M`` given together must not conflict (the plan refuses it)."""
    if min_runs is not None:
        return min_runs
    if max_runs is not None:
        return min(DEFAULT_MIN_RUNS, max_runs)
    return DEFAULT_MIN_RUNS


def until_decided_alpha(alpha: float | None, until_decided: bool) -> float:
    """``--alpha`` is the error rate of the sequential design only; without
    ``--until-decided`` it would be silently ignored, so it is refused naming the option that
    sets the verdict's level. Default 0.01."""
    if alpha is None:
        return 0.01
    if not until_decided:
        raise UserError("--alpha sets the error rate of --until-decided only; the verdict's "
                        "level is --conf-level (alpha = 1 - level), e.g. --conf-level 0.99")
    return alpha


def check_verdict_metric(metric: str | None, plan: RunPlan) -> None:
    """Refuse, before anything runs, a ``--verdict-metric`` the session will not have."""
    from benchlab.store.db import HARNESS_METRICS

    if metric is None:
        return
    known = [*HARNESS_METRICS, *(m.name for m in plan.metrics)]
    if plan.count:
        known.append(plan.count)
    if metric not in known:
        hint = "; add --count instructions" if metric == "instructions" else ""
        raise UserError(f"--verdict-metric {metric}: the session will not have it; choose one "
                        f"of: {', '.join(known)}{hint}")


def exit_if_command_failed(store, session_key: str, exc: UserError) -> None:
    """Exit 1, as hyperfine, when ``exc`` ended the session because a benchmarked command or
    one of its hooks failed (bad input keeps exit 2): the one-line error, then the tail of the
    failed run's stderr, which says what went wrong. Returns for any other error."""
    try:
        session = store.get_session(session_key)
    except UserError:
        return
    ignore = (session.get("protocol") or {}).get("ignore_failure", False)
    failures = [f for f in failed_runs(store, session["id"])
                if not (ignore is True or (isinstance(ignore, list) and f["status"] == "failed"
                                           and f["exit_code"] in ignore))]
    if not failures and not re.match(_HOOK_FAILED, str(exc)):
        return
    click.echo(f"benchlab: error: {exc}", err=True)
    tail = (failures[-1]["stderr_tail"] or "").splitlines()[-STDERR_TAIL_LINES:] if failures else []
    if tail:
        click.echo(f"  stderr of {failures[-1]['benchmark']} (last lines):", err=True)
        for line in tail:
            click.echo(f"    {line}", err=True)
    store.close()
    sys.exit(1)


def verdict_margin(min_effect: str | None) -> float:
    """The verdict's equivalence margin (a fraction of the baseline) from ``--min-effect``:
    a percentage (``2%``); 1 % by default. A duration is refused in one line: ``run``'s
    verdict judges ratios (``compare SESSION --min-effect 1ms`` takes one)."""
    from benchlab.units import parse_effect

    if min_effect is None:
        return 0.01
    kind, effect = parse_effect(min_effect, what="--min-effect")
    if kind != "relative":
        raise UserError(f"run --min-effect takes a percentage of the baseline (e.g. 2%), not "
                        f"{min_effect}; for a margin in time units use benchlab compare SESSION "
                        f"--min-effect {min_effect}")
    return effect


def print_verdict(store, session_id: int, hf: HyperfineOptions, reference: str | None,
                  console: Console, *, metric: str | None = None,
                  confidence_level: float = 0.95, verdict=None) -> None:
    """hyperfine's relative-speed summary, with a test and an interval (see speed_verdict), on
    ``metric`` (default: :func:`~benchlab.report.run_summary.default_verdict_metric`), then
    the exact instruction counts beside it when the session counted them. ``verdict``: the
    session's structured verdict (:func:`store_run_verdict`), printed
    as show and compare print it."""
    from benchlab.report.run_summary import count_lines, default_verdict_metric, verdict_series
    from benchlab.report.speed_verdict import speed_verdict

    metric = metric or default_verdict_metric(store, session_id)
    series = verdict_series(store, session_id, metric)
    names = [name for name, _ in series]
    ref_index = names.index(reference) if reference in names else None
    if verdict is not None:  # the words of the stored session's verdict, as show prints them
        from benchlab.report.verdict_text import verdict_lines

        lines = verdict_lines(verdict, sort=hf.sort)
    else:
        lines = speed_verdict(series, sort=hf.sort, reference_index=ref_index,
                              confidence_level=confidence_level)
        if lines and metric != "wall":  # say which series was judged
            lines[0] = f"{lines[0].rstrip(':')} on {metric}:"
    if metric != "instructions":
        baseline = (reference if ref_index is not None else names[0] if hf.sort == "command"
                    and names else None)
        lines += count_lines(store, session_id, baseline)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def store_run_verdict(store, session_id: int, settings: dict, *, resumed: bool = False):
    """What ``benchlab run`` does at its end, with or without ``-q``: store the verdict's
    ``settings`` (:func:`benchlab.report.speed_verdict.verdict_settings`) with the session, so
    ``show``, ``compare SESSION``, ``report`` and the exports give this same verdict, then
    decide it and store it beside them as data (``"result"``). A ``resumed`` session keeps the
    settings its first ``run`` stored. Returns the :class:`~benchlab.stats.verdict_model.Verdict`,
    or None with fewer than two benchmarks (nothing to compare: no statistics are loaded)."""
    from benchlab.report.speed_verdict import METADATA_KEY
    from benchlab.store import session_metadata

    if not (resumed and METADATA_KEY in session_metadata.read(store, session_id)):
        session_metadata.merge(store, session_id, **{METADATA_KEY: settings})
    if len(store.benchmarks(session_id)) < 2:
        return None
    from benchlab.report.speed_verdict import session_verdict, stored_settings

    verdict = session_verdict(store, session_id)
    if verdict is not None:
        session_metadata.merge(store, session_id, **{METADATA_KEY: {
            **stored_settings(store, session_id), "result": verdict.to_dict()}})
    return verdict


def echo_json_outcome(store, result, verdict, summaries) -> None:
    """``--json``: the session, its status, verdict and each benchmark's summary, as JSON."""
    from benchlab.cli.json_output import echo_json  # its printer only for this output

    echo_json({"session": result.session.uid, "status": result.status,
               "db": store.path, "until_decided": result.decision,
               "verdict": verdict.to_dict() if verdict is not None else None,
               "benchmarks": [s.to_dict() for s in summaries]}, indent=2)


def print_outcome(store, result, hf, summaries, reference, verdict, verdict_metric,
                  conf_level) -> None:
    """The text a run prints at its end: the summary and machine tables, the verdict (or the
    sequential design's decision), where the session is stored."""
    from benchlab.report.run_summary import render_summary_table

    plain = hf.plain_tables(sys.stdout.isatty())
    if plain and hf.color is not True:  # a pipe: plain lines, whole, and no rich to load
        from benchlab.report.text_table import PlainConsole

        out = PlainConsole()
    else:
        from rich.console import Console

        out = Console(no_color=hf.color is False, force_terminal=True if hf.color else None)
    render_summary_table(summaries, out, plain=plain)
    print_machine_table(store, result.session.id, out)
    if result.decision is None:
        if len(summaries) > 1:  # one command has no verdict (and needs no numpy)
            print_verdict(store, result.session.id, hf, reference, out,
                          metric=verdict_metric, confidence_level=conf_level, verdict=verdict)
    else:  # the sequential design's own decision: a fixed-sample verdict is not valid here
        from benchlab.report.verdict_text import sequential_lines

        for line in sequential_lines(result.decision, [s.name for s in summaries]):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
    out.print(f"[dim]stored as session {result.session.uid} in {store.path}[/dim]")
