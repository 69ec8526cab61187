"""Execute a run plan's session to completion, storing every run the moment it ends.

The steps, each a named function or method below: prepare the placement (affinity, cgroups,
isolation, perf) on this machine; run each benchmark's ``setup``; measure the shell's own cost
when commands run through a shell; start the background load; then the worker loop — ask the
planner for the next run, run its ``prepare``, execute it, extract its samples, store it, feed
the sequential stopper — and finally ``cleanup``, the load after, and the session's status.

An interruption (Ctrl-C, or SIGTERM turned into one by :mod:`benchlab.core.session`) kills the
running program, keeps everything stored, marks the session ``interrupted`` and raises
:class:`SessionInterrupted`. A failing command (without ``ignore_failure``), a failing hook or a
metric that captured no number keeps what was stored, marks the session ``failed`` and raises a
one-line :class:`~benchlab.errors.UserError`. The session never stays ``running``.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol as TypingProtocol

from benchlab.core.counted import COUNT_METHOD, run_counted
from benchlab.core.placement import Execution, prepare_execution
from benchlab.core.plan import RunPlan
from benchlab.core.planner import PlannedRun, RunPlanner
from benchlab.core.run_one import (MeasuredRun, execute_planned_run, measure_shell_cost,
                                   run_fields, run_hook)
from benchlab.core.scratch import make_scratch, remove_scratch, terminate_children
from benchlab.errors import UserError
from benchlab.measure.spawn import RunMeasurement
from benchlab.store.db import SessionRef
from benchlab.store.writer import SessionWriter

def merge_metadata(writer: SessionWriter, extra: dict[str, Any]) -> None:
    """Add keys to a session's metadata, keeping what is there."""
    meta = writer.store.get_session(writer.ref.uid).get("metadata") or {}
    writer.update(metadata={**meta, **extra})


class SessionInterrupted(Exception):
    """Raised after Ctrl-C or SIGTERM once the session is safely marked interrupted."""

    def __init__(self, session: SessionRef, runs_stored: int, signum: int = 2):
        super().__init__(f"interrupted: {runs_stored} runs stored in session {session.uid}")
        self.session = session
        self.runs_stored = runs_stored
        self.signum = signum


class Observer(TypingProtocol):
    """Receives progress events (the CLI draws a progress bar from them)."""

    def started(self, session: SessionRef, plan: RunPlan, total: int | None) -> None: ...
    def run_finished(self, name: str, run: PlannedRun, m: RunMeasurement,
                     total: int | None, done: int) -> None: ...
    def message(self, text: str) -> None: ...


class Silent:
    """An observer that shows nothing."""

    def started(self, session, plan, total):
        pass

    def run_finished(self, name, run, m, total, done):
        pass

    def message(self, text):
        pass


@dataclass
class SessionResult:
    """Outcome of a session: its reference, final status and run counts by benchmark and status."""

    session: SessionRef
    status: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    shell_overhead_ns: int | None = None
    decision: dict | None = None


def _failure_text(plan: RunPlan, run: MeasuredRun, uid: str) -> str | None:
    m = run.measurement
    if run.failure:
        return f"{run.failure}; the run is stored in session {uid}"
    if plan.tolerates(m.status, m.exit_code):
        return None
    what = {"failed": f"exited with code {m.exit_code}",
            "signaled": f"was killed by signal {m.signal}",
            "timeout": f"timed out after {plan.timeout_s} s",
            "error": f"could not start ({m.error})"}[m.status]
    command = plan.benchmarks[run.planned.benchmark].command
    return (f"command {command!r} {what}; the run is stored in session {uid}; use "
            f"--ignore-failure (-i, or -i={m.exit_code or 'CODES'} for this exit code only) to "
            f"keep measuring failing commands")


