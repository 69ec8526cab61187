"""Stopping a session's runs on the workers when the client is interrupted (Ctrl-C, SIGTERM).

Dask cannot interrupt a task's thread, and on a team's cluster (``tcp://``) nobody shuts the
workers down with the client: a run in flight used to go on executing there, its result
dropped. So the worker side keeps, per session, the threads executing one of its runs
(:func:`running`); on an interruption the client calls :func:`stop_session_runs` on those
workers through ``Client.run`` (executed in the worker's event loop, beside the blocked task
thread). It marks the session stopped there, so a run that had not started yet does not, and
kills what the run's thread started:

- the exec helper gets SIGTERM: it SIGKILLs the target's process group, kills every orphan it
  reaped as subreaper, reports the run ``interrupted`` and exits (measure's own Ctrl-C path);
- a child that is not the helper (the Python fallback's target, a ``prepare`` hook) is
  SIGKILLed with its process group.

A child is found through ``/proc/self/task/TID/children``: the kernel records the *thread* that
started a process, so only that run's processes are touched, not another session's runs on the
same worker. An idle exec helper (no program in it: the thread is between runs, or in a hook
or a profile's set-up) is left alone, since killing it only left a zombie until its thread's next
request. The kill is repeated every 50 ms until the run's thread has returned (a helper that
takes a request after a round is killed by the next one), for at most
``wait_s`` seconds. The run's result is marked ``stopped`` and never stored; the client records
it in ``lost_runs`` (not re-queued: a ``--resume`` plans it again).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from typing import Any, Callable, Iterator

from benchlab.measure.spawn import thread_children

_lock = threading.Lock()  # not worker_side's: that one is held while waiting for the loop
_running: dict[str, dict[int, int]] = {}  # session uid -> {native thread id: runs executing}
_stopped: set[str] = set()
_tasks: dict[str, int] = {}  # Dask key of a task executing in running() -> its native thread id
_on_stop: dict[str, list[Callable[[], None]]] = {}  # session uid -> what its stop also ends
_last_active: dict[str, float] = {}  # session uid -> time.monotonic() a run last began or ended

STOP_POLL_S = 0.05


@contextlib.contextmanager
def running(uid: str) -> Iterator[bool]:
    """On a worker: register the calling thread as executing a run of session ``uid``.

    Yields True when the session was stopped already (the caller must not start the run).
    """
    tid = threading.get_native_id()
    key = _current_task_key()
    with _lock:
        _last_active[uid] = time.monotonic()
        if uid in _stopped:
            stopped = True
        else:
            stopped = False
            threads = _running.setdefault(uid, {})
            threads[tid] = threads.get(tid, 0) + 1
            if key is not None:
                _tasks[key] = tid
    try:
        yield stopped
    finally:
        if not stopped:
            with _lock:
                _last_active[uid] = time.monotonic()
                if key is not None:
                    _tasks.pop(key, None)
                threads = _running.get(uid, {})
                threads[tid] -= 1
                if threads[tid] <= 0:
                    del threads[tid]
                if not threads:
                    _running.pop(uid, None)


def _current_task_key() -> str | None:
    """The Dask key of the task this thread executes (None outside a Dask task)."""
    try:
        from distributed.worker import thread_state
    except ImportError:
        return None
    key = getattr(thread_state, "key", None)
    return None if key is None else str(key)


def stop_cancelled_task(key: str, wait_s: float = 10.0) -> bool:
    """On a worker: Dask gave up task ``key`` while it executes here; kill what it started.

    Dask cannot interrupt a task, so a cancelled run would go on measuring: when its client
    was killed (SIGKILL: nobody called :func:`stop_session_runs`) or gave the run up as lost
    (``--lost-after``). The kill is repeated every 50 ms, from a thread of its own, until the
    task's thread has left :func:`running`, for at most ``wait_s`` seconds. Returns whether
    ``key`` was a task registered here (else nothing is done).
    """
    with _lock:
        tid = _tasks.get(key)
    if tid is None:
        return False

    def kill_until_returned() -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with _lock:
                if _tasks.get(key) != tid:
                    return
            _kill_thread_children(tid)
            time.sleep(STOP_POLL_S)

    threading.Thread(target=kill_until_returned, name=f"benchlab-stop-{key}",
                     daemon=True).start()
    return True


def on_stop(uid: str, action: Callable[[], None]) -> None:
    """On a worker: call ``action`` once when session ``uid`` is stopped here (its background
    load is ended by it: a stopped session's load must not go on loading a team's machine)."""
    with _lock:
        actions = _on_stop.setdefault(uid, [])
        if action not in actions:
            actions.append(action)


def _run_stop_actions(uid: str) -> None:
    with _lock:
        actions = _on_stop.pop(uid, [])
    for action in actions:
        with contextlib.suppress(Exception):  # the stop must go on whatever one action does
            action()


def idle_for(uid: str) -> float | None:
    """Seconds since a run of session ``uid`` last began or ended on this worker; 0 while one
    executes; None when none ever ran here."""
    with _lock:
        if _running.get(uid):
            return 0.0
        last = _last_active.get(uid)
    return None if last is None else time.monotonic() - last


def was_stopped(uid: str) -> bool:
    """Whether session ``uid`` was stopped on this worker (its runs' results are not kept)."""
    with _lock:
        return uid in _stopped


def clear_stop(uid: str) -> None:
    """Forget that session ``uid`` was stopped here (its resume begins; a stop still repeating
    its kills for that session ends)."""
    with _lock:
        _stopped.discard(uid)


def _is_exec_helper(pid: int) -> bool:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("exec_helper")
    except OSError:
        return False


def _kill_thread_children(tid: int) -> list[int]:
    """Kill what thread ``tid`` of this process started; return the pids signalled."""
    signalled = []
    for pid in thread_children(tid):
        try:
            if _is_exec_helper(pid):
                if not thread_children(pid, pid):
                    # idle (no program of a run in it): killed, it stayed a zombie until its
                    # thread's next request; a request it takes later is caught next round
                    continue
                os.kill(pid, signal.SIGTERM)  # it kills its target's group and orphans first
            else:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)  # not a group leader
            signalled.append(pid)
        except ProcessLookupError:
            continue
    return signalled


