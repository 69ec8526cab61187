"""``benchlab ab``: did this change make it slower? Two revisions built and measured side by side.

Exit status: 0 no regression beyond its threshold was decided, 1 one was (or, with
``--fail-undecided``, a result stayed undecided), 2 bad input, 3 a build or a benchmark failed.
The gate's outputs (Markdown, JUnit, JSON, the terminal table) are written by
:func:`emit_outputs`, shared with ``gate`` and ``bisect``.
"""

from __future__ import annotations

import contextlib
import sys

import click

from benchlab.cli import params
from benchlab.cli.ab_harness import harness_option
from benchlab.cli.ci_outputs import emit_outputs, finish, output_options  # noqa: F401
from benchlab.cli.common import db_option, open_store
from benchlab.errors import UserError

DEFAULT_MAX_TIME_S = 60.0


def parse_benchmarks(commands, names, suite, threshold, instructions_threshold, count,
                     gate_metrics=(), cpu_threshold=None, better=()):
    """The job's benchmarks from COMMANDS (with -n names) or --suite FILE (one line on misuse)."""
    from benchlab.ci.ab import AbBenchmark
    from benchlab.ci.reported import parse_better, parse_metrics

    thresholds = option_thresholds(threshold, instructions_threshold, cpu_threshold)
    if suite and commands:
        raise UserError("give benchmark commands or --suite FILE, not both")
    metrics, reported = parse_metrics(list(dict.fromkeys(gate_metrics)) or ["wall"],
                                      parse_better(better))
    if threshold is not None:
        for m in reported:  # the time threshold is a reported metric's too
            thresholds[m.name] = thresholds["wall"]
    if count and "instructions" not in metrics:
        metrics.append("instructions")
    if suite:
        if reported or better:
            raise UserError("with --suite FILE, give program-reported metrics in the file "
                            "(metrics = [\"NAME:UNIT=REGEX\"]), not as --metric/--better")
        return suite_benchmarks(suite, thresholds, count)
    if not commands:
        raise UserError("no benchmark given; pass commands such as '{root}/prog 1000' or "
                        "--suite FILE")
    if len(names) > len(commands):
        raise UserError(f"{len(names)} names (-n) for {len(commands)} commands; give one name "
                        f"per command at most")
    out = []
    for i, command in enumerate(commands):
        name = names[i] if i < len(names) else command.replace("{root}/", "")
        out.append(AbBenchmark(name=name, command=command, thresholds=dict(thresholds),
                               metrics=list(metrics), reported=list(reported)))
    return out


def option_thresholds(threshold, instructions_threshold, cpu_threshold) -> dict[str, float]:
    """Thresholds (fractions) by metric from ``--threshold`` (wall and cpu),
    ``--instructions-threshold`` and ``--cpu-threshold`` (each checked; absent: not set)."""
    from benchlab.ci.gate import check_threshold

    thresholds = {}
    if threshold is not None:
        thresholds["wall"] = thresholds["cpu"] = check_threshold(threshold, "--threshold")
    if instructions_threshold is not None:
        thresholds["instructions"] = check_threshold(instructions_threshold,
                                                     "--instructions-threshold")
    if cpu_threshold is not None:
        thresholds["cpu"] = check_threshold(cpu_threshold, "--cpu-threshold")
    return thresholds


def suite_benchmarks(suite, thresholds, count):
    """The benchmarks of suite file ``suite``: the command line's ``thresholds`` are defaults
    (the suite's own win), ``--count instructions`` adds that metric to each."""
    from benchlab.ci.ab_suite import load_ab_suite

    benches = load_ab_suite(suite)
    for b in benches:
        b.thresholds = {**thresholds, **b.thresholds}
        if count and "instructions" not in b.metrics:
            b.metrics.append("instructions")
    return benches