class SessionRun:
    """The execution of one session: planners per worker, the next sequence number, counts.

    Shared between worker threads; every method that changes it holds ``lock``.
    """

    def __init__(self, writer: SessionWriter, plan: RunPlan, execution: Execution,
                 observer: Observer, scratch: str):
        self.writer = writer
        self.plan = plan
        self.execution = execution
        self.observer = observer
        self.scratch = scratch
        self.workers = plan.placement.workers
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.failure: str | None = None
        self.shell_overhead_ns: int | None = None
        self.result = SessionResult(session=writer.ref, status="running")
        benches = writer.store.benchmarks(writer.ref.id)
        self.bench_ids = [b["id"] for b in benches]
        self.setup_ids = [b["setup_id"] for b in benches]
        self.planners = self._restore_planners()
        self.seq = writer.store.next_seq(writer.ref.id)
        self.done = 0
        self.stopper = self._stopper()

    def _restore_planners(self) -> list[RunPlanner]:
        """Planners that continue from the runs already stored (a resumed session)."""
        n, workers = len(self.bench_ids), self.workers
        done_w = [[0] * n for _ in range(workers)]
        done_r = [[0] * n for _ in range(workers)]
        elapsed = [0.0] * workers
        first_wall: list[float | None] = [None] * n
        for run in self.writer.store.runs(session_id=self.writer.ref.id):
            if run["spawn_method"] == COUNT_METHOD:
                continue  # counted runs are not timed runs (see benchlab.core.counted)
            i = self.bench_ids.index(run["benchmark_id"])
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
            planner = RunPlanner(self.plan, done_w[w], done_r[w], elapsed[w], worker=w)
            planner.first_wall_s = list(first_wall)
            planners.append(planner)
        return planners

    def _stopper(self):
        if self.plan.until_decided is None:
            return None
        from benchlab.core.until_decided import SequentialStopper, UntilDecided

        if self.workers != 1:
            raise UserError("--until-decided runs one worker; drop --workers")
        return SequentialStopper(self.writer.store, self.writer.ref.id, self.bench_ids,
                                 self.plan.runs or self.plan.max_runs or 1000,
                                 UntilDecided(**self.plan.until_decided))

    def total(self) -> int | None:
        """Measured runs of the whole session, or None while a count is still unknown."""
        totals = [p.total() for p in self.planners]
        return None if any(t is None for t in totals) else sum(totals)  # type: ignore[arg-type]

    def next_run(self, worker: int) -> PlannedRun | None:
        """The next run of ``worker``, or None when it is done or the session stops."""
        if self.stop.is_set():
            return None
        with self.lock:
            return self.planners[worker].next()

    def store_run(self, run: MeasuredRun) -> None:
        """Write one run, update the plan's estimates, look at the data, note a failure."""
        plan, planned, m = self.plan, run.planned, run.measurement
        i = planned.benchmark
        with self.lock:
            self.writer.add_run(self.bench_ids[i], seq=self.seq, iteration=planned.iteration,
                                warmup=planned.warmup, worker=run.worker,
                                setup_id=self.setup_ids[i],
                                fields=run_fields(m, run.extra, self.shell_overhead_ns),
                                samples=run.samples, measurements=run.measurements)
            self.seq += 1
            self.done += 1
            counts = self.result.counts.setdefault(plan.benchmarks[i].name, {})
            counts[m.status] = counts.get(m.status, 0) + 1
            planner = self.planners[run.worker]
            planner.record(planned, m.wall_ns / 1e9 if m.status == "ok" else None)
            for other in self.planners:  # the first measured run sets every worker's estimate
                if other.first_wall_s[i] is None:
                    other.first_wall_s[i] = planner.first_wall_s[i]
            if planned.iteration == 0 and not planned.warmup and plan.runs is None:
                self.writer.update(protocol=plan.to_dict())
            self.observer.run_finished(plan.benchmarks[i].name, planned, m, self.total(),
                                       self.done)
            if self.stopper is not None and not planned.warmup:
                self._look()
            failure = _failure_text(plan, run, self.writer.ref.uid)
            if failure and self.failure is None:
                self.failure = failure
                self.stop.set()

    def _look(self) -> None:
        """Let the sequential design look at the data; store its looks so a resume replays them."""
        looks_before = len(self.stopper.options.looks)
        if self.stopper.after_run():
            self.observer.message(self.stopper.decision.message)
            self.stop.set()
        if len(self.stopper.options.looks) != looks_before:
            self.plan.until_decided = self.stopper.options.to_dict()
            self.writer.update(protocol=self.plan.to_dict())
            merge_metadata(self.writer, {"until_decided": self.stopper.summary()})

    @property
    def hooks_in_order(self) -> bool:
        """True when each benchmark's ``setup`` runs right before its runs and its ``cleanup``
        right after (hyperfine's order): one worker, sequential order, no counted runs after
        the timed ones. Otherwise every setup runs before the first run and every cleanup
        after the last (runs of different benchmarks interleave or overlap)."""
        return (self.plan.order == "sequential" and self.workers == 1
                and not self.plan.count)

    def worker_loop(self, worker: int) -> None:
        """Execute and store runs of one worker until its planner or the session says stop."""
        in_order = self.hooks_in_order
        current: int | None = None
        while (planned := self.next_run(worker)) is not None:
            if in_order and planned.benchmark != current:
                if current is not None:
                    self._hook(current, "cleanup")
                current = planned.benchmark
                self._hook(current, "setup")
            run = execute_planned_run(self.plan, self.execution, planned, worker, self.scratch)
            self.store_run(run)
        if in_order and current is not None and self.failure is None:
            self._hook(current, "cleanup")

    def _hook(self, index: int, kind: str) -> None:
        bench = self.plan.benchmarks[index]
        run_hook(getattr(bench, kind), kind, self.plan.cwd)

    def run_workers(self) -> None:
        """One worker in this thread, or N concurrent worker threads (seed 000's parallel setup)."""
        self.observer.started(self.writer.ref, self.plan, self.total())
        if self.workers == 1:
            self.worker_loop(0)
            return
        errors: list[BaseException] = []

        def guarded(worker: int) -> None:
            try:
                self.worker_loop(worker)
            except BaseException as exc:  # surfaced in the main thread below
                errors.append(exc)
                self.stop.set()

        threads = [threading.Thread(target=guarded, args=(w,), daemon=True,
                                    name=f"benchlab-worker-{w}") for w in range(self.workers)]
        for t in threads:
            t.start()
        try:
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(timeout=0.1)
        except KeyboardInterrupt:
            self.stop.set()
            terminate_children()  # the exec helpers kill their programs on SIGTERM
            for t in threads:
                t.join(timeout=10)
            raise
        if errors:
            raise errors[0]


