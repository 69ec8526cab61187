"""``benchlab import``, ``export``, ``list`` and ``show``: getting data in and out of the store."""

from __future__ import annotations

import json
import os
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


@click.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show the newest N only.")
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
@db_option
def list_cmd(limit: int | None, as_json: bool, db: str | None) -> None:
    """List the sessions in the database, newest first."""
    with open_store(db, readonly=True) as store:
        rows = store.sessions(limit=limit)
    keys = ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source",
            "n_benchmarks", "n_runs")
    if as_json:
        click.echo(json.dumps([{k: r.get(k) for k in keys} for r in rows], indent=2))
        return
    if not rows:
        click.echo(f"no sessions in {store.path}; run or import something first")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"sessions in {store.path}")
    for col, justify in (("uid", "left"), ("name", "left"), ("kind", "left"),
                         ("status", "left"), ("created (UTC)", "left"),
                         ("benchmarks", "right"), ("runs", "right")):
        table.add_column(col, justify=justify, overflow="fold")
    for r in rows:
        created = (r["created_utc"] or "").replace("T", " ")[:19]
        status_style = {"complete": "green", "running": "yellow", "interrupted": "yellow",
                        "failed": "red"}.get(r["status"], "")
        table.add_row(r["uid"], r["name"] or "", r["kind"],
                      f"[{status_style}]{r['status']}[/]" if status_style else r["status"],
                      created, str(r["n_benchmarks"]), str(r["n_runs"]))
    Console().print(table)


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


@click.command("show")
@click.argument("session", metavar="NAME|ID")
@click.option("--json", "as_json", is_flag=True,
              help="Print everything as JSON (full environment and metadata included).")
@db_option
def show_cmd(session: str, as_json: bool, db: str | None) -> None:
    """Show one session: environment, protocol, benchmarks with run counts, metrics."""
    with open_store(db, readonly=True) as store:
        info = session_overview(store, session)
    if as_json:
        click.echo(json.dumps(info, indent=2, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    for key in ("uid", "name", "kind", "status", "created_utc", "finished_utc", "source"):
        if info.get(key) is not None:
            head.add_row(key, str(info[key]))
    if info.get("command_line"):
        cl = info["command_line"]
        head.add_row("command line", " ".join(cl) if isinstance(cl, list) else str(cl))
    console.print(head)

    env = info["environment_summary"]
    console.print("\n[bold]environment[/bold]")
    if env:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="dim")
        grid.add_column(overflow="fold")
        for k, v in env.items():
            grid.add_row(k, v)
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
                grid.add_row(str(k), v)
            console.print(grid)

    table = Table(title="benchmarks")
    table.add_column("#", justify="right")
    table.add_column("name", overflow="fold")
    table.add_column("runs by status")
    table.add_column("warmups", justify="right")
    table.add_column("sample metrics", overflow="fold")
    for i, b in enumerate(info["benchmarks"]):
        runs = ", ".join(f"{status} {n}" for status, n in sorted(b["runs"].items())) or "none"
        table.add_row(str(i), b["name"], runs, str(b["warmup_runs"]),
                      ", ".join(b["sample_metrics"]) or "-")
    console.print()
    console.print(table)
    if info["metrics"]:
        mt = Table(title="metrics")
        for col in ("name", "unit", "origin", "pattern"):
            mt.add_column(col, overflow="fold")
        for m in info["metrics"]:
            mt.add_row(m["name"], m["unit"] or "", m["origin"], m["pattern"] or "")
        console.print(mt)


commands = [import_cmd, export_cmd, list_cmd, show_cmd]
