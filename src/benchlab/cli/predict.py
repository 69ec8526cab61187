"""``benchlab predict --profile-ratio VARIABILITY APP_RESULT``: bounds on the other machine."""

from __future__ import annotations

import os

import click

from benchlab.cli.json_output import echo_json
from benchlab.errors import UserError


@click.command("predict", context_settings={"show_default": True})
@click.option("--profile-ratio", "variability_path", required=True, metavar="VARIABILITY",
              help="Variability JSON from `benchlab variability TARGET BASE --json`.")
@click.argument("app_result")
@click.option("--target", "target_value", type=float, default=None,
              help="With a numeric APP_RESULT: the result measured on the target, to check.")
@click.option("--lower-is-better", is_flag=True, help="With a numeric APP_RESULT: it is a time (lower is better).")
@click.option("--name", default="application", help="With a numeric APP_RESULT: its name.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def predict_cmd(variability_path, app_result, target_value, lower_is_better, name, as_json):
    """Bounds of an application's result on TARGET from its result on BASE; flags results outside.

    APP_RESULT is the base machine's result (a number, see --target/--lower-is-better) or a
    CSV/JSON file of applications (name,base,target[,lower_is_better]). Exits 1 when a
    checked result falls outside the predicted range.
    """
    from benchlab.machines.predict import AppResult, predict, read_app_results
    from benchlab.machines.variability import load_variability_file

    var = load_variability_file(variability_path)
    try:
        value = float(app_result)
    except ValueError:
        value = None
    if value is not None:
        apps = [AppResult(name, value, target_value, lower_is_better)]
    else:
        if not os.path.exists(app_result):
            raise UserError(f"APP_RESULT {app_result!r} is neither a number nor an existing file; give the "
                            f"base result (e.g. 52.85) or a CSV/JSON file of applications")
        if target_value is not None or lower_is_better:
            raise UserError("--target and --lower-is-better apply to a numeric APP_RESULT; put them in the file's columns")
        apps = read_app_results(app_result)
    preds = predict(var, apps)
    lo, hi = var.range
    outside = [p for p in preds if p.inside is False]
    if as_json:
        echo_json({"target": var.target, "base": var.base, "range": [lo, hi],
                   "predictions": [p.to_dict() for p in preds],
                   "outside": [p.name for p in outside]}, indent=1)
    else:
        click.echo(f"variability {var.target}/{var.base}: speedup range [{lo:.3f}, {hi:.3f}] "
                   f"({len(var.ratios)} methods)")
        for p in preds:
            line = (f"{p.name}: base {p.base:g} -> expected on target in [{p.low:.4g}, {p.high:.4g}]"
                    f" ({'lower' if p.lower_is_better else 'higher'} is better)")
            if p.target is not None:
                verdict = "inside" if p.inside else "OUTSIDE the predicted range"
                line += f"; measured {p.target:g} = speedup {p.speedup:.3f}: {verdict}"
            click.echo(line)
        checked = [p for p in preds if p.inside is not None]
        if checked:
            click.echo(f"{len(checked) - len(outside)}/{len(checked)} inside"
                       + (f"; outside: {', '.join(p.name for p in outside)}" if outside else ""))
    if outside:
        raise SystemExit(1)


commands = [predict_cmd]
