"""``benchlab analyze SERIES``: summary, outliers, uncertainty, independence, steady state, CDF."""

from __future__ import annotations

import click
from rich.console import Console

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.json_output import echo_json
from benchlab.errors import UserError
from benchlab.report.analysis import analyze_series, render_analysis
from benchlab.units import plural

#: Fewest values a series needs to be analysed (stats.descriptive.summarize's minimum).
MIN_VALUES = 3


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
    chosen = [store.resolve_series(s, metric) for s in series]
    for s in chosen:
        _enough_values(store, s)
    results = [analyze_series(s, mad_k=mad_k, seed=seed) for s in chosen]
    if as_json:
        echo_json(results if len(results) > 1 else results[0], indent=2)
        return
    console = Console(soft_wrap=True)  # a pipe or a CI log keeps every number on its line
    for a in results:
        render_analysis(a, console)
        console.print()



def _enough_values(store, series) -> None:
    """Refuse a series too short to analyse, saying how to get more values: more runs, or,
    for an import, the importing tool's own option (--benchmark_repetitions, pyperf -p)."""
    n = int(series.values.size)
    if n >= MIN_VALUES:
        return
    from benchlab.store.formats.tool_metadata import repetition_hint

    meta = store.get_session(series.session_uid).get("metadata")
    how = repetition_hint(meta) or f"measure more runs (benchlab run -r {MIN_VALUES * 4})"
    raise UserError(f"{series.label} ({series.metric}) has {plural(n, 'value')}; an analysis "
                    f"needs at least {MIN_VALUES}: {how}")


commands = [analyze_cmd]
