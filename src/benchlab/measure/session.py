"""Execute a :class:`~benchlab.measure.protocol.Protocol` and store every run as it ends.

The flow of one session: record the environment, system checks and load; run each benchmark's
``setup``; measure the shell's own cost when ``--shell`` is used; then warmups and measured runs
in the planned order, each preceded by ``prepare``; every run is committed to the store the
moment it ends (with the samples the program reported); finally ``cleanup`` and the load after.

An interruption (Ctrl-C) kills the running program, keeps everything stored, marks the session
``interrupted`` and raises :class:`SessionInterrupted` carrying the resume command. A failing
command (without ``ignore_failure``) keeps its failed run and stops the session with a
:class:`~benchlab.errors.UserError`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol as TypingProtocol, Sequence

import numpy as np

from benchlab.control.execution import ControlOptions, prepare_execution
from benchlab.errors import UserError
from benchlab.measure.protocol import PlannedRun, Protocol, RunPlanner
from benchlab.measure.spawn import RunMeasurement, SpawnRequest, spawn_measured
from benchlab.store.db import SessionRef, Store

SHELL_CALIBRATION_RUNS = 50
STDERR_TAIL_BYTES = 2000


class SessionInterrupted(Exception):
    """Raised after Ctrl-C once the session is safely marked interrupted."""

    def __init__(self, session: SessionRef, runs_stored: int):
        super().__init__(f"interrupted: {runs_stored} runs stored in session {session.uid}")
        self.session = session
        self.runs_stored = runs_stored


class Observer(TypingProtocol):
    """Receives progress events (the CLI draws a progress bar from them)."""

    def started(self, session: SessionRef, protocol: Protocol, total: int | None) -> None: ...
    def run_finished(self, name: str, run: PlannedRun, m: RunMeasurement,
                     total: int | None, done: int) -> None: ...
    def message(self, text: str) -> None: ...


class _Silent:
    def started(self, session, protocol, total):
        pass

    def run_finished(self, name, run, m, total, done):
        pass

    def message(self, text):
        pass


@dataclass
class SessionResult:
    """Outcome of :func:`run_protocol`: the session and per-benchmark run counts by status."""

    session: SessionRef
    status: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    shell_overhead_ns: int | None = None
    decision: dict | None = None


def check_commands(protocol: Protocol) -> None:
    """Fail early, with the fix, when a command cannot be executed at all."""
    for i, bench in enumerate(protocol.benchmarks):
        argv = protocol.argv_for(i)
        exe = argv[0]
        if "/" in exe:
            path = Path(exe) if os.path.isabs(exe) else Path(protocol.cwd or ".") / exe
            if not path.exists():
                raise UserError(f"command {exe!r} does not exist (benchmark {bench.name!r}); "
                                f"check the path")
            if not os.access(path, os.X_OK) or path.is_dir():
                raise UserError(f"command {exe!r} is not an executable file; "
                                f"chmod +x it or run it through an interpreter")
        elif shutil.which(exe) is None:
            raise UserError(f"command {exe!r} not found in PATH (benchmark {bench.name!r}); "
                            f"check the spelling, give a path, or use --shell for shell syntax")


def _run_hook(command: str | None, what: str, cwd: str | None) -> None:
    if not command:
        return
    proc = subprocess.run(["/bin/sh", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise UserError(f"the {what} command {command!r} failed with exit code "
                        f"{proc.returncode} ({tail[0][:200]}); fix it or remove --{what}")


def measure_shell_overhead(shell: str, runs: int = SHELL_CALIBRATION_RUNS) -> dict[str, int]:
    """Median cost (ns) of starting ``shell -c ''``: what ``--shell`` adds to every run."""
    walls, users, syss = [], [], []
    for _ in range(runs):
        m = spawn_measured(SpawnRequest(argv=[shell, "-c", ""]))
        if m.status != "ok":
            raise UserError(f"the shell {shell!r} does not run ({m.error or m.status}); "
                            f"pass an existing shell to --shell")
        walls.append(m.wall_ns)
        users.append(m.user_ns)
        syss.append(m.sys_ns)
    return {"wall_ns": int(np.median(walls)), "user_ns": int(np.median(users)),
            "sys_ns": int(np.median(syss)), "runs": runs}


def read_samples_csv(path: str) -> tuple[dict[str, list[float]], list[str]]:
    """Read ``label,value`` rows (``#`` lines are metadata) written by the program.

    Returns (values by label, metadata lines). Raises UserError on a malformed row.
    """
    values: dict[str, list[float]] = {}
    meta: list[str] = []
    with open(path, newline="") as fh:
        for lineno, line in enumerate(fh, 1):
            s = line.strip()
            if not s:
                continue
            if s.startswith("#"):
                meta.append(s[1:].strip())
                continue
            row = next(csv.reader(io.StringIO(s)))
            if len(row) != 2:
                raise UserError(f"{path}:{lineno}: expected 'label,value', got {s[:80]!r}; "
                                f"the program must write one label,value row per sample")
            try:
                value = float(row[1])
            except ValueError:
                if not values:  # a header line such as book_type,nanoseconds
                    meta.append(s)
                    continue
                raise UserError(f"{path}:{lineno}: value {row[1]!r} is not a number; "
                                f"write numeric values in the second column") from None
            values.setdefault(row[0].strip(), []).append(value)
    return values, meta


def _extract_metrics(protocol: Protocol, out_path: str | None, err_path: str | None
                     ) -> dict[str, list[float]]:
    """Samples of each ``--metric`` found in the run's stdout, then stderr."""
    if not protocol.metrics:
        return {}
    from benchlab.measure import metrics as metric_parsing

    text = ""
    for p in (out_path, err_path):
        if p and os.path.exists(p):
            with open(p, "rb") as fh:
                text += fh.read().decode(errors="replace")
    out: dict[str, list[float]] = {}
    for spec in protocol.metrics:
        compiled = metric_parsing.MetricSpec(
            name=spec.name, unit=spec.unit or "", regex=spec.regex,
            pattern=metric_parsing.compile_metric_regex(spec.regex))
        out[spec.name] = metric_parsing.extract(compiled, text)
    return out


def _tail(path: str | None) -> str | None:
    if not path or not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - STDERR_TAIL_BYTES))
        data = fh.read().decode(errors="replace").strip()
    return data or None


