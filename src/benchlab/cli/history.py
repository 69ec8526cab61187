"""``benchlab history NAME``: a benchmark across sessions, as text; steps are change points.

``--metric`` takes what ``run``, ``ab`` and ``gate`` take: a measured metric (``wall``,
``cpu``, ``instructions``...), a stored metric's name (a harness's ``ns_per_op``,
``bytes_per_second``...) or ``NAME[:UNIT]=REGEX``, whose NAME is the stored metric (so a CI
script passes one spelling to every command). Which way is a regression follows the metric's
unit as in the gate (per second: higher is better), or ``--better NAME=higher|lower``.
"""

from __future__ import annotations

import sys

import click

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.errors import UserError


@click.command("history")
@click.argument("name")
@click.option("--metric", default=None, metavar="METRIC|NAME[:UNIT]=REGEX",
              help="Metric (default: the program's or harness's primary one, else wall); a "
                   "run's --metric NAME[:UNIT]=REGEX reads the stored metric NAME.")
@click.option("--better", default=None, metavar="NAME=higher|lower",
              help="Which values of the metric are better [default: from its unit: per "
                   "second is higher, the rest lower].")
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
def history_cmd(name, metric, better, alpha, min_effect, min_effect_percent, fail_on_regression,
                db):
    """Every session of benchmark NAME in time order: median, interval, steps, environment."""
    from benchlab.report.history import build_history, newest_step, render_history_text
    from benchlab.units import parse_effect

    if min_effect is not None and min_effect_percent is not None:
        raise UserError("--min-effect-percent is --min-effect PERCENT%; give only --min-effect")
    kind, effect = (parse_effect(min_effect, what="--min-effect") if min_effect is not None
                    else ("relative", (1.0 if min_effect_percent is None
                                       else min_effect_percent) / 100))
    metric_name, unit = _metric_of(metric)
    direction = _direction_of(better, metric_name)
    store = open_store(db, readonly=True)
    h = build_history(store, name, metric=metric_name, alpha=alpha,
                      min_effect_relative=effect if kind == "relative" else 0.01,
                      min_effect_abs=effect if kind == "absolute" else None,
                      direction=direction)
    if unit is not None and unit != h.unit:
        raise UserError(f"--metric {metric}: {name!r} stores {h.metric} in "
                        f"{h.unit or 'no unit'}, not {unit}; give its unit or only its name")
    if better is not None and better.partition("=")[0].strip() != h.metric:
        raise UserError(f"--better {better}: the history is of {h.metric}; write "
                        f"--better {h.metric}=higher or =lower")
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


def _metric_of(text: str | None) -> tuple[str | None, str | None]:
    """(stored metric name or None, the unit a ``NAME:UNIT=REGEX`` spec states or None)."""
    if text is None:
        return None, None
    if "=" not in text:
        return text.strip() or None, None
    from benchlab.measure.metrics import parse_metric_spec

    spec = parse_metric_spec(text)  # one-line UserError for a spec run would refuse
    return spec.name, (spec.unit or None)


def _direction_of(better: str | None, metric: str | None) -> str | None:
    """The direction ``--better NAME=higher|lower`` states (None: from the unit)."""
    if better is None:
        return None
    from benchlab.ci.reported import parse_better

    [(name, way)] = parse_better([better]).items()
    if metric is not None and name != metric:
        raise UserError(f"--better {better}: the history is of {metric}; write "
                        f"--better {metric}=higher or =lower")
    return way


commands = [history_cmd]
