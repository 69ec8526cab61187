"""What executes on a Dask worker: probe the machine, run ONE planned run, finish.

Every function takes and returns plain data (the plan's dict, a planned run's dict), so the
client and the worker share no live object and a run can be re-sent after its worker died.
The run itself happens in the exec helper (:func:`benchlab.core.run_one.execute_planned_run`):
the Dask task's thread blocks in ``wait4`` for its whole duration, and :func:`quiet_worker`
keeps the rest of the worker process quiet meanwhile — profiling and monitors stopped, the
heartbeat slowed, its other threads moved to CPUs the benchmark does not use when there are
such CPUs — and puts everything back afterwards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import threading
from typing import Any, Iterator

from benchlab.core.plan import RunPlan

#: Periodic callbacks paused while a run executes (why: each wakes the worker's event loop).
#: The heartbeat is slowed instead of stopped, so the scheduler keeps the worker.
_PAUSED = ("profile", "profile-cycle", "find-missing", "monitor", "tick", "ticks",
           "memory_monitor", "spill-monitor")
RUN_HEARTBEAT_MS = 60_000

_lock = threading.Lock()
_states: dict[str, "_SessionState"] = {}
_quiet = {"active": 0, "saved": None, "pinned": None}


@dataclasses.dataclass
class _SessionState:
    plan: RunPlan
    execution: Any
    scratch: str
    load: Any = None  # the running BackgroundLoad (``--load``), stopped when the session ends


def _state(uid: str, plan_dict: dict[str, Any]) -> _SessionState:
    """This worker process's placement and scratch directory for session ``uid`` (made once)."""
    from benchlab.core.cluster.stop import on_stop
    from benchlab.core.placement import prepare_execution
    from benchlab.core.scratch import make_scratch

    with _lock:
        state = _states.get(uid)
        if state is None:
            plan = RunPlan.from_dict(plan_dict)
            execution = prepare_execution(plan.placement, session_label=uid)
            state = _states[uid] = _SessionState(plan, execution, make_scratch(uid))
            created = True
        else:
            created = False
    if created:  # an interrupted client's stop ends the session here: its scratch goes too
        on_stop(uid, lambda: release_machine(uid))
        # and a killed client's (SIGKILL: nobody stops it) once no run of it comes
        threading.Thread(target=_release_when_idle, args=(uid, state), daemon=True,
                         name=f"benchlab-idle-{uid}").start()
    return state


def probe_machine(plan_dict: dict[str, Any], argv: list[str] | None = None) -> dict[str, Any]:
    """Validate the plan where it will run and describe the machine; no side effect.

    Raises the plan's one-line UserError (an executable missing on this machine, a placement it
    cannot provide). Returns host, pid, CPU count, the environment and the runs' setup.
    """
    from benchlab.core.placement import prepare_execution
    from benchlab.environment import collect_environment

    plan = RunPlan.from_dict(plan_dict)
    plan.validate(None)
    execution = prepare_execution(plan.placement)
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "cpus": sorted(os.sched_getaffinity(0)),
            "environment": collect_environment(argv=argv, cwd=plan.cwd),
            "setup": execution.setup_dict(plan.shell)}


def _ensure_load(uid: str, state: _SessionState) -> dict[str, Any] | None:
    """Start session ``uid``'s background load here unless it runs already (a worker process
    restarted mid-session starts it with its first run); what runs, or None without --load."""
    if not state.plan.placement.load:
        return None
    from benchlab.control.load import BackgroundLoad
    from benchlab.core.cluster.stop import on_stop

    with _lock:
        started = state.load is None
        if started:
            state.load = BackgroundLoad(state.plan.placement.parsed()[1]).__enter__()
        load = state.load.to_dict()
    on_stop(uid, lambda: release_machine(uid))  # an interrupted client stops the load too
    return load


def begin_machine(plan_dict: dict[str, Any], uid: str) -> dict[str, Any]:
    """Run the benchmarks' ``setup`` hooks here, measure the shell's cost (ns) if any, and
    start the background load (``--load``) beside the runs; return the host, the shell's cost
    and what load runs (None: none)."""
    from benchlab.core.cluster.stop import clear_stop
    from benchlab.core.executor import ProcessRunner

    clear_stop(uid)  # a resumed session's runs may run again here
    state = _state(uid, plan_dict)
    runner = ProcessRunner(state.plan, state.execution, state.scratch)
    for bench in state.plan.benchmarks:
        runner.hook(bench.setup, "setup")
    cost = runner.shell_cost() if state.plan.shell else None
    load = _ensure_load(uid, state)
    return {"host": socket.gethostname(), "shell_overhead": cost, "load": load}


