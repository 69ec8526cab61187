"""Sessions of the execution core: start one from a plan, resume one, end every way cleanly.

:func:`start_session` validates the plan (every value, the executables, the placement on this
machine) before the session row exists, so bad input creates nothing. :func:`run_plan` starts
and runs; :func:`resume_session` claims an unfinished session (refused while its writer is
alive; a crashed one is taken over) and completes it to the exact planned count.

:func:`interruptible` makes SIGTERM (and SIGHUP) behave like Ctrl-C while a session runs: the
running program is killed, the session is marked ``interrupted``, and the caller learns the
signal (exit 128 + signal number). The previous handlers are restored on the way out.
"""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import contextlib
import sys
import threading
from typing import Any, Callable, Iterator, Sequence

from benchlab.core.executor import RunnerFactory, run_session
from benchlab.core.executor import TerminatingSignal as _Received  # cli.main reads its signum
from benchlab.core.executor import interrupts_deferred as interrupts_deferred  # re-exported
from benchlab.core.executor import raise_if_terminated as raise_if_terminated  # re-exported
from benchlab.core.placement import Execution, prepare_execution
from benchlab.core.plan import RunPlan
from benchlab.core.scratch import sweep_dead_scratch
from benchlab.core.session_types import Observer, SessionInterrupted, SessionResult
from benchlab.errors import UserError
from benchlab.store.db import SessionRef, Store
from benchlab.store.writer import SessionWriter

_TERMINATING = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def interruptible() -> Iterator[type[_Received]]:
    """Turn SIGTERM/SIGHUP into Ctrl-C for the duration; set the signal on SessionInterrupted.
    A SIGINT the process inherited ignored (a background job) stops it too, as Ctrl-C.

    Yields an object whose ``signum`` is the terminating signal received (None for Ctrl-C or
    none). The SIGINT handler in force is called, so the spawner's deferral of Ctrl-C while a
    child is being created (its pid must never be lost) covers SIGTERM as well.
    """
    if threading.current_thread() is not threading.main_thread():
        yield _Received
        return
    if _Received.depth == 0:
        _Received.signum = None
    _Received.depth += 1

    def on_signal(signum, frame):
        _Received.signum = signum
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler) and handler is not on_signal:
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job): still stop
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in _TERMINATING}
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # started as a background job (SIGINT ignored): a CI runner cancels with SIGINT
        # first, and a job that ignored it would measure on, then exit 0 or 1
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _interrupts_out_of_finalizers(previous_hook)
    try:
        yield _Received
    except SessionInterrupted as exc:
        if _Received.signum is not None:
            exc.signum = _Received.signum
        raise
    finally:
        _Received.depth -= 1
        sys.unraisablehook = previous_hook
        for s, handler in previous.items():
            signal.signal(s, handler)