async def stop_session_runs(uid: str, wait_s: float = 10.0) -> dict[str, Any]:
    """On a worker (through ``Client.run``): stop session ``uid``'s runs executing here.

    Marks the session stopped, kills each run's processes (see the module docstring) until its
    thread has returned, at most ``wait_s`` seconds. Returns the host, the pids signalled and the
    runs still executing (0 unless ``wait_s`` ran out).
    """
    import asyncio

    with _lock:
        _stopped.add(uid)
    signalled: set[int] = set()
    deadline = time.monotonic() + wait_s
    resumed = False
    while True:
        with _lock:
            if uid not in _stopped:  # a resume began meanwhile: its runs are not ours to kill
                threads: list[int] = []
                resumed = True
                break
            threads = list(_running.get(uid, {}))
        if not threads or time.monotonic() > deadline:
            break
        for tid in threads:
            signalled.update(_kill_thread_children(tid))
        await asyncio.sleep(STOP_POLL_S)
    if not resumed:
        _run_stop_actions(uid)
    return {"host": socket.gethostname(), "pid": os.getpid(), "signalled": sorted(signalled),
            "still_running": len(threads)}


def stop_runs_on(client: Any, uid: str, addresses: list[str], wait_s: float = 10.0
                 ) -> dict[str, Any]:
    """On the client: stop session ``uid``'s runs on the workers at ``addresses``; return each
    worker's answer (or the error) by address. Gives up after ``wait_s`` + 10 seconds (an
    unreachable scheduler must not hold an interrupted client forever)."""
    answers: dict[str, Any] = {}

    def call():
        try:
            answers.update(client.run(stop_session_runs, uid, wait_s, workers=addresses,
                                      on_error="return"))
        except Exception as exc:  # the scheduler or the workers are gone: nothing to stop
            answers["error"] = f"{type(exc).__name__}: {exc}"

    caller = threading.Thread(target=call, name="benchlab-stop-runs", daemon=True)
    caller.start()
    caller.join(wait_s + 10.0)
    return answers
