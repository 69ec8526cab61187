"""The outputs of every gating command (``ab``, ``gate``, ``bisect``): their options, the
terminal table, Markdown (also appended to ``$GITHUB_STEP_SUMMARY``), JUnit XML and JSON, and
the exit status (rendered by :mod:`benchlab.report.ci_outputs` from one report)."""

from __future__ import annotations

import os
import sys

import click

from benchlab.cli.output_path import OUTPUT_FILE, OutputPath
from benchlab.errors import UserError


def output_options(f):
    """--markdown, --junit, --json and --fail-undecided (shared by ab, gate and bisect)."""
    f = click.option("--fail-undecided", is_flag=True,
                     help="An undecided result that could still be a regression fails the job "
                          "(exit 1). Without it undecided never fails, and the summary says so.")(f)
    f = click.option("--json", "json_path", type=OutputPath(keywords=("-",)), default=None,
                     metavar="FILE",
                     help="Write the result as JSON (docs/ci.schema.json); '-' for stdout.")(f)
    f = click.option("--junit", "junit_path", type=OUTPUT_FILE, default=None, metavar="FILE",
                     help="Write JUnit XML: each benchmark a test case, a regression a failure.")(f)
    f = click.option("--markdown", "markdown_path", type=OUTPUT_FILE, default=None,
                     metavar="FILE",
                     help="Write the Markdown summary (also appended to $GITHUB_STEP_SUMMARY "
                          "when set).")(f)
    return f


def finish(report, *, markdown_path: str | None, junit_path: str | None,
           json_path: str | None, quiet: bool = False) -> None:
    """Write ``report``'s outputs, say its failure in one line and exit with its status
    (0 passed, 1 regression, 3 a build or benchmark failed): the end of ``ab`` and ``gate``."""
    emit_outputs(report, markdown_path=markdown_path, junit_path=junit_path,
                 json_path=json_path, quiet=quiet)
    if report.failure:
        click.echo(f"benchlab: error: {report.failure}", err=True)
    sys.exit(report.exit_status)

def emit_outputs(report, *, markdown_path: str | None, junit_path: str | None,
                 json_path: str | None, quiet: bool = False) -> None:
    """Print the terminal table and write every requested output of ``report``."""
    from benchlab.cli.json_output import echo_json
    from benchlab.report import ci_outputs

    if json_path != "-" and not quiet:
        click.echo(ci_outputs.terminal_table(report))
    md = ci_outputs.markdown(report)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    try:
        if summary:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(md)
        if markdown_path:
            with open(markdown_path, "w", encoding="utf-8") as fh:
                fh.write(md)
        if junit_path:
            with open(junit_path, "w", encoding="utf-8") as fh:
                fh.write(ci_outputs.junit(report))
        if json_path == "-":
            echo_json(ci_outputs.to_json(report))
        elif json_path:
            import json

            with open(json_path, "w", encoding="utf-8") as fh:
                json.dump(ci_outputs.to_json(report), fh, indent=2, allow_nan=False)
                fh.write("\n")
    except OSError as exc:
        raise UserError(f"cannot write an output ({exc.strerror}: {exc.filename}); choose "
                        f"another path") from None
