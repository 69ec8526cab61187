"""Execute one planned run: its ``prepare`` hook, the placed and measured process, and what it
reported (``--metric`` matches, ``--samples-csv`` rows); plus the setup/cleanup hooks and the
shell's own start-up cost, which the session subtracts from every run.

Nothing here writes to the store: :mod:`benchlab.core.executor` stores what these return.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from benchlab.core.placement import Execution
from benchlab.core.plan import RunPlan
from benchlab.core.planner import PlannedRun
from benchlab.core.samples import extract_metrics, read_samples_csv, signal_via_shell, tail
from benchlab.core.samples_file import remove_samples_file
from benchlab.core.streams import open_streams
from benchlab.errors import UserError
from benchlab.measure.spawn import RunMeasurement, SpawnRequest, spawn_measured
from benchlab.records import record

#: Runs of ``shell -c ''`` whose median is the shell's start-up cost.
SHELL_CALIBRATION_RUNS = 50


@record
class MeasuredRun:
    """One executed run: the harness measurement plus what the run reported."""

    planned: PlannedRun
    worker: int
    measurement: RunMeasurement
    measurements: list[dict]
    extra: dict[str, Any]
    samples: dict[str, list[float]]
    failure: str | None = None

    def __init__(self, planned: PlannedRun, worker: int, measurement: RunMeasurement,
                 measurements: list[dict], extra: dict[str, Any],
                 samples: dict[str, list[float]], failure: str | None = None) -> None:
        # written out: one is made per run, and the generic record __init__ costs ~2 us
        self.planned, self.worker, self.measurement = planned, worker, measurement
        self.measurements, self.extra, self.samples = measurements, extra, samples
        self.failure = failure


def hook_argv(command: str, shell: str | None) -> list[str]:
    """The argv of a hook: through ``shell`` (``-S``) when the plan has one, else split into
    words as ``-N`` splits commands (hyperfine runs hooks the way it runs commands)."""
    return [*shlex.split(shell), "-c", command] if shell else shlex.split(command)


def run_hook(command: str | None, what: str, cwd: str | None, shell: str | None = "sh",
             scratch: str | None = None) -> None:
    """Run a ``prepare``/``setup``/``cleanup``/``conclude`` hook through the measured spawn
    path and the plan's shell; UserError with its stderr's last line when it fails.

    ``shell``: the plan's shell (None: no shell, ``-N``). ``scratch``: where its stderr is
    kept while it runs (default: a temporary directory).
    """
    if not command:
        return
    import tempfile  # hooks only: a plain run never needs it

    with tempfile.TemporaryDirectory(prefix="benchlab-hook-", dir=scratch) as tmp:
        err_path = os.path.join(tmp, "stderr")
        m = spawn_measured(SpawnRequest(argv=hook_argv(command, shell), cwd=cwd,
                                        stderr_path=err_path))
        if m.status == "ok":
            return
        lines = (tail(err_path) or "").strip().splitlines()[-1:] or [m.error or ""]
    code = (f"exit code {m.exit_code}" if m.status == "failed"
            else f"signal {m.signal}" if m.status == "signaled" else m.status)
    raise UserError(f"the {what} command {command!r} failed with {code} "
                    f"({lines[0][:200]}); fix it or remove --{what}")


def measure_shell_cost(shell: str, runs: int = SHELL_CALIBRATION_RUNS) -> dict[str, int]:
    """Median cost (ns) of starting ``shell -c ''``: what ``--shell`` adds to every run."""
    walls, users, syss = [], [], []
    for _ in range(runs):
        m = spawn_measured(SpawnRequest(argv=[*shlex.split(shell), "-c", ""]))
        if m.status != "ok":
            raise UserError(f"the shell {shell!r} does not run ({m.error or m.status}); "
                            f"pass an existing shell to --shell")
        walls.append(m.wall_ns)
        users.append(m.user_ns)
        syss.append(m.sys_ns)
    import statistics  # with a shell only (-N has none): numpy's median, without numpy

    return {"wall_ns": int(statistics.median(walls)), "user_ns": int(statistics.median(users)),
            "sys_ns": int(statistics.median(syss)), "runs": runs}


def execute_planned_run(plan: RunPlan, execution: Execution, planned: PlannedRun, worker: int,
                        scratch: str) -> MeasuredRun:
    """Run ``planned`` once (its ``prepare`` first) and read what it reported."""
    i = planned.benchmark
    bench = plan.benchmarks[i]
    # each step below that has nothing to do for a plain run is skipped here, not called
    if bench.prepare:
        run_hook(bench.prepare, "prepare", plan.cwd, plan.shell, scratch)
    samples_csv = plan.samples_csv.replace("{worker}", str(worker)) if plan.samples_csv else None
    if samples_csv:
        remove_samples_file(samples_csv)
    streams = open_streams(plan.stdout, scratch, worker, bool(plan.metrics or plan.capture_stdout))
    out_path, err_path = streams.stdout_path, streams.stderr_path
    env = dict(os.environ, BENCHLAB_WORKER=str(worker)) if plan.placement.workers > 1 else None
    try:
        m, measurements, extra = execution.run(
            plan.argv_for(i), worker=worker, cwd=plan.cwd, timeout_s=plan.timeout_s,
            stdout_path=out_path, stderr_path=err_path, scratch=scratch, env=env,
            stdin_path=plan.stdin_path)
    finally:
        streams.finish()
    if plan.shell and m.status == "failed":  # the shell's 128 + N: signal N
        m = signal_via_shell(m, plan.shell, extra)
    if bench.conclude:
        run_hook(bench.conclude, "conclude", plan.cwd, plan.shell, scratch)
    if not err_path.startswith(scratch):
        err_path = None  # inherited: benchlab's own stderr, no file to read a tail from
    run = MeasuredRun(planned, worker, m, measurements, extra, {})
    if m.status == "ok":
        if plan.metrics or samples_csv:
            extract_samples(plan, run, out_path, err_path, samples_csv)
    else:
        stderr_tail = tail(err_path)
        if stderr_tail:
            extra["stderr_tail"] = stderr_tail
    return run


def extract_samples(plan: RunPlan, run: MeasuredRun, out_path: str | None,
                    err_path: str | None, samples_csv: str | None) -> None:
    """Fill ``run.samples`` from ``--metric`` matches and the samples file.

    A value the program reported that is not a number becomes the run's ``failure`` (the run is
    kept, the session then fails) rather than an exception that would lose the run.
    """
    try:
        run.samples = extract_metrics(plan.metrics, out_path, err_path)
        empty = [k for k, v in run.samples.items() if not v]
        if empty:
            run.extra["warning"] = f"metric(s) {', '.join(empty)} matched nothing in the output"
        if samples_csv:
            if not os.path.lexists(samples_csv):
                raise UserError(f"the program wrote no samples file {samples_csv}; make it "
                                f"write label,value rows there, or drop --samples-csv")
            values, meta = read_samples_csv(samples_csv)
            for label, vals in values.items():
                run.samples.setdefault(label, []).extend(vals)
            if meta:
                run.extra["samples_csv_metadata"] = meta
            remove_samples_file(samples_csv)  # stored: the path is free for the next session
    except UserError as exc:
        run.samples = {}
        run.extra["error"] = str(exc)
        run.failure = str(exc)


def run_fields(m: RunMeasurement, extra: dict[str, Any], shell_overhead_ns: int | None
               ) -> dict[str, Any]:
    """The stored columns of one run (times in ns, memory in KiB)."""
    return {
        "status": m.status, "exit_code": m.exit_code, "signal": m.signal, "error": m.error,
        "start_unix_ns": m.start_unix_ns, "start_mono_ns": m.start_mono_ns,
        "end_mono_ns": m.end_mono_ns, "wall_ns": m.wall_ns, "user_ns": m.user_ns,
        "sys_ns": m.sys_ns, "max_rss_kib": m.max_rss_kib, "minflt": m.minflt,
        "majflt": m.majflt, "nvcsw": m.nvcsw, "nivcsw": m.nivcsw,
        "shell_overhead_ns": shell_overhead_ns,
        "cpus": ",".join(map(str, m.cpus)) if m.cpus else None,
        "spawn_method": m.method,
        # Processes the run left behind and that were killed after it (none: not recorded).
        "extra": ({**extra, "descendants_killed": m.descendants_killed}
                  if m.descendants_killed else extra or None),
    }
