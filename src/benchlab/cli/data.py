"""``benchlab import``, ``export``, ``list`` and ``show``: getting data in and out of the store."""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

import click

import benchlab.machines.varsys16  # noqa: F401  (registers --format varsys16 with the store)
from benchlab.cli.common import db_option, open_store
from benchlab.errors import UserError
from benchlab.environment import is_unknown
from benchlab.store.db import Store
from benchlab.store.formats import EXPORT_FORMATS, export_sessions, import_formats, import_path


@click.command("import")
@click.argument("path", metavar="FILE|DIR", type=click.Path(path_type=str))
@click.option("--format", "fmt", type=click.Choice(["auto", *import_formats()]), default="auto",
              show_default=True, help="Input format (auto: guessed from the content).")
@click.option("--metric", "metrics", multiple=True, metavar="NAME[:UNIT]=REGEX",
              help="--format metric: a value to extract from each output file; the regex has "
                   "exactly one group around the number. Repeatable.")
@click.option("--name", default=None,
              help="Session name (default: the file stem or directory name).")
@click.option("--unit", default=None,
              help="--format csv: unit of the values, e.g. ns (default: from the header).")
@click.option("--allow-duplicate", is_flag=True,
              help="Import content that was imported before (refused by default).")
@click.option("--json", "as_json", is_flag=True, help="Print the new session as JSON.")
@db_option
def import_cmd(path: str, fmt: str, metrics: tuple[str, ...], name: str | None,
               unit: str | None, allow_duplicate: bool, as_json: bool, db: str | None) -> None:
    """Import results of another tool (or raw program outputs) as a new session.

    \b
    Formats:
      csv        label,value rows ('#' lines kept as metadata), e.g. JayBeams results;
                 also benchlab's own long-format CSV export
      metric     program outputs, one run per file, read with --metric NAME[:UNIT]=REGEX
      hyperfine  hyperfine --export-json
      pyperf     pyperf JSON (.json or .json.gz)
      gbench     Google Benchmark --benchmark_format=json
      varsys16   seed 004's alltests.csv: one machine profile per machine and CPU limit
      json       benchlab's own JSON export (a complete copy of each session)

    \b
    Examples:
      benchlab import results.csv --format csv --unit ns
      benchlab import outputs/ --format metric --metric 'latency_ns:ns=<<BENCHMARK>> (\\d+)'
    """
    with open_store(db) as store:
        refs = import_path(store, path, fmt, name=name, unit=unit, metrics=list(metrics),
                           command_line=list(sys.argv), allow_duplicate=allow_duplicate)
        infos = [_counts(store, ref.id) for ref in refs]
    if as_json:
        click.echo(json.dumps(infos if len(infos) > 1 else infos[0], indent=2))
        return
    for info in infos:
        click.echo(f"imported {path} as session {info['uid']} ({info['name']}): "
                   f"{info['benchmarks']} benchmarks, {info['runs']} runs, "
                   f"{info['samples']} samples")


def _counts(store: Store, session_id: int) -> dict[str, Any]:
    row = store.conn.execute(
        "SELECT uid, name, (SELECT COUNT(*) FROM benchmarks WHERE session_id = s.id),"
        " (SELECT COUNT(*) FROM runs WHERE session_id = s.id),"
        " (SELECT COUNT(*) FROM samples WHERE run_id IN"
        "   (SELECT id FROM runs WHERE session_id = s.id))"
        " FROM sessions s WHERE id = ?", (session_id,)).fetchone()
    return {"uid": row[0], "name": row[1], "benchmarks": row[2], "runs": row[3],
            "samples": row[4]}


@click.command("export")
@click.argument("sessions", nargs=-1, metavar="[SESSION ...]")
@click.option("--format", "fmt", type=click.Choice(list(EXPORT_FORMATS)), default="json",
              show_default=True,
              help="csv: one row per value; json: every stored field; hyperfine: "
                   "hyperfine-compatible JSON; markdown: hyperfine-style table.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write to FILE instead of standard output.")