def _collect_environment(argv: Sequence[str] | None, cwd: str | None) -> dict[str, Any]:
    from benchlab.measure.environment import collect_environment

    return collect_environment(argv=list(argv) if argv else None, cwd=cwd)


def _load_average() -> list[float]:
    from benchlab.measure.environment import load_average

    return list(load_average())


def _system_checks() -> list[dict] | None:
    try:
        from benchlab.control.system import run_checks
    except ImportError:
        return None
    return [c.to_dict() for c in run_checks(include_contention=False)]


def start_session(store: Store, protocol: Protocol, *, argv: Sequence[str] | None = None,
                  name: str | None = None) -> SessionRef:
    """Create the session row with its environment, checks, setup and load before measuring.

    Everything is validated first (commands exist, control options work on this machine), so
    bad input creates no session.
    """
    from benchlab.measure.environment import environment_digest

    protocol.validate()
    check_commands(protocol)
    control = ControlOptions.from_dict(protocol.control)
    if protocol.samples_csv and control.workers > 1 and "{worker}" not in protocol.samples_csv:
        raise UserError("--samples-csv with --workers > 1: the workers would overwrite one file; "
                        "put {worker} in the path and let the program write BENCHLAB_WORKER's file")
    _sweep_stale_cgroups()
    execution = prepare_execution(control)
    protocol.control = control.to_dict()
    environment = _collect_environment(argv, protocol.cwd)
    env_id = store.put_environment(environment, environment_digest(environment))
    session = store.create_session(
        "run", name=name, command_line=list(argv) if argv else None, protocol=protocol.to_dict(),
        environment=environment, environment_id=env_id, system_checks=_system_checks(),
        load_before=_load_average())
    setup_id = store.put_setup(execution.setup_dict(protocol.shell))
    for pos, bench in enumerate(protocol.benchmarks):
        store.add_benchmark(session.id, bench.name, position=pos, command=bench.command,
                            argv=protocol.argv_for(pos), parameters=bench.parameters or None,
                            setup_id=setup_id)
    for spec in protocol.metrics:
        store.add_metric(session.id, spec.name, unit=spec.unit, origin="regex", pattern=spec.regex)
    if protocol.samples_csv:
        store.update_session(session.id, source=protocol.samples_csv)
    return session


