"""``benchlab calibrate --base PROFILE``: the CPU quota that makes this machine match a base."""

from __future__ import annotations

import sys

import click

from benchlab.cli.common import db_option
from benchlab.cli.execute_options import calibrate_cluster, cluster_on_options
from benchlab.cli.output_path import OUTPUT_FILE
from benchlab.errors import UserError

#: Default methods: a handful of CPU methods exercising integer, floating point, memory-bound
#: matrix and control-flow code; any subset of the base profile can be given instead.
DEFAULT_METHODS = "int64,double,matrixprod,trig,fft,queens"


@click.command("calibrate", context_settings={"show_default": True})
@click.option("--base", "base", required=True, metavar="PROFILE",
              help="The base machine's profile (JSON file or profile name in the store).")
@click.option("--period", "period_us", type=click.IntRange(min=1000, max=1_000_000), default=100_000,
              help="CFS period, us.")
@click.option("--cpus", default=None, metavar="LIST", help="Pin the runs to these CPUs (recorded, applied by run --calibration).")
@click.option("--methods", default=DEFAULT_METHODS, metavar="LIST|all",
              help="Methods of the base profile to match (comma-separated; 'all': every method of the base).")
@click.option("--duration", type=click.IntRange(min=1), default=1, help="Seconds per stress-ng run.")
@click.option("--repeat", type=click.IntRange(min=2), default=3, help="Rounds per trial.")
@click.option("--max-trials", type=click.IntRange(min=2), default=15, help="Most search trials.")
@click.option("-o", "--output", type=OUTPUT_FILE, default="calibration.json", metavar="FILE", help="Calibration JSON.")
@cluster_on_options
@db_option
def calibrate_cmd(base, period_us, cpus, methods, duration, repeat, max_trials, output, db,
                  cluster, on):
    """Search the cgroup CPU quota so the chosen microbenchmarks run as fast as on BASE.

    Objective |geometric-mean speedup - 1|; a bracketing, noise-aware search (see
    docs/machines.md). Writes the quota, the residual ratio with its interval and the
    variability range before and after to FILE; apply it with `benchlab run --calibration FILE`.
    """
    from benchlab.cli.profile import parse_cpus
    from benchlab.machines import stressng
    from benchlab.machines.calibrate import calibrate
    from benchlab.machines.store_io import resolve_profile
    from benchlab.store.connection import default_db_path, refuse_output_path
    refuse_output_path(output, db or default_db_path(), "-o")  # before any trial runs
    cpu_list = parse_cpus(cpus)  # a bad list is refused before the base profile is read
    binary = stressng.find_stress_ng()
    base_p = resolve_profile(base, db)
    if methods == "all":
        names = [m for m, r in base_p.methods.items() if r.kind == "cpu-method" and r.values]
    else:
        names = [m.strip() for m in methods.split(",") if m.strip()]
    if not names:
        raise UserError("no methods to calibrate on; pass --methods LIST of the base profile's methods")
    available = set(stressng.cpu_methods(binary)) | set(stressng.EXTRA_STRESSORS)
    unknown = [m for m in names if m not in available]
    if unknown:
        raise UserError(f"method(s) {', '.join(unknown)} are not stress-ng methods here; list them with "
                        f"`stress-ng --cpu-method which`")

    if cluster is not None:
        if cpus:
            raise UserError("with --cluster each machine is calibrated as it is; drop --cpus")
        return calibrate_cluster(db, cluster, on, base, names, {
            "period_us": period_us, "duration_s": duration, "repeat": repeat,
            "max_trials": max_trials}, output)

    def observer(trial, bracket):
        lo, hi = trial.ci
        share = f"{100 * trial.cpu_share:.0f}%" if trial.cpu_share is not None else "?"
        click.echo(f"  {trial.purpose:<11} quota {trial.quota_us:>7} us  ratio {trial.ratio:.3f} "
                   f"[{lo:.3f}, {hi:.3f}]  cpu share {share}  ({trial.elapsed_s:.0f} s)", err=True)

    click.echo(f"calibrating against {base_p.name} on {len(names)} methods ({', '.join(names)}), "
               f"period {period_us} us", err=True)
    from benchlab.core.session import interruptible

    with interruptible() as received:  # SIGTERM stops the trials like Ctrl-C
        try:
            result = calibrate(base_p, names, period_us=period_us, cpus=cpu_list,
                               duration_s=duration, repeat=repeat, max_trials=max_trials,
                               observer=observer, binary=binary)
        except KeyboardInterrupt:
            click.echo(f"benchlab: calibration interrupted; {output} not written", err=True)
            sys.exit(128 + (received.signum or 2))
    result.save(output)
    rb, ra = result.range_before, result.range_after
    click.echo(f"quota {result.cpu_quota_us} us per {result.cpu_period_us} us "
               f"({100 * result.cpu_fraction:.1f}% of one CPU) after {len(result.trials) - 1} trials "
               f"({result.converged}), {result.elapsed_s:.0f} s")
    click.echo(f"residual ratio {result.residual_ratio:.3f} [{result.residual_ci[0]:.3f}, {result.residual_ci[1]:.3f}]")
    click.echo(f"range before [{rb['min']:.2f}, {rb['max']:.2f}] (length {rb['length']:.2f}), "
               f"after [{ra['min']:.2f}, {ra['max']:.2f}] (length {ra['length']:.2f})")
    click.echo(f"written to {output}")


commands = [calibrate_cmd]
