"""``benchlab bisect --good REV --bad REV --build CMD -- BENCH``: find the commit that regressed.

Exit status: 0 the first bad commit was found (or the bad end is not a regression: nothing to
find, said in one line), 2 bad input, 3 the good or bad end does not build or the benchmark
fails.
"""

from __future__ import annotations

import sys

import click

from benchlab.cli.ab import (
    emit_outputs,
    measure_options,
    message_printer,
    options_from,
    output_options,
    parse_benchmarks,
)
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
@measure_options
@output_options
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@db_option
def bisect_cmd(command, good, bad, build, repo, first_parent, retries, max_time, warmup, min_pairs,
               max_pairs, look_every, alpha, threshold, instructions_threshold, cpu_threshold,
               count, gate_metrics, better, timeout, seed, shell, no_shell, build_timeout,
               fail_undecided,
               json_path, junit_path,
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
    from benchlab.ci.bisect import bisect
    from benchlab.ci.exits import EXIT_FAILED
    from benchlab.ci.gate import exit_status
    from benchlab.ci.report_model import GateReport
    from benchlab.core.session import SessionInterrupted, interruptible

    if len(gate_metrics) > 1:
        raise UserError("bisect follows one metric; give --metric once")
    [bench] = parse_benchmarks([" ".join(command)], [], None, threshold,
                               instructions_threshold, count, gate_metrics, cpu_threshold,
                               better)
    options = options_from(max_time, warmup, min_pairs, max_pairs, look_every, alpha, count,
                           timeout, seed, shell, no_shell)
    options.validate()
    check_commands([bench], options.shell)
    store = open_store(db)
    root = rv.repo_root(repo)
    message = message_printer(quiet)
    failure = None
    with interruptible(), rv.Trees(root, build_timeout_s=build_timeout) as trees:
        try:
            result = bisect(store, trees, good=good, bad=bad, build=build, benchmark=bench,
                            options=options, retries=retries, message=message,
                            first_parent=first_parent,
                            argv=["benchlab", "bisect", *sys.argv[2:]])
        except rv.BuildFailed as exc:
            failure = str(exc)
        except SessionInterrupted as exc:
            click.echo(f"benchlab: interrupted; {exc.runs_stored} runs are stored in session "
                       f"{exc.session.uid}", err=True)
            sys.exit(128 + exc.signum)
    if failure is not None:
        report = GateReport("bisect", None, {}, [], EXIT_FAILED, failure=failure)
    else:
        revisions = {"good": result.good.to_dict()}
        notes = [f"{s.commit[:12]} {s.verdict}"
                 + (f": head/good {s.decision.ratio:.4f} ({s.decision.outcome}"
                    f"{', uncertain' if s.uncertain else ''}), session {s.session}"
                    if s.decision else "") for s in result.steps]
        if result.message:
            notes.insert(0, result.message)
        if result.first_bad is not None:
            revisions["first_bad"] = {**result.first_bad.to_dict(),
                                      "merged_by": result.merged_by,
                                      "merged_by_subject": result.merged_by_subject or None}
            notes.insert(0, _named(result))
        for rev in revisions.values():
            rev.pop("build_log", None)
        decisions = [result.decision] if result.decision else []
        report = GateReport("bisect", None, revisions, decisions,
                            exit_status([]), notes=notes)
    emit_outputs(report, markdown_path=markdown_path, junit_path=junit_path,
                 json_path=json_path, quiet=quiet)
    if failure:
        click.echo(f"benchlab: error: {failure}", err=True)
    sys.exit(report.exit_status)


def _named(result) -> str:
    """The answer in one line: the commit, its subject, the merge that brought it in."""
    first = result.first_bad
    line = f"first bad commit {first.commit[:12]} ({first.subject})"
    if result.merged_by:
        line += f", brought in by merge {result.merged_by[:12]} ({result.merged_by_subject})"
    return line


commands = [bisect_cmd]
