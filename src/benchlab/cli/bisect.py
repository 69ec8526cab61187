"""``benchlab bisect --good REV --bad REV --build CMD -- BENCH``: find the commit that regressed.

Exit status: 0 the first bad commit was found (or the bad end is not a regression: nothing to
find, said in one line), 2 bad input, 3 the good or bad end does not build or the benchmark
fails.
"""

from __future__ import annotations

import sys

import click

from benchlab.cli.ab import (
    exit_when_interrupted,
    finish,
    measure_options,
    message_printer,
    options_from,
    output_options,
    parse_benchmarks,
)
from benchlab.cli.ab_harness import HARNESS_METAVAR
from benchlab.cli.common import db_option, open_store
from benchlab.errors import UserError


@click.command("bisect")
@click.argument("command", nargs=-1, required=True)
@click.option("--good", required=True, metavar="REV", help="A revision without the regression.")
@click.option("--bad", required=True, metavar="REV", help="A revision with the regression.")
@click.option("--build", default=None, metavar="CMD",
              help="Build command, run in each commit's own worktree (cached by commit).")
@click.option("--repo", default=None, metavar="REPO",
              help="The git repository (default: the current directory's).")
@click.option("--first-parent", is_flag=True,
              help="Search only --bad's first-parent chain (a merge is one step), as git "
                   "bisect --first-parent; by default merged branches' commits are searched too.")
@click.option("--retries", type=click.IntRange(0, 5), default=2, show_default=True,
              help="Times an undecided step is measured again, each with twice the budget.")
@click.option("--harness", default=None, metavar=HARNESS_METAVAR,
              help="COMMAND runs a benchmark harness: each step runs it on both trees, as ab "
                   "--harness, and follows one benchmark it reports (--benchmark).")
@click.option("--benchmark", "follow", default=None, metavar="NAME",
              help="With --harness: the benchmark followed (default: the first the bad end "
                   "finds slower).")
@measure_options
@output_options
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@db_option
def bisect_cmd(command, good, bad, build, repo, first_parent, retries, harness, follow, max_time,
               warmup, min_pairs, max_pairs, look_every, alpha, threshold,
               instructions_threshold, cpu_threshold, count, gate_metrics, better, timeout, seed,
               shell, no_shell, build_timeout, fail_undecided, json_path, junit_path,
               markdown_path, quiet, db):
    """Find the first commit between --good and --bad whose COMMAND got slower.

    COMMAND ('{root}' is the commit's tree) is measured at each step beside the good build,
    as interleaved pairs with the gate's sequential rule; undecided steps are measured again;
    commits that do not build are skipped, as git bisect skip. Ends with the commit, its
    subject, the merge that brought it in, the ratio to the good build and its interval.

    The candidates are every commit in --bad and not in --good, as git bisect takes them:
    a branch merged after --good was tagged is searched too (its merge bases with --good are
    measured first when --good is not an ancestor of --bad); --first-parent keeps to the
    main line.
    """
    from benchlab.ci import revisions as rv
    from benchlab.ci.ab_plan import check_commands
    from benchlab.ci.bisect import run_bisect

    if len(gate_metrics) > 1:
        raise UserError("bisect follows one metric; give --metric once")
    options = options_from(max_time, warmup, min_pairs, max_pairs, look_every, alpha, count,
                           timeout, seed, shell, no_shell)
    options.validate()
    bench, followed = None, None
    if harness is not None:
        followed = harness_follow(harness, " ".join(command), follow, gate_metrics, threshold,
                                  count, instructions_threshold, cpu_threshold)
    else:
        if follow is not None:
            raise UserError("--benchmark NAME goes with --harness; without it bisect follows "
                            "COMMAND")
        [bench] = parse_benchmarks([" ".join(command)], [], None, threshold,
                                   instructions_threshold, count, gate_metrics, cpu_threshold,
                                   better)
        check_commands([bench], options.shell)
    store = open_store(db)
    root = rv.repo_root(repo)
    with exit_when_interrupted():
        report = run_bisect(store, root, build_timeout_s=build_timeout, good=good, bad=bad,
                            build=build, benchmark=bench, options=options, retries=retries,
                            message=message_printer(quiet), first_parent=first_parent,
                            harness=followed, argv=["benchlab", "bisect", *sys.argv[2:]])
    finish(report, markdown_path=markdown_path, junit_path=junit_path, json_path=json_path,
           quiet=quiet)


def harness_follow(kind, command, follow, gate_metrics, threshold, count,
                   instructions_threshold, cpu_threshold):
    """``bisect --harness KIND``'s benchmark to follow, checked before anything is built."""
    import tempfile
    from pathlib import Path

    from benchlab.ci.bisect import HarnessFollow
    from benchlab.ci.gate import check_threshold
    from benchlab.measure.harnesses import get_harness

    for option, value in (("--count", count), ("--instructions-threshold",
                                                instructions_threshold),
                          ("--cpu-threshold", cpu_threshold)):
        if value is not None:
            raise UserError(f"{option} does not go with --harness (the harness times its own "
                            f"benchmarks); drop {option}")
    get_harness(kind).prepare(command, Path(tempfile.gettempdir()))
    metric = next((m for m in gate_metrics if m != "wall"), None)
    return HarnessFollow(kind, command, follow, metric,
                         check_threshold(threshold, "--threshold") if threshold else None)


commands = [bisect_cmd]