def measure_options(f):
    """Options of how each benchmark is measured (shared by ab and bisect)."""
    opts = [
        click.option("--max-time", type=params.SECONDS, default=DEFAULT_MAX_TIME_S,
                     show_default=True, help="Budget per benchmark (e.g. 30s, 2min): measuring "
                                             "stops when decided or when it is spent."),
        click.option("-w", "--warmup", type=params.count(allow_zero=True, maximum=1000),
                     default=2, show_default=True, help="Warmup runs per revision."),
        click.option("--min-pairs", type=params.count(maximum=10**7), default=20,
                     show_default=True, help="Pairs before the first look."),
        click.option("--max-pairs", type=params.count(maximum=10**7), default=100_000,
                     show_default=True, help="Most pairs per benchmark."),
        click.option("--look-every", type=params.count(maximum=10_000), default=10,
                     show_default=True, help="Pairs between looks of the sequential rule (at "
                     "least: every 2 % more pairs once they are many)."),
        click.option("--alpha", type=params.PROBABILITY, default=0.01, show_default=True,
                     help="Error of the repeated intervals (a false regression: alpha/2)."),
        click.option("--threshold", default=None, metavar="PCT",
                     help="Time regression threshold per benchmark, wall and cpu (default 2%)."),
        click.option("--instructions-threshold", default=None, metavar="PCT",
                     help="Instruction-count threshold (default 0.5%)."),
        click.option("--cpu-threshold", default=None, metavar="PCT",
                     help="CPU-time (user+sys) threshold when it differs from --threshold."),
        click.option("--count", type=click.Choice(["instructions"]), default=None,
                     help="Also count instructions (valgrind) and gate on them."),
        click.option("--metric", "gate_metrics", multiple=True, metavar="METRIC",
                     help="Metric to gate on (repeatable; default wall): wall, cpu, "
                          "instructions, or NAME[:UNIT]=REGEX, a value the program prints, as "
                          "run --metric (higher is better for a unit per second, else lower). "
                          "cpu: user+sys time of the process, steadier than wall on a busy "
                          "shared runner for CPU-bound programs. Wall time is always measured "
                          "and stored."),
        click.option("--better", "better", multiple=True, metavar="NAME=higher|lower",
                     help="Which values of a program-reported metric are better, when its "
                          "unit does not say (repeatable)."),
        click.option("--timeout", type=params.SECONDS, default=None,
                     help="Kill a run after this long (a failure: exit 3)."),
        click.option("--seed", type=params.SEED, default=0, show_default=True,
                     help="Seed of the order within pairs."),
        click.option("-S", "--shell", "shell", default=None, metavar="SHELL",
                     help="The shell that runs each command, as run -S (default sh; its "
                          "start-up time is subtracted from wall time)."),
        click.option("-N", "no_shell", is_flag=True,
                     help="No shell (--shell none): a command with shell syntax is refused "
                          "before anything is built."),
        click.option("--build-timeout", type=params.SECONDS, default=None, metavar="DURATION",
                     help="Kill a build that runs longer (with its process group) and fail "
                          "(exit 3); a suite file's [gate] build_timeout otherwise."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def options_from(max_time, warmup, min_pairs, max_pairs, look_every, alpha, count, timeout,
                 seed, shell=None, no_shell=False, alpha_scope=None, **_ignored):
    """AbOptions from the shared measuring options (the shell as ``run`` takes it; no
    ``alpha_scope``: alpha per benchmark)."""
    from benchlab.ci.ab import AbOptions
    from benchlab.ci.ab_plan import ALPHA_PER_BENCHMARK

    return AbOptions(warmup=warmup, max_time_s=max_time, min_pairs=min_pairs,
                     max_pairs=max_pairs, look_every=look_every, alpha=alpha, count=count,
                     seed=seed, timeout_s=timeout, shell=shell_of(shell, no_shell),
                     alpha_scope=alpha_scope or ALPHA_PER_BENCHMARK)


def alpha_scope_option(f):
    """``--alpha-scope benchmark|suite`` (ab and gate)."""
    return click.option(
        "--alpha-scope", type=click.Choice(["benchmark", "suite"]), default=None,
        help="What --alpha bounds: each benchmark's false regressions (default; a suite "
             "file's [gate] alpha_scope otherwise), or the whole job's (suite): each of its k "
             "benchmark x metric decisions gets alpha/k, k counted once the benchmarks are "
             "known (a harness's after its first run).")(f)


def alpha_scope_for(option: str | None, suite: str | None) -> str | None:
    """``--alpha-scope``, else the suite file's ``[gate] alpha_scope``, else None."""
    if option is not None or not suite:
        return option
    from benchlab.ci.ab_suite import alpha_scope_of

    return alpha_scope_of(suite)


def shell_of(shell: str | None, no_shell: bool) -> str | None:
    """The plan's shell from ``-S/--shell`` and ``-N`` (None: no shell); checked as run
    checks it."""
    import shlex

    from benchlab.cli.hyperfine_options import resolve_shell

    argv = resolve_shell(shell, no_shell, None)
    return None if argv is None else shlex.join(argv)


def build_timeout_for(option: float | None, suite: str | None) -> float | None:
    """``--build-timeout`` (s), else the suite file's ``[gate] build_timeout``, else None."""
    if option is not None or not suite:
        return option
    from benchlab.ci.ab_suite import build_timeout_of

    return build_timeout_of(suite)


def message_printer(quiet: bool):
    """A one-line progress printer on stderr (silent with -q)."""
    def message(text: str) -> None:
        if not quiet:
            click.echo(f"benchlab: {text}", err=True)
    return message


@contextlib.contextmanager
def exit_when_interrupted():
    """A session stopped by Ctrl-C or SIGTERM says what it stored and exits 128 + signal."""
    from benchlab.core.session import SessionInterrupted

    try:
        yield
    except SessionInterrupted as exc:
        click.echo(f"benchlab: interrupted; {exc.runs_stored} runs are stored in "
                   f"session {exc.session.uid}", err=True)
        sys.exit(128 + exc.signum)


@click.command("ab", context_settings={"show_default": False})
@click.argument("commands", nargs=-1)
@click.option("-n", "--name", "names", multiple=True, help="Name of each command, in order.")
@click.option("--suite", default=None, metavar="SUITE.toml",
              help="Benchmarks, thresholds and metrics from a TOML file (see docs/ci.md).")
@click.option("--repo", default=None, metavar="REPO",
              help="The git repository (default: the current directory's).")
@click.option("--base", default=None, metavar="REV",
              help="Base revision (default: merge-base of HEAD with origin/HEAD, main or master).")
@click.option("--head", default=None, metavar="REV",
              help="Head revision (default: the work tree, with uncommitted changes).")
@click.option("--build", default=None, metavar="CMD",
              help="Build command, run in each revision's own worktree (cached by commit).")
@click.option("--baseline", default=None, metavar="SESSION",
              help="Gate head against a stored baseline instead of building a base: a session "
                   "uid, id or name, or branch:NAME (the newest recorded with benchlab gate "
                   "--record NAME). Head is built and run -r times, as benchlab gate does.")
@click.option("-r", "--runs", type=params.count(maximum=10**6), default=None,
              help="With --baseline: runs of each benchmark (default 30).")
@click.option("--force", is_flag=True,
              help="With --baseline: gate even when it ran on another machine.")
@measure_options
@alpha_scope_option
@output_options
@click.option("--session-name", default=None, help="Name of the stored session.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@db_option
@harness_option
def ab_cmd(commands, names, suite, repo, base, head, build, baseline, runs, force, max_time,
           warmup, min_pairs, max_pairs, look_every, alpha, threshold, instructions_threshold,
           cpu_threshold, count, gate_metrics, better, timeout, seed, shell, no_shell,
           build_timeout, alpha_scope, fail_undecided, json_path,
           junit_path, markdown_path, session_name, quiet, db):
    """Measure COMMANDS on two revisions side by side and gate: did head get slower?

    Each revision is checked out in its own git worktree and built with --build; '{root}' in
    a command is the revision's tree, e.g. benchlab ab --build make '{root}/prog 1000'. Each
    benchmark runs as interleaved pairs (random order within a pair, warmups first) until
    the sequential rule decides or --max-time is spent. Exit: 0 no regression decided, 1 a
    regression beyond its threshold (default 2% wall, 0.5% instructions), 2 bad input,
    3 a build or a benchmark failed.

    With --baseline SESSION (or branch:NAME) no base is built: head is built and measured
    -r times and gated against that stored session, as benchlab gate does (noise learned
    from the baseline's history; another machine refused unless --force).
    """
    from benchlab.ci import revisions as rv
    from benchlab.ci.ab_plan import check_commands
    from benchlab.ci.gate_job import Build, GateJob, Paired, Stored

    benches = parse_benchmarks(commands, names, suite, threshold, instructions_threshold, count,
                               gate_metrics, cpu_threshold, better)
    options = options_from(max_time, warmup, min_pairs, max_pairs, look_every, alpha, count,
                           timeout, seed, shell, no_shell, alpha_scope_for(alpha_scope, suite))
    options.validate()
    check_commands(benches, options.shell)
    if baseline is not None and base is not None:
        raise UserError("give --base REV (build and measure it beside head) or --baseline "
                        "SESSION (a stored run), not both")
    if baseline is None and (runs is not None or force):
        raise UserError("-r/--runs and --force go with --baseline SESSION; without it ab "
                        "measures pairs until the gate decides (--max-time)")
    store = open_store(db)
    root = rv.repo_root(repo)
    against = (Stored(baseline, runs=runs or 30, force=force) if baseline is not None
               else Paired(base or rv.default_base(root)))
    job = GateJob(against, command="ab", benches=benches, head=head,
                  build=Build(root, build, build_timeout_for(build_timeout, suite)),
                  options=options, fail_undecided=fail_undecided)
    run_job(store, job, session_name, quiet, markdown_path=markdown_path,
            junit_path=junit_path, json_path=json_path)


def run_job(store, job, session_name, quiet, **outputs) -> None:
    """Run ``job`` through the one entry (:func:`benchlab.ci.gate_job.run_gate`), write its
    outputs and exit with its status (128 + the signal when interrupted): the end of ``ab``,
    ``ab --harness`` and ``gate``."""
    from benchlab.ci.gate_job import run_gate

    message = message_printer(quiet)
    with exit_when_interrupted():
        report = run_gate(store, job, argv=["benchlab", job.command, *sys.argv[2:]],
                          name=session_name, message=message,
                          on_start=lambda ref: message(f"session {ref.uid}"))
    finish(report, quiet=quiet, **outputs)


commands = [ab_cmd]
