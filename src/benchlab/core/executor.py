"""Execute a run plan's session on this machine, storing every run the moment it ends.

The steps, each a named function or method below: prepare the placement (affinity, cgroups,
isolation, perf) on this machine; run each benchmark's ``setup``; measure the shell's own cost
when commands run through a shell; start the background load; then the worker loop — ask the
planner for the next run, execute it (its ``prepare`` and ``conclude`` hooks around it), hand
it to the :class:`~benchlab.core.recorder.RunRecorder`, which stores it, counts it and feeds the
sequential stopper — and finally the counted runs, ``cleanup``, the load after, and the
session's status.

What executes a run is a :class:`Runner`: :class:`ProcessRunner` spawns the measured processes;
tests of ordering, resuming, stopping and storing give a runner that returns measurements
without processes (as hyperfine's mock executor does).

An interruption (Ctrl-C, or SIGTERM turned into one by :mod:`benchlab.core.session`) kills the
running program, keeps everything stored, marks the session ``interrupted`` and raises
:class:`SessionInterrupted`. A failing command (without ``ignore_failure``), a failing hook or a
metric that captured no number keeps what was stored, marks the session ``failed`` and raises a
one-line :class:`~benchlab.errors.UserError`. The session never stays ``running``.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import contextlib
import os
import threading
from typing import Any, Callable, Iterator
from typing import Protocol as TypingProtocol

from benchlab.core.counted import count_one, counts_missing
from benchlab.core.placement import Execution, prepare_execution
from benchlab.core.plan import RunPlan
from benchlab.core.planner import PlannedRun
from benchlab.core.recorder import RunRecorder
from benchlab.core.run_one import MeasuredRun, execute_planned_run, measure_shell_cost, run_hook
from benchlab.core.scratch import make_scratch, remove_scratch, terminate_children
from benchlab.core.session_types import (
    Observer,
    RunFailed,
    SessionInterrupted,
    SessionResult,
    Silent,
    merge_metadata,
)
from benchlab.errors import UserError
from benchlab.processes import interrupts_deferred
from benchlab.store.writer import SessionWriter

__all__ = ["Runner", "ProcessRunner", "LocalLanes", "run_session", "ending_session",
           "SessionStopped",
           "background_load", "Observer", "Silent", "SessionResult", "SessionInterrupted",
           "merge_metadata", "TerminatingSignal", "raise_if_terminated",
           "interrupts_deferred"]


class TerminatingSignal:
    """The terminating signal received while :func:`benchlab.core.session.interruptible` was
    active (``signum`` None: none), and how deeply it is nested (``depth``).

    Shared by nested uses (a study runs each cell's session inside its own): only the
    outermost entry clears it, so a SIGTERM caught by an inner handler is still known to the
    outer one after the inner has restored its handlers. It lives here, below the session
    module, because this module's loops check it (:func:`raise_if_terminated`).
    """

    signum: int | None = None
    depth: int = 0


def raise_if_terminated() -> None:
    """Raise KeyboardInterrupt if SIGTERM/SIGHUP reached ``interruptible`` and work goes on.

    The handler's KeyboardInterrupt can be lost: raised while the main thread runs a
    ``__del__`` (a Dask future dropped after its run was stored) or inside a library's
    ``suppress(BaseException)``, Python only prints "Exception ignored" and the work went on
    to the end (exit 0). Loops call this at their checkpoints (before each run, every poll,
    between cells), so a terminating signal always ends the work, at the latest one run or
    one poll later. Two attribute reads: free beside a run.
    """
    if TerminatingSignal.depth and TerminatingSignal.signum is not None:
        raise KeyboardInterrupt


def _no_check() -> None:
    """The checkpoint of a worker thread: only the main thread learns of a signal."""


class Runner(TypingProtocol):
    """What executes a session's work on this machine (the seam tests replace).

    Times in ns; every method raises UserError for a failing hook.
    """

    def run(self, planned: PlannedRun, worker: int) -> MeasuredRun:
        """Execute one planned run as worker ``worker`` (its prepare/conclude hooks too)."""
        ...

    def hook(self, command: str | None, kind: str) -> None:
        """Run a ``setup``/``cleanup`` hook."""
        ...

    def shell_cost(self) -> dict[str, int]:
        """The shell's start-up cost: ``wall_ns``, ``user_ns``, ``sys_ns`` (medians), ``runs``."""
        ...

    def count(self, index: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
        """One counted run of benchmark ``index``: its stored fields and samples."""
        ...


class ProcessRunner:
    """The real :class:`Runner`: placed, measured processes on this machine."""

    def __init__(self, plan: RunPlan, execution: Execution, scratch: str):
        self.plan, self.execution, self.scratch = plan, execution, scratch

    def run(self, planned: PlannedRun, worker: int) -> MeasuredRun:
        return execute_planned_run(self.plan, self.execution, planned, worker, self.scratch)

    def hook(self, command: str | None, kind: str) -> None:
        run_hook(command, kind, self.plan.cwd, self.plan.shell, self.scratch)

    def shell_cost(self) -> dict[str, int]:
        return measure_shell_cost(self.plan.shell)

    def count(self, index: int) -> tuple[dict[str, Any], dict[str, list[float]]]:
        return count_one(self.plan, index, self.hook)


#: Makes the runner of a session: (plan, execution, scratch directory) -> Runner.
RunnerFactory = Callable[[RunPlan, Execution, str], Runner]


class LocalLanes:
    """The worker threads of one session on this machine: each asks its planner for the next
    run, executes it with the runner and hands it to the recorder."""

    def __init__(self, recorder: RunRecorder, runner: Runner):
        self.recorder = recorder
        self.runner = runner
        self.plan = recorder.plan
        self.workers = self.plan.placement.workers
        self.planners = recorder.restore(self.workers, lambda run: run["worker"])
        self.lock = recorder.lock  # the planners are shared with the recorder's estimates
        self.interrupted = threading.Event()  # Ctrl-C/SIGTERM reached the main thread

    @property
    def hooks_in_order(self) -> bool:
        """True when each benchmark's ``setup`` runs right before its runs and its ``cleanup``
        right after (hyperfine's order): one worker, sequential order, no counted runs after
        the timed ones. Otherwise every setup runs before the first run and every cleanup
        after the last (runs of different benchmarks interleave or overlap)."""
        return (self.plan.order == "sequential" and self.workers == 1
                and not self.plan.count)

    def next_run(self, worker: int) -> PlannedRun | None:
        """The next run of ``worker``, or None when it is done or the session stops."""
        if self.recorder.stop.is_set():
            return None
        with self.lock:
            return self.planners[worker].next()

    def worker_loop(self, worker: int) -> None:
        """Execute and store runs of one worker until its planner or the session says stop."""
        in_order = self.hooks_in_order
        current: int | None = None
        # one worker runs in the main thread, where a lost SIGTERM must still stop it; worker
        # threads stop on recorder.stop, which the main thread sets
        checkpoint = raise_if_terminated if self.workers == 1 else _no_check
        while True:
            checkpoint()
            if (planned := self.next_run(worker)) is None:
                break
            if in_order and planned.benchmark != current:
                if current is not None:
                    self.runner.hook(self.plan.benchmarks[current].cleanup, "cleanup")
                current = planned.benchmark
                self.runner.hook(self.plan.benchmarks[current].setup, "setup")
            run = self.runner.run(planned, worker)
            if run.measurement.status != "ok" and self.interrupted.is_set():
                return  # its program was killed by the interruption: not a result, not stored
            self.recorder.record(run, self.planners[worker],
                                 shell_overhead_ns=self.recorder.result.shell_overhead_ns)
        if in_order and current is not None and self.recorder.failure is None:
            self.runner.hook(self.plan.benchmarks[current].cleanup, "cleanup")

    def run(self) -> None:
        """One worker in this thread, or N concurrent worker threads (the stability study's parallel setup)."""
        self.recorder.observer.started(self.recorder.writer.ref, self.plan,
                                       self.recorder.total())
        if self.workers == 1:
            self.worker_loop(0)
            return
        errors: list[BaseException] = []
        began = [threading.Event() for _ in range(self.workers)]
        finished = [threading.Event() for _ in range(self.workers)]
        native_ids: list[int | None] = [None] * self.workers

        def guarded(worker: int) -> None:
            native_ids[worker] = threading.get_native_id()
            began[worker].set()
            try:
                self.worker_loop(worker)
            except BaseException as exc:  # surfaced in the main thread below
                errors.append(exc)
                self.recorder.stop.set()
            finally:
                finished[worker].set()

        # Each thread's end is its own Event, never Thread.join/is_alive: on Python 3.11 a
        # KeyboardInterrupt that lands in Thread.join can mark a running thread as stopped
        # (the bpo-45274 fix), and the interpreter's exit then closed the store under a worker
        # still writing its run (a segfault seen in CI).
        threads = [threading.Thread(target=guarded, args=(w,), daemon=True,
                                    name=f"benchlab-worker-{w}") for w in range(self.workers)]
        try:
            for t in threads:
                t.start()
            _wait_for(finished)
        except KeyboardInterrupt:
            self.interrupted.set()
            self.recorder.stop.set()
            # a worker that had not begun finds the session stopped and writes nothing; a
            # second Ctrl-C/SIGTERM waits until every begun worker has ended (it cut this wait
            # short, and the session's end could close the store under a worker still writing)
            with interrupts_deferred():
                _wind_down([done for start, done in zip(began, finished) if start.is_set()],
                           [tid for tid in native_ids if tid is not None])
            raise
        if errors:
            raise errors[0]

    def count(self) -> None:
        """``--count instructions``: the counted runs still missing, after the timed ones."""
        recorder = self.recorder
        todo = counts_missing(self.plan, recorder.counted_done())
        for i in sorted({i for i, _ in todo}):
            n = sum(1 for j, _ in todo if j == i)
            recorder.observer.message(f"counting instructions of {self.plan.benchmarks[i].name} "
                                      f"under cachegrind ({n} runs)")
            for j, k in todo:
                if j == i:
                    raise_if_terminated()
                    fields, samples = self.runner.count(i)
                    recorder.record_counted(i, k, fields, samples)


def _wait_for(finished: list[threading.Event]) -> None:
    """Return once every event is set; a signal's KeyboardInterrupt interrupts the wait, and
    so does a SIGTERM whose KeyboardInterrupt was lost (checked every 0.2 s)."""
    for event in finished:
        while not event.wait(0.2):
            raise_if_terminated()


def _wind_down(pending: list[threading.Event], worker_tids: list[int]) -> None:
    """After Ctrl-C/SIGTERM: kill the running programs until every started worker has ended.

    Only what the worker threads (native ids ``worker_tids``) started gets SIGTERM: the exec
    helpers, which kill their programs on it. Every child of the process once got it, killing
    a library user's own processes (a test suite's fork server). Killing again every 0.5 s
    catches a helper spawned just after a sweep. The session is finished, and the store may be
    closed, only once no worker can write to it.
    """
    while True:
        _terminate_thread_children(worker_tids)
        if all(event.wait(0.5) for event in pending):
            return


def _terminate_thread_children(tids: list[int]) -> None:
    """SIGTERM what threads ``tids`` of this process started; every child of the process when
    the kernel does not say which thread started one (no CONFIG_PROC_CHILDREN)."""
    from benchlab.measure.spawn import thread_children

    if not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/children"):
        terminate_children()
        return
    for tid in tids:
        for pid in thread_children(tid):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


class SessionStopped(UserError):
    """The session stops before its plan is done and can be resumed (a cluster's scheduler or
    machines went away): :func:`ending_session` marks it ``interrupted``, not ``failed``, and
    the one line (with the resume command) goes on to the user."""


@contextlib.contextmanager
def ending_session(writer: SessionWriter) -> Iterator[None]:
    """End the session however the block ends: ``interrupted`` with SessionInterrupted on
    Ctrl-C/SIGTERM, ``interrupted`` on :class:`SessionStopped`, ``failed`` on any other error
    (the error goes on); ``done`` (or ``failed`` for a failure the block reports itself) is the
    block's own business. The session never stays ``running``. Every path that stores a
    session's runs ends it here: ``run``, clusters, ``ab`` and ``ab --harness``."""
    from benchlab.environment import load_average

    try:
        yield
    except KeyboardInterrupt as exc:
        writer.finish("interrupted", load_after=list(load_average()))
        raise SessionInterrupted(writer.ref, len(writer.store.runs(session_id=writer.ref.id)),
                                 getattr(exc, "signum", 2)) from None
    except SessionStopped:
        writer.finish("interrupted", load_after=list(load_average()))
        raise
    except BaseException:
        if writer.store.get_session(writer.ref.uid)["status"] == "running":
            writer.finish("failed", load_after=list(load_average()))
        raise


def run_session(writer: SessionWriter, plan: RunPlan, *, observer: Observer | None = None,
                runner: RunnerFactory | None = None,
                execution: Execution | None = None) -> SessionResult:
    """Run (or continue) a session on this machine until its plan is complete; see the module
    docstring. ``runner``: makes the :class:`Runner` (default :class:`ProcessRunner`);
    ``execution``: the plan's placement as the session's start prepared it (default: prepared
    here, labelled with the session's uid).

    Raises :class:`SessionInterrupted` on Ctrl-C and :class:`UserError` when a command or hook
    fails; in both cases everything measured so far stays stored and the session is finished.
    """
    from benchlab.environment import load_average

    observer = observer or Silent()
    scratch = make_scratch(writer.ref.uid)
    recorder: RunRecorder | None = None
    try:
        with ending_session(writer):
            if execution is None:
                execution = prepare_execution(plan.placement, session_label=writer.ref.uid)
            work = (runner or ProcessRunner)(plan, execution, scratch)
            recorder = RunRecorder(writer, plan, observer)
            lanes = LocalLanes(recorder, work)
            if not lanes.hooks_in_order:
                for bench in plan.benchmarks:
                    work.hook(bench.setup, "setup")
            if plan.shell:
                cost = work.shell_cost()
                recorder.result.shell_overhead_ns = cost["wall_ns"]
                merge_metadata(writer, {"shell_overhead": cost})
                observer.message(f"shell spawning time ({plan.shell}): "
                                 f"{cost['wall_ns'] / 1e6:.3f} ms (median of {cost['runs']}), "
                                 f"subtracted from wall")
            with background_load(execution.load) as load:
                if load is not None:
                    merge_metadata(writer, {"load": load})
                lanes.run()
            if recorder.failure:
                raise RunFailed(recorder.failure)
            if plan.count:
                lanes.count()
            if not lanes.hooks_in_order:
                for bench in plan.benchmarks:
                    work.hook(bench.cleanup, "cleanup")
            writer.finish("done", load_after=list(load_average()))
            recorder.result.status = "complete"
            return recorder.result
    finally:
        remove_scratch(scratch)
        if recorder is not None and recorder.stopper is not None:
            recorder.result.decision = recorder.stopper.summary()


@contextlib.contextmanager
def background_load(load: Any) -> Iterator[dict[str, Any] | None]:
    """Run the background load ``load`` (the :class:`benchlab.control.load.LoadSpec` the
    placement parsed from ``--load``; None: none) for the block; yield what ran
    (:meth:`benchlab.control.load.BackgroundLoad.to_dict`) or None."""
    if load is None:
        yield None
        return
    from benchlab.control.load import BackgroundLoad

    with BackgroundLoad(load) as running:
        yield running.to_dict()
