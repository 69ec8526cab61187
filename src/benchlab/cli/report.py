"""``benchlab report`` (self-contained HTML or Markdown, figures as PNG/SVG) and
``benchlab history NAME`` (a benchmark across sessions, as text)."""

from __future__ import annotations

import sys

import click

from benchlab.cli import params
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


@click.command("history")
@click.argument("name")
@click.option("--metric", default=None, help="Metric (default: the program's only metric, "
              "else wall).")
@click.option("--alpha", type=params.PROBABILITY, default=0.01, show_default=True,
              help="Level of each change point's permutation test.")
@click.option("--min-effect", default=None, metavar="EFFECT",
              help="Smallest step worth flagging: a percentage of the previous median (2%) or "
                   "a duration (1ms) [default: 1%].")
@click.option("--min-effect-percent", type=params.finite_float(minimum=0.0, maximum=1000.0),
              default=None, hidden=True, help="The same as --min-effect PERCENT%.")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 while the newest change point is a regression (a nightly job).")
@db_option
def history_cmd(name, metric, alpha, min_effect, min_effect_percent, fail_on_regression, db):
    """Every session of benchmark NAME in time order: median, interval, steps, environment."""
    from benchlab.report.history import build_history, newest_step, render_history_text
    from benchlab.units import parse_effect

    if min_effect is not None and min_effect_percent is not None:
        raise UserError("--min-effect-percent is --min-effect PERCENT%; give only --min-effect")
    kind, effect = (parse_effect(min_effect, what="--min-effect") if min_effect is not None
                    else ("relative", (1.0 if min_effect_percent is None
                                       else min_effect_percent) / 100))
    store = open_store(db, readonly=True)
    h = build_history(store, name, metric=metric, alpha=alpha,
                      min_effect_relative=effect if kind == "relative" else 0.01,
                      min_effect_abs=effect if kind == "absolute" else None)
    if kind == "absolute" and h.unit not in ("ns", ""):
        raise UserError(f"--min-effect {min_effect} is a duration but {name!r} is in {h.unit}; "
                        f"give a percentage, e.g. --min-effect 2%")
    render_history_text(h, click.echo)
    step = newest_step(h)
    if fail_on_regression and step is not None and step.step == "regression":
        click.echo(f"benchlab: regression since session {step.session_uid} "
                   f"({(step.commit or '')[:12] or step.created_utc[:10]}) is the newest change "
                   f"point; exit 1", err=True)
        sys.exit(1)


commands = [report_cmd, history_cmd]
