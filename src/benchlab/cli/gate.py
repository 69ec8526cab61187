"""``benchlab gate``: a fresh run (or a stored session) against a stored baseline.

Exit status as ``ab``: 0 no regression decided, 1 a regression beyond its threshold, 2 bad input
(also: the baseline ran on another machine, without --force), 3 a benchmark failed.
"""

from __future__ import annotations

import click

from benchlab.cli import params
from benchlab.cli.ab import alpha_scope_option, output_options
from benchlab.cli.ab_harness import HARNESS_METAVAR
from benchlab.cli.common import db_option, open_store
from benchlab.errors import UserError


@click.command("gate")
@click.argument("commands", nargs=-1)
@click.option("-n", "--name", "names", multiple=True, help="Name of each command, in order.")
@click.option("--suite", default=None, metavar="SUITE.toml",
              help="Benchmarks, thresholds and metrics from a TOML file (see docs/ci.md).")
@click.option("--baseline", default=None, metavar="SESSION",
              help="The baseline: a session uid, id or name, or branch:NAME (the newest "
                   "session recorded with --record NAME).")
@click.option("--candidate", default=None, metavar="SESSION",
              help="Gate this stored session instead of running COMMANDS.")
@click.option("--record", "record_branch", default=None, metavar="BRANCH",
              help="Record the run (or --candidate) as the newest baseline of BRANCH, after "
                   "gating it.")
@click.option("-r", "--runs", type=params.count(maximum=10**6), default=30, show_default=True,
              help="Runs of each command in a fresh run.")
@click.option("-w", "--warmup", type=params.count(allow_zero=True, maximum=1000), default=2,
              show_default=True, help="Warmup runs of each command.")
@click.option("--threshold", default=None, metavar="PCT",
              help="Time regression threshold, wall and cpu (default 2%).")
@click.option("--cpu-threshold", default=None, metavar="PCT",
              help="CPU-time threshold when it differs from --threshold.")
@click.option("--instructions-threshold", default=None, metavar="PCT",
              help="Instruction-count threshold (default 0.5%).")
@click.option("--metric", "gate_metrics", multiple=True, metavar="METRIC",
              help="Metric to gate on (repeatable; default wall): wall, cpu, instructions, or "
                   "NAME[:UNIT]=REGEX, a value the program prints, as run --metric (with "
                   "--candidate: the name of a metric both sessions store).")
@click.option("--better", "better", multiple=True, metavar="NAME=higher|lower",
              help="Which values of a metric are better, when its unit does not say "
                   "(default: higher for a unit per second, else lower).")
@click.option("--count", type=click.Choice(["instructions"]), default=None,
              help="Also count instructions (valgrind) and gate on them.")
@click.option("--alpha", type=params.PROBABILITY, default=0.01, show_default=True,
              help="Error of the interval (a false regression: alpha/2).")
@click.option("--timeout", type=params.SECONDS, default=None, help="Kill a run after this long.")
@click.option("-S", "--shell", "shell", default=None, metavar="SHELL",
              help="The shell that runs each command, as run -S (default sh).")
@click.option("-N", "no_shell", is_flag=True,
              help="No shell (--shell none): a command with shell syntax is refused.")
@click.option("--force", is_flag=True,
              help="Gate even when the baseline ran on another machine (CPU model, logical "
                   "CPUs, kernel, CPU quota differ).")
@click.option("--harness", default=None, metavar=HARNESS_METAVAR,
              help="COMMAND runs a benchmark harness: -r harness runs, every benchmark it "
                   "reports gated on its own measure (time per operation; JMH: its mode's "
                   "score), or on --metric NAME of its metrics, against a baseline recorded "
                   "the same way.")
