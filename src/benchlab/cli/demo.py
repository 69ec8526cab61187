"""``benchlab demo``: a real, small comparison on bundled C workloads, measured and stored.

It builds ``sort_algos`` (bundled C source) with the system compiler, then measures three ways
of sorting the same 100,000 pseudo-random integers — a hand-written quicksort, a merge sort and
libc's ``qsort`` — interleaved, with warmups, reading each program's own timing line beside the
harness's. Then it prints the summaries and the statistical verdicts, and the commands to
explore the stored data further.
"""

from __future__ import annotations

import sys

import click
from rich.console import Console

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.run import ProgressObserver
from benchlab.core.execute import HERE, execute
from benchlab.core.plan import BenchmarkSpec, MetricSpec, RunPlan
from benchlab.core.session_types import SessionInterrupted
from benchlab.report.run_summary import render_summary_table, session_summaries
from benchlab.workloads import workload_command

ALGORITHMS = ("quicksort", "mergesort", "qsort")


def demo_protocol(n: int, runs: int, warmup: int, seed: int) -> RunPlan:
    """The demo's plan: three sorts of the same ``n`` integers, interleaved."""
    import shlex

    benches = []
    for algo in ALGORITHMS:
        argv = workload_command("sort_algos", algo, n)
        benches.append(BenchmarkSpec(name=algo, command=shlex.join(argv)))
    return RunPlan(
        benchmarks=benches, runs=runs, warmup=warmup, min_runs=1, seed=seed,
        metrics=[MetricSpec("self_wall", r"BENCHLAB_SELF wall_ns=(\d+)", "ns"),
                 MetricSpec("self_cpu", r"BENCHLAB_SELF .*cpu_ns=(\d+)", "ns")])


@click.command("demo")
@click.option("--runs", type=click.IntRange(min=3), default=30, show_default=True)
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True)
@click.option("--size", "n", type=click.IntRange(min=1000), default=100_000, show_default=True,
              help="How many integers each run sorts.")
@click.option("--seed", type=params.SEED, default=2026, show_default=True, help="Seed of the run order.")
@db_option
def demo_cmd(runs, warmup, n, seed, db):
    """Build bundled C sorts and compare them, measured and stored, in well under a minute."""
    console = Console()
    console.print(f"[bold]benchlab demo[/bold]: quicksort vs mergesort vs libc qsort on {n:,} "
                  f"integers; {runs} interleaved runs each after {warmup} warmups")
    protocol = demo_protocol(n, runs, warmup, seed)
    store = open_store(db)
    try:
        with ProgressObserver(Console(stderr=True), sys.stderr.isatty()) as observer:
            session = execute(protocol, store, HERE, argv=["benchlab", *sys.argv[1:]],
                              name="demo", observer=observer).session
    except SessionInterrupted as exc:
        db_arg = f" --db {db}" if db else ""
        click.echo(f"benchlab: interrupted; {exc.runs_stored} runs are stored in session "
                   f"{exc.session.uid}. Resume with: benchlab run --resume {exc.session.uid}"
                   f"{db_arg}", err=True)
        sys.exit(128 + exc.signum)
    summaries = session_summaries(store, session.id)
    render_summary_table(summaries, console)
    _print_verdicts(store, session.uid, console)
    console.print(f"stored as session [bold]{session.uid}[/bold] in {store.path}. Next:")
    db_arg = f" --db {db}" if db else ""
    for cmd in (f"benchlab show {session.uid}{db_arg}",
                f"benchlab analyze {session.uid}:quicksort{db_arg}",
                f"benchlab compare {session.uid}:quicksort {session.uid}:mergesort "
                f"--baseline {session.uid}:qsort{db_arg}",
                f"benchlab export {session.uid} --format markdown{db_arg}"):
        console.print(f"  {cmd}")
    store.close()


def _print_verdicts(store, uid: str, console: Console) -> None:
    """The verdict of each sort against libc qsort (the baseline), stored with the session as
    ``run`` stores its own, so that ``show``, ``compare``, ``report`` and the exports give
    these same lines and numbers."""
    from benchlab.cli.run_outcome import store_run_verdict
    from benchlab.report.speed_verdict import session_verdict_lines, verdict_settings

    session_id = store.get_session(uid)["id"]
    verdict = store_run_verdict(store, session_id,
                                verdict_settings(reference="qsort", metric="wall"))
    for line in session_verdict_lines(store, session_id, verdict):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print()


commands = [demo_cmd]
