"""Where a measured run's stdout goes: hyperfine's ``--output null|pipe|inherit|FILE``.

The spawner opens every redirection by path (``None`` = /dev/null), so each policy becomes a
path for the duration of one run:

* ``null``: /dev/null (no path), unless benchlab needs the output for ``--metric`` (a file in
  the session's scratch directory, as before);
* a file: the file itself, truncated by each run (hyperfine re-creates it per run too);
* ``pipe``: a FIFO in the scratch directory that a thread drains while the run lasts, so the
  program writes into a real pipe (``test -p /dev/stdout`` holds) whose reader discards;
* ``inherit``: benchlab's own stdout and stderr. Opening ``/proc/PID/fd/1`` of a regular file
  would truncate it, so when benchlab's stdout is a file the run writes to scratch files that
  are copied to benchlab's stdout and stderr after the run instead.
"""

from __future__ import annotations

import os
import select
import shutil
import stat
import sys
import threading
from dataclasses import field

from benchlab.records import record


def _is_regular(fd: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


class _FifoDrain:
    """A FIFO plus a thread that reads and discards what a run writes into it.

    The thread owns the FIFO's descriptor: it reads what is left and closes it itself once
    told to stop, and :meth:`close` waits for that on an Event, never on ``Thread.join``. On
    Python 3.11 a KeyboardInterrupt landing in ``join`` can mark a running thread as stopped
    (bpo-45274); a second close after an interrupted one then closed the descriptor under a
    thread still in ``select`` on it (and the number could be reused by the store's files).
    """

    def __init__(self, path: str):
        if not os.path.exists(path):
            os.mkfifo(path, 0o600)
        self.path = path
        # O_RDWR: opening never blocks and the writer's open never blocks either; the price is
        # that read() never sees EOF, so the thread stops on an event instead.
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.done = threading.Event()
        self.ended = threading.Event()  # the thread has read what was left and closed fd
        self.thread = threading.Thread(target=self._drain, daemon=True, name="benchlab-pipe")
        self.thread.start()

    def _read_available(self) -> None:
        while True:
            try:
                if not os.read(self.fd, 1 << 16):
                    return
            except BlockingIOError:
                return

    def _drain(self) -> None:
        try:
            while not self.done.is_set():
                ready, _, _ = select.select([self.fd], [], [], 0.05)
                if ready:
                    self._read_available()
            self._read_available()
        finally:
            os.close(self.fd)
            self.ended.set()

    def close(self) -> None:
        """Stop draining (the run has ended) and wait until the thread has read what is left
        and closed the FIFO (within ~0.05 s). Interrupted, the thread still finishes so."""
        self.done.set()
        while not self.ended.wait(0.1):
            pass


@record  # made once a run: its own __init__, nothing compiled at import (benchlab.records)
class RunStreams:
    """The stdout/stderr paths of one run under an ``--output`` policy; call :meth:`finish`
    after the run (it drains a pipe and shows captured output for ``inherit``)."""

    stdout_path: str | None
    stderr_path: str
    _drain: _FifoDrain | None = None
    _copy: list[tuple[str, object]] = field(default_factory=list)

    def __init__(self, stdout_path: str | None, stderr_path: str,
                 _drain: _FifoDrain | None = None,
                 _copy: list[tuple[str, object]] | None = None) -> None:
        # as @dataclass's: the fields in order, a fresh list when no copies are given
        self.stdout_path, self.stderr_path, self._drain = stdout_path, stderr_path, _drain
        self._copy = [] if _copy is None else _copy

    def finish(self) -> None:
        """Release the run's streams once the program has exited."""
        if self._drain is not None:
            self._drain.close()
        for path, target in self._copy:
            if path and os.path.exists(path):
                target.flush()
                with open(path, "rb") as fh:
                    shutil.copyfileobj(fh, target.buffer)
                target.flush()


def open_streams(policy: str, scratch: str, worker: int, need_stdout: bool) -> RunStreams:
    """Paths for one run's stdout and stderr under ``policy`` (see the module docstring).

    ``need_stdout``: benchlab reads the output afterwards (``--metric``), so stdout must land
    in a file it can read: the given FILE, or a scratch file.
    """
    scratch_out = os.path.join(scratch, f"stdout-{worker}")
    scratch_err = os.path.join(scratch, f"stderr-{worker}")
    if policy == "null":
        return RunStreams(scratch_out if need_stdout else None, scratch_err)
    if policy == "pipe" and not need_stdout:
        drain = _FifoDrain(os.path.join(scratch, f"stdout-pipe-{worker}"))
        return RunStreams(drain.path, scratch_err, _drain=drain)
    if policy == "pipe":
        return RunStreams(scratch_out, scratch_err)
    if policy == "inherit":
        if need_stdout or _is_regular(1) or _is_regular(2):
            return RunStreams(scratch_out, scratch_err,
                              _copy=[(scratch_out, sys.stdout), (scratch_err, sys.stderr)])
        pid = os.getpid()
        return RunStreams(f"/proc/{pid}/fd/1", f"/proc/{pid}/fd/2")
    return RunStreams(policy, scratch_err)  # a file path


__all__ = ["RunStreams", "open_streams"]
