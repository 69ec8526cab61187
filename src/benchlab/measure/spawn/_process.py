"""Process plumbing shared by both spawn methods: group kill, reaping, deferred Ctrl-C."""

from __future__ import annotations

import _signal as signal  # the C module: `signal` makes enums at import (~3 M instructions)
import os
import select
import threading
import time


def thread_children(tid: int, pid: int | None = None) -> list[int]:
    """Pids of the processes that thread ``tid`` of process ``pid`` (None: this process)
    started and that are still its children.

    Read from ``/proc/PID/task/TID/children``: the kernel records the *thread* that forked a
    child, so a harness thread finds its own runs' processes and not another thread's. Empty
    when the thread has ended, or when the kernel lacks the file (CONFIG_PROC_CHILDREN).
    """
    where = "self" if pid is None else str(pid)
    try:
        with open(f"/proc/{where}/task/{tid}/children") as fh:
            return [int(child) for child in fh.read().split()]
    except (OSError, ValueError):
        return []


def kill_group(pid: int | None) -> None:
    """SIGKILL the process group ``pid`` leads; nothing when it is None or already gone."""
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class DeferredSigint:
    """Hold back Ctrl-C while a child is being created, so its pid is never lost.

    A KeyboardInterrupt raised inside ``posix_spawn``/``Popen`` (or right after it returned,
    before the pid was stored) would leave a running child nobody kills.  In the main thread
    (the only one Python delivers SIGINT to) a recording handler replaces the current one for
    the duration; ``raise_if_pending`` re-raises after the caller stored the pid.
    """

    def __init__(self) -> None:
        self.pending = False
        self._previous = None

    def _record(self, signum, frame) -> None:
        self.pending = True

    def __enter__(self) -> "DeferredSigint":
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):  # a Python-level handler (default: raise KeyboardInterrupt)
                self._previous = previous
                signal.signal(signal.SIGINT, self._record)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def raise_if_pending(self) -> None:
        """Run the original SIGINT handler now if Ctrl-C arrived meanwhile (usually raises)."""
        if self.pending:
            self.pending = False
            if self._previous is not None:
                self._previous(signal.SIGINT, None)


def reap_or_kill(pid: int, grace_s: float = 2.0) -> int | None:
    """Wait up to ``grace_s`` seconds for ``pid`` to exit, then SIGKILL it; return its status."""
    deadline = time.monotonic() + grace_s
    _wait_for_exit(pid, grace_s)
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return status
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.002)


def _wait_for_exit(pid: int, timeout_s: float) -> None:
    """Sleep until child ``pid`` has exited or ``timeout_s`` seconds passed, woken by the
    exit itself (a pidfd becomes readable then), not by a poll every few ms. Returns at once
    where pidfds are missing (Linux < 5.3) or ``pid`` is gone: the caller's poll covers that."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return
    try:
        select.select([fd], [], [], timeout_s)
    finally:
        os.close(fd)
