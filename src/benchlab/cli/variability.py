"""``benchlab variability TARGET BASE``: per-method speedups, their range and histogram."""

from __future__ import annotations

import click

from benchlab.cli.common import db_option
from benchlab.cli.json_output import echo_json
from benchlab.cli.output_path import OUTPUT_FILE
from benchlab.errors import UserError


@click.command("variability", context_settings={"show_default": True})
@click.argument("target", required=False)
@click.argument("base", required=False)
@click.option("--fleet", "fleet", is_flag=False, flag_value="newest", default=None,
              metavar="[ID]", help="Every pair of a fleet profiled with `profile --cluster` "
                                   "(default: the newest): range matrix and slowest common base.")
@click.option("--also", "also", multiple=True, metavar="TARGET2",
              help="Another target against the same BASE, drawn and summarised beside (e.g. the throttled one).")
@click.option("--kinds", default="cpu-method", metavar="KINDS",
              help="Method kinds to include: cpu-method, stressor, application (comma list) or all.")
@click.option("--methods", default=None, metavar="LIST", help="Only these methods (comma-separated).")
@click.option("--per-cpu-second", is_flag=True,
              help="Compare bogo-ops per CPU second instead of per wall second (ignores time slicing by other processes).")
@click.option("--json", "as_json", is_flag=True, help="Print the variability document as JSON.")
@click.option("--plot", type=OUTPUT_FILE, default=None, metavar="FILE", help="Histogram plot (.png, .svg or .pdf).")
@db_option
def variability_cmd(target, base, also, kinds, methods, per_cpu_second, as_json, plot, db,
                    fleet):
    """Speedup of TARGET over BASE per method (each a profile JSON file or a profile in the store).

    Ratios are target/base for rates and base/target for lower-is-better results, so > 1 means
    the target is faster. Prints range [min, max], its length, median, mean, IQR and the
    histogram in 0.1-wide bins (as the VarSys16 paper's Figure 2).
    """
    from benchlab.machines.store_io import resolve_profile
    from benchlab.machines.variability import compute_variability, parse_kinds
    from benchlab.report.machines_figures import variability_text, write_variability_figure

    kind_list = parse_kinds(kinds)
    if fleet is not None:
        from benchlab.cli.execute_options import fleet_variability

        if target or base or also or methods or plot:
            raise UserError("--fleet compares every machine of a fleet; drop TARGET/BASE, "
                            "--also, --methods and --plot")
        return fleet_variability(db, None if fleet == "newest" else fleet, kind_list,
                                 per_cpu_second, as_json)
    if not target or not base:
        raise UserError("variability needs TARGET and BASE profiles (or --fleet); usage: "
                        "benchlab variability TARGET BASE")
    method_list = [m.strip() for m in methods.split(",")] if methods else None
    base_p = resolve_profile(base, db)
    main = compute_variability(resolve_profile(target, db), base_p, kinds=kind_list, methods=method_list,
                               per_cpu_second=per_cpu_second)
    others = [compute_variability(resolve_profile(t, db), base_p, kinds=kind_list, methods=method_list,
                                  per_cpu_second=per_cpu_second) for t in also]
    if plot:
        write_variability_figure([main, *others], plot)
    if as_json:
        doc = main.to_dict()
        if others:
            doc["also"] = [o.to_dict() for o in others]
        echo_json(doc, indent=1)
    else:
        click.echo(variability_text(main, others))
        if plot:
            click.echo(f"plot written to {plot}")


commands = [variability_cmd]
