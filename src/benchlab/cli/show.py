"""``benchlab show``: one session (default: the newest) with its timings, the verdict between its
benchmarks, failed runs with their stderr, environment, protocol and metrics."""

from __future__ import annotations

import shlex

import click

from benchlab.cli.common import (
    TAIL_LINES,
    db_option,
    failed_runs,
    metadata_lines,
    open_store,
    resume_command,
    session_overview,
)


@click.command("show")
@click.argument("session", metavar="[NAME|ID]", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print everything as JSON (full environment and metadata included).")
@click.option("--verdict-metric", default=None, metavar="wall|user|sys|instructions|NAME",
              help="Judge this series instead of the one the session's run judged.")
@db_option
def show_cmd(session: str | None, as_json: bool, db: str | None,
             verdict_metric: str | None = None) -> None:
    """Show a session (default: the newest): timings of each benchmark, the verdict between
    them, failed runs with their stderr, environment, protocol and metrics."""
    from benchlab.report import ab_session
    from benchlab.report.run_summary import SamplesReadOnce, session_summaries
    from benchlab.report.speed_verdict import (
        sequential_verdict_lines,
        session_verdict,
        session_verdict_lines,
    )

    with open_store(db, readonly=True) as opened:
        store = SamplesReadOnce(opened)  # the summaries and the verdict read each series once
        if session is None:
            session = store.newest_uid()
        info = session_overview(store, session)
        summaries = session_summaries(store, info["id"])
        # the verdict run printed: the session's stored baseline rule and settings
        overrides = {"metric": verdict_metric} if verdict_metric else {}
        verdict_model = session_verdict(store, info["id"], **overrides)
        verdict = session_verdict_lines(store, info["id"], verdict_model, **overrides)
        if sequential_verdict_lines(store, info["id"]):  # its decision: metadata.until_decided
            verdict_model = None  # a fixed-sample verdict is not valid after a sequential stop
        failures = failed_runs(store, info["id"])
        gate = ab_session.gate_report_of(info)  # an ab session: the gate's pairs first
        opening = ab_session.gate_lines(gate) if gate is not None and not verdict_metric else []
        verdict = [] if opening else verdict
        info["resume"] = (resume_command(info, db)
                          if info["status"] in ("crashed", "interrupted") else None)
    if as_json:
        from dataclasses import asdict

        from benchlab.report import ci_outputs

        info.update(summaries=[asdict(x) for x in summaries],
                    verdict=verdict_model.to_dict() if verdict_model and not opening else None,
                    verdict_lines=opening or verdict,
                    gate=None if gate is None else ci_outputs.to_json(gate),
                    failed_runs=failures)
        from benchlab.cli.json_output import echo_json  # --json only

        echo_json(info, indent=2)
        return
    _print_session(info, summaries, verdict, failures, opening)


def _print_grid(console, rows: list[tuple[str, str]], key_style: str) -> None:
    """Key-value rows: a rich grid on a terminal; in a pipe or CI log plain aligned lines at
    full width (rich assumes 80 columns there and folded long command lines)."""
    from rich.markup import escape
    from rich.table import Table

    if not console.is_terminal:
        width = max((len(k) for k, _ in rows), default=0)
        for k, v in rows:
            console.print(f"{k:<{width}}  {v}", markup=False, highlight=False, soft_wrap=True)
        return
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style=key_style)
    grid.add_column(overflow="fold")
    for k, v in rows:
        grid.add_row(escape(k), escape(v))
    console.print(grid)


def _print_failures(console, failures: list[dict]) -> None:
    """The session's last failed runs, each with why and the tail of its stderr."""
    from rich.markup import escape

    console.print(f"\n[bold]failed runs[/bold] (the last {len(failures)})")
    for f in failures:
        why = f["error"] or (f"exit code {f['exit_code']}" if f["exit_code"] is not None
                             else f"signal {f['signal']}")
        console.print(f"  {escape(f['benchmark'])} run {f['seq']}: {f['status']}, "
                      f"{escape(str(why))}", highlight=False)
        tail = (f["stderr_tail"] or "").splitlines()[-TAIL_LINES:]
        for line in tail:
            console.print(f"    [dim]{escape(line)}[/dim]", highlight=False)


def _print_session(info: dict, summaries: list, verdict: list[str], failures: list[dict],
                   opening: list[str] = ()) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    head = [(key, str(info[key])) for key in ("uid", "name", "kind", "status", "created_utc",
                                               "finished_utc", "source")
            if info.get(key) is not None]
    if info.get("command_line"):
        cl = info["command_line"]
        head.append(("command line", shlex.join(map(str, cl)) if isinstance(cl, list)
                     else str(cl)))
    _print_grid(console, head, "bold")
    if info.get("resume"):
        click.echo(f"{info['status']}: resume with {info['resume']}")
    for line in ["", *opening] if opening else []:  # an ab session's gate, before its runs
        console.print(escape(line), highlight=False, soft_wrap=True)
    if any(x.wall.n or x.program for x in summaries):
        from benchlab.report.run_summary import render_summary_table

        console.print()
        render_summary_table(summaries, console)
    for line in verdict:  # one line each, never wrapped: a pipe or a CI log keeps every number
        console.print(escape(line), highlight=False, soft_wrap=True)
    if failures:
        _print_failures(console, failures)

    env = info["environment_summary"]
    console.print("\n[bold]environment[/bold]")
    if env:
        _print_grid(console, list(env.items()), "dim")
    else:
        console.print("  [dim]not recorded (imported results carry their own metadata)[/dim]")

    for title, value in (("protocol", info.get("protocol")), ("metadata", info.get("metadata"))):
        lines = metadata_lines(value)
        if lines:
            console.print(f"\n[bold]{title}[/bold]")
            _print_grid(console, [(str(k), v) for k, v in lines], "dim")

    table = Table(title="benchmarks")
    table.add_column("#", justify="right")
    table.add_column("name", overflow="fold")
    table.add_column("runs by status")
    table.add_column("warmups", justify="right")
    table.add_column("sample metrics", overflow="fold")
    for i, b in enumerate(info["benchmarks"]):
        runs = ", ".join(f"{status} {n}" for status, n in sorted(b["runs"].items())) or "none"
        table.add_row(str(i), escape(b["name"]), runs, str(b["warmup_runs"]),
                      escape(", ".join(b["sample_metrics"])) or "-")
    console.print()
    console.print(table)
    if info["metrics"]:
        mt = Table(title="metrics")
        for col in ("name", "unit", "origin", "pattern"):
            mt.add_column(col, overflow="fold")
        for m in info["metrics"]:
            mt.add_row(*(escape(m[k] or "") for k in ("name", "unit", "origin", "pattern")))
        console.print(mt)


commands = [show_cmd]
