"""``benchlab report``: self-contained HTML or Markdown, figures as PNG/SVG (``benchlab history``
is :mod:`benchlab.cli.history`)."""

from __future__ import annotations

import click

from benchlab.cli.common import db_option, open_store
from benchlab.cli.output_path import OUTPUT_DIR, OUTPUT_FILE
from benchlab.errors import UserError


@click.command("report")
@click.argument("selectors", nargs=-1)
@click.option("-o", "--output", type=OUTPUT_FILE, default=None, metavar="FILE",
              help="Report file (HTML by default; one self-contained file that works offline).")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown"]), default="html",
              show_default=True, help="markdown: the same numbers with figures linked as PNG "
              "(written to --plots DIR, else FILE's stem + _figures/).")
@click.option("--plots", type=OUTPUT_DIR, default=None, metavar="DIR", help="Also write every figure as PNG "
              "and SVG into DIR.")
@click.option("--metric", "--verdict-metric", "metric", default=None, help="Metric of every "
              "series (default: the program's only metric, else wall).")
@click.option("--reference", default=None, metavar="SERIES", help="Compare every series "
              "against this one (default: the last selected, as in `benchlab compare`).")
@click.option("--history", "history", multiple=True, metavar="NAME",
              help="Add the history of benchmark NAME across sessions (repeatable).")
@click.option("--study", default=None, metavar="SESSION",
              help="Add the stability study's figures of this study session.")
@click.option("--variability", "variability", multiple=True, metavar="FILE",
              help="Add the VarSys16 ranges (the paper's Figure 2) for this variability document (from `benchlab "
                   "variability --json`; repeatable).")
@click.option("--predict", "predict", default=None, metavar="APPS",
              help="Add Figure 3: applications (CSV name,base,target[,lower_is_better] or "
                   "JSON) against the first --variability range.")
@db_option
def report_cmd(selectors, output, fmt, plots, metric, reference, history, study, variability,
               predict, db):
    """Write a report of SELECTORS: sessions, or series as [SESSION:]NAME[/METRIC].

    Without selectors: the newest session (or only the --history / --study sections).
    """
    from benchlab.report.output import check_output, write_report

    check_output(output, fmt, plots)
    if predict is not None and not variability:
        raise UserError("--predict needs a --variability FILE whose range it is checked against")
    extra = []
    if variability:
        from benchlab.machines.predict import predict as predict_apps
        from benchlab.machines.predict import read_app_results
        from benchlab.machines.variability import load_variability_file
        from benchlab.report.machines_figures import machines_section

        items = [load_variability_file(path) for path in variability]
        preds = predict_apps(items[0], read_app_results(predict)) if predict else []
        extra.append(machines_section(items, preds))
    machines_only = bool(variability) and not (selectors or history or study)
    store = open_store(db, readonly=True) if not machines_only else None
    if study is not None:
        from benchlab.report.study_output import study_section

        extra.append(study_section(store, study))
    if store is None:
        from benchlab.report.output import write_sections

        written = write_sections(extra, output, fmt=fmt, plots=plots)
    else:
        written = write_report(store, list(selectors), output, fmt=fmt, plots=plots,
                               metric=metric, reference=reference, history=history, extra=extra)
    if written.path is not None:
        click.echo(f"wrote {written.path} ({written.size / 1e6:.2f} MB)")
    if written.plots:
        click.echo(f"wrote {len(written.plots)} figure files to {written.plots[0].parent}")


commands = [report_cmd]