@db_option
def export_cmd(sessions: tuple[str, ...], fmt: str, output: str | None, db: str | None) -> None:
    """Export sessions (uid, id or name; default: the newest session)."""
    with open_store(db, readonly=True) as store:
        if output not in (None, "-"):
            store.refuse_output_path(output, "-o")
        text = export_sessions(store, list(sessions), fmt)
    if output is None or output == "-":
        click.echo(text, nl=False)
        return
    tmp = f"{output}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, output)  # readers never see a half-written file
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UserError(f"cannot write {output}: {exc.strerror or exc}; "
                        f"choose a writable path with -o FILE") from None


def resume_command(session: dict, db: str | None) -> str | None:
    """The command that resumes ``session`` (None for kinds that cannot be resumed)."""
    db_part = f" --db {shlex.quote(db)}" if db else ""
    if session.get("kind") == "run":
        return f"benchlab run --resume {session['uid']}{db_part}"
    if session.get("kind") == "study":
        return f"benchlab study run --resume {session['uid']}{db_part}"
    return None


def _commands_of(store: Store, session_ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    if not session_ids:
        return out
    marks = ",".join("?" * len(session_ids))
    for sid, name, command in store.conn.execute(
            f"SELECT session_id, name, command FROM benchmarks WHERE session_id IN ({marks})"
            f" ORDER BY session_id, position", session_ids):
        out.setdefault(sid, []).append(command or name)
    return out


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
        rows = store.sessions(limit=limit)
        commands = _commands_of(store, [r["id"] for r in rows])
        path = store.path
    for r in rows:
        r["commands"] = commands.get(r["id"], [])
        r["resume"] = resume_command(r, db) if r["status"] in ("crashed", "interrupted") else None
    keys = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source",
            "n_benchmarks", "n_runs", "commands", "resume")
    if as_json:
        click.echo(json.dumps([{k: r.get(k) for k in keys} for r in rows], indent=2))
        return
    if not rows:
        click.echo(f"no sessions in {path}; run or import something first")
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"sessions in {escape(path)}")
    for col, justify in (("uid", "left"), ("name", "left"), ("kind", "left"),
                         ("status", "left"), ("created (UTC)", "left"), ("commands", "left"),
                         ("runs", "right")):
        table.add_column(col, justify=justify, overflow="fold")
    for r in rows:
        created = (r["created_utc"] or "").replace("T", " ")[:19]
        status_style = {"complete": "green", "running": "yellow", "interrupted": "yellow",
                        "failed": "red", "crashed": "red"}.get(r["status"], "")
        cmds = r["commands"]
        shown = "; ".join(c if len(c) <= 40 else c[:39] + "…" for c in cmds[:3])
        if len(cmds) > 3:
            shown += f" (+{len(cmds) - 3})"
        table.add_row(r["uid"], escape(r["name"] or ""), r["kind"],
                      f"[{status_style}]{r['status']}[/]" if status_style else r["status"],
                      created, escape(shown), str(r["n_runs"]))
    console = Console()
    console.print(table)
    for r in rows:
        if r["status"] == "crashed" and r["resume"]:
            # plain echo: rich would wrap the command, which must stay copy-pasteable
            click.echo(f"session {r['uid']} crashed (its process died while running); "
                       f"resume it with: {r['resume']}")


def _leaf(value: Any) -> str | None:
    if value is None or is_unknown(value):
        return None
    return str(value)