def _sweep_stale_cgroups() -> None:
    """Remove cgroups a killed benchlab left behind (their creator pid is dead), and make
    SIGTERM/SIGHUP remove this process's cgroups before it dies."""
    try:
        from benchlab.control.cgroups import install_signal_cleanup, sweep_stale

        install_signal_cleanup()
        sweep_stale()
    except (OSError, UserError):
        pass  # no cgroup filesystem or no permission: nothing of ours can be there


def run_protocol(store: Store, session: SessionRef, protocol: Protocol, *,
                 observer: Observer | None = None) -> SessionResult:
    """Run (or resume) a session until its protocol is complete; every run is committed at once.

    With ``--workers N`` each worker runs the whole protocol concurrently in its own thread
    (seed 000's homogeneous parallel setup), placed by the affinity plan; every run is stored
    with its worker index and timestamps. Raises :class:`SessionInterrupted` on Ctrl-C and
    :class:`UserError` when a command fails without ``ignore_failure``; in both cases
    everything measured so far stays in the store.
    """
    observer = observer or _Silent()
    control = ControlOptions.from_dict(protocol.control)
    execution = prepare_execution(control, session_label=session.uid)
    workers = control.workers
    benches = store.benchmarks(session.id)
    bench_ids = [b["id"] for b in benches]
    setup_ids = [b["setup_id"] for b in benches]
    n = len(benches)
    done_w = [[0] * n for _ in range(workers)]
    done_r = [[0] * n for _ in range(workers)]
    elapsed = [0.0] * workers
    first_wall: list[float | None] = [None] * n
    for run in store.runs(session_id=session.id):
        i = bench_ids.index(run["benchmark_id"])
        w = min(run["worker"], workers - 1)
        if run["warmup"]:
            done_w[w][i] += 1
        else:
            done_r[w][i] += 1
            if first_wall[i] is None and run["status"] == "ok" and run["wall_ns"]:
                first_wall[i] = run["wall_ns"] / 1e9
        elapsed[w] += (run["wall_ns"] or 0) / 1e9
    planners = []
    for w in range(workers):
        planner = RunPlanner(protocol, done_w[w], done_r[w], elapsed[w], worker=w)
        planner.first_wall_s = list(first_wall)
        planners.append(planner)

    stopper = None
    if protocol.until_decided is not None:
        from benchlab.measure.until_decided import SequentialStopper, UntilDecided

        if workers != 1:
            raise UserError("--until-decided runs one worker; drop --workers")
        stopper = SequentialStopper(store, session.id, bench_ids,
                                    protocol.runs or protocol.max_runs or 1000,
                                    UntilDecided(**protocol.until_decided))

    result = SessionResult(session=session, status="running")
    lock = threading.Lock()
    stop = threading.Event()
    state = {"seq": store.next_seq(session.id), "done": 0, "failure": None,
             "overhead": None}
    tmpdir = tempfile.mkdtemp(prefix=f"benchlab-{session.uid}-")

    def total() -> int | None:
        totals = [p.total() for p in planners]
        return None if any(t is None for t in totals) else sum(totals)  # type: ignore[arg-type]

    def worker_loop(w: int) -> None:
        env = None
        if workers > 1:
            env = dict(os.environ, BENCHLAB_WORKER=str(w))
        while not stop.is_set():
            with lock:
                planned = planners[w].next()
            if planned is None:
                return
            i = planned.benchmark
            bench = protocol.benchmarks[i]
            _run_hook(_hook(protocol.prepare, i), "prepare", protocol.cwd)
            samples_csv = (protocol.samples_csv.replace("{worker}", str(w))
                           if protocol.samples_csv else None)
            if samples_csv:
                Path(samples_csv).unlink(missing_ok=True)
            need_out = bool(protocol.metrics) or protocol.capture_stdout
            out_path = os.path.join(tmpdir, f"stdout-{w}") if need_out else None
            err_path = os.path.join(tmpdir, f"stderr-{w}")
            argv = protocol.argv_for(i)
            m, measurements, extra = execution.run(
                argv, worker=w, cwd=protocol.cwd, timeout_s=protocol.timeout_s,
                stdout_path=out_path, stderr_path=err_path, scratch=tmpdir, env=env)
            samples: dict[str, list[float]] = {}
            if m.status == "ok":
                samples = _extract_metrics(protocol, out_path, err_path)
                empty = [k for k, v in samples.items() if not v]
                if empty:
                    extra["warning"] = f"metric(s) {', '.join(empty)} matched nothing in the output"
                if samples_csv:
                    if os.path.exists(samples_csv):
                        csv_values, meta = read_samples_csv(samples_csv)
                        for label, vals in csv_values.items():
                            samples.setdefault(label, []).extend(vals)
                        if meta:
                            extra["samples_csv_metadata"] = meta
                    else:
                        extra["warning"] = f"no samples file {samples_csv} after the run"
            else:
                tail = _tail(err_path)
                if tail:
                    extra["stderr_tail"] = tail
            fields = {
                "status": m.status, "exit_code": m.exit_code, "signal": m.signal,
                "error": m.error, "start_unix_ns": m.start_unix_ns,
                "start_mono_ns": m.start_mono_ns, "end_mono_ns": m.end_mono_ns,
                "wall_ns": m.wall_ns, "user_ns": m.user_ns, "sys_ns": m.sys_ns,
                "max_rss_kib": m.max_rss_kib, "minflt": m.minflt, "majflt": m.majflt,
                "nvcsw": m.nvcsw, "nivcsw": m.nivcsw, "shell_overhead_ns": state["overhead"],
                "cpus": ",".join(map(str, m.cpus)) if m.cpus else None,
                "spawn_method": m.method, "extra": extra or None,
            }
            with lock:
                store.add_run(session.id, bench_ids[i], seq=state["seq"],
                              iteration=planned.iteration, warmup=planned.warmup, worker=w,
                              setup_id=setup_ids[i], fields=fields, samples=samples,
                              measurements=measurements)
                state["seq"] += 1
                state["done"] += 1
                c = result.counts.setdefault(bench.name, {})
                c[m.status] = c.get(m.status, 0) + 1
                planners[w].record(planned, m.wall_ns / 1e9 if m.status == "ok" else None)
                for other in planners:  # the first measured run sets every worker's estimate
                    if other.first_wall_s[i] is None:
                        other.first_wall_s[i] = planners[w].first_wall_s[i]
                if planned.iteration == 0 and not planned.warmup and protocol.runs is None:
                    store.update_session(session.id, protocol=protocol.to_dict())
                observer.run_finished(bench.name, planned, m, total(), state["done"])
                looks_before = len(stopper.options.looks) if stopper is not None else 0
                if stopper is not None and not planned.warmup and stopper.after_run():
                    observer.message(stopper.decision.message)
                    stop.set()
                if stopper is not None and len(stopper.options.looks) != looks_before:
                    protocol.until_decided = stopper.options.to_dict()
                    meta = store.get_session(session.uid).get("metadata") or {}
                    store.update_session(session.id, protocol=protocol.to_dict(),
                                         metadata={**meta, "until_decided": stopper.summary()})
                if m.status != "ok" and not protocol.ignore_failure and state["failure"] is None:
                    what = {"failed": f"exited with code {m.exit_code}",
                            "signaled": f"was killed by signal {m.signal}",
                            "timeout": f"timed out after {protocol.timeout_s} s",
                            "error": f"could not start ({m.error})"}[m.status]
                    state["failure"] = (
                        f"command {bench.command!r} {what}; the run is stored in session "
                        f"{session.uid}; use --ignore-failure (-i) to keep measuring failing "
                        f"commands")
                    stop.set()

    errors: list[BaseException] = []

    def guarded(w: int) -> None:
        try:
            worker_loop(w)
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)
            stop.set()

    load_cm = contextlib.nullcontext()
    if control.load:
        from benchlab.control.load import BackgroundLoad, parse_load

        load_cm = BackgroundLoad(parse_load(control.load))
    try:
        for i, _ in enumerate(benches):
            _run_hook(_hook(protocol.setup, i), "setup", protocol.cwd)
        if protocol.shell:
            cal = measure_shell_overhead(protocol.shell)
            state["overhead"] = cal["wall_ns"]
            result.shell_overhead_ns = cal["wall_ns"]
            store.update_session(session.id, metadata={"shell_overhead": cal})
            observer.message(f"shell spawning time ({protocol.shell}): "
                             f"{cal['wall_ns'] / 1e6:.3f} ms (median of {cal['runs']}), "
                             f"subtracted from wall")
        with load_cm as load:
            if load is not None:
                store.update_session(session.id, metadata={
                    **(store.get_session(session.uid).get("metadata") or {}),
                    "load": load.to_dict()})
            observer.started(session, protocol, total())
            if workers == 1:
                worker_loop(0)
            else:
                threads = [threading.Thread(target=guarded, args=(w,), daemon=True,
                                            name=f"benchlab-worker-{w}") for w in range(workers)]
                for t in threads:
                    t.start()
                try:
                    while any(t.is_alive() for t in threads):
                        for t in threads:
                            t.join(timeout=0.1)
                except KeyboardInterrupt:
                    stop.set()
                    _terminate_children()
                    for t in threads:
                        t.join(timeout=10)
                    raise
                if errors:
                    raise errors[0]
        if state["failure"]:
            store.finish_session(session.id, "failed", load_after=_load_average())
            result.status = "failed"
            raise UserError(state["failure"])
        for i, _ in enumerate(benches):
            _run_hook(_hook(protocol.cleanup, i), "cleanup", protocol.cwd)
        store.finish_session(session.id, "complete", load_after=_load_average())
        result.status = "complete"
        return result
    except KeyboardInterrupt:
        stop.set()
        store.finish_session(session.id, "interrupted", load_after=_load_average())
        result.status = "interrupted"
        raise SessionInterrupted(session, store.next_seq(session.id)) from None
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
        result.decision = stopper.summary() if stopper is not None else None


def _terminate_children() -> None:
    """SIGTERM every direct child (the exec helpers), which then kill their programs."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            try:
                os.kill(int(entry), signal.SIGTERM)
            except ProcessLookupError:
                pass


def _hook(hooks: list[str | None], i: int) -> str | None:
    if not hooks:
        return None
    return hooks[i] if len(hooks) > 1 else hooks[0]


def resume_session(store: Store, key: str, *, observer: Observer | None = None) -> SessionResult:
    """Complete an interrupted (or killed) session from its stored protocol."""
    sess = store.get_session(key)
    if sess["kind"] != "run":
        raise UserError(f"session {sess['uid']} was {sess['kind']}ed, not run; only run sessions "
                        f"can be resumed")
    if sess["status"] == "complete":
        raise UserError(f"session {sess['uid']} is already complete; nothing to resume")
    protocol = Protocol.from_dict(sess["protocol"])
    store.update_session(sess["id"], status="running", finished_utc=None)
    return run_protocol(store, SessionRef(sess["id"], sess["uid"]), protocol, observer=observer)
