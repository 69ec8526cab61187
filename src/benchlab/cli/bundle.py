"""``benchlab bundle`` and ``benchlab reproduce``: hand a result to someone, and judge it there."""

from __future__ import annotations

import sys

import click

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.json_output import echo_json
from benchlab.cli.output_path import OUTPUT_FILE
from benchlab.errors import UserError


@click.command("bundle")
@click.argument("selectors", nargs=-1, required=True, metavar="SESSION...")
@click.option("-o", "--output", type=OUTPUT_FILE, required=True, metavar="NAME.benchlab.tar.gz",
              help="The bundle file to write.")
@click.option("--profile", "take_profile", is_flag=True,
              help="Take a short stress-ng profile of this machine now (3 CPU methods, 1 s, 2 "
                   "rounds) instead of bundling the newest stored one.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@db_option
def bundle_cmd(selectors: tuple[str, ...], output: str, take_profile: bool, as_json: bool,
               db: str | None) -> None:
    """Bundle sessions (data, protocols, sources, digests, profile, report) into one file.

    The same sessions give the same bytes. Reproduce it elsewhere with
    `benchlab reproduce NAME.benchlab.tar.gz [--analysis-only | --calibrate]`.
    """
    from benchlab.report.reproduce.make import make_bundle

    if not output.endswith(".tar.gz"):
        raise UserError(f"-o {output}: a bundle is a .tar.gz; name it NAME.benchlab.tar.gz")
    with open_store(db, readonly=not take_profile) as store:
        store.refuse_output_path(output, "-o")
        for key in selectors:  # before a profile is taken: a missing session fails fast
            if store.find_session(key) is None:
                raise UserError(f"no session {key!r} in {store.path} (deleted, or another "
                                f"store?); list them with benchlab list, or pass --db PATH")
        profile = None
        if take_profile:
            from benchlab.machines.profile import run_profile

            profile = run_profile(["int64", "double", "matrixprod"], name="measuring machine",
                                  duration_s=1, repeat=2, store=store).to_dict()
        info = make_bundle(store, list(selectors), output, profile=profile)
    if as_json:
        echo_json(info, indent=2)
        return
    click.echo(f"wrote {output}: {info['size_bytes']:,} bytes, {info['members']} members, "
               f"sessions {', '.join(info['sessions'])}, sha256 {info['sha256']}")
    if not info["profile"]:
        click.echo("note: no machine profile stored; a reproduction cannot predict sizes "
                   "(bundle again with --profile)", err=True)
    for exe in info["missing_executables"]:
        click.echo(f"note: {exe} no longer exists here; bundled without its digest", err=True)


@click.command("reproduce")
@click.argument("bundle_path", metavar="BUNDLE")
@click.option("--analysis-only", is_flag=True,
              help="Re-run the analysis from the bundle's data and check every number and the "
                   "reports byte for byte (runs nothing from the bundle).")
@click.option("--calibrate", is_flag=True,
              help="First find the CPU quota that makes this machine match the original's "
                   "profile, and measure under it.")
@click.option("--tolerance", type=params.finite_float(minimum=0.0, maximum=10.0, exclusive_minimum=True), default=0.2,
              show_default=True,
              help="Noise allowed on the predicted size band (a fraction).")
@click.option("--show-plan", is_flag=True,
              help="Only list what the re-measurement would run (commands, hooks, shell, "
                   "programs, sources and their SHA-256; with --json as data); run nothing.")
@click.option("--trust", is_flag=True,
              help="Run the bundle's commands without asking (they run on this machine as "
                   "you: read them first with --show-plan).")
@click.option("--isolation", default="bare", show_default=True, metavar="LEVEL",
              help="Isolation of every run, as benchlab run --isolation (e.g. bwrap: a "
                   "read-only root, no network); the bundle's own is never used.")
@click.option("--show-report", is_flag=True, help="--analysis-only: print the Markdown report.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@db_option
def reproduce_cmd(bundle_path: str, analysis_only: bool, calibrate: bool, tolerance: float,
                  show_plan: bool, trust: bool, isolation: str, show_report: bool,
                  as_json: bool, db: str | None) -> None:
    """Reproduce a bundle: its analysis byte for byte, or its measurement here, judged.

    A re-measurement runs the bundle's commands on this machine: they are listed first, and
    nothing runs unless you confirm (or pass --trust). Verdicts: reproduced; reproduced in
    direction, not in size; not reproduced. Exit 0 when reproduced (or the analysis is
    identical), 1 otherwise.
    """
    from benchlab.store.bundle import read_bundle

    if analysis_only and (calibrate or trust or show_plan):
        raise UserError("--analysis-only runs nothing; drop --calibrate, --trust and "
                        "--show-plan")
    if not analysis_only:  # a wrong level is refused before the bundle is even read
        from benchlab.measure.isolation import parse_isolation

        parse_isolation(isolation).check()
    bundle = read_bundle(bundle_path)
    if analysis_only:
        _analysis_only(bundle, show_report, as_json)
    from benchlab.core.reproduce import describe, read_reproduction
    from benchlab.report.reproduce.disclosure import disclosure_lines

    reproduction = read_reproduction(bundle)  # parses and checks; runs and writes nothing
    what = describe(reproduction, isolation=isolation)
    lines = disclosure_lines(what)
    if show_plan:
        if as_json:
            echo_json(what, indent=2)
        else:
            click.echo("\n".join(lines))
        sys.exit(0)
    _consent(bundle_path, lines, trust)
    from benchlab.core.executor import SessionInterrupted
    from benchlab.machines.reproduce import measure_here
    from benchlab.report.reproduce.rerun import judge_remeasured

    with open_store(db) as store:
        try:
            remeasured = measure_here(store, reproduction, calibrate=calibrate,
                                      isolation=isolation, argv=["benchlab", *sys.argv[1:]])
        except SessionInterrupted as exc:
            click.echo(f"benchlab: interrupted; {exc.runs_stored} runs of the reproduction are "
                       f"stored in session {exc.session.uid}; run benchlab reproduce again to "
                       f"judge a complete one", err=True)
            sys.exit(128 + exc.signum)
    judgement = judge_remeasured(remeasured, tolerance=tolerance)
    if as_json:
        echo_json(judgement.to_dict(), indent=2)
    else:
        _print_judgement(judgement)
    sys.exit(0 if judgement.verdict == "reproduced" else 1)


def _consent(bundle_path: str, lines: list[str], trust: bool) -> None:
    """Run nothing unless the user agreed: ``--trust``, or "y" typed at a terminal. Without a
    terminal and without ``--trust``: one line, exit 2."""
    if not trust and not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UserError(f"reproducing {bundle_path} runs the bundle's commands on this machine; "
                        f"list them with benchlab reproduce {bundle_path} --show-plan, then pass "
                        f"--trust to run them (or --analysis-only to run nothing)")
    for line in lines:
        click.echo(line, err=True)
    if trust:
        return
    if not click.confirm("Run these commands here?", default=False, err=True):
        raise UserError("not confirmed: nothing was run (pass --trust to run without asking)")


def _analysis_only(bundle, show_report: bool, as_json: bool) -> None:
    from benchlab.report.reproduce.rerun import reproduce_analysis

    check, markdown = reproduce_analysis(bundle)
    for w in check.warnings:
        click.echo(f"warning: {w}", err=True)
    if as_json:
        echo_json({**check.__dict__, "identical": check.identical,
                   "html_verified": check.html_here is not None}, indent=2)
    else:
        if show_report:
            click.echo(markdown)
        state = lambda a, b: "identical" if a == b else "DIFFERENT"  # noqa: E731
        click.echo(f"analysis.json: {state(check.analysis_bundled, check.analysis_here)} "
                   f"(sha256 {check.analysis_here})")
        click.echo(f"report.md:     {state(check.report_bundled, check.report_here)} "
                   f"(sha256 {check.report_here})")
        if check.html_here is None:
            click.echo("report.html:   not verified")
        else:
            click.echo(f"report.html:   {state(check.html_bundled, check.html_here)} "
                       f"(sha256 {check.html_here})")
    sys.exit(0 if check.identical else 1)


def _print_judgement(j) -> None:
    for w in j.warnings:
        click.echo(f"warning: {w}", err=True)
    if j.cpu_quota:
        click.echo(f"calibrated: measured under a CPU quota of {j.cpu_quota[0]} us per "
                   f"{j.cpu_quota[1]} us")
    if j.speedup_range:
        click.echo(f"variability: this machine runs x{j.speedup_range[0]:.3g}.."
                   f"x{j.speedup_range[1]:.3g} as fast as the original")
    for p in j.points:
        mark = "ok  " if p["ok"] else "DIFF"
        if p["kind"] == "comparison":
            click.echo(f"{mark} {p['benchmark']} vs {p['baseline']}: {p['there']} there, "
                       f"{p['here']} here")
        elif p["kind"] == "size":
            why = "" if p["machines_match"] or not p["inside"] else \
                " as predicted, but the machines differ in speed"
            click.echo(f"{mark} {p['benchmark']}: median x{p['ratio']:.3g} here "
                       f"(predicted x{p['band'][0]:.3g}..x{p['band'][1]:.3g}){why}")
        else:
            click.echo(f"{mark} {p['benchmark']}: {p['there']:.0f} vs {p['here']:.0f} "
                       f"instructions per run")
    if j.environment_differences:
        click.echo(f"environment differences ({len(j.environment_differences)}):")
        for key, a, b in j.environment_differences[:20]:
            click.echo(f"  {key}: {str(a)[:40]} -> {str(b)[:40]}")
    click.echo(f"verdict: {j.verdict}")
    for r in j.reasons:
        click.echo(f"  - {r}")
    click.echo("sessions: " + ", ".join(f"{a} -> {b}" for a, b in j.sessions))


commands = [bundle_cmd, reproduce_cmd]