def _interrupts_out_of_finalizers(previous_hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """An ``sys.unraisablehook`` that takes a Ctrl-C (or a SIGTERM made one) raised inside a
    ``__del__`` silently, leaving it to the loops' next checkpoint, and passes everything else
    to ``previous_hook``.

    A signal's handler runs wherever the main thread is, a finalizer too (a Dask future dropped
    after its run was stored). There Python cannot raise: it printed "Exception ignored in ...
    Traceback ... KeyboardInterrupt" on the user's terminal (seen in a study's SIGTERM test
    under load) and went on. The loops' checkpoints (:func:`raise_if_terminated`: before each
    run, every poll, between cells) already end the work on a recorded SIGTERM; a Ctrl-C lost
    this way is recorded as SIGINT so they end it too (exit 130, as for any Ctrl-C). Sending
    the signal again from here would run the handler inside this hook, and a later delivery
    could land in the interrupted session's clean-up.
    """

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            if _Received.signum is None:
                _Received.signum = signal.SIGINT
            return
        previous_hook(unraisable)

    return hook



def _system_checks() -> list[dict] | None:
    from benchlab.control.system import run_checks

    return [c.to_dict() for c in run_checks(include_contention=False)]


def _start_helper() -> None:
    """Start the exec helper of this thread (the runs of a one-worker session run here)."""
    from benchlab.measure.spawn import start_helper

    start_helper()


def _sweep_leftovers(observer: Observer | None = None) -> None:
    """Remove what a killed benchlab left: scratch directories and run cgroups of dead pids.

    The cgroup sweep's messages (processes killed, cgroups removed) go to ``observer.message``,
    so a quiet observer (``-q``) silences them.
    """
    sweep_dead_scratch()
    try:
        from benchlab.control.cgroups import sweep_stale

        sweep_stale(observer=observer.message if observer is not None else None)
    except (OSError, UserError):
        pass  # no cgroup filesystem or no permission: nothing of ours can be there


def create_session(store: Store, plan: RunPlan, *, setup: Callable[[], int | None],
                   argv: Sequence[str] | None = None, name: str | None = None,
                   metadata: dict[str, Any] | None = None, parent: SessionRef | None = None,
                   checks: list[dict] | None = None,
                   environment: dict[str, Any] | None = None) -> SessionWriter:
    """Create a run session for ``plan``: its row, benchmarks and metrics (the one walk of
    session creation, on this machine or on a cluster).

    ``setup()`` stores the runs' setup (this machine's, or each cluster machine's) and returns
    the id its benchmarks point at. ``environment``: the client's environment (default: this
    machine's, collected now). All of it is one transaction: a failure on the way (Ctrl-C,
    SIGTERM, SIGKILL too) leaves no session at all.
    """
    from benchlab.environment import collect_environment, load_average

    if environment is None:
        environment = collect_environment(argv=list(argv) if argv else None, cwd=plan.cwd,
                                          env_key=store.env_key())
    load_before = list(load_average())
    # the row, its benchmarks and metrics in ONE transaction: a signal between separate ones
    # would leave a session that cannot be resumed; in one, a failure or Ctrl-C leaves nothing
    with store.transaction():
        writer = SessionWriter.create(
            store, "run", name=name, command_line=list(argv) if argv else None,
            protocol=plan.to_dict(), environment=environment, checks=checks,
            load_before=load_before, metadata=metadata, parent=parent)
        setup_id = setup()
        for pos, bench in enumerate(plan.benchmarks):
            writer.add_benchmark(bench.name, position=pos, command=bench.command,
                                 argv=plan.argv_for(pos), parameters=bench.parameters or None,
                                 setup_id=setup_id)
        for spec in plan.metrics:
            writer.add_metric(spec.name, unit=spec.unit, origin="regex", pattern=spec.regex)
        if plan.samples_csv:
            writer.update(source=plan.samples_csv)
    return writer


def start_session(store: Store, plan: RunPlan, *, argv: Sequence[str] | None = None,
                  name: str | None = None, metadata: dict[str, Any] | None = None,
                  parent: SessionRef | None = None,
                  observer: Observer | None = None) -> SessionWriter:
    """Validate ``plan``, then create its session with environment, checks, benchmarks, metrics.

    Raises UserError (nothing created) for any bad value, a missing executable, or a placement
    this machine cannot provide.
    """
    return _start(store, plan, argv=argv, name=name, metadata=metadata, parent=parent,
                  observer=observer)[0]


def _start(store: Store, plan: RunPlan, *, argv: Sequence[str] | None, name: str | None,
           metadata: dict[str, Any] | None, parent: SessionRef | None,
           observer: Observer | None, helper_now: bool = False) -> tuple[SessionWriter, Execution]:
    """:func:`start_session`, also giving the placement it validated: :func:`run_plan` runs
    with it rather than preparing it again (a second topology read, and in cgroup mode a second
    trial cgroup). ``helper_now``: the runs will be spawned from this thread; start its exec
    helper before the placement, checks and probe, which then overlap its start."""
    from benchlab.environment import reading_once

    plan.validate(store)
    with reading_once():  # the sweep, placement, checks and probe share one reading of a file
        _sweep_leftovers(observer)
        if helper_now:
            _start_helper()
        execution = prepare_execution(plan.placement)
        writer = create_session(store, plan, argv=argv, name=name, metadata=metadata,
                                parent=parent, checks=_system_checks(),
                                setup=lambda: store.put_setup(execution.setup_dict(plan.shell)))
    execution.session_label = writer.ref.uid  # names its run cgroups, as run_session's would
    return writer, execution


def run_plan(store: Store, plan: RunPlan, *, argv: Sequence[str] | None = None,
             name: str | None = None, observer: Observer | None = None,
             on_start=None, parent: SessionRef | None = None,
             runner: RunnerFactory | None = None) -> SessionResult:
    """Start a session for ``plan`` on this machine and run it to the end (SIGTERM acts as
    Ctrl-C). ``on_start(session_ref)`` is called once the session exists (the CLI prints its
    id); ``parent``: the session it belongs to (a study's cell); ``runner``: see
    :func:`~benchlab.core.executor.run_session`.
    """
    with interruptible():
        writer, execution = _start(store, plan, argv=argv, name=name, metadata=None,
                                   parent=parent, observer=observer,
                                   helper_now=runner is None and plan.placement.workers == 1)
        if on_start is not None:
            on_start(writer.ref)
        return run_session(writer, plan, observer=observer, runner=runner, execution=execution)


def resume_session(store: Store, key: str, *, observer: Observer | None = None,
                   runner: RunnerFactory | None = None) -> SessionResult:
    """Complete an interrupted or crashed run session from its stored plan, on this machine.

    Raises UserError when the session is not a run, is already complete, or is being run by a
    live process (a concurrent resume).
    """
    sess = store.get_session(key)
    if sess["kind"] != "run":
        raise UserError(f"session {sess['uid']} was {sess['kind']}ed, not run; only run sessions "
                        f"can be resumed")
    if sess["status"] == "complete":
        raise UserError(f"session {sess['uid']} is already complete; nothing to resume")
    plan = RunPlan.from_dict(sess["protocol"])
    plan.validate(store, own_since=_started(sess))
    with interruptible():
        writer = SessionWriter.resume(store, sess["uid"])
        _sweep_leftovers(observer)
        if runner is None and plan.placement.workers == 1:
            _start_helper()
        return run_session(writer, plan, observer=observer, runner=runner)


def _started(sess: dict[str, Any]) -> float | None:
    """When session ``sess`` was created (Unix time, s), None when its row cannot say."""
    import datetime as dt

    try:
        created = dt.datetime.strptime(sess["created_utc"], "%Y-%m-%dT%H:%M:%S.%fZ")
    except (KeyError, TypeError, ValueError):
        return None
    return created.replace(tzinfo=dt.timezone.utc).timestamp()
