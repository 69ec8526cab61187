"""``benchlab profile``: measure this machine's stress-ng profile (store + JSON)."""

from __future__ import annotations

import math
import socket
import sys

import click
from rich.console import Console

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.execute_options import cluster_on_options, profile_cluster
from benchlab.cli.output_path import OUTPUT_FILE
from benchlab.cli.run_progress import progress_bar
from benchlab.errors import UserError


def parse_cpus(text: str | None) -> list[int] | None:
    """``--cpus 1`` or ``0,2-3`` -> CPU numbers (None when not given)."""
    if text is None:
        return None
    from benchlab.units import parse_cpu_list
    return list(parse_cpu_list(text, what="--cpus list"))


def quota_limits(cpu_quota_us: int | None, cpu_period_us: int | None):
    """CgroupLimits for --cpu-quota/--cpu-period, or None without a quota."""
    if cpu_quota_us is None:
        if cpu_period_us is not None:
            raise UserError("--cpu-period needs --cpu-quota; give both, e.g. --cpu-quota 40000 --cpu-period 100000")
        return None
    from benchlab.control.cgroups import CgroupLimits
    return CgroupLimits(cpu_quota_us=cpu_quota_us, cpu_period_us=cpu_period_us)


@click.command("profile", context_settings={"show_default": True})
@click.option("--methods", default="all", metavar="all|cpu|memory|LIST",
              help="stress-ng CPU methods and memory/cache stressors (stream, cache, memcpy, matrix), comma-separated.")
@click.option("--duration", type=click.IntRange(min=1), default=1, help="Seconds per stress-ng run.")
@click.option("--repeat", type=click.IntRange(min=1), default=3, help="Rounds over all methods (shuffled order each).")
@click.option("--target-cv", type=params.POSITIVE, default=None,
              help="Re-run methods whose CV is above this fraction (e.g. 0.02) ...")
@click.option("--max-repeat", type=click.IntRange(min=1), default=None, help="... up to this many repetitions ...")
@click.option("--time-budget", type=params.SECONDS, default=None, help="... within this many seconds in total.")
@click.option("-o", "--output", type=OUTPUT_FILE, default=None, metavar="FILE", help="Also write the profile as JSON.")
@click.option("--name", default=None, help="Profile name (default: the host name, @quota-N with a quota).")
@click.option("--cpu-quota", "cpu_quota_us", type=click.IntRange(min=1000), default=None,
              help="Run under a cgroup CPU quota, us per period (a 'slow machine').")
@click.option("--cpu-period", "cpu_period_us", type=click.IntRange(min=1000, max=1_000_000), default=None,
              help="CFS period for --cpu-quota, us (default 100000).")
@click.option("--cpus", default=None, metavar="LIST", help="Pin stress-ng to these CPUs (e.g. 1).")
@click.option("--nice", type=click.IntRange(-20, 19), default=None,
              help="Run stress-ng under nice -n N (e.g. -20 as root on a shared machine; no effect with --cpu-quota).")
@click.option("--seed", type=params.SEED, default=1, help="Seed of the per-round method order.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@cluster_on_options
@db_option
def profile_cmd(methods, duration, repeat, target_cv, max_repeat, time_budget, output, name,
                cpu_quota_us, cpu_period_us, cpus, nice, seed, no_progress, db, cluster, on):
    """Profile this machine: stress-ng bogo-ops/s per method, repeated and interleaved.

    Stores the profile as a session of kind 'profile' and prints each method's value and CV.
    With --cluster, profiles every machine of the cluster (one profile each, named after it).
    """
    if cluster is not None:
        if output or name or cpu_quota_us or cpus or nice is not None:
            raise UserError("with --cluster each machine is profiled as it is, named after "
                            "itself; drop -o/--name/--cpu-quota/--cpus/--nice")
        return profile_cluster(db, cluster, on, {
            "methods": methods, "duration_s": duration, "repeat": repeat, "seed": seed,
            "target_cv": target_cv, "max_repeat": max_repeat, "time_budget_s": time_budget})
    from benchlab.machines import stressng
    from benchlab.machines.profile import run_profile

    if output:  # before measuring: -o onto the store would destroy it
        from benchlab.store.connection import default_db_path, refuse_output_path
        refuse_output_path(output, db or default_db_path(), "-o")
    binary = stressng.find_stress_ng()
    names = stressng.resolve_methods(methods, binary)
    limits = quota_limits(cpu_quota_us, cpu_period_us)
    cpu_list = parse_cpus(cpus)
    if name is None:
        name = socket.gethostname() + (f"@quota-{cpu_quota_us}" if cpu_quota_us else "")
    console = Console(stderr=True)
    store = open_store(db)
    show = not no_progress and sys.stderr.isatty()
    progress = progress_bar(console, disable=not show)
    task = progress.add_task("profile", total=len(names) * repeat)

    def observer(event, **data):
        if event in ("planned", "extra"):
            progress.update(task, total=data["total"])
        elif event == "run":
            rec = data["record"]
            progress.update(task, completed=data["done"], description=f"{rec.method} (round {rec.round + 1})")
            if rec.status != "ok":
                progress.console.print(f"[yellow]{rec.method}: {rec.status}: {rec.error}[/yellow]")

    from benchlab.core.session import interruptible

    received = None
    try:
        with progress, interruptible() as received:
            prof = run_profile(names, name=name, duration_s=duration, repeat=repeat, limits=limits,
                               cpus=cpu_list, seed=seed, target_cv=target_cv, max_repeat=max_repeat,
                               time_budget_s=time_budget, store=store, observer=observer, binary=binary,
                               nice=nice)
    except KeyboardInterrupt:
        click.echo(f"benchlab: interrupted; the runs so far are stored in {store.path} "
                   f"(profile session marked interrupted); run the profile again", err=True)
        sys.exit(128 + ((received.signum if received is not None else None) or 2))
    finally:
        store.close()
    if output:
        prof.save(output)
    _print_profile(prof)
    if output:
        click.echo(f"written to {output}")

def _print_profile(prof) -> None:
    """The profile's methods with their value (bogo-ops/s), CV and runs, and the CV summary."""
    cvs = [m.cv for m in prof.methods.values() if not math.isnan(m.cv)]
    click.echo(f"profile {prof.name} (session {prof.metadata.get('session_uid')}): {len(prof.methods)} methods, "
               f"{prof.metadata['runs']} runs in {prof.metadata['elapsed_s']:.0f} s, stress-ng "
               f"{prof.metadata['stress_ng_version']}")
    click.echo(f"{'method':<20} {'bogo-ops/s':>14} {'CV':>7} {'n':>3}")
    for m in prof.methods.values():
        cv = "-" if math.isnan(m.cv) else f"{100 * m.cv:.1f}%"
        val = "failed" if not m.values else f"{m.value:,.1f}"
        click.echo(f"{m.name:<20} {val:>14} {cv:>7} {len(m.values):>3}")
    if cvs:
        import numpy as np
        within = sum(cv <= 0.02 for cv in cvs)
        click.echo(f"CV: median {100 * float(np.median(cvs)):.1f}%, max {100 * max(cvs):.1f}%; "
                   f"{within}/{len(cvs)} methods at or below 2%")
    if prof.metadata.get("failed_methods"):
        click.echo(f"failed: {', '.join(prof.metadata['failed_methods'])}")


commands = [profile_cmd]
