"""What a ``kill -9`` of ``ab`` or ``bisect`` leaves is cleaned at once, not at the next start.

A benchlab killed with SIGKILL runs no clean-up: its build (a process group of its own) keeps
running, and the worktrees it registered in the user's repository stay listed in
``.git/worktrees``. While a job holds trees, a small watchdog process (started by
:class:`benchlab.ci.revisions.Trees`, in a session of its own so a signal to the job's group
does not reach it) reads a pipe whose only writer is the job. The pipe ends when the job ends,
however it ends: a job that finishes writes ``done`` first, and the watchdog exits; a pipe that
ends without it means the job died, and the watchdog runs the sweep of the next start
(:func:`benchlab.ci.worktrees.sweep_incomplete`) for that job: it kills the build's process
group, removes the unbuilt and temporary trees and prunes their registration. The window is the
watchdog's start-up after the job's death (~0.1 s); the next start's sweep is kept for what
this cannot cover (the watchdog killed as well, a machine that rebooted).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: What a job that ends normally writes before closing the pipe.
DONE = b"done"


class Watchdog:
    """The watchdog of one job's trees in ``repo`` (see the module docstring)."""

    def __init__(self, repo: Path):
        read_end, self._write_end = os.pipe()  # both ends not inherited by later children
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "benchlab.ci.watchdog", str(repo), str(os.getpid())],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        finally:
            os.close(read_end)

    def stop(self) -> None:
        """The job ended normally: the watchdog exits without sweeping."""
        if self._write_end is None:
            return
        try:
            os.write(self._write_end, DONE)
        except OSError:
            pass
        os.close(self._write_end)
        self._write_end = None
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main(argv: list[str]) -> int:
    """Wait for the job's pipe to end; sweep for the job unless it said ``done``."""
    repo, owner = Path(argv[0]), int(argv[1])
    received = b""
    while True:
        chunk = os.read(0, 64)
        if not chunk:
            break
        received += chunk
    if received.startswith(DONE):
        return 0
    from benchlab.ci.worktrees import sweep_incomplete

    sweep_incomplete(repo, dead_owner=owner)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
