"""``benchlab analyze SERIES``: summary, outliers, uncertainty, independence, steady state, CDF."""

from __future__ import annotations


import click
from rich.console import Console

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.json_output import echo_json
from benchlab.report.analysis import analyze_series, render_analysis


@click.command("analyze")
@click.argument("series", nargs=-1, required=True)
@click.option("--metric", default=None, help="Metric to analyse (default: the program's only "
              "metric, else wall).")
@click.option("--mad-k", type=params.POSITIVE, default=3.0,
              show_default=True, help="MAD outlier rule: flag |x - median| > k x raw MAD.")
@click.option("--seed", type=params.SEED, default=1, show_default=True, help="Bootstrap seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
@db_option
def analyze_cmd(series, metric, mad_k, seed, as_json, db):
    """Analyse each SERIES ([SESSION:]BENCHMARK[/METRIC], or a session with one benchmark)."""
    store = open_store(db, readonly=False)
    results = [analyze_series(store.resolve_series(s, metric), mad_k=mad_k, seed=seed)
               for s in series]
    if as_json:
        echo_json(results if len(results) > 1 else results[0], indent=2)
        return
    console = Console()
    for a in results:
        render_analysis(a, console)
        console.print()


commands = [analyze_cmd]
