"""``benchlab import`` and ``export``: getting data in and out of the store (``show`` is
:mod:`benchlab.cli.show`; ``list`` is :mod:`benchlab.cli.listing`, which loads none of the
import formats)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

import benchlab.machines.varsys16  # noqa: F401  (registers --format varsys16 with the store)
import benchlab.store.bundle  # noqa: F401  (registers --format bundle with the store)
from benchlab.cli.common import (
    db_option,
    open_store,
)
from benchlab.cli.json_output import echo_json
from benchlab.cli.output_path import OutputPath
from benchlab.errors import UserError
from benchlab.store.db import Store
from benchlab.store.formats import EXPORT_FORMATS, export_sessions, import_formats, import_path
from benchlab.units import plural


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
      go         go test -bench output (the text benchstat reads)
      criterion  criterion.rs results: the target/criterion directory
      pytest-benchmark  pytest --benchmark-json FILE
      varsys16   the VarSys16 paper's alltests.csv: one machine profile per machine and CPU limit
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
        echo_json(infos if len(infos) > 1 else infos[0], indent=2)
        return
    for info in infos:
        click.echo(f"imported {path} as session {info['uid']} ({info['name']}): "
                   f"{plural(info['benchmarks'], 'benchmark')}, {plural(info['runs'], 'run')}, "
                   f"{plural(info['samples'], 'sample')}")


def _counts(store: Store, session_id: int) -> dict[str, Any]:
    return store.session_totals(session_id)


@click.command("export")
@click.argument("sessions", nargs=-1, metavar="[SESSION ...]")
@click.option("--format", "fmt", type=click.Choice(list(EXPORT_FORMATS)), default="json",
              show_default=True,
              help="csv: one row per value; json: every stored field; hyperfine: "
                   "hyperfine-compatible JSON; markdown: hyperfine-style table.")
@click.option("-o", "--output", type=OutputPath(keywords=("-",)), default=None, metavar="FILE",
              help="Write to FILE instead of standard output.")
@db_option
def export_cmd(sessions: tuple[str, ...], fmt: str, output: str | None, db: str | None) -> None:
    """Export sessions (uid, id or name; default: the newest session)."""
    with open_store(db, readonly=True) as store:
        if output not in (None, "-"):
            store.refuse_output_path(output, "-o")
        text = export_sessions(store, list(sessions), fmt)
        if fmt in ("markdown", "asciidoc", "orgmode"):  # the verdict beside hyperfine's table
            from benchlab.report.export_verdict import export_verdict_text

            text += export_verdict_text(store, list(sessions), fmt)
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


commands = [import_cmd, export_cmd]
