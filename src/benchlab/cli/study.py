"""``benchlab study SUITE.toml`` and ``benchlab study report STUDY [STUDY_B]``: the stability
study of docs/sources.md."""

from __future__ import annotations

import shlex
import sys

import click
from rich.console import Console

from benchlab.cli.common import db_option, open_store
from benchlab.cli.execute_options import check_cluster_flags, lost_after_option, tls_options
from benchlab.cli.output_path import OUTPUT_DIR
from benchlab.cli.run import ProgressObserver
from benchlab.core.session_types import SessionInterrupted
from benchlab.core.study import run_study
from benchlab.core.suite import load_suite


class _StudyGroup(click.Group):
    """``benchlab study FILE`` runs a suite; ``benchlab study report ...`` reports one."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            return "run", self.commands["run"], args
        return super().resolve_command(ctx, args)


@click.group("study", cls=_StudyGroup, invoke_without_command=False,
             context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
def study_group():
    """Run a stability study (a matrix of workloads x isolation x workers x affinity x load)."""


@study_group.command("run")
@click.argument("suite", required=False)
@click.option("--builtin", is_flag=True, help="Run the small built-in suite (< 2 minutes).")
@click.option("--resume", default=None, metavar="SESSION", help="Resume an interrupted study.")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT|local:N|ssh:HOST,...",
              help="Run every cell on each machine of a Dask cluster (docs/cluster.md).")
@lost_after_option
@tls_options
@db_option
def study_run(suite, builtin, resume, cluster, lost_after, db):
    """Run SUITE.toml (or --builtin): every cell in seeded random order, resumable."""
    if not suite and not builtin and not resume:
        raise click.UsageError("give a SUITE.toml, --builtin, or --resume SESSION")
    if lost_after is not None and cluster is None and not resume:
        check_cluster_flags(cluster, "all", False, lost_after)
    store = open_store(db)
    parsed = None if resume else load_suite(None if builtin else suite)
    console = Console(stderr=True)
    try:
        with ProgressObserver(console, sys.stderr.isatty()) as observer:
            study = run_study(store, parsed, argv=["benchlab", *sys.argv[1:]], observer=observer,
                              resume=resume, cluster=cluster, lost_after_s=lost_after)
    except SessionInterrupted as exc:
        db_hint = f" --db {shlex.quote(store.path)}" if db else ""
        click.echo(f"benchlab: interrupted; completed cells are stored. Resume with: "
                   f"benchlab study run --resume {exc.session.uid}{db_hint}", err=True)
        sys.exit(128 + exc.signum)
    db_hint = f" --db {shlex.quote(store.path)}" if db else ""
    click.echo(f"study {study.uid} complete in {store.path}; report with: "
               f"benchlab study report {study.uid}{db_hint}")


@study_group.command("report")
@click.argument("sessions", nargs=-1, required=True, metavar="STUDY [STUDY_B]")
@click.option("-o", "--output", "out_dir", type=OUTPUT_DIR, default=None, metavar="DIR",
              help="Directory for report.md, CSV tables and plots (default study-<uid>/, "
                   "study-<A>-vs-<B>/ for two).")
@click.option("--resamples", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Bootstrap resamples per interval.")
@click.option("--plots/--no-plots", default=True, show_default=True)
@db_option
def study_report(sessions, out_dir, resamples, plots, db):
    """Write a stability study's analysis (intervals, comparisons, errors, ratios, load,
    correlations within each cell); with two studies, both side by side and B vs A."""
    from benchlab.errors import UserError
    from benchlab.report.study_output import write_study_report

    if len(sessions) > 2:
        raise UserError(f"study report takes one study or two to set side by side (got "
                        f"{len(sessions)}); pass STUDY or STUDY_A STUDY_B")
    store = open_store(db)
    paths = write_study_report(store, list(sessions), out_dir=out_dir, n_resamples=resamples,
                               plots=plots)
    for p in paths:
        click.echo(p)


commands = [study_group]
