"""``benchlab run --harness KIND COMMAND``: store every benchmark a harness reports."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import click

from benchlab.errors import UserError
from benchlab.units import plural

#: run's parameters that mean nothing for a harness (it times its own benchmarks): parameter
#: -> (its option, the value it has when not given).
_NOT_WITH_HARNESS = {
    "resume": ("--resume", None), "until_decided": ("--until-decided", False),
    "metrics": ("--metric", ()), "samples_csv": ("--samples-csv", None),
    "scans": ("--parameter-scan", ()), "lists": ("--parameter-list", ()),
    "workers": ("--workers", 1), "isolation": ("--isolation", "bare"), "load": ("--load", None),
    "perf_events": ("--perf-events", None), "prepare": ("--prepare", ()),
    "setup": ("--setup", ()), "cleanup": ("--cleanup", ()), "warmup": ("--warmup", 0),
    "cluster": ("--cluster", None),
}


class HarnessKindOption(click.Option):
    """``--harness KIND``, whose metavar lists the harness registry's kinds, read when help is
    printed (a run imports nothing of the registry until a harness is asked for)."""

    def make_metavar(self, ctx: click.Context) -> str:
        """``go|gbench|...``: every kind, those registered at run time too."""
        from benchlab.measure.harnesses import harness_kinds

        return "|".join(harness_kinds())


def check_harness_options(given: dict[str, object]) -> None:
    """UserError naming the first option in ``given`` (run's parameters by name) that
    ``--harness`` cannot honour."""
    for param, (option, default) in _NOT_WITH_HARNESS.items():
        value = given.get(param, default)
        if value not in (default, None, ()):
            raise UserError(f"{option} does not apply to --harness (the harness runs and times "
                            f"its own benchmarks); drop {option}")


def harness_dispatch(run_cmd: Callable[..., None]) -> Callable[..., None]:
    """Wrap run's callback: with ``--harness`` the command goes to :func:`run_with_harness`
    (the harness times its own benchmarks), without it to ``run_cmd``."""
    @functools.wraps(run_cmd)
    def dispatch(**given: Any) -> None:
        if given.get("harness") is None:
            given.pop("harness", None)
            return run_cmd(**given)
        return run_with_harness(given)

    return dispatch


def run_with_harness(given: dict) -> None:
    """``run --harness``: ``given`` holds run's parameters by name. Check them, run the harness
    command, store the session, print its summary (or JSON)."""
    from benchlab.cli.common import open_store

    check_harness_options(given)
    with open_store(given["db"]) as store:
        _run(store, given["harness"], given["commands"], given["runs"], given["timeout"],
             given["session_name"], given["as_json"], given["quiet"])


def _run(store, kind: str, commands: tuple[str, ...], runs: int | None, timeout: float | None,
         session_name: str | None, as_json: bool, quiet: bool) -> None:
    from benchlab.core.harness_session import run_harness_session
    from benchlab.core.session_types import SessionInterrupted

    if len(commands) != 1:
        raise UserError(f"--harness runs one command (the harness's), got {len(commands)}; "
                        f"give one command that runs all the benchmarks")
    total = runs or 1

    def progress(index: int, result) -> None:
        if not quiet and not as_json:
            click.echo(f"harness run {index + 1}/{total}: "
                       f"{plural(len(result.reported.benchmarks), 'benchmark')}", err=True)

    try:
        outcome = run_harness_session(store, kind, commands[0], runs=total, name=session_name,
                                      timeout_s=timeout, argv=["benchlab", *sys.argv[1:]],
                                      on_run=progress)
    except SessionInterrupted as exc:
        click.echo(f"benchlab: interrupted; {exc.runs_stored} runs are stored in session "
                   f"{exc.session.uid}", err=True)
        sys.exit(128 + exc.signum)
    if as_json:
        from benchlab.cli.json_output import echo_json
        echo_json({"session": outcome.session.uid, "harness": kind, "db": store.path,
                   "benchmarks": outcome.benchmarks, "harness_runs": outcome.harness_runs},
                  indent=2)
        return
    if quiet:
        return
    from rich.console import Console

    from benchlab.report.run_summary import render_summary_table, session_summaries

    out = Console()
    render_summary_table(session_summaries(store, outcome.session.id), out,
                         plain=not sys.stdout.isatty())
    out.print(f"[dim]stored {plural(len(outcome.benchmarks), 'benchmark')} of "
              f"{plural(outcome.harness_runs, 'harness run')} as session {outcome.session.uid} "
              f"in {store.path}[/dim]")
