"""``benchlab run``: measure commands, hyperfine-style, storing every run as it ends."""

from __future__ import annotations

import os
import shlex
import sys

import click

from benchlab.cli import params
from benchlab.cli.common import db_option, open_store
from benchlab.cli.execute_options import cluster_options, resume_run, start_run
from benchlab.cli.hyperfine_options import (
    HyperfineCommand,
    HyperfineOptions,
    hyperfine_options,
    ignore_failure_policy,
)
from benchlab.cli.output_path import OUTPUT_FILE
from benchlab.cli.run_harness import HarnessKindOption, harness_dispatch
from benchlab.cli.run_outcome import (
    DEFAULT_MIN_RUNS,
    check_verdict_metric,
    echo_json_outcome,
    exit_if_command_failed,
    min_runs_of,
    print_outcome,
    store_run_verdict,
    until_decided_alpha,
    verdict_margin,
)
from benchlab.cli.run_progress import ProgressObserver  # also used by study and demo
from benchlab.core.parameters import expand_benchmarks, scan_values, substitute_parameters
from benchlab.core.plan import MetricSpec, Placement, RunPlan, parse_memory
from benchlab.core.session_types import SessionInterrupted
from benchlab.errors import UserError
from benchlab.units import plural


def _protocol_from_options(commands, names, runs, warmup, min_runs, max_runs, min_time, max_time,
                           prepare, setup, cleanup, order, seed, timeout, ignore_failure,
                           hf: HyperfineOptions, scans, step, lists, metrics,
                           samples_csv) -> RunPlan:
    parameters: list[tuple[str, list[str]]] = []
    for name, low, high in scans:
        parameters.append((name, scan_values(name, low, high, step)))
    if step is not None and not scans:
        raise UserError("--parameter-step-size needs --parameter-scan; add one or drop the step")
    for name, values in lists:
        vals = [v for v in values.split(",")]
        if not all(vals):
            raise UserError(f"--parameter-list {name} has an empty value in {values!r}; "
                            f"write comma-separated values like a,b,c")
        parameters.append((name, vals))
    specs = expand_benchmarks(list(commands), list(names), parameters)
    metric_specs = []
    for text in metrics:
        from benchlab.measure.metrics import parse_metric_spec  # --metric only

        m = parse_metric_spec(text)
        metric_specs.append(MetricSpec(name=m.name, regex=m.regex, unit=m.unit or None))
    n = len(specs)
    hook_options = (("prepare", prepare), ("setup", setup), ("cleanup", cleanup),
                    ("conclude", hf.conclude))
    for opt, hooks in hook_options:
        if len(hooks) > 1 and len(hooks) != len(commands):
            raise UserError(f"{len(hooks)} --{opt} commands for {len(commands)} commands; give one "
                            f"for all or one per command")
    if order is None:
        # hyperfine's meaning of -s/-c: a command's setup right before its runs, its cleanup
        # right after (`-P n 1 3 -s 'make N={n}' ./prog` builds what each command measures).
        # Interleaved, every setup would run before any measurement.
        order = "sequential" if setup or cleanup else "interleaved"
    per_command = n // len(commands)  # parameter combinations per command, in command order
    for i, spec in enumerate(specs):
        for opt, hooks in hook_options:
            if hooks:
                hook = hooks[0] if len(hooks) == 1 else hooks[i // per_command]
                # as hyperfine: parameters are substituted in hooks too (-s 'make N={n}')
                setattr(spec, opt, substitute_parameters(hook, spec.parameters or {}))
    plan = RunPlan(
        benchmarks=specs, runs=runs, warmup=warmup, min_runs=min_runs if runs is None else 1,
        max_runs=max_runs, min_time_s=min_time, max_time_s=max_time, order=order, seed=seed,
        timeout_s=timeout, ignore_failure=ignore_failure,
        shell=shlex.join(hf.shell) if hf.shell else None, stdin_path=hf.input_path,
        stdout=hf.output, count=hf.count,
        metrics=metric_specs, samples_csv=os.path.abspath(samples_csv) if samples_csv else None,
        cwd=os.getcwd())
    if runs is not None and (max_runs is not None or min_time != 3.0):
        raise UserError("--runs fixes the count; drop --max-runs/--min-time or drop --runs")
    hf.check_commands([spec.command for spec in specs])
    return plan


@click.command("run", cls=HyperfineCommand, context_settings={"show_default": True,
                                        "help_option_names": ["-h", "--help"]})
@click.argument("commands", nargs=-1)
@hyperfine_options
@click.option("-r", "--runs", type=click.IntRange(min=1), default=None,
              help="Exact number of measured runs per command.")
@click.option("-w", "--warmup", type=click.IntRange(min=0), default=0,
              help="Warmup runs per command (stored, flagged, excluded from analysis).")
@click.option("-m", "--min-runs", type=click.IntRange(min=1), default=None,
              help=f"Measure each command at least this many times [default: "
                   f"{DEFAULT_MIN_RUNS}, or --max-runs when lower, as hyperfine].")
@click.option("-M", "--max-runs", type=click.IntRange(min=1), default=None,
              help="Measure each command at most this many times (-M 5 alone: 5 runs).")
@click.option("--min-time", "--min-benchmarking-time", "min_time", type=click.FloatRange(min=0),
              default=3.0, help="Measure each command for at least this many seconds (unless "
                                "--runs; hyperfine's --min-benchmarking-time).")
@click.option("--max-time", type=params.SECONDS, default=None,
              help="Stop the session after this many seconds of measured runs.")
@click.option("-p", "--prepare", multiple=True, help="Shell command before every run.")
@click.option("-s", "--setup", multiple=True, help="Shell command before a command's runs.")
@click.option("-c", "--cleanup", multiple=True, help="Shell command after a command's runs.")
@click.option("--order", type=click.Choice(["interleaved", "sequential"]), default=None,
              help="interleaved (default): randomised round-robin so drift hits all commands "
                   "alike. sequential: one command after another, as hyperfine (the default "
                   "with --setup/--cleanup, so each setup runs right before its command's runs).")
@click.option("--seed", type=params.SEED, default=None, help="Seed of the run order (default: random, stored).")
@click.option("-t", "--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Kill a run after this many seconds (status: timeout).")
@click.option("-i", "--ignore-failure", is_flag=True,
              help="Keep measuring when a run fails; only ok runs yield samples. "
                   "-i=1,2 (or --ignore-failure=1,2): only those exit codes, as hyperfine.")
@click.option("--ignore-failure-codes", "ignore_codes", default=None, hidden=True,
              help="Set by -i=CODES / --ignore-failure=CODES (see HyperfineCommand).")
@click.option("-P", "--parameter-scan", "scans", nargs=3, multiple=True,
              metavar="NAME LOW HIGH", help="Substitute {NAME} with LOW..HIGH.")
@click.option("-D", "--parameter-step-size", "--step", "step", default=None,
              help="Step of --parameter-scan (default 1).")
@click.option("-L", "--parameter-list", "lists", nargs=2, multiple=True, metavar="NAME A,B,C",
              help="Substitute {NAME} with each value.")
@click.option("--metric", "metrics", multiple=True, metavar="NAME[:UNIT]=REGEX",
              help="A value the program prints: each match of the regex's one group is a sample.")
@click.option("--samples-csv", type=OUTPUT_FILE, default=None, metavar="PATH",
              help="File of label,value rows the program writes; read after each run.")
@click.option("--affinity", default="none", show_default=True,
              metavar="none|core:N|cores:LIST|cores-rr:LIST|spread|numa:N",
              help="CPU placement of each run (per worker).")
@click.option("--smt", type=click.Choice(["apart", "together"]), default="apart",
              help="With --affinity spread: hyperthread siblings per worker apart or together.")
@click.option("--workers", type=click.IntRange(min=1), default=1,
              help="Run N copies concurrently, each placed by --affinity.")
@click.option("--isolation", default="bare",
              metavar="bare|cgroup|bwrap|firejail|isolate|podman[-exec]:IMAGE|docker[-exec]:IMAGE|wrap:T",
              help="What each run is wrapped in: a cgroup, a sandbox, a container (docs/isolation.md).")
@click.option("--cpu-quota", "cpu_quota_us", type=click.IntRange(min=1000), default=None,
              metavar="US", help="cgroup CPU quota per period, microseconds.")
@click.option("--cpu-period", "cpu_period_us", type=click.IntRange(min=1000, max=1_000_000),
              default=None, metavar="US", help="cgroup CPU period (default 100000).")
@click.option("--cpu-weight", type=click.IntRange(min=1, max=10000), default=None,
              help="cgroup CPU weight 1..10000 (v1 shares = weight*1024/100).")
@click.option("--cpuset", default=None, metavar="LIST", help="cgroup cpuset, e.g. 0-1.")
@click.option("--memory-limit", default=None, metavar="SIZE", help="cgroup memory limit, e.g. 512M.")
@click.option("--pids-max", type=click.IntRange(min=1), default=None, metavar="N",
              help="cgroup limit on processes+threads per run (--isolation cgroup: 4096).")
@click.option("--allow-unconstrained", is_flag=True,
              help="Run without limits (stored as such) when cgroups cannot be used.")
@click.option("--load", default=None, metavar="cpu:N|memcpy:N|spin:N",
              help="Background load for the duration of the session.")
@click.option("--perf-events", default=None, metavar="LIST",
              help="Run under perf stat and store these events (unsupported ones as such).")
@click.option("--calibration", default=None, metavar="FILE",
              help="Apply a CPU-quota calibration made by `benchlab calibrate`.")
@click.option("--until-decided", is_flag=True,
              help="Two commands: run interleaved rounds until the comparison is decided "
                   "(group-sequential, error held at --alpha) or --max-runs/--max-time is spent.")
@click.option("--alpha", type=params.PROBABILITY, default=None,
              help="With --until-decided: overall false-positive rate [default: 0.01]. The "
                   "verdict's level is --conf-level.")
@click.option("--conf-level", type=params.PROBABILITY, default=0.95, show_default=True,
              help="Level of the verdict's intervals; its test uses alpha = 1 - level.")
@click.option("--min-effect", default=None, metavar="PERCENT%",
              help="The verdict's equivalence margin: a command within this percentage of the "
                   "baseline is called equivalent [default: 1%].")
@click.option("--verdict-metric", default=None,
              metavar="wall|user|sys|cpu|instructions|NAME",
              help="The series the verdict judges [default: the program's one --metric, else "
                   "wall, as compare selects]. With --count instructions the exact counts are "
                   "compared beside it.")
@click.option("--equivalence-margin", type=params.NONNEGATIVE, default=1.0,
              show_default=True, metavar="PERCENT",
              help="With --until-decided: stop as equivalent within +-PERCENT of B (0: never).")
@click.option("--look-every", type=click.IntRange(min=1), default=5, show_default=True,
              help="With --until-decided: rounds between looks at the data.")
@click.option("--harness", cls=HarnessKindOption, default=None,
              help="COMMAND runs a benchmark harness: store every benchmark it reports, each "
                   "metric in the harness's unit (-r: harness runs, default 1).")
@click.option("--session-name", default=None, help="A name for the session (default: none).")
@click.option("--resume", default=None, metavar="SESSION",
              help="Complete an interrupted session from its stored protocol.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--report", "report_path", type=OUTPUT_FILE, default=None, metavar="FILE",
              help="Write the session's HTML report (as benchlab report) to FILE when the run ends.")
@cluster_options
@db_option
@harness_dispatch
def run_cmd(commands, runs, warmup, min_runs, max_runs, min_time, max_time, prepare, setup,
            cleanup, order, seed, timeout, ignore_failure, scans, step, lists,
            metrics, samples_csv, affinity, smt, workers, isolation, cpu_quota_us, cpu_period_us,
            cpu_weight, cpuset, memory_limit, pids_max, allow_unconstrained, load, perf_events,
            calibration, until_decided, alpha, conf_level, min_effect, verdict_metric,
            equivalence_margin, look_every,
            session_name, resume, as_json, quiet, db, cluster, on, spread, lost_after,
            report_path, **hyperfine):
    """Measure COMMANDS, each run stored as soon as it ends.

    \b
    Examples:
      benchlab run 'sort -n big.txt' 'sort -g big.txt'
      benchlab run --runs 50 --warmup 3 -n map -n array './bm map' './bm array'
      benchlab run --metric 'latency_ns:ns=<<BENCHMARK>> (\\d+)' ./client
      benchlab run -P n 1 4 'sleep 0.0{n}'
      benchlab run -N --reference ./old ./new --export-json r.json
    """
    ignore_failure = ignore_failure_policy(ignore_failure, hyperfine.pop("ignore_codes"))
    hf = HyperfineOptions.from_kwargs(hyperfine)
    min_runs = min_runs_of(min_runs, max_runs)
    alpha = until_decided_alpha(alpha, until_decided)
    margin = verdict_margin(min_effect)
    quiet = quiet or hf.quiet
    show_progress, console = _progress_console(hf, quiet)
    if report_path is not None:  # a bad --report fails now, not after the measurements
        from benchlab.report.output import check_output
        check_output(report_path, "html", None, option="--report")
    store = open_store(db)
    if report_path is not None:
        store.refuse_output_path(report_path, "--report")
    started: list = []  # the session, once it exists (a failing command's stderr is there)
    try:
        with ProgressObserver(console, show_progress) as observer:
            if resume:
                if commands:
                    raise UserError("--resume takes the commands from the stored session; "
                                    "drop the commands or drop --resume")
                result = resume_run(store, resume, cluster, observer, lost_after)
            else:
                if not commands:
                    raise UserError("no command to benchmark; usage: benchlab run COMMAND "
                                    "[COMMAND ...] (see benchlab run --help)")
                if seed is None:
                    seed = int.from_bytes(os.urandom(4), "little")
                commands, names = hf.commands_with_reference(list(commands))
                plan = _protocol_from_options(
                    commands, names, runs, warmup, min_runs, max_runs, min_time, max_time,
                    prepare, setup, cleanup, order, seed, timeout, ignore_failure, hf,
                    scans, step, lists, metrics, samples_csv)
                check_verdict_metric(verdict_metric, plan)
                if until_decided:
                    _until_decided(plan, runs, max_runs, alpha, equivalence_margin,
                                   look_every, metrics)
                plan.placement, calibration = _placement(
                    affinity, smt, workers, isolation, cpu_quota_us, cpu_period_us, cpu_weight,
                    cpuset, memory_limit, allow_unconstrained, load, perf_events, calibration,
                    pids_max)
                announce = _announcer(started, None if as_json else console, store.path)
                result = start_run(store, plan, cluster, on, spread,
                                   argv=["benchlab", *sys.argv[1:]], name=session_name,
                                   observer=observer, on_start=announce,
                                   lost_after_s=lost_after, calibration=calibration)
    except SessionInterrupted as exc:
        _exit_interrupted(store, db, exc)
    except UserError as exc:
        key = started[0].uid if started else resume
        if key is not None:  # a session exists: a failing command says so, exit 3
            exit_if_command_failed(store, key, exc)
        raise
    reference = _reference_name(hf, result.session.id, store)
    from benchlab.report.speed_verdict import verdict_settings  # no numpy: settings only

    settings = verdict_settings(reference=reference, sort=hf.sort, metric=verdict_metric,
                                confidence_level=conf_level, equivalence_margin=margin)
    verdict = store_run_verdict(store, result.session.id, settings, resumed=bool(resume))
    hf.write_exports(store, result.session.uid, reference)
    if report_path is not None:
        _write_report(store, result.session.uid, report_path, quiet)
    if as_json or not quiet:  # -q prints nothing (the verdict is stored all the same)
        _show_outcome(store, result, hf, reference, verdict, verdict_metric, conf_level, as_json)
    store.close()


def _show_outcome(store, result, hf: HyperfineOptions, reference, verdict, verdict_metric,
                  conf_level, as_json: bool) -> None:
    """The session's summaries and verdict: as JSON on stdout, or the tables."""
    from benchlab.report.run_summary import session_summaries

    summaries = session_summaries(store, result.session.id)
    if as_json:
        echo_json_outcome(store, result, verdict, summaries)
    else:
        print_outcome(store, result, hf, summaries, reference, verdict, verdict_metric,
                      conf_level)


def _announcer(started: list, console, where: str):
    """The ``on_start`` of a run: keeps the session in ``started`` and, on the progress bar's
    console (None: silent), says where it is stored."""
    def announce(session) -> None:
        started.append(session)
        if console is not None:
            console.print(f"[dim]session {session.uid} -> {where}[/dim]")

    return announce


def _exit_interrupted(store, db: str | None, exc: SessionInterrupted) -> None:
    """Ctrl-C or SIGTERM: one line saying what is stored and how to resume; exit 128 + N."""
    db_hint = f" --db {shlex.quote(store.path)}" if db else ""
    stored = plural(exc.runs_stored, "run is", "runs are")
    click.echo(f"benchlab: interrupted; {stored} stored in session "
               f"{exc.session.uid}. Resume with: benchlab run --resume {exc.session.uid}{db_hint}",
               err=True)
    sys.exit(128 + exc.signum)


def _progress_console(hf: HyperfineOptions, quiet: bool):
    """(whether a progress bar is shown, the stderr console it draws on or None): only the bar
    uses a console, so a pipe or -q loads no rich."""
    show_progress = not quiet and hf.progress(sys.stderr.isatty())
    if not show_progress:
        return False, None
    from rich.console import Console

    return True, Console(stderr=True, no_color=hf.color is False,
                         force_terminal=True if hf.style in ("full", "nocolor") else None)


def _write_report(store, uid: str, report_path, quiet: bool) -> None:
    """``--report FILE``: the session's HTML report, said on stderr unless -q."""
    from benchlab.report.output import write_report

    written = write_report(store, [uid], report_path)
    if not quiet:
        click.echo(f"wrote {written.path} ({written.size / 1e6:.2f} MB)", err=True)


def _until_decided(protocol: RunPlan, runs, max_runs, alpha, margin, look_every, metrics) -> None:
    """Turn a plan into a sequential A/B session (see benchlab.core.until_decided)."""
    if len(protocol.benchmarks) != 2:
        raise UserError(f"--until-decided compares exactly two commands (got "
                        f"{len(protocol.benchmarks)}); give A and B")
    if runs is not None:
        raise UserError("--until-decided decides the number of runs; use --max-runs as budget")
    budget = max_runs or 1000
    protocol.runs = budget  # the planner's ceiling; the stopper ends the session earlier
    protocol.max_runs = None
    protocol.order = "interleaved"
    protocol.until_decided = {
        "alpha": alpha, "margin": (margin / 100) or None, "look_every": look_every,
        "metric": protocol.metrics[0].name if len(protocol.metrics) == 1 else "wall",
        "min_samples": min(20, budget), "looks": []}


def _placement(affinity, smt, workers, isolation, cpu_quota_us, cpu_period_us, cpu_weight,
                     cpuset, memory_limit, allow_unconstrained, load, perf_events,
                     calibration, pids_max=None):
    """The run's Placement from its options, and the ``--calibration`` file as read (a
    :class:`benchlab.machines.fleet.RunCalibration`, None without one): the file is read
    here once, its quota goes into the placement, its path is kept with the plan."""
    read = None
    if cpu_period_us is not None and cpu_quota_us is None:
        raise UserError("--cpu-period needs --cpu-quota; add --cpu-quota US")
    if calibration:
        if cpu_quota_us is not None:
            raise UserError("--calibration sets the CPU quota; drop --cpu-quota or --calibration")
        from benchlab.machines.fleet import read_calibration

        read = read_calibration(calibration)
        cpu_quota_us = read.limits.cpu_quota_us
        cpu_period_us = read.limits.cpu_period_us
        calibration = os.path.abspath(calibration)
    return Placement(
        affinity=affinity, smt=smt, workers=workers, isolation=isolation,
        cpu_quota_us=cpu_quota_us, cpu_period_us=cpu_period_us, cpu_weight=cpu_weight,
        cpuset=cpuset, memory_limit_bytes=parse_memory(memory_limit),
        allow_unconstrained=allow_unconstrained, load=load, perf_events=perf_events,
        calibration=calibration, pids_max=pids_max), read


def _reference_name(hf: HyperfineOptions, session_id: int, store) -> str | None:
    """The benchmark name of ``--reference`` (None without one, or on --resume)."""
    if hf.reference is None:
        return None
    for bench in store.benchmarks(session_id):
        if bench["command"] == hf.reference:
            return bench["name"]
    return None


commands = [run_cmd]