def environment_summary(env: Any) -> dict[str, str]:
    """A few identifying lines of a stored environment snapshot (missing fields left out)."""
    if not isinstance(env, dict):
        return {}
    def get(*path: str) -> Any:
        node: Any = env
        for p in path:
            if not isinstance(node, dict):
                return None
            node = node.get(p)
        return node

    out: dict[str, str] = {}
    candidates = {
        "host": get("host", "hostname"),
        "os": get("os", "distribution", "pretty_name"),
        "kernel": get("os", "kernel", "release"),
        "cpu": get("cpu", "model"),
        "logical cores": get("cpu", "logical_cores"),
        "memory (KiB)": get("memory", "total_kib"),
        "virtualization": get("virtualization", "vm"),
        "python": get("python", "version"),
        "benchlab": get("benchlab", "version"),
        "git commit": get("git", "commit"),
        "digest": get("digest"),
    }
    for key, value in candidates.items():
        text = _leaf(value)
        if text is not None:
            out[key] = text
    return out


def session_overview(store: Store, key: str) -> dict[str, Any]:
    """What ``benchlab show`` prints: session fields, environment summary, protocol, metrics,
    benchmarks with run counts by status (warmups counted apart) and their sample metrics."""
    sess = store.get_session(key)
    sid = sess["id"]
    counts: dict[int, dict[str, int]] = {}
    warmups: dict[int, int] = {}
    for bench_id, warm, status, n in store.conn.execute(
            "SELECT benchmark_id, warmup, status, COUNT(*) FROM runs WHERE session_id = ?"
            " GROUP BY benchmark_id, warmup, status", (sid,)):
        if warm:
            warmups[bench_id] = warmups.get(bench_id, 0) + n
        else:
            counts.setdefault(bench_id, {})[status] = n
    benchmarks = []
    for b in store.benchmarks(sid):
        benchmarks.append({
            "name": b["name"], "command": b["command"], "parameters": b["parameters"],
            "runs": counts.get(b["id"], {}), "warmup_runs": warmups.get(b["id"], 0),
            "sample_metrics": store.sample_metrics(b["id"]),
        })
    metrics = [{k: m[k] for k in ("name", "unit", "origin", "pattern")}
               for m in store.metrics(sid)]
    fields = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source",
              "command_line", "protocol", "metadata", "environment", "system_checks",
              "load_before", "load_after")
    return {
        "id": sid,
        **{k: sess.get(k) for k in fields},
        "environment_summary": environment_summary(sess.get("environment")),
        "metrics": metrics,
        "benchmarks": benchmarks,
    }


def _short_json(value: Any, limit: int = 100) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _metadata_lines(meta: Any) -> list[tuple[str, str]]:
    if not isinstance(meta, dict):
        return [] if meta is None else [("metadata", _short_json(meta))]
    out = []
    for k, v in meta.items():
        if isinstance(v, list) and len(v) > 3:
            out.append((k, f"{len(v)} entries"))
        elif isinstance(v, dict) and len(json.dumps(v, default=str)) > 100:
            out.append((k, f"{len(v)} keys"))
        else:
            out.append((k, _short_json(v)))
    return out


#: Failed runs whose stderr tail ``show`` prints (the newest ones), and lines of each tail.
SHOWN_FAILURES = 5
TAIL_LINES = 6


def failed_runs(store: Store, session_id: int, limit: int = SHOWN_FAILURES) -> list[dict[str, Any]]:
    """The newest ``limit`` runs of a session that did not end ok, with their stderr tail."""
    out = []
    for row in store.conn.execute(
            "SELECT r.seq, r.status, r.exit_code, r.signal, r.error, r.extra, b.name"
            " FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.session_id = ?"
            " AND r.status IN ('failed', 'signaled', 'timeout', 'error')"
            " ORDER BY r.seq DESC LIMIT ?", (session_id, limit)):
        extra = row["extra"]
        try:
            extra = json.loads(extra) if isinstance(extra, str) else extra
        except json.JSONDecodeError:
            extra = None
        tail = extra.get("stderr_tail") if isinstance(extra, dict) else None
        out.append({"benchmark": row["name"], "seq": row["seq"], "status": row["status"],
                    "exit_code": row["exit_code"], "signal": row["signal"],
                    "error": row["error"], "stderr_tail": tail})
    return out[::-1]


