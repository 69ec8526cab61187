"""``benchlab list``: the sessions in the store, newest first.

Kept apart from :mod:`benchlab.cli.import_export` so that listing loads no import format (the
machine profiles' ``varsys16`` reader pulls numpy and the machines layer): ``list`` over 10,000
sessions is mostly start-up otherwise.
"""

from __future__ import annotations

import sys

import click

from benchlab.cli.common import commands_of, db_option, open_store, resume_command


@click.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show the newest N only.")
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@db_option
def list_cmd(limit: int | None, as_json: bool, db: str | None) -> None:
    """List the sessions in the database, newest first, with their commands.

    A session whose process died while running is shown as ``crashed``, with the command that
    resumes it.
    """
    with open_store(db, readonly=True) as store:
        rows = store.sessions(limit=limit, brief=True)
        commands = commands_of(store, [r["id"] for r in rows])
        path = store.path
    for r in rows:
        r["commands"] = commands.get(r["id"], [])
        r["resume"] = resume_command(r, db) if r["status"] in ("crashed", "interrupted") else None
    keys = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source",
            "n_benchmarks", "n_runs", "commands", "resume")
    if as_json:
        from benchlab.cli.json_output import echo_json  # --json only

        echo_json([{k: r.get(k) for k in keys} for r in rows], indent=2)
        return
    if not rows:
        click.echo(f"no sessions in {path}; run or import something first")
        return
    from benchlab.report.text_table import aligned_lines, printable

    status_colour = {"complete": "green", "running": "yellow", "interrupted": "yellow",
                     "failed": "red", "crashed": "red"}
    table = []
    for r in rows:
        cmds = r["commands"]
        shown = "; ".join(printable(c, 40) for c in cmds[:3])
        if len(cmds) > 3:
            shown += f" (+{len(cmds) - 3})"
        table.append([r["uid"], printable(r["name"], 32), r["kind"], r["status"],
                      (r["created_utc"] or "").replace("T", " ")[:19], str(r["n_runs"]), shown])
    lines = aligned_lines(["uid", "name", "kind", "status", "created (UTC)", "runs", "commands"],
                          table, right=[5])
    # One write, not one per row: 10,000 sessions print in milliseconds. Status in colour on
    # a terminal only (click strips the codes when output is piped).
    colour = sys.stdout.isatty()
    at = lines[0].index("status")  # where the status column starts on every line
    out = [f"sessions in {printable(path)}", lines[0]]
    for r, line in zip(rows, lines[1:]):
        status = r["status"]
        if colour and status in status_colour and line[at:at + len(status)] == status:
            line = (line[:at] + click.style(status, fg=status_colour[status])
                    + line[at + len(status):])
        out.append(line)
    for r in rows:
        if r["status"] == "crashed" and r["resume"]:
            out.append(f"session {r['uid']} crashed (its process died while running); "
                       f"resume it with: {r['resume']}")
    click.echo("\n".join(out))


commands = [list_cmd]
