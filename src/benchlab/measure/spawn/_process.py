"""Process plumbing shared by both spawn methods: group kill, reaping, deferred Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
import time

def _kill_group(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _DeferredSigint:
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

    def __enter__(self) -> "_DeferredSigint":
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


def _reap(pid: int, grace_s: float = 2.0) -> int | None:
    """Wait up to ``grace_s`` seconds for ``pid`` to exit, then SIGKILL it; return its status."""
    deadline = time.monotonic() + grace_s
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