def verdict_lines(store: Store, session_id: int) -> list[str]:
    """hyperfine-style verdict over a session's benchmarks (wall time), or [] with fewer than
    two benchmarks that have measured runs."""
    series = []
    for bench in store.benchmarks(session_id):
        values, _ = store.harness_values(bench["id"], "wall")
        if values.size:
            series.append((bench["name"], values))
    if len(series) < 2:
        return []
    from benchlab.cli.hyperfine_options import speed_verdict

    return speed_verdict(series)


@click.command("show")
@click.argument("session", metavar="[NAME|ID]", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print everything as JSON (full environment and metadata included).")
@db_option
def show_cmd(session: str | None, as_json: bool, db: str | None) -> None:
    """Show a session (default: the newest): timings of each benchmark, the verdict between
    them, failed runs with their stderr, environment, protocol and metrics."""
    from benchlab.report.run_summary import session_summaries

    with open_store(db, readonly=True) as store:
        if session is None:
            newest = store.sessions(limit=1)
            if not newest:
                raise UserError(f"no sessions in {store.path}; run or import something first, "
                                f"or pass --db PATH")
            session = newest[0]["uid"]
        info = session_overview(store, session)
        summaries = session_summaries(store, info["id"])
        verdict = verdict_lines(store, info["id"])
        failures = failed_runs(store, info["id"])
        info["resume"] = (resume_command(info, db)
                          if info["status"] in ("crashed", "interrupted") else None)
    if as_json:
        from dataclasses import asdict

        info.update(summaries=[asdict(x) for x in summaries], verdict=verdict,
                    failed_runs=failures)
        click.echo(json.dumps(info, indent=2, default=str))
        return
    _print_session(info, summaries, verdict, failures)


def _print_session(info: dict, summaries: list, verdict: list[str], failures: list[dict]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    for key in ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source"):
        if info.get(key) is not None:
            head.add_row(key, escape(str(info[key])))
    if info.get("command_line"):
        cl = info["command_line"]
        head.add_row("command line", escape(shlex.join(map(str, cl)) if isinstance(cl, list)
                                            else str(cl)))
    console.print(head)
    if info.get("resume"):
        click.echo(f"{info['status']}: resume with {info['resume']}")
    if any(x.wall.n or x.program for x in summaries):
        from benchlab.report.run_summary import render_summary_table

        console.print()
        render_summary_table(summaries, console)
    for line in verdict:
        console.print(escape(line), highlight=False)
    if failures:
        console.print(f"\n[bold]failed runs[/bold] (the last {len(failures)})")
        for f in failures:
            why = f["error"] or (f"exit code {f['exit_code']}" if f["exit_code"] is not None
                                 else f"signal {f['signal']}")
            console.print(f"  {escape(f['benchmark'])} run {f['seq']}: {f['status']}, "
                          f"{escape(str(why))}", highlight=False)
            tail = (f["stderr_tail"] or "").splitlines()[-TAIL_LINES:]
            for line in tail:
                console.print(f"    [dim]{escape(line)}[/dim]", highlight=False)

    env = info["environment_summary"]
    console.print("\n[bold]environment[/bold]")
    if env:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim")
        grid.add_column(overflow="fold")
        for k, v in env.items():
            grid.add_row(k, escape(v))
        console.print(grid)
    else:
        console.print("  [dim]not recorded (imported results carry their own metadata)[/dim]")

    for title, value in (("protocol", info.get("protocol")), ("metadata", info.get("metadata"))):
        lines = _metadata_lines(value)
        if lines:
            console.print(f"\n[bold]{title}[/bold]")
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="dim")
            grid.add_column(overflow="fold")
            for k, v in lines:
                grid.add_row(escape(str(k)), escape(v))
            console.print(grid)

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


commands = [import_cmd, export_cmd, list_cmd, show_cmd]