@alpha_scope_option
@output_options
@click.option("--session-name", default=None, help="Name of the fresh run's session.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@db_option
def gate_cmd(commands, names, suite, baseline, candidate, record_branch, runs, warmup,
             threshold, cpu_threshold, instructions_threshold, gate_metrics, better, count, alpha,
             timeout, shell, no_shell, force, harness, alpha_scope, fail_undecided, json_path,
             junit_path, markdown_path, session_name, quiet, db):
    """Gate a fresh run of COMMANDS (or --candidate SESSION) against --baseline.

    Each benchmark's session-to-session noise is learned from the baseline's history (the
    sessions recorded for the same branch, or with the same name). Refuses, in one line, a
    baseline measured on another machine unless --force. With --record BRANCH the run becomes
    the branch's newest baseline (a nightly job on main: --record main).
    """
    from benchlab.ci.ab import AbOptions
    from benchlab.ci.ab_plan import check_commands
    from benchlab.ci.gate_job import GateJob, Stored
    from benchlab.ci.reported import parse_better
    from benchlab.cli.ab import alpha_scope_for, parse_benchmarks, run_job, shell_of

    if not baseline and not record_branch:
        raise UserError("give --baseline SESSION (or branch:NAME) to gate against, or "
                        "--record BRANCH to record a baseline")
    harness_cmd = None
    if harness is None and suite:
        harness_cmd = harness_of_suite(suite)
        if harness_cmd is not None and (commands or candidate):
            raise UserError("give COMMANDS, --candidate SESSION or --suite FILE, one of them")
    elif harness is not None:
        harness_cmd = harness_job(harness, commands, names, suite, candidate, count, gate_metrics,
                                  threshold, cpu_threshold, instructions_threshold)
    against = Stored(baseline, runs=runs, force=force, record_branch=record_branch)
    options = AbOptions(warmup=warmup, alpha=alpha, count=count, timeout_s=timeout,
                        alpha_scope=alpha_scope_for(alpha_scope, suite) or "benchmark")
    store = open_store(db)
    if harness_cmd is not None:
        job = GateJob(against, harness=harness_cmd, options=options,
                      fail_undecided=fail_undecided, directions=parse_better(better))
    elif candidate:
        if commands or suite:
            raise UserError("give COMMANDS (a fresh run) or --candidate SESSION, not both")
        thresholds, metrics = stored_gating(store, store.get_session(candidate)["id"],
                                            gate_metrics, count, threshold, cpu_threshold,
                                            instructions_threshold)
        job = GateJob(against, candidate=candidate, options=options,
                      fail_undecided=fail_undecided, thresholds=thresholds, metrics=metrics,
                      directions=parse_better(better))
    else:
        benches = parse_benchmarks(commands, names, suite, threshold, instructions_threshold,
                                   count, gate_metrics, cpu_threshold, better)
        options.shell = shell_of(shell, no_shell)
        check_commands(benches, options.shell)
        job = GateJob(against, benches=benches, options=options, fail_undecided=fail_undecided)
    run_job(store, job, session_name, quiet, markdown_path=markdown_path,
            junit_path=junit_path, json_path=json_path)


def harness_job(kind, commands, names, suite, candidate, count, gate_metrics, threshold,
                cpu_threshold, instructions_threshold):
    """``gate --harness KIND COMMAND``'s harness command, checked (one line for what does not
    go with a harness)."""
    import tempfile
    from pathlib import Path

    from benchlab.ci.gate import check_threshold
    from benchlab.ci.gate_job import HarnessCommand
    from benchlab.measure.harnesses import get_harness

    given = {"-n/--name": names, "--suite": suite, "--candidate": candidate, "--count": count,
             "--cpu-threshold": cpu_threshold,
             "--instructions-threshold": instructions_threshold}
    for option, value in given.items():
        if value:
            raise UserError(f"{option} does not go with --harness (the harness names and runs "
                            f"its own benchmarks); drop {option}")
    if len(commands) != 1:
        raise UserError(f"--harness gates one command (the harness's), got {len(commands)}; "
                        f"give one command that runs them all")
    # a command the harness cannot read is refused before anything runs
    get_harness(kind).prepare(commands[0], Path(tempfile.gettempdir()))
    return HarnessCommand(kind, commands[0],
                          metrics=[m for m in dict.fromkeys(gate_metrics) if m != "wall"],
                          threshold=check_threshold(threshold, "--threshold")
                          if threshold is not None else None)


def harness_of_suite(suite):
    """The harness command a suite file with ``[gate] harness = "KIND"`` names, or None."""
    from benchlab.ci.ab_suite import harness_of
    from benchlab.ci.gate_job import HarnessCommand

    found = harness_of(suite)
    if found is None:
        return None
    return HarnessCommand(found.kind, found.command, metrics=found.metrics,
                          threshold=found.threshold)


def stored_gating(store, cand_id, gate_metrics, count, threshold, cpu_threshold,
                  instructions_threshold):
    """({benchmark: {metric: threshold}}, {benchmark: metrics}) of gating the stored candidate
    (session id ``cand_id``): the ``--metric`` names and thresholds given, for each of its
    benchmarks."""
    from benchlab.ci.reported import stored_metric_names

    stored = stored_metric_names(gate_metrics)
    if count and "instructions" not in stored:
        stored.append("instructions")
    defaults = stored_thresholds(stored, threshold, cpu_threshold, instructions_threshold)
    thresholds, metrics = {}, {}
    for b in store.benchmarks(cand_id):
        thresholds[b["name"]], metrics[b["name"]] = defaults, stored
    return thresholds, metrics


def stored_thresholds(metrics, threshold, cpu_threshold, instructions_threshold):
    """Thresholds by metric for gating stored sessions: ``--threshold`` for time and every
    metric the programs reported, the CPU and instruction ones for theirs (None: defaults)."""
    from benchlab.ci.gate import check_threshold

    out = {}
    if threshold is not None:
        time = check_threshold(threshold, "--threshold")
        out = {m: time for m in metrics if m != "instructions"}
    if cpu_threshold is not None:
        out["cpu"] = check_threshold(cpu_threshold, "--cpu-threshold")
    if instructions_threshold is not None:
        out["instructions"] = check_threshold(instructions_threshold, "--instructions-threshold")
    return out


commands = [gate_cmd]