def run_session(writer: SessionWriter, plan: RunPlan, *,
                observer: Observer | None = None) -> SessionResult:
    """Run (or continue) a session until its plan is complete; see the module docstring.

    Raises :class:`SessionInterrupted` on Ctrl-C and :class:`UserError` when a command or hook
    fails; in both cases everything measured so far stays stored and the session is finished.
    """
    from benchlab.environment import load_average

    observer = observer or Silent()
    scratch = make_scratch(writer.ref.uid)
    session: SessionRun | None = None
    try:
        execution = prepare_execution(plan.placement, session_label=writer.ref.uid)
        session = SessionRun(writer, plan, execution, observer, scratch)
        if not session.hooks_in_order:
            for bench in plan.benchmarks:
                run_hook(bench.setup, "setup", plan.cwd)
        if plan.shell:
            cost = measure_shell_cost(plan.shell)
            session.shell_overhead_ns = session.result.shell_overhead_ns = cost["wall_ns"]
            merge_metadata(writer, {"shell_overhead": cost})
            observer.message(f"shell spawning time ({plan.shell}): {cost['wall_ns'] / 1e6:.3f} ms "
                             f"(median of {cost['runs']}), subtracted from wall")
        with _background_load(plan, writer):
            session.run_workers()
        if session.failure:
            raise UserError(session.failure)
        if plan.count:
            run_counted(writer, plan, session.bench_ids, session.setup_ids, run_hook,
                        observer.message)
        if not session.hooks_in_order:
            for bench in plan.benchmarks:
                run_hook(bench.cleanup, "cleanup", plan.cwd)
        writer.finish("done", load_after=list(load_average()))
        session.result.status = "complete"
        return session.result
    except KeyboardInterrupt as exc:
        writer.finish("interrupted", load_after=list(load_average()))
        raise SessionInterrupted(writer.ref, writer.store.next_seq(writer.ref.id),
                                 getattr(exc, "signum", 2)) from None
    except BaseException:
        writer.finish("failed", load_after=list(load_average()))
        raise
    finally:
        remove_scratch(scratch)
        if session is not None and session.stopper is not None:
            session.result.decision = session.stopper.summary()


@contextlib.contextmanager
def _background_load(plan: RunPlan, writer: SessionWriter):
    """Run the placement's background load (if any) for the duration of the measured runs."""
    if not plan.placement.load:
        yield None
        return
    from benchlab.control.load import BackgroundLoad, parse_load

    with BackgroundLoad(parse_load(plan.placement.load)) as load:
        merge_metadata(writer, {"load": load.to_dict()})
        yield load