def run_one(plan_dict: dict[str, Any], uid: str, planned: dict[str, Any], slot: int,
            want_environment: bool) -> dict[str, Any]:
    """Execute one planned run on this worker (slot ``slot`` of its placement); plain dict out.

    Returns the measurement (times in ns, RSS in KiB), extra measurements, notes, samples, the
    failure text if any, the host, how the worker was kept quiet, and — when
    ``want_environment`` — this worker's environment and setup (the first run a new worker
    process executes). Returns only ``stopped``, host and pid when the client stopped the
    session here (:mod:`benchlab.core.cluster.stop`) before or during the run: that run's
    processes were killed and its result is not a measurement.
    """
    from benchlab.core.cluster.stop import running, was_stopped

    with running(uid) as stopped_before:
        stopped = {"stopped": True, "host": socket.gethostname(), "pid": os.getpid()}
        if stopped_before:
            return stopped
        try:
            result = _run_one(plan_dict, uid, planned, slot, want_environment)
        except Exception:
            if was_stopped(uid):  # a hook killed by the stop fails: that is the stop, no error
                return stopped
            raise
        return stopped if was_stopped(uid) else result


def _run_one(plan_dict: dict[str, Any], uid: str, planned: dict[str, Any], slot: int,
             want_environment: bool) -> dict[str, Any]:
    from benchlab.core.planner import PlannedRun
    from benchlab.core.run_one import execute_planned_run

    state = _state(uid, plan_dict)
    _ensure_load(uid, state)
    extra: dict[str, Any] = {}
    if want_environment:
        from benchlab.environment import collect_environment

        extra["environment"] = collect_environment(cwd=state.plan.cwd)
        extra["setup"] = state.execution.setup_dict(state.plan.shell)
    busy = [c for c in state.execution.worker_cpus]
    with quiet_worker(busy) as quiet:
        run = execute_planned_run(state.plan, state.execution, PlannedRun(**planned), slot,
                                  state.scratch)
    return {"measurement": dataclasses.asdict(run.measurement),
            "measurements": run.measurements, "extra": run.extra, "samples": run.samples,
            "failure": run.failure, "host": socket.gethostname(), "pid": os.getpid(),
            "quiet": quiet, **extra}


def count_one_here(plan_dict: dict[str, Any], uid: str, index: int) -> dict[str, Any]:
    """``--count instructions`` on this worker: count benchmark ``index`` once under
    cachegrind (its prepare/conclude hooks around it); the run's fields, samples and host."""
    from benchlab.core.cluster.stop import running
    from benchlab.core.executor import ProcessRunner

    with running(uid) as stopped_before:
        if stopped_before:
            return {"stopped": True, "host": socket.gethostname()}
        state = _state(uid, plan_dict)
        with quiet_worker([None]):
            fields, samples = ProcessRunner(state.plan, state.execution,
                                            state.scratch).count(index)
    return {"fields": fields, "samples": samples, "host": socket.gethostname()}


def finish_machine(plan_dict: dict[str, Any], uid: str) -> dict[str, Any]:
    """Run the ``cleanup`` hooks, stop the load and remove this worker's scratch directory of
    session ``uid``."""
    from benchlab.core.executor import ProcessRunner

    state = _state(uid, plan_dict)
    try:
        runner = ProcessRunner(state.plan, state.execution, state.scratch)
        for bench in state.plan.benchmarks:
            runner.hook(bench.cleanup, "cleanup")
    finally:
        release_machine(uid)
    return {"host": socket.gethostname()}


#: A session's state here (its background load, its scratch directory) is released after this
#: long without any of its runs (s): its client was killed (SIGKILL: nobody stops it) or gave
#: the machine up. A run that comes later makes the state again.
IDLE_S = 120.0


def _release_when_idle(uid: str, state: _SessionState) -> None:
    """Watch session ``uid`` on this worker: release it once no run of it has begun or ended
    for :data:`IDLE_S` (a load or a scratch directory must not outlive a killed client on a
    team's worker, which lives on)."""
    import time

    from benchlab.core.cluster.stop import idle_for

    began = time.monotonic()
    while True:
        time.sleep(min(5.0, IDLE_S / 4))
        with _lock:
            if _states.get(uid) is not state:
                return  # released by its client (finished or stopped)
        idle = idle_for(uid)
        if (idle if idle is not None else time.monotonic() - began) > IDLE_S:
            release_machine(uid)
            return


