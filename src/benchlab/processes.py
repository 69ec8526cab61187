"""Whether a process is alive: the one test behind every sweep of what a dead benchlab left
(cgroups, containers, scratch directories, build worktrees); every process's
``/proc/<pid>/stat``, read one way for the sweeps that look for a parent or a process group;
and holding Ctrl-C/SIGTERM while a process is started and recorded, or a clean-up runs
(:func:`interrupts_deferred`), for every layer that starts processes."""

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import contextlib
import os
import threading
from collections.abc import Iterator


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` exists on this machine (owned by anyone).

    ``kill(pid, 0)`` sends nothing: ProcessLookupError means gone; PermissionError means it
    exists but belongs to another user, so it counts as alive (its leftovers are not ours to
    sweep).
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, so ``[0]`` is the state,
    ``[1]`` the parent's pid, ``[2]`` the process group, ``[11]``/``[12]`` user/system CPU time
    in clock ticks and ``[19]`` the start time in clock ticks since boot; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    # the command name may hold spaces and ')': the fields start after the last ')'
    return stat[stat.rfind(")") + 2:].split()


def cpu_ticks(pid: int) -> int | None:
    """User + system CPU time process ``pid`` has used, in clock ticks (None when it is gone)."""
    fields = stat_fields(pid)
    return None if fields is None else int(fields[11]) + int(fields[12])


def process_stats() -> Iterator[tuple[int, list[str]]]:
    """Every process on this machine, as (pid, :func:`stat_fields`). A process that ends while
    the list is read is left out."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(int(entry))
            if fields is not None:
                yield int(entry), fields


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP for the block, then deliver the first one received.

    For clean-up that an interruption must not cut in half. A Dask cluster whose close was
    interrupted stays "closing", and Dask's exit hook then waits out its 10-s timeout on it
    (a SIGTERM during a study's shutdown took 10-11 s to exit). A second Ctrl-C while the
    worker threads wind down let the session end, and the store close, under a worker still
    writing. The held signal goes, once the block has ended, to the handler in force before
    it, so :func:`benchlab.core.session.interruptible` still makes a SIGTERM the
    interruption (exit 143, the resume hint). A background load holds them while it starts
    its processes, so none is started without being recorded (and stopped). Off the main
    thread (which alone receives signals) the block simply runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum, frame):
        held.append(signum)

    previous = {s: signal.signal(s, hold)
                for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if held:
            signal.raise_signal(held[0])