def release_machine(uid: str) -> None:
    """Stop session ``uid``'s background load on this worker and remove its scratch directory
    (no hook runs): the end of a session however it ended."""
    from benchlab.core.scratch import remove_scratch

    with _lock:
        state = _states.pop(uid, None)
    if state is None:
        return
    try:
        if state.load is not None:
            state.load.__exit__(None, None, None)
    finally:
        remove_scratch(state.scratch)


@contextlib.contextmanager
def quiet_worker(busy_cpus: list[tuple[int, ...] | None]) -> Iterator[dict[str, Any]]:
    """Keep this worker process quiet while a run executes; yield what was done (recorded).

    ``busy_cpus``: the CPUs of every slot of the placement (None: the run may use any CPU).
    The first concurrent run pauses the worker's periodic callbacks and moves its other threads
    to the CPUs no slot uses; the last one restores both.
    """
    info: dict[str, Any] = {}
    with _lock:
        _quiet["active"] += 1
        first = _quiet["active"] == 1
        if first:
            _quiet["saved"] = _pause_callbacks()
            _quiet["pinned"] = _pin_other_threads(busy_cpus)
        info["paused"] = sorted((_quiet["saved"] or {}).get("stopped", []))
        info["heartbeat_ms"] = RUN_HEARTBEAT_MS if _quiet["saved"] else None
        info["pinned"] = {k: v for k, v in (_quiet["pinned"] or {}).items() if k != "saved"}
    try:
        yield info
    finally:
        with _lock:
            _quiet["active"] -= 1
            if _quiet["active"] == 0:
                _resume_callbacks(_quiet["saved"])
                _unpin(_quiet["pinned"])
                _quiet["saved"] = _quiet["pinned"] = None


def _pause_callbacks() -> dict[str, Any] | None:
    """Stop the worker's periodic callbacks (in its event loop: tornado's are not threadsafe)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return None  # not inside a Dask worker (a direct call): nothing to pause
    stopped: list[str] = []
    saved: dict[str, Any] = {"worker": worker, "stopped": stopped, "heartbeat": None}
    done = threading.Event()

    def pause():
        try:
            for name, pc in list(worker.periodic_callbacks.items()):
                if name in _PAUSED and pc.is_running():
                    pc.stop()
                    stopped.append(name)
            heartbeat = worker.periodic_callbacks.get("heartbeat")
            if heartbeat is not None:
                saved["heartbeat"] = heartbeat.callback_time
                heartbeat.callback_time = RUN_HEARTBEAT_MS
        finally:
            done.set()

    worker.loop.add_callback(pause)
    done.wait(5)
    return saved


def _resume_callbacks(saved: dict[str, Any] | None) -> None:
    if not saved:
        return
    worker = saved["worker"]

    def resume():
        for name in saved["stopped"]:
            pc = worker.periodic_callbacks.get(name)
            if pc is not None:
                pc.start()
        heartbeat = worker.periodic_callbacks.get("heartbeat")
        if heartbeat is not None and saved["heartbeat"] is not None:
            heartbeat.callback_time = saved["heartbeat"]

    with contextlib.suppress(RuntimeError):  # the loop closed: the worker is shutting down
        worker.loop.add_callback(resume)


def _pin_other_threads(busy_cpus: list[tuple[int, ...] | None]) -> dict[str, Any]:
    """Move every thread of this process but the caller's to CPUs no run uses.

    The caller's thread keeps its mask: it starts the exec helper, which inherits it (a run
    without affinity must still see every CPU). Returns the CPUs used, or why none were.
    """
    allowed = set(os.sched_getaffinity(0))
    if any(c is None for c in busy_cpus) or not busy_cpus:
        return {"cpus": None, "reason": "the run may use every CPU (no --affinity): no spare CPU"}
    spare = sorted(allowed - {c for cpus in busy_cpus for c in cpus})
    if not spare:
        return {"cpus": None, "reason": "the runs' CPUs are every CPU this worker may use"}
    me = threading.get_native_id()
    saved = {}
    for entry in os.listdir("/proc/self/task"):
        tid = int(entry)
        if tid == me:
            continue
        with contextlib.suppress(OSError):  # a thread that just ended
            saved[tid] = sorted(os.sched_getaffinity(tid))
            os.sched_setaffinity(tid, spare)
    return {"cpus": spare, "threads": len(saved), "saved": saved}


def _unpin(pinned: dict[str, Any] | None) -> None:
    for tid, cpus in ((pinned or {}).get("saved") or {}).items():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(tid, cpus)
